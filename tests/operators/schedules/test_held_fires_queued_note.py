"""A plain timetable's run that waited for a slot says so, however briefly it waited (real metadata DB).

Found by ``tests/e2e/test_overlap_policies_e2e.py``: a ``buffer_all`` run created 46 s after it
came due (the run before it held the one slot) had no note and no ``tessera.schedule.queued``
entry, because runs created within a minute of their tick were taken as on time.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from tessera.timetables import Every, Fixed

DAG_ID = "held_fires_queued_probe"
T0 = datetime.datetime(2026, 3, 1, 10, 0, tzinfo=datetime.timezone.utc)
SECOND = datetime.timedelta(seconds=1)


@pytest.fixture
def session(airflow_db: str) -> Iterator[object]:
    """A DAG row and a session; its runs and audit entries are removed after the test."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    DagBundlesManager().sync_bundles_to_db()
    with create_session() as setup:
        setup.merge(DagModel(dag_id=DAG_ID, bundle_name="dags-folder", is_paused=False, is_stale=False))
    with create_session() as held:
        yield held
        held.rollback()
    with create_session() as cleanup:
        for model in (DagRun, Log):
            cleanup.execute(delete(model).where(model.dag_id == DAG_ID))
        cleanup.execute(delete(DagModel).where(DagModel.dag_id == DAG_ID))


def _run(session, due: datetime.datetime, *, created: datetime.datetime, ended: datetime.datetime | None):
    from airflow.models.dagrun import DagRun

    run = DagRun(
        dag_id=DAG_ID,
        run_id=f"scheduled__{due.isoformat()}",
        run_type="scheduled",
        state="success" if ended else "running",
        logical_date=due - 10 * SECOND,
        data_interval=(due - 10 * SECOND, due),
        run_after=due,
        start_date=created,
    )
    run.created_at, run.end_date = created, ended
    timetable = Every("10s", phase=Fixed("0s"), overlap="buffer_all")
    run.dag = SimpleNamespace(timetable=timetable, max_active_runs=1, default_args={})
    session.add(run)
    session.flush()
    return run


@pytest.mark.parametrize("late", [2, 17, 46], ids=lambda s: f"created-{s}s-late")
def test_a_buffer_all_run_created_when_the_slot_freed_is_noted_as_queued(session, late):
    from airflow.models.log import Log
    from sqlalchemy import select

    from tessera.operators.schedules.held_fires import fires_before

    freed = T0 + 10 * SECOND + late * SECOND
    _run(session, T0, created=T0 + SECOND / 2, ended=freed)
    queued = _run(session, T0 + 10 * SECOND, created=freed + SECOND / 2, ended=None)
    note = fires_before(queued, session)
    assert note == (
        "Queued: this fire came due at 2026-03-01 10:00:10 UTC while max_active_runs 1 run(s) of "
        f"{DAG_ID} were in flight (overlap buffer_all); it was created when a slot freed at "
        f"{freed.strftime('%Y-%m-%d %H:%M:%S')} UTC."
    )
    session.flush()
    extras = session.scalars(select(Log.extra).where(Log.dag_id == DAG_ID, Log.event == "tessera.schedule.queued"))
    assert [json.loads(extra) for extra in extras] == [
        {"how": "queued", "due": "2026-03-01T10:00:10+00:00", "overlap": "buffer_all"}
    ]


def test_a_run_created_on_time_says_nothing(session):
    from tessera.operators.schedules.held_fires import fires_before

    _run(session, T0, created=T0 + SECOND / 2, ended=T0 + 5 * SECOND)
    on_time = _run(session, T0 + 10 * SECOND, created=T0 + 10.5 * SECOND, ended=None)
    assert fires_before(on_time, session) is None
