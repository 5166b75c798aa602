"""The real dag-processor and scheduler create exactly the runs an ``Every`` schedule plans.

Both DAGs run every 30 s; the tests wait for a few runs of each and check the
``dag_run`` rows the scheduler wrote against the arithmetic of the schedule
(occurrences on the epoch grid, windows that tile, run_after = occurrence +
phase) and against the timetable's own stepping.
"""

from __future__ import annotations

import datetime

import pytest
from airflow.timetables.base import DataInterval, TimeRestriction

from tessera.timetables.support import run_info
from tests.compat.airflow_names import DagBag

from .harness import DAGS_SOURCE, AirflowHome

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
INTERVAL = datetime.timedelta(seconds=30)
RUNS_WANTED = 4
WAIT = 180
FIXED = "e2e_every_30s_fixed_phase"
DEFAULT = "e2e_every_30s_default_phase"


def _s(seconds: int) -> datetime.timedelta:
    return datetime.timedelta(seconds=seconds)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("dag_id", "delay", "phase"),
    [
        pytest.param(FIXED, _s(5), _s(3), id="fixed-phase"),
        # Pinned: SHA-256 of the DAG id spread over the 30 s interval at 1 s resolution.
        pytest.param(DEFAULT, _s(0), _s(11), id="default-phase"),
    ],
)
def test_scheduler_creates_the_planned_runs(
    airflow_stack: AirflowHome, dag_id: str, delay: datetime.timedelta, phase: datetime.timedelta
) -> None:
    runs = airflow_stack.wait_for_runs(dag_id, RUNS_WANTED, timeout=WAIT)

    assert {run.run_type for run in runs} == {"scheduled"}
    assert len({run.logical_date for run in runs}) == len(runs), "duplicate runs"
    occurrences = []
    for run in runs:
        assert run.data_interval_end is not None
        occurrence = run.data_interval_end + delay
        occurrences.append(occurrence)
        assert (occurrence - EPOCH) % INTERVAL == _s(0), f"{run.run_id}: off the epoch grid"
        assert run.run_after == occurrence + phase, run.run_id
        assert run.data_interval_start == occurrence - delay - INTERVAL, run.run_id
        assert run.logical_date == run.data_interval_start, run.run_id
        # The scheduler may only create a run once its phase has passed.
        assert run.queued_at is not None and run.queued_at >= run.run_after, run.run_id

    for previous, following in zip(runs, runs[1:], strict=False):
        assert following.data_interval_start == previous.data_interval_end, "windows must tile"

    # A DAG that never ran owes only its newest due occurrence, not the history before it existed.
    assert airflow_stack.started_at is not None
    assert occurrences[0] + phase + INTERVAL > airflow_stack.started_at


@pytest.mark.e2e
@pytest.mark.parametrize("dag_id", [FIXED, DEFAULT], ids=["fixed-phase", "default-phase"])
def test_stored_runs_follow_the_timetable_stepping(airflow_stack: AirflowHome, dag_id: str) -> None:
    # The same DAG file parsed here, through the same dag policy, predicts each run from the one before.
    timetable = DagBag(str(DAGS_SOURCE)).dags[dag_id].timetable
    runs = airflow_stack.wait_for_runs(dag_id, RUNS_WANTED, timeout=WAIT)
    stored = [(r.run_after, DataInterval(r.data_interval_start, r.data_interval_end)) for r in runs]

    predicted = [stored[0]]
    catchup = TimeRestriction(earliest=None, latest=None, catchup=True)
    for _ in stored[1:]:
        last = run_info(predicted[-1][0], predicted[-1][1])
        info = timetable.next_dagrun_info_v2(last_dagrun_info=last, restriction=catchup)
        assert info is not None
        predicted.append((info.run_after, info.data_interval))
    assert predicted == stored
