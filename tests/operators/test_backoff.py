"""Failure backoff: the retry schedule Airflow itself computes from ``backoff(cadence)``, no sleeping.

The worker asks the task's retry policy for a delay and the Execution API
stores it on the task instance as ``retry_delay_override``; the scheduler then
calls ``TaskInstance.next_retry_datetime()``. The tests replay exactly that on
a real serialized task, try after try.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from airflow.models.dagrun import DagRun
from airflow.models.taskinstance import TaskInstance
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from tessera.operators.backoff import RETRIES_FOREVER, CadenceBackoff, backoff
from tessera.timetables import Calendar
from tests.compat.airflow_names import DagSerialization

DAILY = Calendar.day("09:00", timezone="America/New_York")
FAILED_AT = datetime(2026, 3, 9, 13, 0, tzinfo=timezone.utc)
MINUTE = timedelta(minutes=1)


def scheduler_side_task_instance(schedule, **backoff_kwargs) -> tuple[TaskInstance, CadenceBackoff]:
    """The task as the scheduler sees it (deserialized), and the policy the worker evaluates."""
    timetable = schedule if isinstance(schedule, Calendar) else None
    defaults = backoff(schedule, **backoff_kwargs)
    with DAG(dag_id="broken_report", schedule=timetable, default_args=defaults) as dag:
        task = EmptyOperator(task_id="load")
    serialized = DagSerialization.from_dict(DagSerialization.to_dict(dag)).get_task("load")
    ti = TaskInstance(serialized, dag_version_id=None, run_id="scheduled__2026-03-09")
    ti.dag_run = DagRun(
        dag_id="broken_report",
        run_id="scheduled__2026-03-09",
        logical_date=FAILED_AT,
        data_interval=(FAILED_AT - timedelta(days=1), FAILED_AT),
    )
    return ti, task.retry_policy


def wait_after(ti: TaskInstance, policy: CadenceBackoff, try_number: int, ended: datetime) -> timedelta:
    """What the scheduler waits after try ``try_number`` failed at ``ended``, the policy having answered."""
    decision = policy.evaluate(RuntimeError("source down"), try_number=try_number, max_tries=ti.max_tries)
    ti.try_number, ti.end_date = try_number, ended
    ti.retry_delay_override = decision.retry_delay.total_seconds()  # what the Execution API stores
    return ti.next_retry_datetime() - ended


def test_task_arguments_cap_airflows_own_backoff_at_one_period():
    ti, policy = scheduler_side_task_instance(DAILY)
    task = ti.task
    assert (task.retry_delay, task.retry_exponential_backoff, task.max_retry_delay) == (
        timedelta(minutes=5),
        2.0,
        timedelta(days=1),
    )
    assert task.retries == RETRIES_FOREVER  # never stops on its own while the DAG is active: pausing stops it
    assert task.has_retry_policy and isinstance(policy, CadenceBackoff)


def test_retries_wait_5_10_20_40_minutes_doubling_up_to_one_day():
    ti, policy = scheduler_side_task_instance(DAILY)
    waits = [wait_after(ti, policy, n, FAILED_AT) // MINUTE for n in range(1, 14)]
    assert waits == [5, 10, 20, 40, 80, 160, 320, 640, 1280, 1440, 1440, 1440, 1440]


@pytest.mark.parametrize(
    ("schedule", "cap_minutes"),
    [
        pytest.param(Calendar.hour(6), 360, id="every-6-hours"),
        pytest.param(Calendar.week("monday", "07:00", timezone="UTC"), 7 * 1440, id="weekly"),
        pytest.param(Calendar.month(31, "06:00", timezone="UTC"), 30 * 1440, id="monthly"),
        pytest.param("45m", 45, id="a-duration"),
    ],
)
def test_the_cap_is_one_period_of_the_cadence(schedule, cap_minutes):
    ti, policy = scheduler_side_task_instance(schedule)
    waits = [wait_after(ti, policy, n, FAILED_AT) // MINUTE for n in range(1, 40)]
    assert max(waits) == cap_minutes == waits[-1]
    assert waits[:2] == [5, 10]
    assert all(b in (2 * a, cap_minutes) for a, b in zip(waits, waits[1:], strict=False))


def test_without_the_policy_airflows_jittered_doubling_is_capped_too():
    """A task killed without reporting its failure is retried by Airflow's own formula: still capped."""
    ti, _ = scheduler_side_task_instance(DAILY)
    for n in range(1, 20):
        ti.try_number, ti.end_date, ti.retry_delay_override = n, FAILED_AT, None
        wait = ti.next_retry_datetime() - FAILED_AT
        nominal = min(timedelta(minutes=5) * 2 ** (n - 1), timedelta(days=1))
        assert nominal <= wait <= min(2 * nominal, timedelta(days=1))


def test_a_permanently_broken_daily_dag_settles_into_one_retry_a_day():
    ti, policy = scheduler_side_task_instance(DAILY)
    attempts, ended, n = [], FAILED_AT, 0
    while ended < FAILED_AT + timedelta(days=40):
        n += 1
        ended = ended + wait_after(ti, policy, n, ended)  # each retry fails at once
        attempts.append(ended)
    assert n < ti.max_tries, "still retrying after 40 days: only pausing stops it"
    per_day = [0] * 30
    for attempt in attempts:
        day = (attempt - FAILED_AT) // timedelta(days=1)
        if day < 30:
            per_day[day] += 1
    assert per_day[0] == 8  # 5m, 15m, 35m ... 21h15m after the first failure
    assert per_day[2:] == [1] * 28  # rather than one per 15-minute sweep


