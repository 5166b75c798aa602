"""Connection settings for an Airflow deployment on SQLite: wait for the write lock, do not fail on it.

SQLite has one writer at a time, and Python's ``sqlite3`` gives up waiting for the
lock after 5 s. On a laptop the dag-processor and the scheduler write often and
sometimes long (a parse of many files, a scheduler loop with many runs), so an API
request that writes (unpausing a DAG, which also logs the action) could wait out
those 5 s and answer 500. Every process of a SQLite deployment is pointed here::

    AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS=tessera.plugin.sqlite_settings.CONNECT_ARGS
    AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC=tessera.plugin.sqlite_settings.ASYNC_CONNECT_ARGS

Only for SQLite: PostgreSQL's driver refuses an unknown ``timeout`` argument.
Imports nothing: Airflow reads it while it is still configuring its own settings.
"""

from __future__ import annotations

BUSY_TIMEOUT_SECONDS = 60
"""How long a connection waits for SQLite's write lock before the statement fails."""

CONNECT_ARGS: dict[str, object] = {"timeout": BUSY_TIMEOUT_SECONDS}
"""``[database] sql_alchemy_connect_args``: passed to ``sqlite3.connect`` (Airflow adds its own keys)."""

ASYNC_CONNECT_ARGS: dict[str, object] = {"timeout": BUSY_TIMEOUT_SECONDS}
"""``[database] sql_alchemy_connect_args_async``: passed through ``aiosqlite.connect`` to ``sqlite3.connect``."""

ENVIRONMENT = {
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS": "tessera.plugin.sqlite_settings.CONNECT_ARGS",
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC": "tessera.plugin.sqlite_settings.ASYNC_CONNECT_ARGS",
}
"""The settings above as environment variables, for a launcher that starts Airflow's processes."""
