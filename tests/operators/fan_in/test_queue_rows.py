"""The queue rows that release an AFTER child (``operators/fan_in/queue.py``), on real SQLite and PostgreSQL.

The race is between two schedulers: one records a parent fire (tessera's listener queues the
child) while the other is creating the child's run from the rows it locked and will delete.
The scheduler's side is Airflow's own statements (``_create_dag_runs_asset_triggered``): its
``FOR UPDATE SKIP LOCKED`` read of the child's rows, then the delete of exactly those rows.
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, delete, select, text, tuple_
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from tessera.operators.fan_in.queue import queue_children

UTC = datetime.timezone.utc
CHILD = "gold_fact"
PARENT, OTHER_PARENT = 7, 8
LONG_AGO = datetime.datetime(2026, 1, 1, tzinfo=UTC)
LOCK_WAIT_BOUND = 15.0
"""Seconds a test waits for the fire's insert to reach the scheduler's row lock (it takes milliseconds)."""

TABLE = """CREATE TABLE asset_dag_run_queue (
    asset_id INTEGER NOT NULL, target_dag_id VARCHAR(250) NOT NULL, created_at {timestamp} NOT NULL,
    PRIMARY KEY (asset_id, target_dag_id))"""
"""Airflow's table as its model declares it; its foreign keys (asset, dag) are left out: no row here needs them."""


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path) -> Iterator[Engine]:
    if request.param == "sqlite":
        built = create_engine(f"sqlite:///{tmp_path / 'queue.db'}")
        timestamp = "TIMESTAMP"
    else:
        url = request.getfixturevalue("postgres_server").create_database(f"queue_{tmp_path.name[-12:].lower()}")
        built = create_engine(url)
        timestamp = "TIMESTAMP WITH TIME ZONE"
    with built.begin() as connection:
        connection.execute(text(TABLE.format(timestamp=timestamp)))
    try:
        yield built
    finally:
        built.dispose()


def _rows(engine: Engine) -> dict[tuple[int, str], datetime.datetime]:
    from airflow.models.asset import AssetDagRunQueue as Queue

    with Session(engine) as session:
        return {(row.asset_id, row.target_dag_id): row.created_at for row in session.scalars(select(Queue))}


def _queue(engine: Engine, rows: list[tuple[int, str]]) -> None:
    with Session(engine) as session:
        queue_children(rows, session)
        session.commit()


def test_a_pending_row_keeps_the_date_of_its_first_fire(engine):
    # Airflow dates the child's run by its newest queue row: a parent's later fires must not move it.
    with engine.begin() as connection:
        connection.execute(
            text("INSERT INTO asset_dag_run_queue VALUES (:asset, :dag, :at)"),
            {"asset": PARENT, "dag": CHILD, "at": LONG_AGO},
        )
    before = datetime.datetime.now(UTC)

    _queue(engine, [(PARENT, CHILD), (OTHER_PARENT, CHILD)])
    _queue(engine, [(PARENT, CHILD)])

    rows = _rows(engine)
    assert set(rows) == {(PARENT, CHILD), (OTHER_PARENT, CHILD)}
    assert rows[(PARENT, CHILD)].replace(tzinfo=UTC) == LONG_AGO
    assert rows[(OTHER_PARENT, CHILD)].replace(tzinfo=UTC) >= before - datetime.timedelta(seconds=1)


def _waiting_on_a_lock(engine: Engine) -> bool:
    with engine.connect() as connection:
        query = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO%'"
        return connection.execute(text(query)).scalar_one() > 0


@pytest.mark.parametrize("engine", ["postgres"], indirect=True)
def test_a_fire_landing_while_a_scheduler_takes_the_queue_still_queues_the_child(engine):
    from airflow.models.asset import AssetDagRunQueue as Queue
    from airflow.utils.sqlalchemy import with_row_locks

    _queue(engine, [(PARENT, CHILD), (OTHER_PARENT, CHILD)])
    scheduler = Session(engine)
    try:
        taken = scheduler.scalars(
            with_row_locks(
                select(Queue).where(Queue.target_dag_id == CHILD),
                of=Queue,
                skip_locked=True,
                key_share=False,
                session=scheduler,
            )
        ).all()
        assert len(taken) == 2

        failure: list[BaseException] = []

        def fire() -> None:
            try:
                _queue(engine, [(PARENT, CHILD)])
            except BaseException as error:  # the assertion below names it
                failure.append(error)

        firing = threading.Thread(target=fire, daemon=True)
        firing.start()
        deadline = time.monotonic() + LOCK_WAIT_BOUND
        while firing.is_alive() and not _waiting_on_a_lock(engine) and time.monotonic() < deadline:
            time.sleep(0.02)
        # The scheduler has created the child's run from what it took; it deletes exactly those rows.
        taken_keys = [(row.asset_id, row.target_dag_id) for row in taken]
        scheduler.execute(delete(Queue).where(tuple_(Queue.asset_id, Queue.target_dag_id).in_(taken_keys)))
        scheduler.commit()
    finally:
        scheduler.close()
    firing.join(timeout=LOCK_WAIT_BOUND)
    assert not firing.is_alive() and not failure, failure

    assert set(_rows(engine)) == {(PARENT, CHILD)}, "the fire that landed meanwhile is pending for the next run"
