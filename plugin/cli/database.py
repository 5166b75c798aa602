"""The metadata database a ``tessera`` command reads without ``--api``: found before the ORM touches it.

``tessera why DAG_ID``, ``tessera plan DAG_ID``, ``tessera pause`` and ``unpause`` read the
database the Airflow CLI is configured for (``AIRFLOW_HOME``'s ``airflow.cfg``, or
``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN``). Run where no deployment lives, Airflow's default is an
SQLite file under ``~/airflow``: opening it through the ORM creates an empty file there and then
fails deep in SQLAlchemy (``no such table: dag``). So an SQLite database is looked at first,
read-only, without creating anything: the file must exist and hold Airflow's ``dag`` table. A
server database (PostgreSQL, MySQL) cannot be created by connecting, and a failure to reach it
is one line already (the commands turn SQLAlchemy's errors into their message).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import urllib.parse

from .inputs import Refused


def require_metadata_database(*, api_option: bool) -> None:
    """Refuse, saying what to pass, unless the configured SQLite database exists with Airflow's tables.

    :param api_option: the command also takes ``--api`` (``why``, ``plan``), so the fix may be to use it.
    :raises Refused: naming the database file and how to point the command at a deployment.
    """
    from airflow.configuration import AIRFLOW_HOME, conf
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(conf.get("database", "sql_alchemy_conn"))
    except ArgumentError:
        return  # not a URL at all: the ORM's own error says so, in one line
    if url.get_backend_name() != "sqlite" or url.query.get("uri"):
        return
    path = url.database or ""
    fix = "set AIRFLOW_HOME (or AIRFLOW__DATABASE__SQL_ALCHEMY_CONN) to your deployment's"
    if api_option:
        fix = f"pass --api URL --token TOKEN to ask a running deployment, or {fix}"
    fix += "; for `make demo` in the checkout, run scripts/demo-tessera instead"
    where = f"{path} (from [database] sql_alchemy_conn; AIRFLOW_HOME is {AIRFLOW_HOME})"
    if not path or path == ":memory:" or not os.path.isfile(path):
        raise Refused(f"no Airflow metadata database at {where}; {fix}")
    try:
        # mode=ro: never creates the file, never writes it; a read lock for one query at most.
        read_only = f"file:{urllib.parse.quote(path)}?mode=ro"
        with contextlib.closing(sqlite3.connect(read_only, uri=True, timeout=10)) as db:
            found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'dag'").fetchone()
    except sqlite3.Error as error:
        raise Refused(f"cannot read the Airflow metadata database at {where} ({error}); {fix}") from None
    if found is None:
        raise Refused(
            f"the database at {where} holds no Airflow tables (run `airflow db migrate` for a new deployment); {fix}"
        )


def database_failure(error: Exception, *, doing: str = "read") -> str:
    """A database error (SQLAlchemy's) as one line: its kind and the driver's first line, never a traceback."""
    cause = getattr(error, "orig", None)
    reason = (str(cause if cause is not None else error).splitlines() or [""])[0]
    return (
        f"cannot {doing} the metadata database ({type(error).__name__}: {reason}); run it where Airflow is "
        "configured for your deployment (`airflow db check` works there)"
    )
