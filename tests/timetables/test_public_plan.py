"""The public plan (``upcoming`` / ``run_of``) lists exactly the runs the scheduler creates.

The scheduler is simulated the way Airflow drives a timetable: time frozen at ``now``,
``next_dagrun_info_v2`` called with the DAG's start/end dates and catch-up flag, each answer
fed back as the last run. Every run it creates that starts after ``now`` must be, in order,
what ``upcoming(after=now)`` lists, for every cadence, delay, lookback, phase, catch-up policy
and date bound.
"""

from __future__ import annotations

import datetime

import time_machine
from airflow.timetables.base import TimeRestriction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables import Backfill, Cron, Every, Fixed, Latest, Spread

UTC = datetime.timezone.utc
BASE = datetime.datetime(2026, 3, 1, tzinfo=UTC)
CATCH_UP_SPAN = datetime.timedelta(hours=36)
"""The longest a simulated scheduler catches up: 4,320 runs of a 30 s cadence (as in the REST agreement test)."""

ZONES = st.sampled_from(["UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata"])
PHASES = st.one_of(st.none(), st.sampled_from([Fixed("0s"), Fixed("2m10s"), Fixed("7h"), Spread(), Spread(max="5m")]))
CATCH_UP = st.sampled_from([Latest(), Backfill(limit=1), Backfill(limit=3)])
KEYWORDS = st.fixed_dictionaries(
    {
        "delay": st.sampled_from([None, "0s", "30s", "5m", "1d"]),
        "window": st.sampled_from([None, "90s", "1h", "3d"]),
        "phase": PHASES,
        "catch_up": CATCH_UP,
        "key": st.just("dag_under_test"),
    }
)


@st.composite
def timetables(draw):
    keywords = draw(KEYWORDS)
    kind = draw(st.sampled_from(["every", "day", "week", "month", "hour", "cron", "every_cron", "from_last_run"]))
    if kind == "from_last_run":  # unanchored day / week / month: a plain interval from the last run
        unit = draw(st.sampled_from(["day", "week", "month"]))
        return getattr(Every, unit)(every=draw(st.integers(1, 2)), **keywords)
    if kind == "every":
        return Every(draw(st.sampled_from(["30s", "5m", "45m", "1h", "6h", "1d", "2d"])), **keywords)
    if kind == "cron":
        expression = draw(st.sampled_from(["*/7 * * * *", "30 1 * * *", "0 2,14 * * 1-5", "15 3 29 2 *", "0 0 1 * *"]))
        return Cron(expression, timezone=draw(ZONES), **keywords)
    if kind == "every_cron":
        return Cron(draw(st.sampled_from(["@every 7m", "@every 90s", "@every 1h30m"])), **keywords)
    zone = draw(ZONES)
    at = draw(st.sampled_from(["00:00", "01:30", "02:30", "23:45"]))
    if kind == "day":
        return Every.day(at, every=draw(st.integers(1, 3)), timezone=zone, **keywords)
    if kind == "week":
        return Every.week("sunday", at, every=draw(st.integers(1, 2)), timezone=zone, **keywords)
    if kind == "month":
        return Every.month(draw(st.sampled_from([1, 29, 31])), at, timezone=zone, **keywords)
    return Every.hour(draw(st.sampled_from([1, 6])), at=at, timezone=zone, **keywords)


def scheduler_runs(timetable, *, start, end, catchup, now, wanted):
    """Runs the scheduler creates, oldest first, until ``wanted`` of them start after ``now`` (or it stops)."""
    restriction = TimeRestriction(earliest=start, latest=end, catchup=catchup)
    created, future, info = [], 0, None
    with time_machine.travel(now, tick=False):
        for _ in range(5_000):
            info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction)
            if info is None:
                break
            created.append(info)
            future += info.run_after > now
            if future >= wanted:
                break
        else:
            raise AssertionError("the scheduler kept creating runs before now: widen nothing, shrink the range")
    return [(i.run_after, i.data_interval.start, i.data_interval.end) for i in created if i.run_after > now]


@settings(
    max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    timetable=timetables(),
    now_offset=st.integers(0, 400 * 24 * 3600),
    start_offset=st.one_of(st.none(), st.integers(-20 * 24 * 3600, 20 * 24 * 3600)),
    end_offset=st.one_of(st.none(), st.integers(0, 40 * 24 * 3600)),
    catchup=st.booleans(),
    count=st.integers(1, 12),
)
def test_upcoming_lists_exactly_what_the_scheduler_creates(
    timetable, now_offset, start_offset, end_offset, catchup, count
):
    now = BASE + datetime.timedelta(seconds=now_offset)
    start = None if start_offset is None else now + datetime.timedelta(seconds=start_offset)
    if catchup:  # the scheduler steps every occurrence since the start, within the simulation's 5,000 steps
        start = now - CATCH_UP_SPAN if start is None else max(start, now - CATCH_UP_SPAN)
    end = None if end_offset is None else (start or now) + datetime.timedelta(seconds=end_offset)
    expected = scheduler_runs(timetable, start=start, end=end, catchup=catchup, now=now, wanted=count)
    listed = timetable.plan.upcoming(after=now, count=count, start_date=start, end_date=end)
    assert [(r.run_after, r.window_start, r.window_end) for r in listed] == expected[:count]
    for run in listed:
        assert timetable.plan.run_of(run.window_end) == run


def test_start_and_end_dates_bound_the_period_as_the_scheduler_does():
    """Every("1h") from 2030-01-01 00:00 to 05:00: the 01:00 run is the first, the 06:00 run the last."""
    timetable = Every("1h", phase=Fixed("0s"))
    start, end = datetime.datetime(2030, 1, 1, tzinfo=UTC), datetime.datetime(2030, 1, 1, 5, tzinfo=UTC)
    listed = timetable.plan.upcoming(after=start - datetime.timedelta(days=1), count=10, start_date=start, end_date=end)
    assert [r.occurrence.hour for r in listed] == [1, 2, 3, 4, 5, 6]
    assert listed[0].window_start == start


def test_upcoming_stops_at_until_without_walking_further():
    timetable = Every("5m", phase=Fixed("0s"))
    after = datetime.datetime(2026, 1, 1, tzinfo=UTC)
    listed = timetable.plan.upcoming(after=after, count=400, until=after + datetime.timedelta(minutes=12))
    assert [r.run_after.minute for r in listed] == [5, 10]


@settings(
    max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(timetable=timetables(), now_offset=st.integers(0, 400 * 24 * 3600))
def test_next_stored_reads_the_run_the_scheduler_stored_on_the_dag_row(timetable, now_offset):
    """``next_stored`` (status, REST, the page) is the run the scheduler stored: same start, same window."""
    from types import SimpleNamespace

    now = BASE + datetime.timedelta(seconds=now_offset)
    with time_machine.travel(now, tick=False):
        info = timetable.next_dagrun_info_v2(
            last_dagrun_info=None, restriction=TimeRestriction(earliest=None, latest=None, catchup=False)
        )
    assert info is not None
    row = SimpleNamespace(next_dagrun_data_interval_end=info.data_interval.end)  # what Airflow stores
    stored = timetable.plan.next_stored(row)
    assert stored is not None
    assert (stored.run_after, stored.window_start, stored.window_end) == (
        info.run_after,
        info.data_interval.start,
        info.data_interval.end,
    )
    assert timetable.plan.next_stored(SimpleNamespace(next_dagrun_data_interval_end=None)) is None
