"""The stepping engine's cost in cadence steps: O(1) in steady state, at most min(limit, missed) after downtime.

Each case wraps a real cadence (epoch grid, calendar, cron) in a counting proxy and
compares the answer with a brute-force walk over the same cadence.
"""

from __future__ import annotations

import zoneinfo

import pytest

from tessera.timetables._time.calendar import daily, monthly
from tessera.timetables._time.catch_up import next_occurrence, step_back_to
from tessera.timetables._time.cron import parse_cron
from tessera.timetables._time.durations import US_PER_DAY, US_PER_MINUTE
from tessera.timetables._time.grid import EpochGrid
from tessera.timetables._time.wallclock import WallClock

from .counting import CountingCadence

AMSTERDAM = zoneinfo.ZoneInfo("Europe/Amsterdam")
NOW = 20_600 * US_PER_DAY + 13 * 60 * US_PER_MINUTE + 7 * US_PER_MINUTE  # 2026-05-27 13:07 UTC
CONSTANT = 4  # steps any single answer may take besides the catch-up walk
CADENCES = [
    pytest.param(lambda: EpochGrid(5 * US_PER_MINUTE), id="every-5m"),
    pytest.param(lambda: daily(WallClock(AMSTERDAM), 9 * 60 * US_PER_MINUTE, 1), id="daily-09:00-amsterdam"),
    pytest.param(lambda: monthly(WallClock(AMSTERDAM), 6 * 60 * US_PER_MINUTE, 1, 31), id="month-end"),
    pytest.param(lambda: parse_cron("* * * * *", AMSTERDAM, "cronjob"), id="cron-every-minute"),
    pytest.param(lambda: parse_cron("30 1 * * *", zoneinfo.ZoneInfo("America/New_York"), "cronjob"), id="cron-daily"),
]


def brute_force(cadence, last: int, now: int, backlog: int) -> int:
    """Every due occurrence after ``last``, walked one by one: the answer the engine must give."""
    due, occurrence = [], cadence.following(last)
    while occurrence <= now:
        due.append(occurrence)
        occurrence = cadence.following(occurrence)
    return due[-backlog] if len(due) >= backlog else (due[0] if due else occurrence)


def stepped_back(cadence, occurrence: int, steps: int) -> int:
    """The occurrence ``steps`` occurrences before ``occurrence``, one ``preceding`` at a time."""
    for _ in range(steps):
        occurrence = cadence.preceding(occurrence)
    return occurrence


def owed(cadence, *, last: int | None, backlog: int | None, now: int = NOW) -> tuple[int | None, int]:
    counting = CountingCadence(cadence, budget=10_000)
    occurrence = next_occurrence(counting, last=last, earliest=None, latest=None, now=now, phase=0, backlog=backlog)
    return occurrence, counting.steps


@pytest.mark.parametrize("make", CADENCES)
@pytest.mark.parametrize("backlog", [1, 12, 1000])
def test_steady_state_costs_a_constant_number_of_steps(make, backlog):
    """The last run was the newest due occurrence's predecessor: nothing to walk back over."""
    cadence = make()
    newest_due = cadence.at_or_before(NOW)
    occurrence, steps = owed(cadence, last=cadence.preceding(newest_due), backlog=backlog)
    assert occurrence == newest_due
    assert steps <= CONSTANT


@pytest.mark.parametrize("make", CADENCES)
@pytest.mark.parametrize("backlog", [1, 12, 1000])
def test_next_occurrence_not_yet_due_costs_a_constant_number_of_steps(make, backlog):
    cadence = make()
    newest_due = cadence.at_or_before(NOW)
    occurrence, steps = owed(cadence, last=newest_due, backlog=backlog)
    assert occurrence == cadence.following(newest_due)
    assert steps <= CONSTANT


@pytest.mark.parametrize("make", CADENCES)
@pytest.mark.parametrize("missed", [2, 7, 40])
def test_short_downtime_costs_the_missed_occurrences_at_most(make, missed):
    cadence = make()
    last = stepped_back(cadence, cadence.at_or_before(NOW), missed)
    occurrence, steps = owed(cadence, last=last, backlog=1000)
    assert occurrence == brute_force(cadence, last, NOW, 1000) == cadence.following(last)
    assert steps <= missed + CONSTANT


@pytest.mark.parametrize("make", CADENCES)
@pytest.mark.parametrize("backlog", [1, 12, 1000])
def test_huge_downtime_costs_the_limit_at_most(make, backlog):
    """Down for 50 years: the walk back stops after ``limit`` occurrences, not after the millions missed."""
    cadence = make()
    last = NOW - 50 * 365 * US_PER_DAY
    occurrence, steps = owed(cadence, last=last, backlog=backlog)
    # 50 years hold fewer than 1000 month-ends: then every missed one is owed, from the first.
    assert occurrence == max(stepped_back(cadence, cadence.at_or_before(NOW), backlog - 1), cadence.following(last))
    assert steps <= backlog + CONSTANT


@pytest.mark.parametrize("make", CADENCES)
def test_catch_up_everything_and_first_run_cost_a_constant(make):
    cadence = make()
    assert owed(cadence, last=NOW - 50 * 365 * US_PER_DAY, backlog=None)[1] <= CONSTANT
    assert owed(cadence, last=None, backlog=1000)[1] <= CONSTANT


@pytest.mark.parametrize("make", CADENCES[:3])
def test_brute_force_agrees_after_moderate_downtime(make):
    cadence = make()
    for missed in (0, 1, 3, 11, 12, 13, 30):
        last = stepped_back(cadence, cadence.at_or_before(NOW), missed)
        for backlog in (1, 2, 12, 1000):
            assert owed(cadence, last=last, backlog=backlog)[0] == brute_force(cadence, last, NOW, backlog)


@pytest.mark.parametrize(
    ("steps", "floor", "expected", "taken"),
    [
        pytest.param(0, 0, 100, 0, id="no-steps"),
        pytest.param(3, 0, 70, 3, id="floor-far-below"),
        pytest.param(999, 70, 70, 3, id="stops-at-the-floor"),
        pytest.param(999, 75, 75, 3, id="floor-between-occurrences-is-the-answer"),
        pytest.param(999, 200, 200, 0, id="floor-above-the-start"),
    ],
)
def test_step_back_to_stops_at_the_floor(steps, floor, expected, taken):
    counting = CountingCadence(EpochGrid(10))
    assert step_back_to(counting, 100, steps, floor) == expected
    assert counting.steps == taken
