"""A declared schedule driven by several crons: ``CRON 'a', 'b'`` / ``cron=["a", "b"]`` runs at their union.

Checked against a brute-force model: each expression's own occurrences (its ``Cron`` alone), merged
and deduplicated, are the union's; each run's window starts where the previous one ended.
"""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.operators.schedules.checks import ScheduleError
from tessera.operators.schedules.plan_check import check_plan
from tessera.operators.schedules.policy import dag_kwargs, timetable_of
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.operators.schedules.statement import ScheduleSyntaxError, parse_schedule
from tessera.timetables import Cron, Union

CRONS = ["0 9 * * 1-5", "0 17 * * 5", "30 2 * * *", "*/20 * * * *", "0 0 1 * *", "15 */6 * * *", "0 9 * * *"]
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata"]
UTC = datetime.timezone.utc


def test_the_statement_lists_the_crons_and_the_dag_gets_their_union():
    schedule = parse_schedule("SCHEDULE desk CRON '0 9 * * 1-5', '0 17 * * 5' TIMEZONE 'America/New_York' RETRIES 2;")
    assert schedule == Schedule("desk", cron=["0 9 * * 1-5", "0 17 * * 5"], timezone="America/New_York", retries=2)
    assert schedule.cron == ("0 9 * * 1-5", "0 17 * * 5") and schedule.driver == "cron"
    timetable = dag_kwargs(schedule)["schedule"]
    assert isinstance(timetable, Union)
    assert [type(member) for member in timetable.members] == [Cron, Cron]
    assert timetable._run_policy.overlap == "buffer_one"  # the schedule's policy, as for one cron
    friday = datetime.datetime(2026, 12, 4, 0, 0, tzinfo=UTC)  # 09:00 and 17:00 New York: 14:00 and 22:00 UTC
    runs = timetable.plan.upcoming(after=friday, count=3)
    assert [run.occurrence.isoformat() for run in runs] == [
        "2026-12-04T14:00:00+00:00",
        "2026-12-04T22:00:00+00:00",
        "2026-12-07T14:00:00+00:00",
    ]
    assert "cron '0 9 * * 1-5' | '0 17 * * 5' in America/New_York" in str(check_plan(ScheduleSet([schedule])))


def test_one_cron_in_a_list_is_that_cron():
    schedule = Schedule("one", cron=["0 6 * * *"])
    assert schedule.cron == "0 6 * * *" and type(timetable_of(schedule)) is Cron


@settings(max_examples=60, deadline=None)
@given(
    crons=st.lists(st.sampled_from(CRONS), min_size=2, max_size=3, unique=True),
    zone=st.sampled_from(ZONES),
    start=st.datetimes(datetime.datetime(2025, 1, 1), datetime.datetime(2027, 12, 31), timezones=st.just(UTC)),
)
def test_the_union_is_the_merge_of_each_crons_own_occurrences_and_its_windows_tile(crons, zone, start):
    union = timetable_of(Schedule("u", cron=crons, timezone=zone))
    count = 40
    merged = sorted(
        {run.occurrence for text in crons for run in Cron(text, timezone=zone).plan.upcoming(after=start, count=count)}
    )
    runs = union.plan.upcoming(after=start, count=count)
    assert [run.occurrence for run in runs] == merged[:count]  # equal instants of two crons: one run
    for previous, run in zip(runs, runs[1:]):
        assert run.window_start == previous.window_end == previous.occurrence


@pytest.mark.parametrize(
    "cron, found",
    [
        pytest.param(["0 9 * * *", "0 9 * * *"], "lists ['0 9 * * *'] twice", id="twice"),
        pytest.param(["0 9 * * *", "nope"], "item 2 of 2: 'nope' is not a five-field cron", id="bad-item"),
        pytest.param(["0 9 * * *", 5], "item 2 of 2: 5 is a int", id="not-a-string"),
        pytest.param([f"{m} 9 * * *" for m in range(17)], "a list of 17 expressions", id="seventeen"),
        pytest.param([], "a list of 0 expressions", id="empty"),
        pytest.param({"0 9 * * *"}, "is a set", id="a-set"),
    ],
)
def test_a_bad_cron_list_is_refused_naming_the_field(cron, found):
    with pytest.raises(ScheduleError) as refused:
        Schedule("x", cron=cron)
    assert str(refused.value).startswith("cron: ") and found in str(refused.value), str(refused.value)


def test_a_bad_cron_list_in_a_statement_is_refused_at_its_clause():
    with pytest.raises(ScheduleSyntaxError) as refused:
        parse_schedule("SCHEDULE x\n  CRON '0 9 * * *', '0 9 * * *';")
    assert str(refused.value).startswith("line 2, column 3: cron: ")
