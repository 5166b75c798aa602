"""A lane is exactly the runs ``upcoming`` lists over its range, in a few segments for a repeating cadence.

``cadences()`` and ``ranges()`` are shared with the browser test that draws the lanes
(``tests/plugin/ui/test_ui_lanes.py``): random epoch grids, calendar cadences (hours, days, weeks,
months, from the last run) and cron expressions, in zones with daylight saving (London, New
York, Lord Howe's half hour, Apia's skipped day, Casablanca's Ramadan changes, Chatham),
with delays, windows and phases, over ranges of up to 75 days from 2015 to 2035.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables import Cron, Every, Fixed, Union, between, holidays_of
from tessera.timetables.instants import to_us
from tessera.timetables.public_plan import MAX_LANE_RANGE, MAX_STEPS

UTC = datetime.timezone.utc
ZONES = (
    "UTC",
    "Europe/London",
    "America/New_York",
    "Australia/Lord_Howe",
    "Pacific/Apia",
    "Africa/Casablanca",
    "Pacific/Chatham",
    "Asia/Kolkata",
)
TIMES = ("00:00", "01:30", "02:30", "06:00", "23:45")
MINUTES = ("0", "*/5", "15,45", "*/20", "7", "0-10/5", "59")
HOURS = ("*", "6", "*/6", "1,2,3", "9-17", "2")
DAYS = ("*", "*", "*", "1", "31", "*/10")
WEEKDAYS = ("*", "*", "1-5", "0", "6,0")


def _options(draw: Callable[[Any], Any]) -> dict[str, Any]:
    options: dict[str, Any] = {"phase": Fixed(draw(st.sampled_from(("0s", "1m10s", "7m", "0.25s"))))}
    if draw(st.booleans()):
        options["delay"] = draw(st.sampled_from(("30s", "5m", "1h")))
    if draw(st.integers(0, 3)) == 0:
        options["window"] = draw(st.sampled_from(("10m", "1d")))
    return options


def _exclusions(draw: Callable[[Any], Any]) -> list[Any]:
    """Dates, a range and a holiday calendar inside the years the ranges cover (2015-2035)."""
    year = draw(st.integers(2015, 2035))
    day = datetime.date(year, draw(st.integers(1, 12)), draw(st.integers(1, 28)))
    found: list[Any] = [day, between(day + datetime.timedelta(days=3), day + datetime.timedelta(days=10))]
    if draw(st.booleans()):
        found.append(holidays_of("US", years=(2014, 2036)))
    return found


@st.composite
def cadences(draw: Callable[[Any], Any]) -> Any:
    """A random tessera timetable, of every kind a lane describes."""
    kinds = ("every", "hour", "day", "week", "month", "from_last_run", "cron", "cron_every", "union")
    kind = draw(st.sampled_from(kinds))
    zone = draw(st.sampled_from(ZONES))
    at = draw(st.sampled_from(TIMES))
    options = _options(draw)
    if kind == "union":  # two wall-clock cadences merged: windows tile across both, equal instants run once
        first = Every.day(at=at, timezone=zone)
        hour, weekdays = draw(st.sampled_from(("9", "17", "*/6"))), draw(st.sampled_from(WEEKDAYS))
        second = Cron(f"0 {hour} * * {weekdays}", timezone=zone)
        return Union(first, second, **options)
    if kind in ("day", "week", "month", "cron") and draw(st.integers(0, 2)) == 0:
        options["exclude"] = _exclusions(draw)
    if draw(st.integers(0, 5)) == 0 and kind in ("every", "day"):
        options["partitioned"] = True  # its runs carry a partition key, which the lane's first run has too
    if kind == "every":
        return Every(draw(st.sampled_from(("1m", "5m", "15m", "1h", "6h", "1d", "2d"))), **options)
    if kind == "hour":
        return Every.hour(draw(st.sampled_from((1, 2, 3, 6))), at=at, timezone=zone, **options)
    if kind == "day":
        return Every.day(at=at, every=draw(st.sampled_from((1, 2, 3))), timezone=zone, **options)
    if kind == "week":
        on = draw(st.sampled_from(("monday", "sunday", "friday")))
        return Every.week(on=on, at=at, every=draw(st.sampled_from((1, 2))), timezone=zone, **options)
    if kind == "month":
        return Every.month(on=draw(st.sampled_from((1, 15, 29, 31))), at=at, timezone=zone, **options)
    if kind == "from_last_run":
        return Every.day(every=draw(st.sampled_from((1, 7))), **options)  # no anchor: from the last run
    if kind == "cron_every":
        return Cron(f"@every {draw(st.sampled_from(('90s', '10m', '1h', '3h')))}", **options)
    fields = [draw(st.sampled_from(values)) for values in (MINUTES, HOURS, DAYS, ("*", "*", "1-6"), WEEKDAYS)]
    policy = draw(st.sampled_from(("cronjob", "once")))
    return Cron(" ".join(fields), timezone=zone, dst=policy, **options)


@st.composite
def ranges(draw: Callable[[Any], Any]) -> tuple[datetime.datetime, datetime.datetime, dict[str, Any]]:
    """``after``, ``until`` and the DAG's bounds (start date, end date, an anchor).

    Mostly in the weeks around the months most zones change their clocks in (March, April,
    September to November), so most ranges hold a change; ranges of an hour to 75 days.
    """
    year = draw(st.integers(2015, 2035))
    month = draw(st.sampled_from((1, 3, 3, 4, 6, 9, 10, 10, 11)))
    after = datetime.datetime(year, month, 1, tzinfo=UTC) + datetime.timedelta(
        seconds=draw(st.integers(-20 * 86400, 40 * 86400))
    )
    hours = draw(st.sampled_from((1, 6, 24, 24 * 7, 24 * 35, 24 * 75))) + draw(st.integers(0, 30))
    until = after + datetime.timedelta(hours=hours)
    bounds: dict[str, Any] = {}
    if draw(st.integers(0, 4)) == 0:
        bounds["start_date"] = after + datetime.timedelta(hours=draw(st.integers(-48, 240)))
    if draw(st.integers(0, 4)) == 0:
        bounds["end_date"] = after + datetime.timedelta(hours=draw(st.integers(0, 1000)))
    if draw(st.integers(0, 4)) == 0:
        bounds["anchor"] = after - datetime.timedelta(minutes=draw(st.integers(0, 5000)))
    return after, until, bounds


def us(moment: datetime.datetime) -> int:
    return to_us(moment)


def upcoming_runs(timetable: Any, after: datetime.datetime, until: datetime.datetime, bounds: dict) -> list[tuple]:
    """``(occurrence, run_after, window_start, window_end)`` of every run ``upcoming`` lists, in microseconds."""
    return _in_us(timetable.plan.upcoming(after=after, count=10**6, until=until, **bounds))


def _in_us(runs: list[Any]) -> list[tuple]:
    return [(us(r.occurrence), us(r.run_after), us(r.window_start), us(r.window_end)) for r in runs]


def expand(lane: Any) -> list[tuple]:
    """The runs of a lane, as the page reads them (the JavaScript rule, written out in Python)."""
    found, previous = [], lane.before
    for segment in lane.segments:
        for j in range(segment.count):
            occurrence = segment.at(j)
            start = occurrence - lane.lookback if lane.lookback is not None else previous
            found.append((occurrence, occurrence + lane.phase, start - lane.delay, occurrence - lane.delay))
            previous = occurrence
    return found


MOST_RUNS = 6000
"""A property test compares ranges of fewer runs than this (DAG bounds left out) run by run; it skips the others."""


def runs_to_compare(
    timetable: Any, after: datetime.datetime, until: datetime.datetime, bounds: dict
) -> list[tuple] | None:
    """:func:`upcoming_runs`, or ``None`` for a range too dense to compare run by run in a property test.

    The public plan's runs cost most of a case: without DAG bounds (half the cases) the density
    check's list is the whole list, so it is not listed a second time.
    """
    runs = timetable.plan.upcoming(after=after, count=MOST_RUNS, until=until)
    if len(runs) >= MOST_RUNS:
        return None
    return upcoming_runs(timetable, after, until, bounds) if bounds else _in_us(runs)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timetable=cadences(), span=ranges())
def test_a_lane_is_exactly_the_runs_upcoming_lists(timetable, span):
    after, until, bounds = span
    expected = runs_to_compare(timetable, after, until, bounds)
    if expected is None:
        return
    lane = timetable.plan.lane(after=after, until=until, **bounds)
    first = timetable.plan.first_of(lane)
    assert first == (timetable.plan.upcoming(after=after, count=1, until=until, **bounds) or [None])[0]
    # A lane of a range answers the first run after any instant in it, as upcoming does from there.
    # (A schedule from the last run without an anchor or start date counts from `after` itself.)
    later = after + (until - after) / 3
    anchored = not timetable._plan.from_last_run or {"anchor", "start_date"} & set(bounds)
    if lane.through is None and anchored:
        expected_later = timetable.plan.upcoming(after=later, count=1, until=until, **bounds)
        assert timetable.plan.first_of(lane, after=later) == (expected_later or [None])[0]
    expanded = expand(lane)
    if lane.through is None:
        assert expanded == expected
    else:  # stepped run by run to the bound: a prefix, and it says where it stops
        assert expanded == expected[: len(expanded)] and expanded[-1][0] == lane.through


@pytest.mark.parametrize(
    ("timetable", "most"),
    [
        pytest.param(Every("5m", phase=Fixed("1m10s")), 1, id="every-5m"),
        pytest.param(Cron("@every 10m"), 1, id="cron-every"),
        pytest.param(Every.day(at="07:00", timezone="Europe/Amsterdam"), 3, id="daily-amsterdam"),
        pytest.param(Every.hour(at="00:30", timezone="America/New_York"), 5, id="hourly-new-york"),
        pytest.param(Cron("*/5 * * * *", timezone="Europe/London"), 5, id="cron-5m-london"),
        pytest.param(Cron("0 9-17 * * 1-5", timezone="Europe/London"), 5, id="cron-office-hours"),
        pytest.param(Every.day(every=7), 1, id="from-last-run"),
    ],
)
def test_a_repeating_cadence_is_a_few_segments_over_70_days_across_daylight_saving(timetable, most):
    after = datetime.datetime(2026, 3, 1, tzinfo=UTC)  # both March changes (US and EU) are in range
    until = after + datetime.timedelta(days=70)
    lane = timetable.plan.lane(after=after, until=until)
    assert lane.through is None and 1 <= len(lane.segments) <= most
    assert expand(lane) == upcoming_runs(timetable, after, until, {})


def test_the_cron_five_minutes_is_one_offset_every_five_minutes():
    lane = Cron("*/5 * * * *").plan.lane(
        after=datetime.datetime(2026, 3, 1, tzinfo=UTC), until=datetime.datetime(2026, 5, 1, tzinfo=UTC)
    )
    (segment,) = lane.segments
    assert (segment.period, segment.offsets, segment.count) == (300_000_000, (0,), 61 * 288)


def test_a_cadence_that_does_not_repeat_stops_at_the_step_bound_and_says_where():
    every_minute_on_the_first = Cron("* * 1 * *")
    after = datetime.datetime(2026, 3, 1, tzinfo=UTC)
    lane = every_minute_on_the_first.plan.lane(after=after, until=after + datetime.timedelta(days=70))
    assert lane.through is not None
    assert sum(s.count for s in lane.segments) == MAX_STEPS
    assert (
        expand(lane)
        == upcoming_runs(every_minute_on_the_first, after, after + datetime.timedelta(days=70), {})[:MAX_STEPS]
    )


@pytest.mark.parametrize("days", [-1, MAX_LANE_RANGE.days + 1])
def test_a_lane_longer_than_its_bound_or_backwards_is_refused(days):
    after = datetime.datetime(2026, 3, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match=r"^until: .* is not within 400 days after"):
        Every("1h").plan.lane(after=after, until=after + datetime.timedelta(days=days))
