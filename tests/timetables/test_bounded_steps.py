"""What the scheduler calls costs a bounded number of cadence steps, however long the scheduler slept.

Each timetable's cadence is wrapped in a counting proxy; the answers are checked
against what the catch-up policy owes, the cost is counted in steps, never timed.
"""

from __future__ import annotations

import pendulum
import pytest
import time_machine
from airflow.models.dag import DagModel
from airflow.timetables.base import DagRunInfo, DataInterval, TimeRestriction

from tessera.timetables import Backfill, Calendar, Cron, Every, Fixed, Latest
from tessera.timetables._time.plan import Plan
from tessera.timetables.base import to_us
from tessera.timetables.support import run_info

from ._time.counting import CountingCadence

NOW = pendulum.datetime(2026, 5, 27, 13, 7, tz="UTC")
LONG_AGO = pendulum.datetime(1990, 1, 1, tz="UTC")  # 36 years of downtime: 19 million missed minutes
CONSTANT = 8  # steps one answer may take besides the catch-up walk (bounds, window, deadline)

TIMETABLES = [
    pytest.param(lambda c: Every("1m", phase=Fixed("0s"), catch_up=c), id="every-1m"),
    pytest.param(lambda c: Calendar.day("09:00", timezone="Europe/Amsterdam", catch_up=c), id="daily-amsterdam"),
    pytest.param(lambda c: Calendar.hour(1, at="00:30", timezone="America/New_York", catch_up=c), id="hourly-ny"),
    pytest.param(lambda c: Cron("* * * * *", catch_up=c), id="cron-every-minute"),
    pytest.param(lambda c: Cron("*/5 * * * *", timezone="Europe/London", catch_up=c), id="cron-5m-london"),
]
POLICIES = [pytest.param(Latest(), id="latest"), pytest.param(Backfill(limit=1000), id="backfill-1000")]


def counted(make, policy, budget: int = 5_000):
    timetable = make(policy).bind(dag_id="bounded", catchup=False, end_date=None)
    plan = timetable._plan
    counting = CountingCadence(plan.cadence, budget=budget)
    timetable._plan = Plan(counting, plan.delay, plan.lookback, plan.phase)
    return timetable, counting


def info_of(timetable, occurrence_end: pendulum.DateTime) -> DagRunInfo:
    """The stored run whose window ends at the occurrence ``occurrence_end`` (no delay in these cases)."""
    start = pendulum.instance(timetable.infer_manual_data_interval(run_after=occurrence_end).start)
    return run_info(occurrence_end, DataInterval(start, occurrence_end))


def limit_of(policy) -> int:
    """Due occurrences the policy runs after downtime: 1 for Latest, the newest plus `limit` for Backfill."""
    return policy.backlog


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("make", TIMETABLES)
def test_next_dagrun_info_after_huge_downtime_walks_at_most_the_limit(make, policy):
    timetable, counting = counted(make, policy)
    restriction = TimeRestriction(LONG_AGO, None, False)
    with time_machine.travel(NOW, tick=False):
        last = info_of(timetable, pendulum.instance(timetable.infer_manual_data_interval(run_after=LONG_AGO).end))
        counting.steps = 0
        info = timetable.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction)
        assert counting.steps <= limit_of(policy) + CONSTANT
    # It is the oldest of the occurrences the policy owes: exactly that many up to now (Backfill(1000): 1001).
    cadence, occurrence, runs = counting.inner, to_us(info.data_interval.end), 0
    while occurrence <= to_us(NOW):
        runs, occurrence = runs + 1, cadence.following(occurrence)
    assert runs == limit_of(policy)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("make", TIMETABLES)
def test_next_dagrun_info_in_steady_state_costs_a_constant(make, policy):
    timetable, counting = counted(make, policy)
    restriction = TimeRestriction(LONG_AGO, None, False)
    with time_machine.travel(NOW, tick=False):
        newest = timetable.infer_manual_data_interval(run_after=NOW)
        previous = timetable.infer_manual_data_interval(run_after=newest.start)
        last = info_of(timetable, pendulum.instance(previous.end))
        counting.steps = 0
        info = timetable.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction)
        assert info.data_interval.end == newest.end
        assert counting.steps <= CONSTANT
        counting.steps = 0
        info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction)
        assert info.data_interval.end > NOW  # the next one, not yet due
        assert counting.steps <= CONSTANT
        counting.steps = 0
        timetable.infer_manual_data_interval(run_after=NOW)
        assert counting.steps <= CONSTANT


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("make", TIMETABLES)
def test_stored_run_check_walks_at_most_the_limit(make, policy):
    """next_run_info_from_dag_model: a run stored 36 years ago moves forward in at most `limit` steps."""
    timetable, counting = counted(make, policy)
    with time_machine.travel(NOW, tick=False):
        stored = timetable.infer_manual_data_interval(run_after=LONG_AGO)
        model = DagModel(dag_id="bounded")
        model.next_dagrun = stored.start
        model.next_dagrun_data_interval = (stored.start, stored.end)
        model.next_dagrun_create_after = stored.end
        counting.steps = 0
        info = timetable.next_run_info_from_dag_model(dag_model=model)
        assert counting.steps <= limit_of(policy) + CONSTANT
        newest = timetable.infer_manual_data_interval(run_after=NOW)
        assert stored.end < info.data_interval.end <= newest.end

        # Steady state: the stored run is the newest due one.
        model.next_dagrun = newest.start
        model.next_dagrun_data_interval = (newest.start, newest.end)
        model.next_dagrun_create_after = newest.end
        counting.steps = 0
        assert timetable.next_run_info_from_dag_model(dag_model=model).data_interval.end == newest.end
        assert counting.steps <= CONSTANT


@pytest.mark.parametrize("make", TIMETABLES)
def test_catchup_true_enumeration_costs_a_constant_per_run(make):
    """A DAG with catchup=True (and a backfill) gets one run per call, each call a constant number of steps."""
    timetable, counting = counted(make, Backfill(limit=1000))
    restriction = TimeRestriction(LONG_AGO, None, True)
    info = None
    with time_machine.travel(NOW, tick=False):
        for _ in range(50):
            counting.steps = 0
            info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction)
            assert counting.steps <= CONSTANT
    assert LONG_AGO <= info.data_interval.start < LONG_AGO.add(days=60)
