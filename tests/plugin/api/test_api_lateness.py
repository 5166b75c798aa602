"""The lateness rule of the status route: 20 minutes past nominal for wall-clock cadences, phase + margin for grids.

The runs judged come from real timetables' public plan (``run_of``), as the status route gets them.
"""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.plugin.fleet.lateness import assess_lateness, late_after
from tessera.timetables import Every, Fixed

MIN, SEC = datetime.timedelta(minutes=1), datetime.timedelta(seconds=1)
DAY0 = datetime.datetime(2024, 10, 4, tzinfo=datetime.timezone.utc)  # a midnight UTC: an occurrence of every grid
DAILY = Every("1d", phase=Fixed("0s"))


def _run(timetable: Every, occurrence: datetime.datetime):
    """The run of ``occurrence`` (its window ends ``delay`` before it)."""
    run = timetable.plan.run_of(occurrence - timetable.plan.delay)
    assert run.occurrence == occurrence
    return run


def _judge(timetable: Every, *, wall_clock: bool, minutes_after: float, queued: bool = False, paused: bool = False):
    first = _run(timetable, DAY0)
    return assess_lateness(
        wall_clock=wall_clock,
        paused=paused,
        pending=timetable.plan.upcoming(after=first.run_after, count=1)[0] if queued else first,
        queued=first if queued else None,
        now=DAY0 + minutes_after * MIN,
    )


@pytest.mark.parametrize(
    ("timetable", "wall_clock", "minutes_after", "state"),
    [
        pytest.param(DAILY, True, 10, "on_time", id="daily-10-min-past-nominal-is-healthy"),
        pytest.param(DAILY, True, 20, "on_time", id="daily-exactly-20-min-is-not-yet-late"),
        pytest.param(DAILY, True, 20.1, "late", id="daily-just-over-20-min-is-late"),
        pytest.param(Every("1d", phase=Fixed("14m")), True, 19, "on_time", id="anti-herd-14-min"),
        pytest.param(Every("1d", phase=Fixed("30m")), True, 34, "on_time", id="fixed-30-min-phase"),
        pytest.param(Every("1d", phase=Fixed("30m")), True, 35.1, "late", id="fixed-30-min-phase-late"),
        pytest.param(
            Every("5m", delay="30s", phase=Fixed("2m10s")),
            False,
            7.1,
            "on_time",
            id="5m-grid-within-5-min-of-its-phase",
        ),
        pytest.param(
            Every("5m", delay="30s", phase=Fixed("2m10s")),
            False,
            7.2,
            "late",
            id="5m-grid-late-5-min-after-its-phase",
        ),
        pytest.param(Every("30s", phase=Fixed("0s")), False, 1, "on_time", id="30s-grid-margin-is-1-min"),
        pytest.param(Every("30s", phase=Fixed("0s")), False, 1.1, "late", id="30s-grid-late-after-1-min"),
        pytest.param(DAILY, False, 5.1, "late", id="1d-grid-margin-capped-at-5-min"),
    ],
)
def test_when_a_run_that_has_not_started_is_late(timetable, wall_clock, minutes_after, state):
    judged = _judge(timetable, wall_clock=wall_clock, minutes_after=minutes_after)
    assert (judged.state, judged.late) == (state, state == "late")
    if judged.late:
        assert judged.late_by_seconds == pytest.approx(minutes_after * 60)
        assert judged.reason == "the scheduler has not created its run yet"


def test_a_queued_run_past_its_deadline_is_late_even_when_the_next_one_is_not():
    judged = _judge(DAILY, wall_clock=True, minutes_after=25, queued=True)
    assert (judged.state, judged.reason) == ("late", "its run is queued but has not started")
    assert judged.occurrence == DAY0


@pytest.mark.parametrize(
    ("pending", "paused", "state"),
    [
        pytest.param(_run(DAILY, DAY0), True, "paused", id="paused-is-never-late"),
        pytest.param(None, False, "not_scheduled", id="no-tessera-plan"),
    ],
)
def test_paused_and_unscheduled_dags_are_never_late(pending, paused, state):
    judged = assess_lateness(
        wall_clock=True, paused=paused, pending=pending, queued=None, now=DAY0 + datetime.timedelta(days=1)
    )
    assert (judged.state, judged.late) == (state, False)


@settings(max_examples=300, deadline=None)
@given(
    interval=st.sampled_from(["30s", "1m", "5m", "45m", "6h", "1d"]),
    phase_seconds=st.integers(min_value=0, max_value=2 * 24 * 3600),
    wall_clock=st.booleans(),
)
def test_a_run_is_never_late_before_its_start_plus_a_minute_nor_its_nominal_time_plus_20(
    interval, phase_seconds, wall_clock
):
    run = _run(Every(interval, phase=Fixed(datetime.timedelta(seconds=phase_seconds))), DAY0)
    deadline = late_after(run, wall_clock=wall_clock)
    assert deadline >= run.run_after + MIN
    assert deadline <= run.run_after + max(5 * MIN, run.occurrence + 20 * MIN - run.run_after)
    if wall_clock:
        assert deadline >= run.occurrence + 20 * MIN


def test_the_rule_reads_instants_whatever_offset_they_are_written_in():
    """A run and a clock in UTC+02:00 are judged as the same instants in UTC (not as their wall times)."""
    import dataclasses

    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    run = _run(DAILY, DAY0)
    shifted = dataclasses.replace(
        run, occurrence=run.occurrence.astimezone(plus_two), run_after=run.run_after.astimezone(plus_two)
    )
    assert late_after(shifted, wall_clock=True) == late_after(run, wall_clock=True) == DAY0 + 20 * MIN
    judged = assess_lateness(
        wall_clock=True, paused=False, pending=shifted, queued=None, now=(DAY0 + 21 * MIN).astimezone(plus_two)
    )
    assert (judged.state, judged.occurrence, judged.late_by_seconds) == ("late", DAY0, 21 * 60)
