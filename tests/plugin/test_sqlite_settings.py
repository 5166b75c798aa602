"""SQLite connection settings: a write waits for the write lock instead of failing with ``database is locked``.

Each test builds the metadata engine the way Airflow does (``settings.create_metadata_engine``
with the connect arguments ``[database] sql_alchemy_connect_args`` names, WAL mode as Airflow's
own connect hook sets it) and plays another process's writer on a second ``sqlite3`` connection
that never waits (timeout 0), so what is asserted is who holds SQLite's write lock, not timing.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, event, text
from sqlalchemy.orm import Session

from tessera.plugin import sqlite_settings


def _engine(path: Path) -> Engine:
    from airflow.settings import create_metadata_engine

    # Airflow adds check_same_thread to the dict it reads from the setting.
    connect_args = {**sqlite_settings.CONNECT_ARGS, "check_same_thread": False}
    engine = create_metadata_engine(f"sqlite:///{path}", engine_args={}, connect_args=connect_args)

    @event.listens_for(engine, "connect")
    def wal(dbapi_connection: sqlite3.Connection, record: object) -> None:  # as airflow.utils.orm_event_handlers
        dbapi_connection.execute("PRAGMA journal_mode=WAL")

    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE dag_run (run_id TEXT)"))
    return engine


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    built = _engine(tmp_path / "airflow.db")
    yield built
    built.dispose()


@pytest.fixture
def other_writer(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """Another process's connection: autocommit, and a write fails at once if the lock is taken."""
    connection = sqlite3.connect(tmp_path / "airflow.db", timeout=0, isolation_level=None)
    yield connection
    connection.close()


def _runs(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return sorted(connection.execute(text("SELECT run_id FROM dag_run")).scalars())


def test_a_savepoint_that_reads_then_writes_is_not_refused_because_another_process_wrote(
    engine: Engine, other_writer: sqlite3.Connection
) -> None:
    # `airflow backfill create`: inside session.begin_nested() it reads the newest run, then inserts its own.
    # Before, the SAVEPOINT began a deferred transaction: the read took a snapshot, the scheduler committed a
    # run, and the INSERT failed at once with "database is locked" though a 60 s busy timeout was set.
    session = Session(engine)
    with session.begin_nested():
        session.execute(text("SELECT count(*) FROM dag_run")).all()
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            other_writer.execute("INSERT INTO dag_run VALUES ('scheduled')")  # the lock is the backfill's
        session.execute(text("INSERT INTO dag_run VALUES ('backfill')"))
    session.commit()
    session.close()
    other_writer.execute("INSERT INTO dag_run VALUES ('scheduled')")  # and now the scheduler's turn
    assert _runs(engine) == ["backfill", "scheduled"]


def test_a_write_outside_a_savepoint_takes_the_write_lock_with_its_first_statement(
    engine: Engine, other_writer: sqlite3.Connection
) -> None:
    seen: list[str] = []
    with Session(engine) as session:
        session.connection().connection.dbapi_connection.set_trace_callback(seen.append)  # type: ignore[union-attr]
        session.execute(text("INSERT INTO dag_run VALUES ('manual')"))
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            other_writer.execute("INSERT INTO dag_run VALUES ('scheduled')")
        session.commit()
    assert seen[:2] == ["BEGIN IMMEDIATE", "INSERT INTO dag_run VALUES ('manual')"]


def test_a_session_that_only_reads_blocks_no_writer(engine: Engine, other_writer: sqlite3.Connection) -> None:
    # An API request or a UI page holding its session open while it reads must not stop the scheduler.
    with Session(engine) as session:
        session.execute(text("SELECT count(*) FROM dag_run")).all()
        other_writer.execute("INSERT INTO dag_run VALUES ('scheduled')")
        assert session.execute(text("SELECT count(*) FROM dag_run")).scalar_one() in (0, 1)
    assert _runs(engine) == ["scheduled"]


def test_a_pooled_connection_reset_by_sqlalchemy_still_begins_immediate(engine: Engine) -> None:
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert isinstance(raw, sqlite_settings.WriteLockConnection)
        engine.dialect.set_isolation_level(raw, "SERIALIZABLE")  # what a reset after AUTOCOMMIT does
        assert raw.isolation_level == "IMMEDIATE"
        raw.isolation_level = None  # autocommit, if asked for, is kept
        assert raw.isolation_level is None


def test_the_async_engine_gets_the_same_connections(tmp_path: Path) -> None:
    from airflow.settings import create_async_metadata_engine

    _engine(tmp_path / "airflow.db").dispose()

    async def insert_and_read() -> tuple[type, list[str]]:
        engine = create_async_metadata_engine(
            f"sqlite+aiosqlite:///{tmp_path / 'airflow.db'}", connect_args=dict(sqlite_settings.ASYNC_CONNECT_ARGS)
        )
        try:
            async with engine.begin() as connection:
                raw = await connection.get_raw_connection()
                await connection.execute(text("INSERT INTO dag_run VALUES ('api')"))
                rows = (await connection.execute(text("SELECT run_id FROM dag_run"))).scalars().all()
                return type(raw.driver_connection._conn), list(rows)  # type: ignore[union-attr]
        finally:
            await engine.dispose()

    kind, rows = asyncio.run(insert_and_read())
    assert kind is sqlite_settings.WriteLockConnection and rows == ["api"]
