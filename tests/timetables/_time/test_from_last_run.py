"""The grid of a plan from the last run, against a brute-force walk: origin + k * interval, nothing else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.timetables._time.durations import US_PER_DAY, US_PER_SECOND
from tessera.timetables._time.from_last_run import FromLastRun, origin_for
from tessera.timetables._time.plan import Plan

INTERVALS = st.sampled_from([US_PER_DAY, 7 * US_PER_DAY, 30 * US_PER_DAY, 3 * US_PER_DAY])
INSTANTS = st.integers(-(10**15), 10**17)  # about 1938 to 5138: far past and future of the supported range


def walked(origin: int, interval: int, t: int) -> tuple[int, int]:
    """The occurrences around ``t`` found by stepping from ``origin`` one interval at a time (in big strides)."""
    occurrence = origin
    for stride in (interval * 10**6, interval * 10**3, interval):
        while occurrence + stride <= t:
            occurrence += stride
        while occurrence > t:
            occurrence -= stride
    return occurrence, occurrence + interval  # at or before t, and the next one


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(interval=INTERVALS, origin=INSTANTS, t=INSTANTS)
def test_stepping_matches_the_walk_from_the_origin(interval, origin, t):
    grid = FromLastRun(interval).rebased(origin)
    before, after = walked(origin, interval, t)
    assert grid.at_or_before(t) == before
    assert grid.following(t) == after
    assert grid.at_or_after(t) == (t if before == t else after)
    assert grid.preceding(before) == before - interval


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(interval=INTERVALS, last=INSTANTS, gap=st.integers(0, 400 * US_PER_DAY), backlog=st.sampled_from([1, 3, None]))
def test_the_next_run_is_the_last_plus_whole_periods_whatever_the_downtime(interval, last, gap, backlog):
    plan = Plan(FromLastRun(interval))
    now = last + interval + gap
    run = plan.next_run(last_window_end=last, earliest=None, latest=None, now=now, backlog=backlog)
    assert (run.occurrence - last) % interval == 0 and run.occurrence > last
    due = (now - last) // interval  # the occurrences last + 1..due * interval are due
    expected = 1 if backlog is None else max(1, due - backlog + 1)
    assert run.occurrence == last + expected * interval
    assert (run.window_start, run.window_end, run.interval) == (run.occurrence - interval, run.occurrence, interval)


def test_the_first_run_without_a_start_date_is_due_the_moment_it_is_first_scheduled():
    moment = 1_773_152_597_250_000  # 2026-03-10T14:23:17.25Z
    assert origin_for(last=None, earliest=None, moment=moment, phase=0) == moment - 250_000
    assert origin_for(last=None, earliest=None, moment=moment, phase=60 * US_PER_SECOND) == moment - 60_250_000
    assert origin_for(last=5, earliest=7, moment=moment, phase=0) == 5
    assert origin_for(last=None, earliest=7, moment=moment, phase=0) == 7
