"""The starting deadline in the stepping engine: stale occurrences are skipped, the schedule resumes."""

from __future__ import annotations

import datetime
import zoneinfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.timetables._time.catch_up import next_occurrence, within_deadline
from tessera.timetables._time.cron import parse_cron
from tessera.timetables._time.durations import US_PER_HOUR, US_PER_MINUTE
from tessera.timetables._time.grid import EpochGrid
from tessera.timetables._time.plan import Plan

HOURLY = EpochGrid(US_PER_HOUR)
H, M = US_PER_HOUR, US_PER_MINUTE
DAY0 = 20_000 * 24 * H  # a midnight, far from the epoch


def at(hours: int, minutes: int = 0) -> int:
    return DAY0 + hours * H + minutes * M


@pytest.mark.parametrize(
    ("last", "now", "phase", "backlog", "deadline", "expected"),
    [
        pytest.param(at(9), at(12, 20), 0, 1, None, at(12), id="no-deadline-runs-newest"),
        pytest.param(at(9), at(12, 20), 0, 1, 10 * M, at(13), id="stale-newest-skipped-resume-next"),
        pytest.param(at(9), at(12, 5), 0, 1, 10 * M, at(12), id="newest-within-deadline-runs"),
        pytest.param(at(9), at(12, 10), 0, 1, 10 * M, at(12), id="exactly-deadline-old-still-runs"),
        pytest.param(at(9), at(12, 10) + 1, 0, 1, 10 * M, at(13), id="one-microsecond-past-deadline-skipped"),
        pytest.param(at(9), at(12, 14), 5 * M, 1, 10 * M, at(12), id="lateness-counts-from-phase"),
        pytest.param(at(9), at(12, 16), 5 * M, 1, 10 * M, at(13), id="late-past-phase-and-deadline"),
        pytest.param(at(9), at(12, 20), 0, 3, 90 * M, at(11), id="backfill-limit-trimmed-by-deadline"),
        pytest.param(at(9), at(12, 20), 0, 3, 3 * H, at(10), id="backfill-limit-within-deadline"),
        pytest.param(at(9), at(12, 20), 0, None, 90 * M, at(11), id="catch-up-all-trimmed-by-deadline"),
        pytest.param(None, at(12, 20), 0, 1, 10 * M, at(13), id="first-run-stale-skipped"),
        pytest.param(at(11), at(11, 30), 0, 1, 10 * M, at(12), id="not-yet-due-unaffected"),
    ],
)
def test_deadline(last, now, phase, backlog, deadline, expected):
    occurrence = next_occurrence(
        HOURLY,
        last=last,
        earliest=None,
        latest=None,
        now=now,
        phase=phase,
        backlog=backlog,
        deadline=deadline,
    )
    assert occurrence == expected


def test_without_the_keyword_nothing_changes():
    kwargs = {"last": at(9), "earliest": None, "latest": None, "now": at(12, 20), "phase": 0, "backlog": 1}
    assert next_occurrence(HOURLY, **kwargs) == next_occurrence(HOURLY, **kwargs, deadline=None) == at(12)


@pytest.mark.parametrize(
    ("earliest", "latest", "expected"),
    [
        pytest.param(at(15), None, at(15), id="earliest-after-resumed-tick-wins"),
        pytest.param(None, at(12, 30), None, id="resumed-tick-past-latest-is-none"),
        pytest.param(None, at(13), at(13), id="resumed-tick-on-latest-inclusive"),
    ],
)
def test_deadline_respects_bounds(earliest, latest, expected):
    occurrence = next_occurrence(
        HOURLY,
        last=at(9),
        earliest=earliest,
        latest=latest,
        now=at(12, 20),
        phase=0,
        backlog=1,
        deadline=10 * M,
    )
    assert occurrence == expected


def test_plan_passes_the_deadline_through():
    plan = Plan(HOURLY, delay=30 * 1_000_000)
    run = plan.next_run(
        last_window_end=at(9) - 30 * 1_000_000,
        earliest=None,
        latest=None,
        now=at(12, 20),
        backlog=1,
        deadline=10 * M,
    )
    assert run is not None
    assert (run.occurrence, run.window_start, run.window_end) == (
        at(13),
        at(12) - 30_000_000,
        at(13) - 30_000_000,
    )


def test_deadline_on_a_fall_back_day():
    """``30 * * * *`` fires at 01:30 EDT and 01:30 EST; a deadline measures real time, not wall time."""
    zone = zoneinfo.ZoneInfo("America/New_York")
    cadence = parse_cron("30 * * * *", zone, "cronjob")
    edt = datetime.datetime(2026, 11, 1, 1, 30, tzinfo=zone)
    est = edt.replace(fold=1)
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

    def us(moment: datetime.datetime) -> int:
        return (moment - epoch) // datetime.timedelta(microseconds=1)

    assert us(est) - us(edt) == H
    # At 01:35 EST the 01:30 EST tick is 5 minutes old: it runs, although 01:30 EDT is past the deadline.
    assert within_deadline(cadence, us(edt), now=us(est) + 5 * M, phase=0, deadline=10 * M) == us(est)


@settings(max_examples=300, deadline=None)
@given(
    interval=st.sampled_from([M, 5 * M, H, 24 * H]),
    last_steps=st.one_of(st.none(), st.integers(0, 50)),
    elapsed=st.integers(0, 60 * 24 * H),
    phase=st.integers(0, 2 * H),
    backlog=st.one_of(st.none(), st.integers(1, 20)),
    deadline=st.integers(0, 48 * H),
)
def test_deadline_resumes_at_the_first_young_enough_occurrence(interval, last_steps, elapsed, phase, backlog, deadline):
    """Model: the deadline-free answer, or else the first occurrence not older than the deadline."""
    grid = EpochGrid(interval)
    last = None if last_steps is None else DAY0 - last_steps * interval
    now = DAY0 + elapsed
    common = {"last": last, "earliest": None, "latest": None, "now": now, "phase": phase, "backlog": backlog}
    free = next_occurrence(grid, **common)
    bounded = next_occurrence(grid, **common, deadline=deadline)
    oldest_allowed = now - phase - deadline
    first_young = -(-oldest_allowed // interval) * interval  # the first multiple at or after it
    assert bounded == (free if free >= oldest_allowed else first_young)
    assert bounded % interval == 0


@settings(max_examples=400, deadline=None)
@given(
    occurrence_hours=st.integers(-1000, 1000),
    late=st.integers(-2 * H, 6 * H),
    phase=st.integers(0, H - 1),
    deadline=st.integers(0, 3 * H),
)
def test_one_deadline_rule_for_the_catch_up_admission_and_the_explainer(occurrence_hours, late, phase, deadline):
    """The catch-up keeps an occurrence exactly when the public rule (admission, explainer) says it may start."""
    from tessera.timetables._time.catch_up import past_deadline
    from tessera.timetables.instants import from_us
    from tessera.timetables.policies import missed_deadline

    occurrence = DAY0 + occurrence_hours * H
    due, now = occurrence + phase, occurrence + phase + late
    kept = within_deadline(HOURLY, occurrence, now=now, phase=phase, deadline=deadline) == occurrence
    assert kept == (not past_deadline(due, now, deadline)) == (late <= deadline)
    public = missed_deadline(from_us(due), from_us(now), datetime.timedelta(microseconds=deadline))
    assert public == past_deadline(due, now, deadline)
    assert missed_deadline(from_us(due), from_us(now), None) is False
