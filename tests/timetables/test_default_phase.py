"""One rule for the default spread of every cadence: below the shortest gap and below 15 minutes."""

from __future__ import annotations

import datetime

import pytest

from tessera.timetables import Cron, Every, Fixed, Spread

KEYS = [f"dag_{i}" for i in range(300)]


@pytest.mark.parametrize(
    ("make", "bound"),
    [
        pytest.param(lambda key: Cron("* * * * *", phase=Spread(), key=key), 60, id="cron-every-minute"),
        pytest.param(lambda key: Cron("*/5 * * * *", phase=Spread(), key=key), 300, id="cron-every-5-minutes"),
        pytest.param(lambda key: Cron("0,10 * * * *", phase=Spread(), key=key), 600, id="cron-shortest-gap-10m"),
        pytest.param(lambda key: Cron("@every 90s", phase=Spread(), key=key), 90, id="cron-every-90s"),
        pytest.param(lambda key: Cron("0 6 * * *", phase=Spread(), key=key), 900, id="cron-daily"),
        pytest.param(lambda key: Every("1m", key=key), 60, id="every-minute-default"),
        pytest.param(lambda key: Every("1d", key=key), 900, id="every-day-default"),
        pytest.param(lambda key: Every.day("09:00", timezone="UTC", phase=Spread(), key=key), 900, id="calendar-daily"),
    ],
)
def test_default_spread_stays_below_the_shortest_gap_and_15_minutes(make, bound):
    phases = {make(key).plan.phase for key in KEYS}
    assert max(phases) < datetime.timedelta(seconds=bound)
    assert len(phases) > 1  # it does spread


def test_calendar_and_cron_start_at_the_occurrence_unless_asked():
    assert Cron("* * * * *", key="k").plan.phase == datetime.timedelta(0)
    assert Every.day("09:00", timezone="UTC", key="k").plan.phase == datetime.timedelta(0)


def test_an_explicit_fixed_phase_may_exceed_the_gap():
    assert Cron("* * * * *", phase=Fixed("5m")).plan.phase == datetime.timedelta(minutes=5)


def test_the_calendar_familys_hourly_unit_starts_on_the_grid_and_the_interval_spreads():
    """README, where the specifications disagree: ``Every("6h")`` (000's interval) spreads by default;
    ``Every.hour(6)`` (002's hourly unit, the calendar family) starts on the hour grid unless given a phase."""
    keys = [f"dag_{i}" for i in range(50)]
    assert {Every.hour(6, key=key).plan.phase for key in keys} == {datetime.timedelta(0)}
    assert len({Every("6h", key=key).plan.phase for key in keys}) > 1
    assert len({Every.hour(6, phase=Spread(max="15m", step="1m"), key=key).plan.phase for key in keys}) > 1