def test_success_or_clear_starts_the_doubling_again():
    ti, policy = scheduler_side_task_instance(DAILY)
    assert wait_after(ti, policy, 12, FAILED_AT) == timedelta(days=1)
    # The next run's task instance starts at try 1 again.
    fresh, _ = scheduler_side_task_instance(DAILY)
    assert wait_after(fresh, policy, 1, FAILED_AT) == timedelta(minutes=5)
    # A clear after try 12 raises max_tries to 12 + retries: the count restarts from there.
    ti.max_tries = 12 + policy.retries
    assert wait_after(ti, policy, 13, FAILED_AT) == timedelta(minutes=5)
    assert wait_after(ti, policy, 14, FAILED_AT) == timedelta(minutes=10)


def test_huge_try_numbers_stay_at_the_cap():
    _, policy = scheduler_side_task_instance(DAILY)
    assert policy.delay(10_000) == timedelta(days=1)


def test_policy_round_trips_its_own_serialization():
    _, policy = scheduler_side_task_instance(DAILY)
    assert CadenceBackoff.deserialize(policy.serialize()) == policy
    assert repr(policy) == f"CadenceBackoff(first=5m, cap=1d, retries={RETRIES_FOREVER})"


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "fragment"),
    [
        pytest.param(("10m",), {"first": "soon"}, ValueError, "first: 'soon' is not a duration", id="first"),
        pytest.param((object(),), {}, TypeError, "schedule: <object", id="no-period"),
        pytest.param(("1d",), {"retries": -1}, ValueError, "retries: -1", id="negative-retries"),
        pytest.param(("soon",), {}, ValueError, "schedule: 'soon' is not a duration", id="bad-duration"),
        pytest.param(("1d",), {"first": "367d"}, ValueError, "first: '367d' is longer than", id="first-max"),
        pytest.param(("99999999999d",), {}, ValueError, "schedule: '99999999999d' is longer", id="period-huge"),
        pytest.param(("1d",), {"retries": 1001}, ValueError, "retries: 1001 must be .* 0 to 1000", id="retries-max"),
    ],
)
def test_invalid_arguments_name_the_field(args, kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        backoff(*args, **kwargs)


def test_a_cadence_shorter_than_the_first_wait_retries_once_a_period():
    args = backoff("1m")
    assert args["retry_delay"] == args["max_retry_delay"] == timedelta(minutes=1)
    assert [args["retry_policy"].delay(n) for n in (1, 2, 5)] == [timedelta(minutes=1)] * 3


def test_explicit_retries_and_first_wait():
    args = backoff("1h", first="1m", retries=3)
    assert (args["retries"], args["retry_delay"], args["max_retry_delay"]) == (3, MINUTE, timedelta(hours=1))
    assert [args["retry_policy"].delay(n) // MINUTE for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]


class EarlierRuns:
    """The Execution API's answers about this task's earlier runs, newest first (what a worker asks it)."""

    def __init__(self, *states_and_tries: tuple[str, int]) -> None:
        from airflow.sdk.api.datamodels._generated import PreviousTIResponse

        self.answers = [
            PreviousTIResponse(
                task_id="load",
                dag_id="broken_report",
                run_id=f"scheduled__{n}",
                logical_date=FAILED_AT - timedelta(days=n + 1),
                state=state,
                try_number=tries,
            )
            for n, (state, tries) in enumerate(states_and_tries)
        ]
        self.asked: list[object] = []

    def get_previous_ti(self, logical_date=None):
        self.asked.append(logical_date)
        before = [a for a in self.answers if logical_date is None or a.logical_date < logical_date]
        return before[0] if before else None


def test_the_count_goes_on_across_runs_until_a_success():
    _, policy = scheduler_side_task_instance(DAILY, retries=1)
    # Two earlier runs failed (2 tries each), the one before them succeeded.
    earlier = EarlierRuns(("failed", 2), ("failed", 2), ("success", 1), ("failed", 2))
    decision = policy.evaluate(RuntimeError("down"), try_number=1, max_tries=1, context={"ti": earlier})
    assert decision.retry_delay == timedelta(minutes=5) * 2**4  # failure 5: 4 earlier + this one
    assert "backoff after failure 5, 4 of them in earlier runs: retry in 1h20m" in decision.reason
    assert len(earlier.asked) == 3, "it stops at the success"


def test_the_count_reads_no_further_back_than_the_cap_needs():
    _, policy = scheduler_side_task_instance(DAILY, retries=1)
    earlier = EarlierRuns(*[("failed", 2)] * 40)
    decision = policy.evaluate(RuntimeError("down"), try_number=1, max_tries=1, context={"ti": earlier})
    assert decision.retry_delay == timedelta(days=1)
    assert len(earlier.asked) == 5  # 10 failures put every wait at the one-day cap


def test_a_clear_does_not_read_the_earlier_runs():
    _, policy = scheduler_side_task_instance(DAILY, retries=1)
    earlier = EarlierRuns(("failed", 2))
    decision = policy.evaluate(RuntimeError("down"), try_number=4, max_tries=4, context={"ti": earlier})
    assert decision.retry_delay == timedelta(minutes=5) and earlier.asked == []


def test_the_last_try_names_no_retry():
    """Its failure fails the task: the decision says nothing of a wait (Airflow would log "retry in 1h20m")."""
    _, policy = scheduler_side_task_instance(DAILY, retries=2)
    decision = policy.evaluate(RuntimeError("down"), try_number=3, max_tries=2)
    assert (decision.action.value, decision.retry_delay, decision.reason) == ("default", None, None)
    assert policy.evaluate(RuntimeError("down"), try_number=2, max_tries=2).retry_delay == timedelta(minutes=10)
