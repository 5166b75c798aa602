"""The epoch grid, the plan (windows, phase) and the catch-up engine, against brute-force models."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.timetables._time.catch_up import next_occurrence
from tessera.timetables._time.durations import US_PER_DAY, US_PER_MINUTE, US_PER_SECOND, parse_duration
from tessera.timetables._time.grid import EpochGrid, check_interval
from tessera.timetables._time.plan import Plan


def us(text: str) -> int:
    """An ISO instant in UTC as microseconds since the epoch."""
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()) * US_PER_SECOND


# Divisors of a day, and whole days: every interval the grid accepts, at second resolution.
DAY_DIVISORS = [d * US_PER_SECOND for d in range(1, 86_401) if 86_400 % d == 0]
INTERVALS = st.one_of(st.sampled_from(DAY_DIVISORS), st.integers(1, 30).map(lambda n: n * US_PER_DAY))
INSTANTS = st.integers(min_value=-10 * 365 * US_PER_DAY, max_value=80 * 365 * US_PER_DAY)


@pytest.mark.parametrize("text", ["1s", "30s", "5m", "45m", "6h", "1d", "2d", "366d", "1000ms"])
def test_interval_dividing_a_day_or_whole_days_is_accepted(text):
    check_interval("every", text, parse_duration("every", text))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("7m", "does not divide a day evenly", id="7m"),
        pytest.param("5h", "does not divide a day evenly", id="5h"),
        pytest.param("36h", "not a whole number of days", id="36h"),
        pytest.param("1d1s", "not a whole number of days", id="day-and-a-second"),
    ],
)
def test_interval_that_drifts_is_refused(text, fragment):
    with pytest.raises(ValueError, match=fragment) as err:
        check_interval("every", text, parse_duration("every", text))
    assert str(err.value).startswith(f"every: {text!r}")
    assert "divisor of 24h such as" in str(err.value)


@pytest.mark.parametrize("text", ["1ms", "250ms", "999ms", "1.5s", "0.5s", "2.000001s"])
def test_sub_second_intervals_are_refused(text):
    """A scheduler loop runs about once a second: a finer schedule would only pile up runs."""
    with pytest.raises(ValueError) as err:
        check_interval("every", text, parse_duration("every", text))
    assert str(err.value).startswith(f"every: {text!r}")
    assert "whole number of seconds, 1s or more" in str(err.value)


def test_interval_given_in_microseconds_is_bounded_too():
    with pytest.raises(ValueError, match="at most 366d"):
        check_interval("every", "367d", 367 * US_PER_DAY)


def test_seed_worked_example():
    """every 5m, delay 30s, phase 2m10s: the 12:05 occurrence runs at 12:07:10 over 11:59:30 -> 12:04:30."""
    plan = Plan(EpochGrid(5 * US_PER_MINUTE), delay=30 * US_PER_SECOND, phase=130 * US_PER_SECOND)
    run = plan.run(us("2026-03-01T12:05:00"))
    assert run.run_after == us("2026-03-01T12:07:10")
    assert (run.window_start, run.window_end) == (us("2026-03-01T11:59:30"), us("2026-03-01T12:04:30"))
    following = plan.run(plan.cadence.following(run.occurrence))
    assert following.occurrence == us("2026-03-01T12:10:00")
    assert following.window_start == run.window_end


def test_lookback_overlaps_without_moving_occurrences():
    """every 1m, window 5m, delay 30s: five minutes of data per run, runs every minute."""
    tiled = Plan(EpochGrid(US_PER_MINUTE), delay=30 * US_PER_SECOND)
    rolling = Plan(EpochGrid(US_PER_MINUTE), delay=30 * US_PER_SECOND, lookback=5 * US_PER_MINUTE)
    occurrence = us("2026-03-01T12:05:00")
    run = rolling.run(occurrence)
    assert (run.window_start, run.window_end) == (us("2026-03-01T11:59:30"), us("2026-03-01T12:04:30"))
    assert [r.occurrence for r in rolling.upcoming(occurrence, 3)] == [
        r.occurrence for r in tiled.upcoming(occurrence, 3)
    ]


@given(interval=INTERVALS, t=INSTANTS)
def test_grid_points_are_epoch_multiples(interval, t):
    grid = EpochGrid(interval)
    below, above = grid.at_or_before(t), grid.following(t)
    assert below % interval == 0 and above % interval == 0
    assert below <= t < above == below + interval
    assert grid.at_or_after(t) == (t if t % interval == 0 else above)
    assert grid.preceding(above) == below


@given(interval=INTERVALS, delay=st.integers(0, 2 * US_PER_DAY), start=INSTANTS, count=st.integers(2, 40))
def test_windows_tile_without_gap_or_overlap(interval, delay, start, count):
    plan = Plan(EpochGrid(interval), delay=delay)
    runs = plan.upcoming(start, count)
    for earlier, later in zip(runs, runs[1:], strict=False):
        assert later.occurrence > earlier.occurrence
        assert later.window_start == earlier.window_end
        assert earlier.window_end - earlier.window_start == interval
        assert earlier.window_end == earlier.occurrence - delay


def brute_force_next(occurrences, *, last, earliest, latest, now, phase, backlog):
    """The catch-up rule spelled out over an explicit list of occurrences."""
    owed = [o for o in occurrences if (last is None or o > last) and (earliest is None or o >= earliest)]
    if backlog is None and (last is not None or earliest is not None):
        choice = owed[0]
    else:
        due = [o for o in occurrences if o + phase <= now]
        floor = due[-1] if last is None or backlog is None else due[-backlog]
        choice = next(o for o in owed if o >= floor)
    return None if latest is not None and choice > latest else choice


@settings(max_examples=400)
@given(
    interval=st.sampled_from([30 * US_PER_SECOND, 5 * US_PER_MINUTE, 3600 * US_PER_SECOND]),
    now_step=st.integers(200, 400),
    now_offset=st.integers(0, 10**9),
    last_step=st.one_of(st.none(), st.integers(0, 380)),
    earliest_step=st.one_of(st.none(), st.integers(0, 420)),
    latest_step=st.one_of(st.none(), st.integers(0, 600)),
    phase=st.integers(0, 20 * US_PER_MINUTE),
    backlog=st.one_of(st.none(), st.integers(1, 20)),
)
def test_catch_up_matches_brute_force(
    interval, now_step, now_offset, last_step, earliest_step, latest_step, phase, backlog
):
    grid = EpochGrid(interval)
    base = 1_780_000_000 * US_PER_SECOND - (1_780_000_000 * US_PER_SECOND) % interval
    occurrences = [base + k * interval for k in range(-100, 1000)]
    now = base + now_step * interval + now_offset % interval
    last = None if last_step is None else base + last_step * interval
    earliest = None if earliest_step is None else base + earliest_step * interval - 7  # off-grid
    latest = None if latest_step is None else base + latest_step * interval
    kwargs = dict(last=last, earliest=earliest, latest=latest, now=now, phase=phase, backlog=backlog)
    assert next_occurrence(grid, **kwargs) == brute_force_next(occurrences, **kwargs)


def test_never_run_owes_only_the_newest_due_occurrence():
    grid = EpochGrid(5 * US_PER_MINUTE)
    now = us("2026-03-01T12:06:00")
    got = next_occurrence(
        grid, last=None, earliest=us("2026-01-01T00:00:00"), latest=None, now=now, phase=0, backlog=12
    )
    assert got == us("2026-03-01T12:05:00")


def test_phase_defines_when_an_occurrence_is_due():
    """At 12:06 with a 2m10s phase, 12:05 is not due yet (12:07:10); 12:00 (12:02:10) is the newest due."""
    grid = EpochGrid(5 * US_PER_MINUTE)
    now = us("2026-03-01T12:06:00")
    got = next_occurrence(grid, last=None, earliest=None, latest=None, now=now, phase=130 * US_PER_SECOND, backlog=1)
    assert got == us("2026-03-01T12:00:00")


@pytest.mark.parametrize(
    ("backlog", "expected_first"),
    [pytest.param(1, "11:55", id="latest"), pytest.param(3, "11:45", id="backfill-3")],
)
def test_downtime_catch_up(backlog, expected_first):
    """Last ran 10:00, back at 11:57: Latest runs 11:55 only; Backfill(3) runs 11:45, 11:50, 11:55."""
    grid = EpochGrid(5 * US_PER_MINUTE)
    now = us("2026-03-01T11:57:00")
    first = next_occurrence(
        grid, last=us("2026-03-01T10:00:00"), earliest=None, latest=None, now=now, phase=0, backlog=backlog
    )
    assert first == us(f"2026-03-01T{expected_first}:00")
    runs, last = [], us("2026-03-01T10:00:00")
    while (
        nxt := next_occurrence(grid, last=last, earliest=None, latest=None, now=now, phase=0, backlog=backlog)
    ) <= now:
        runs.append(nxt)
        last = nxt
    assert len(runs) == backlog and runs == sorted(runs)


def test_latest_bound_ends_enumeration():
    grid = EpochGrid(US_PER_MINUTE)
    got = next_occurrence(
        grid,
        last=us("2026-03-01T00:10:00"),
        earliest=None,
        latest=us("2026-03-01T00:10:30"),
        now=us("2026-06-01T00:00:00"),
        phase=0,
        backlog=None,
    )
    assert got is None


class CountingCadence:
    """A cadence that counts every step asked of it (``following``, ``preceding``), delegating to ``inner``."""

    def __init__(self, inner):
        self.inner, self.steps = inner, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def following(self, t):
        self.steps += 1
        return self.inner.following(t)

    def preceding(self, occurrence):
        self.steps += 1
        return self.inner.preceding(occurrence)


def _monthly_on_the_31st() -> object:
    from zoneinfo import ZoneInfo

    from tessera.timetables._time.calendar import monthly
    from tessera.timetables._time.wallclock import WallClock

    return monthly(WallClock(ZoneInfo("Europe/Amsterdam")), 6 * 3600 * US_PER_SECOND, 1, 31)


@pytest.mark.parametrize(
    ("cadence", "runs"),
    [
        pytest.param(lambda: EpochGrid(5 * US_PER_MINUTE), 288, id="every-5m-288-runs-in-a-day"),
        pytest.param(lambda: EpochGrid(US_PER_DAY), 1, id="daily-one-run"),
        pytest.param(_monthly_on_the_31st, 0, id="monthly-none-in-the-day"),
    ],
)
def test_upcoming_stops_at_until_instead_of_stepping_count_runs(cadence, runs):
    """400 runs asked for, a day allowed: the steps follow the runs inside the day, never the 400."""
    counting = CountingCadence(cadence())
    plan = Plan(counting, delay=30 * US_PER_SECOND, phase=90 * US_PER_SECOND)
    after = us("2026-03-02T00:00:00")
    listed = plan.upcoming(after, 400, until=after + US_PER_DAY)
    assert len(listed) == runs
    # One step to the first occurrence, then per listed run its window (preceding) and the next
    # occurrence (following), and the window of the one run past `until` that ends the walk.
    assert counting.steps <= 2 * runs + 3, counting.steps
