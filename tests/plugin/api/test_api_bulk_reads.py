"""The bulk reads behind the page agree with the one-DAG-at-a-time reads they replaced.

- What is decoded from a stored DAG's JSON alone (timetable, run bounds, cursor tasks,
  default_args) equals what Airflow's full deserialization of the same DAG gives, for every
  example DAG and for DAGs whose tasks carry their own start and end dates.
- The grouped run queries find, for every DAG, the runs the per-DAG queries found: the two
  newest scheduled runs, the newest run, the last outcome and the failure streak.
"""

from __future__ import annotations

import datetime
import json
import random

import pytest

from tests.conftest import EXAMPLES

UTC = datetime.timezone.utc
BOUNDS_FILE = """
import datetime
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.timetables import Every

UTC = datetime.timezone.utc
def at(day):
    return None if day is None else datetime.datetime(2026, 3, day, tzinfo=UTC)

CASES = {
    "bounds_task_starts_earlier": (at(10), None, [(at(5), None), (None, None)]),
    "bounds_every_task_ends": (at(1), None, [(None, at(20)), (None, at(25))]),
    "bounds_one_task_ends_dag_ends": (at(1), at(15), [(None, at(28)), (None, None)]),
    "bounds_none": (None, None, [(None, None)]),
}
for dag_id, (start, end, tasks) in CASES.items():
    with DAG(dag_id, schedule=Every("1h"), start_date=start, end_date=end, default_args={"retries": 3}):
        for n, (task_start, task_end) in enumerate(tasks):
            EmptyOperator(task_id=f"t{n}", start_date=task_start, end_date=task_end)
"""


def _serialized(dags: dict) -> dict:
    from tests.compat.airflow_names import DagSerialization

    return {dag_id: json.loads(json.dumps(DagSerialization.to_dict(dag))) for dag_id, dag in dags.items()}


@pytest.fixture(scope="module")
def stored_json(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from tests.compat.airflow_names import DagBag

    folder = tmp_path_factory.mktemp("tessera-bounds")
    (folder / "bounds.py").write_text(BOUNDS_FILE)
    found = {}
    for path in (EXAMPLES, folder):
        bag = DagBag(str(path))
        assert not bag.import_errors, bag.import_errors
        found |= _serialized(bag.dags)
    return found


def test_what_is_decoded_from_the_json_is_what_full_deserialization_gives(stored_json):
    from tessera.plugin.fleet.schedules import run_bounds
    from tessera.plugin.fleet.stored import decode
    from tests.compat.airflow_names import DagSerialization

    assert len(stored_json) > 15
    for dag_id, data in stored_json.items():
        full = DagSerialization.from_dict(data)
        stored = decode(dag_id, data)
        assert stored.error is None, (dag_id, stored.error)
        assert type(stored.timetable) is type(full.timetable), dag_id
        assert stored.timetable.serialize() == full.timetable.serialize(), dag_id
        assert stored.description == full.timetable.description, dag_id
        assert (stored.earliest, stored.latest) == run_bounds(full), dag_id
        # The one copy of Airflow's rule gives what Airflow's own gives (a contract: it is private).
        airflow_s = full._time_restriction
        assert run_bounds(full) == (airflow_s.earliest, airflow_s.latest), dag_id
        cursors = tuple(t.task_id for t in full.tasks if t.task_type == "CursorFunctionOperator")
        assert stored.cursor_task_ids == cursors, dag_id
        assert stored.default_args == dict(full.default_args), dag_id
    assert decode("tessera_cursor_digest", stored_json["tessera_cursor_digest"]).cursor_task_ids, (
        "an example with a cursor task"
    )
    assert decode("bounds_every_task_ends", stored_json["bounds_every_task_ends"]).latest.day == 25


# -- the grouped run queries against the per-DAG queries ----------------------------------------


def _per_dag(session, dag_id: str) -> tuple:
    """The queries the status ran for each DAG before they were grouped (the reference)."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.types import DagRunType
    from sqlalchemy import select

    runs = select(DagRun).where(DagRun.dag_id == dag_id)
    fires = list(
        session.scalars(runs.where(DagRun.run_type == DagRunType.SCHEDULED).order_by(DagRun.run_after.desc()).limit(2))
    )
    last_run = session.scalar(runs.order_by(DagRun.run_after.desc(), DagRun.id.desc()).limit(1))
    finished = session.scalars(
        select(DagRun)
        .where(DagRun.dag_id == dag_id, DagRun.end_date.is_not(None))
        .order_by(DagRun.end_date.desc())
        .limit(100)
    ).all()
    failures = 0
    for run in finished:
        if run.state != "failed":
            break
        failures += 1
    outcome = str(finished[0].state) if finished else None
    return [r.run_id for r in fires], None if last_run is None else last_run.run_id, outcome, failures


def _add_history(session, dag_id: str, rng: random.Random) -> None:
    from airflow.models.dagrun import DagRun
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunType

    base = datetime.datetime(2026, 3, 2, tzinfo=UTC)
    states = (DagRunState.FAILED, DagRunState.SUCCESS, DagRunState.RUNNING, DagRunState.QUEUED)
    kinds = (DagRunType.SCHEDULED, DagRunType.MANUAL, DagRunType.BACKFILL_JOB)
    # A long failure streak for some DAGs: more than the 100 newest runs the streak counts within.
    count = rng.choice((0, 1, 2, 3, 7, 105))
    streak = count == 105
    for k in range(count):
        kind = DagRunType.SCHEDULED if streak else rng.choice(kinds)
        state = DagRunState.FAILED if streak else rng.choice(states)
        start = base + datetime.timedelta(hours=k)
        logical = None if kind == DagRunType.MANUAL else start
        run = DagRun(
            dag_id,
            f"{kind.value}__{k}",
            logical_date=logical,
            run_after=start + datetime.timedelta(hours=1),
            run_type=kind,
            state=state,
            data_interval=None if logical is None else (start, start + datetime.timedelta(hours=1)),
        )
        if state in (DagRunState.FAILED, DagRunState.SUCCESS):
            # Finishing order differs from creation order, so end_date and run_after disagree.
            run.end_date = start + datetime.timedelta(hours=1, minutes=rng.randrange(0, 300), seconds=k)
        session.add(run)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_grouped_run_queries_find_what_the_per_dag_queries_found(airflow_db, seed):
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    from tessera.plugin.fleet.runs import run_histories
    from tessera.plugin.scoped_reads import Scope

    rng = random.Random(seed)
    dag_ids = [f"history_{seed}_{n:02d}" for n in range(30)]
    DagBundlesManager().sync_bundles_to_db()
    with create_session() as session:
        for dag_id in dag_ids:
            session.add(DagModel(dag_id=dag_id, bundle_name="dags-folder"))  # histories are of stored DAGs
        session.flush()
        for dag_id in dag_ids:
            _add_history(session, dag_id, rng)
    with create_session() as session:
        histories = run_histories(session, Scope.of(dag_ids), dag_ids)
        for dag_id in dag_ids:
            history = histories[dag_id]
            grouped = (
                [r.run_id for r in history.fires],
                None if history.last_run is None else history.last_run.run_id,
                history.last_outcome,
                history.consecutive_failures,
            )
            assert grouped == _per_dag(session, dag_id), dag_id
    assert any(h.consecutive_failures == 100 for h in histories.values()), "a streak past the 100 counted"
