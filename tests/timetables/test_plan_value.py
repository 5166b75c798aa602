"""``timetable.plan`` is a value: immutable, the one way to ask a schedule about "when", answering as before.

The pinned answers below are what the timetables answered through their own methods before the
plan became a value (seed 000's worked example, a calendar cadence across a DST gap in Berlin,
a cron firing twice in New York's fall-back hour). ``previous`` and ``missed_between`` are checked
against ``upcoming`` for every cadence of the public plan's property tests.
"""

from __future__ import annotations

import dataclasses
import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables import Cron, Every, Fixed, Union

from .test_public_plan import BASE, timetables

UTC = datetime.timezone.utc
SEED = Every("5m", delay="30s", phase=Fixed("2m10s"))
BERLIN = Every.day(at="02:30", timezone="Europe/Berlin")
NEW_YORK = Cron("30 1 * * *", timezone="America/New_York")


def at(*fields: int) -> datetime.datetime:
    return datetime.datetime(*fields, tzinfo=UTC)


@pytest.mark.parametrize("timetable", [SEED, BERLIN, NEW_YORK], ids=["every", "calendar-berlin", "cron-new-york"])
def test_the_plan_cannot_be_changed(timetable):
    plan = timetable.plan
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.timezone = "Asia/Tokyo"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.catch_up_limit = 5  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        plan.extra = 1  # type: ignore[attr-defined]
    assert timetable.plan == plan  # built again, equal: a value, not a view of the timetable


def test_the_timetable_no_longer_answers_for_the_plan():
    """One way to ask: the plan's readers are not also the timetable's."""
    asked = ("upcoming", "due_at_or_before", "run_of", "next_stored", "of_run", "lane", "first_of", "excluded")
    asked += ("clock_changes", "catch_up_limit", "dst_rule", "is_wall_clock", "lookback", "phase", "delay", "timezone")
    for timetable in (SEED, BERLIN, NEW_YORK, Union(Every("5m"), Every("6m"))):
        assert [name for name in asked if hasattr(timetable, name)] == []
        assert [name for name in asked if not hasattr(timetable.plan, name)] == []


def test_every_with_delay_and_phase_answers_as_before():
    """Seed 000: the 12:05 occurrence runs at 12:07:10 and evaluates 11:59:30 -> 12:04:30."""
    plan = SEED.plan
    (run,) = plan.upcoming(after=at(2026, 3, 1, 12, 5), count=1)
    assert (run.occurrence, run.run_after) == (at(2026, 3, 1, 12, 5), at(2026, 3, 1, 12, 7, 10))
    assert (run.window_start, run.window_end) == (at(2026, 3, 1, 11, 59, 30), at(2026, 3, 1, 12, 4, 30))
    assert (plan.phase, plan.delay, plan.lookback) == (
        datetime.timedelta(seconds=130),
        datetime.timedelta(seconds=30),
        None,
    )
    assert (plan.timezone, plan.is_wall_clock, plan.catch_up_limit, plan.dst_rule) == ("UTC", False, 1, None)
    assert plan.run_of(run.window_end) == run
    assert plan.previous(run).occurrence == at(2026, 3, 1, 12, 0)


def test_a_calendar_cadence_in_a_dst_zone_answers_as_before():
    """02:30 in Berlin does not exist on 2026-03-29: that run comes when the gap ends, 23.5 h after the last."""
    plan = BERLIN.plan
    runs = plan.upcoming(after=at(2026, 3, 27), count=3)
    assert [(run.occurrence, run.interval_ms) for run in runs] == [
        (at(2026, 3, 27, 1, 30), 86_400_000),
        (at(2026, 3, 28, 1, 30), 86_400_000),
        (at(2026, 3, 29, 1, 0), 84_600_000),
    ]
    assert (plan.timezone, plan.is_wall_clock) == ("Europe/Berlin", True)
    assert plan.dst_rule.startswith("a skipped wall-clock time runs when the gap ends")
    changes = plan.clock_changes(at(2026, 1, 1), at(2027, 1, 1))
    assert [(change.at, change.is_gap) for change in changes] == [
        (at(2026, 3, 29, 1), True),
        (at(2026, 10, 25, 1), False),
    ]
    assert plan.due_at_or_before(at(2026, 3, 29, 12)) == runs[2]
    assert plan.previous(runs[2]) == runs[1]


def test_cron_answers_as_before():
    """01:30 happens twice in New York on 2026-11-01: two runs, the second evaluating the hour between."""
    plan = NEW_YORK.plan
    runs = plan.upcoming(after=at(2026, 10, 31, 12), count=3)
    assert [(run.occurrence, run.window_start) for run in runs] == [
        (at(2026, 11, 1, 5, 30), at(2026, 10, 31, 5, 30)),
        (at(2026, 11, 1, 6, 30), at(2026, 11, 1, 5, 30)),
        (at(2026, 11, 2, 6, 30), at(2026, 11, 1, 6, 30)),
    ]
    assert plan.timezone == "America/New_York"
    assert "fires at both instants (CronJob)" in plan.dst_rule
    assert [plan.previous(run) for run in runs[1:]] == runs[:2]
    assert plan.missed_between(runs[0].run_after, runs[2].run_after, limit=5) == ([runs[1].run_after], False)


def test_missed_between_is_cut_at_its_limit_and_names_the_newest_tick_exactly():
    plan = Every("1m", phase=Fixed("10s")).plan
    ticks, cut = plan.missed_between(at(2026, 1, 1, 0, 0, 10), at(2026, 1, 11, 0, 0, 10), limit=3)
    assert cut
    assert ticks == [
        at(2026, 1, 1, 0, 1, 10),
        at(2026, 1, 1, 0, 2, 10),
        at(2026, 1, 1, 0, 3, 10),
        at(2026, 1, 11, 0, 0, 10) - datetime.timedelta(minutes=1),
    ]
    assert plan.missed_between(at(2026, 1, 1, 0, 0, 10), at(2026, 1, 1, 0, 1, 10), limit=3) == ([], False)


def test_missed_between_enumerates_at_most_its_own_bound_whatever_limit_is_asked():
    """A caller's limit cannot make it step a year of seconds: it stops at MAX_MISSED, the newest tick still exact."""
    from tessera.timetables.public_plan import MAX_MISSED

    plan = Every("1s").plan
    ticks, cut = plan.missed_between(at(2026, 1, 1), at(2027, 1, 1), limit=10**12)
    assert cut and len(ticks) == MAX_MISSED + 1
    assert ticks[0] == at(2026, 1, 1, 0, 0, 1) and ticks[-1] == at(2027, 1, 1) - datetime.timedelta(seconds=1)


@settings(
    max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    timetable=timetables(), now_offset=st.integers(0, 400 * 24 * 3600), gap=st.integers(1, 8), limit=st.integers(1, 5)
)
def test_previous_and_missed_between_agree_with_upcoming(timetable, now_offset, gap, limit):
    """The run before each listed run is the one listed before it; the ticks between two runs are those listed."""
    plan = timetable.plan
    runs = plan.upcoming(after=BASE + datetime.timedelta(seconds=now_offset), count=gap + 1)
    for earlier, later in zip(runs, runs[1:]):
        assert plan.previous(later) == earlier
    between = [run.run_after for run in runs[1:-1]]
    expected = (between, False) if len(between) <= limit else ([*between[:limit], between[-1]], True)
    assert plan.missed_between(runs[0].run_after, runs[-1].run_after, limit=limit) == expected
