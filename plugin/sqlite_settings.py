"""Connection settings for an Airflow deployment on SQLite: writes wait for the write lock, never fail on it.

SQLite has one writer at a time. Airflow already puts the database in WAL mode
(readers never block), but two things still made a write fail at once with
``database is locked`` while another process was writing:

- Python's ``sqlite3`` gives up waiting for the lock after 5 s; a long
  dag-processor or scheduler write outlasted that (an unpause in the UI
  answered 500).
- A transaction that began as a reader and then writes cannot wait at all:
  SQLite returns SQLITE_BUSY at once, without calling its busy handler, when a
  connection that holds a read snapshot asks for the write lock while another
  connection holds it or has committed since the snapshot was taken. SQLAlchemy
  opens such transactions with ``SAVEPOINT`` (``session.begin_nested()``),
  which SQLite starts as a deferred transaction: ``airflow backfill create``
  reads the newest run inside one and then inserts its own, and died within a
  second whenever the scheduler was writing.

So every transaction takes the write lock when it begins, where the busy
timeout applies: ``sqlite3`` emits ``BEGIN IMMEDIATE`` (not ``BEGIN``) before
the first INSERT, UPDATE or DELETE, and a ``SAVEPOINT`` outside a transaction
is preceded by ``BEGIN IMMEDIATE``. Reads outside a transaction stay as they
are (each statement its own snapshot, blocking nobody). Every process of a
SQLite deployment is pointed here::

    AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS=tessera.plugin.sqlite_settings.CONNECT_ARGS
    AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC=tessera.plugin.sqlite_settings.ASYNC_CONNECT_ARGS

Only for SQLite: PostgreSQL's driver refuses these arguments. Imports only the
standard library: Airflow reads it while it is still configuring its own settings.
"""

from __future__ import annotations

import sqlite3
from typing import Any

BUSY_TIMEOUT_SECONDS = 60
"""How long a connection waits for SQLite's write lock before the statement fails."""

BEGIN = "IMMEDIATE"
"""The kind of ``BEGIN`` every transaction starts with: the write lock, taken where waiting for it is possible."""


class WriteLockCursor(sqlite3.Cursor):
    """A cursor that starts a transaction with ``BEGIN IMMEDIATE`` before a ``SAVEPOINT`` opens one."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if not self.connection.in_transaction and sql.lstrip()[:9].upper() == "SAVEPOINT":
            super().execute(f"BEGIN {BEGIN}")
        return super().execute(sql, parameters)


class WriteLockConnection(sqlite3.Connection):
    """``sqlite3.connect(factory=...)``: transactions begin with the write lock (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.isolation_level = BEGIN

    @property  # type: ignore[override]
    def isolation_level(self) -> str | None:
        return sqlite3.Connection.isolation_level.__get__(self)  # type: ignore[attr-defined]

    @isolation_level.setter
    def isolation_level(self, value: str | None) -> None:
        # SQLAlchemy resets a pooled connection's level to "" (a plain deferred BEGIN); keep it immediate.
        # None (autocommit) is kept as asked.
        sqlite3.Connection.isolation_level.__set__(self, BEGIN if value == "" else value)  # type: ignore[attr-defined]

    def cursor(self, factory: type[sqlite3.Cursor] = WriteLockCursor) -> sqlite3.Cursor:  # type: ignore[override]
        # sqlite3.Connection.execute goes through this method too.
        return super().cursor(factory)


CONNECT_ARGS: dict[str, object] = {"timeout": BUSY_TIMEOUT_SECONDS, "factory": WriteLockConnection}
"""``[database] sql_alchemy_connect_args``: passed to ``sqlite3.connect`` (Airflow adds its own keys)."""

ASYNC_CONNECT_ARGS: dict[str, object] = {"timeout": BUSY_TIMEOUT_SECONDS, "factory": WriteLockConnection}
"""``[database] sql_alchemy_connect_args_async``: passed through ``aiosqlite.connect`` to ``sqlite3.connect``."""

WORKER_API_TIMEOUT_SECONDS = BUSY_TIMEOUT_SECONDS + 30
"""``[workers] execution_api_timeout``: how long a worker waits for the API server's answer. Airflow's
5 s is shorter than a write the API server makes while it waits for the lock (or, on a busy laptop,
builds its Execution API on the first task): the worker gave up, asked again, and its task failed
because the first request had already marked it running."""

ENVIRONMENT = {
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS": "tessera.plugin.sqlite_settings.CONNECT_ARGS",
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC": "tessera.plugin.sqlite_settings.ASYNC_CONNECT_ARGS",
    "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": str(WORKER_API_TIMEOUT_SECONDS),
}
"""The settings above as environment variables, for a launcher that starts Airflow's processes."""
