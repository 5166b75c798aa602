"""A plain timetable's overlap policy decides the next run even when the stored run is the newest due one.

Airflow stores a DAG's next run when it creates the previous one, stepping from it with the
catch-up (``Latest``: the newest due tick). A run created late, because it waited for a slot,
therefore stores a run that steps past the ticks that came due while it waited: the overlap
policy still owes them (``allow_all`` / ``buffer_all``: every one, oldest first) or drops them
(``buffer_one``: a tick was already queued). Found by ``tests/e2e/test_overlap_policies_e2e.py``:
with ``max_active_runs=2`` two slots freed at once, and the second run created skipped two ticks.
"""

from __future__ import annotations

import pendulum
import pytest
import time_machine
from airflow.models.dag import DagModel
from pytest_mock import MockerFixture

from tessera.timetables import Every, Fixed, run_policy
from tessera.timetables.run_policy import RunActivity


def at(text: str) -> pendulum.DateTime:
    return pendulum.parse(f"2026-03-01T{text}", tz="UTC")


@pytest.fixture
def activity(mocker: MockerFixture) -> list[RunActivity]:
    """The activity the scheduler's reader answers (the plugin's reads the metadata DB); the readers restored after."""
    answer: list[RunActivity] = []
    mocker.patch.object(run_policy, "_readers", [])
    run_policy.register_activity_reader(lambda dag_model: answer[0])
    return answer


def _next(overlap: str, stored_end: str, now: str) -> str:
    timetable = Every("10s", phase=Fixed("0s"), overlap=overlap).bind(dag_id="d", catchup=False, end_date=None)
    model = DagModel(dag_id="d")
    model.next_dagrun = at(stored_end).subtract(seconds=10)
    model.next_dagrun_data_interval = (at(stored_end).subtract(seconds=10), at(stored_end))
    model.next_dagrun_create_after = at(stored_end)
    with time_machine.travel(at(now), tick=False):
        info = timetable.next_run_info_from_dag_model(dag_model=model)
    assert info is not None and info.data_interval is not None
    return info.data_interval.end.strftime("%H:%M:%S")


@pytest.mark.parametrize(
    ("overlap", "owed"),
    [
        pytest.param("allow_all", "10:05:10", id="allow_all-every-tick-oldest-first"),
        pytest.param("buffer_all", "10:05:10", id="buffer_all-every-tick-oldest-first"),
        pytest.param("buffer_one", "10:05:40", id="buffer_one-ticks-that-came-while-it-was-queued-are-dropped"),
    ],
)
def test_a_run_created_late_does_not_step_past_what_the_policy_owes(activity, overlap, owed):
    # The 10:05:00 run waited for a slot until 10:05:36.3 (a run before it ended then) and was
    # created; Airflow stored the newest due tick then, 10:05:30. It ended at 10:05:38, and at
    # 10:05:38.5 (still before 10:05:40) the scheduler creates the next run.
    activity.append(
        RunActivity(
            last_window_end=at("10:05:00"),
            freed_before=at("10:05:36.300000"),
            freed_after=at("10:05:38"),
        )
    )
    assert _next(overlap, stored_end="10:05:30", now="10:05:38.500000") == owed


def test_a_run_on_time_keeps_the_stored_run(activity):
    activity.append(RunActivity(last_window_end=at("10:05:20"), freed_before=None, freed_after=at("10:05:20.5")))
    assert _next("allow_all", stored_end="10:05:30", now="10:05:30.400000") == "10:05:30"
