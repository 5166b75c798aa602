"""The lateness rule of the status route: 20 minutes past nominal for wall-clock cadences, phase + margin for grids."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.plugin.api.status import assess_lateness, late_after
from tessera.timetables._time.durations import US_PER_DAY, US_PER_MINUTE, US_PER_SECOND
from tessera.timetables._time.grid import EpochGrid
from tessera.timetables._time.plan import Plan

MIN, SEC = US_PER_MINUTE, US_PER_SECOND
DAY0 = 20_000 * US_PER_DAY  # a midnight UTC: an occurrence of every grid below
DAILY = Plan(EpochGrid(US_PER_DAY))


def _judge(plan: Plan, *, wall_clock: bool, minutes_after: float, queued: bool = False, paused: bool = False):
    return assess_lateness(
        plan,
        wall_clock=wall_clock,
        paused=paused,
        pending_occurrence=DAY0 + (plan.cadence.following(DAY0) - DAY0 if queued else 0),
        queued_occurrence=DAY0 if queued else None,
        now=DAY0 + int(minutes_after * MIN),
    )


@pytest.mark.parametrize(
    ("plan", "wall_clock", "minutes_after", "state"),
    [
        pytest.param(DAILY, True, 10, "on_time", id="daily-10-min-past-nominal-is-healthy"),
        pytest.param(DAILY, True, 20, "on_time", id="daily-exactly-20-min-is-not-yet-late"),
        pytest.param(DAILY, True, 20.1, "late", id="daily-just-over-20-min-is-late"),
        pytest.param(Plan(EpochGrid(US_PER_DAY), phase=14 * MIN), True, 19, "on_time", id="anti-herd-14-min"),
        pytest.param(Plan(EpochGrid(US_PER_DAY), phase=30 * MIN), True, 34, "on_time", id="fixed-30-min-phase"),
        pytest.param(Plan(EpochGrid(US_PER_DAY), phase=30 * MIN), True, 35.1, "late", id="fixed-30-min-phase-late"),
        pytest.param(
            Plan(EpochGrid(5 * MIN), 30 * SEC, None, 130 * SEC),
            False,
            7.1,
            "on_time",
            id="5m-grid-within-5-min-of-its-phase",
        ),
        pytest.param(
            Plan(EpochGrid(5 * MIN), 30 * SEC, None, 130 * SEC),
            False,
            7.2,
            "late",
            id="5m-grid-late-5-min-after-its-phase",
        ),
        pytest.param(Plan(EpochGrid(30 * SEC)), False, 1, "on_time", id="30s-grid-margin-is-1-min"),
        pytest.param(Plan(EpochGrid(30 * SEC)), False, 1.1, "late", id="30s-grid-late-after-1-min"),
        pytest.param(Plan(EpochGrid(US_PER_DAY)), False, 5.1, "late", id="1d-grid-margin-capped-at-5-min"),
    ],
)
def test_when_a_run_that_has_not_started_is_late(plan, wall_clock, minutes_after, state):
    judged = _judge(plan, wall_clock=wall_clock, minutes_after=minutes_after)
    assert (judged.state, judged.late) == (state, state == "late")
    if judged.late:
        assert judged.late_by_seconds == pytest.approx(minutes_after * 60)
        assert judged.reason == "the scheduler has not created its run yet"


def test_a_queued_run_past_its_deadline_is_late_even_when_the_next_one_is_not():
    judged = _judge(DAILY, wall_clock=True, minutes_after=25, queued=True)
    assert (judged.state, judged.reason) == ("late", "its run is queued but has not started")


@pytest.mark.parametrize(
    ("plan", "paused", "state"),
    [
        pytest.param(DAILY, True, "paused", id="paused-is-never-late"),
        pytest.param(None, False, "not_scheduled", id="no-tessera-plan"),
    ],
)
def test_paused_and_unscheduled_dags_are_never_late(plan, paused, state):
    judged = assess_lateness(
        plan, wall_clock=True, paused=paused, pending_occurrence=DAY0, queued_occurrence=None, now=DAY0 + US_PER_DAY
    )
    assert (judged.state, judged.late) == (state, False)


@settings(max_examples=300)
@given(
    interval=st.sampled_from([30 * SEC, MIN, 5 * MIN, 45 * MIN, 6 * 60 * MIN, US_PER_DAY]),
    phase=st.integers(min_value=0, max_value=2 * US_PER_DAY),
    wall_clock=st.booleans(),
)
def test_a_run_is_never_late_before_its_start_plus_a_minute_nor_its_nominal_time_plus_20(interval, phase, wall_clock):
    run = Plan(EpochGrid(interval), phase=phase).run(DAY0)
    deadline = late_after(run, wall_clock=wall_clock)
    assert deadline >= run.run_after + MIN
    assert deadline <= run.run_after + max(5 * MIN, run.occurrence + 20 * MIN - run.run_after)
    if wall_clock:
        assert deadline >= run.occurrence + 20 * MIN
