"""The public plan's answers "why" relies on: the run due at or before an instant, and the zone's clock changes.

``due_at_or_before(at)`` must agree with ``upcoming``: the run it names starts at or before
``at``, and the next run ``upcoming`` lists after it starts after ``at`` (nothing lies between),
for every cadence, delay, lookback, phase and date bound. ``clock_changes`` finds each UTC-offset
change of the schedule's zone, to the second.
"""

from __future__ import annotations

import datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables import Cron, Every

from .test_public_plan import BASE, timetables

UTC = datetime.timezone.utc


@settings(
    max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    timetable=timetables(),
    at_offset=st.integers(0, 400 * 24 * 3600),
    start_offset=st.one_of(st.none(), st.integers(-20 * 24 * 3600, 20 * 24 * 3600)),
    end_offset=st.one_of(st.none(), st.integers(-40 * 24 * 3600, 40 * 24 * 3600)),
)
def test_the_run_due_at_or_before_an_instant_is_the_one_upcoming_steps_past(
    timetable, at_offset, start_offset, end_offset
):
    at = BASE + datetime.timedelta(seconds=at_offset)
    start = None if start_offset is None else at + datetime.timedelta(seconds=start_offset)
    end = None if end_offset is None else at + datetime.timedelta(seconds=end_offset)
    if start is not None and end is not None and end < start:
        start, end = end, start
    bounds = {"start_date": start, "end_date": end}
    due = timetable.plan.due_at_or_before(at, **bounds)
    if due is None:  # nothing due yet: the first run starts after `at`
        first = timetable.plan.upcoming(after=at - datetime.timedelta(days=800), count=1, **bounds)
        assert not first or first[0].run_after > at
        return
    assert due.run_after <= at
    assert timetable.plan.run_of(due.window_end) == due
    following = timetable.plan.upcoming(after=due.run_after, count=1, **bounds)
    assert not following or following[0].run_after > at


def test_a_schedule_not_due_before_its_start_date_has_no_run_due():
    timetable = Every("1h")
    at = datetime.datetime(2026, 5, 1, tzinfo=UTC)
    assert timetable.plan.due_at_or_before(at, start_date=at + datetime.timedelta(days=1)) is None


def test_clock_changes_are_found_to_the_second_in_the_schedules_zone():
    berlin = Cron("30 2 * * *", timezone="Europe/Berlin")
    year = berlin.plan.clock_changes(
        datetime.datetime(2026, 1, 1, tzinfo=UTC), datetime.datetime(2027, 1, 1, tzinfo=UTC)
    )
    assert [(c.at, c.is_gap) for c in year] == [
        (datetime.datetime(2026, 3, 29, 1, tzinfo=UTC), True),
        (datetime.datetime(2026, 10, 25, 1, tzinfo=UTC), False),
    ]
    assert [c.offset_after - c.offset_before for c in year] == [
        datetime.timedelta(hours=1),
        -datetime.timedelta(hours=1),
    ]
    assert (
        Every("1h").plan.clock_changes(
            datetime.datetime(2026, 1, 1, tzinfo=UTC), datetime.datetime(2027, 1, 1, tzinfo=UTC)
        )
        == []
    )


def test_the_dst_rule_is_said_per_policy():
    assert "fires at both instants (CronJob)" in Cron("30 2 * * *", timezone="Europe/Berlin").plan.dst_rule
    assert "fires once" in Cron("30 2 * * *", timezone="Europe/Berlin", dst="once").plan.dst_rule
    assert "runs when the gap ends" in Every.day(at="02:30", timezone="Europe/Berlin").plan.dst_rule
    assert Every("5m").plan.dst_rule is None
