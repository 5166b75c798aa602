"""Every public duration parameter takes what Airflow users hold: str, timedelta and pendulum's types.

pendulum's ``Duration`` (``pendulum.duration(minutes=5)``) and the difference of two pendulum
datetimes are ``timedelta`` subclasses whose own division crashes on a plain ``timedelta``
divisor; each parameter must read them as their elapsed time, and refuse a ``Duration`` in
calendar months, whose meaning pendulum and ``timedelta`` disagree on, naming the parameter.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import pendulum
import pytest

from tessera.operators.backoff import backoff
from tessera.timetables import Calendar, Cron, Every, Fixed, Spread

FIVE_MINUTES = 300_000_000
SAMPLES = {
    "str": "5m",
    "timedelta": datetime.timedelta(minutes=5),
    "pendulum-duration": pendulum.duration(minutes=5),
    "pendulum-difference": pendulum.datetime(2026, 1, 1, 0, 5, tz="Europe/Berlin")
    - pendulum.datetime(2026, 1, 1, tz="Europe/Berlin"),
}
# Each public duration parameter: (field named in a refusal, builder, what it read, in microseconds).
PARAMETERS: dict[str, tuple[str, Callable[[Any], Any], Callable[[Any], int]]] = {
    "Every(interval)": ("every", lambda d: Every(d), lambda t: t._plan.cadence.interval),
    "Every(delay)": ("delay", lambda d: Every("1h", delay=d), lambda t: t._plan.delay),
    "Every(window)": ("window", lambda d: Every("1h", window=d), lambda t: t._plan.lookback),
    "Calendar(delay)": ("delay", lambda d: Calendar.day(at="07:00", timezone="UTC", delay=d), lambda t: t._plan.delay),
    "Cron(starting_deadline)": (
        "starting_deadline",
        lambda d: Cron("0 * * * *", starting_deadline=d),
        lambda t: t._starting_deadline_us,
    ),
    "Cron(window)": ("window", lambda d: Cron("0 * * * *", window=d), lambda t: t._plan.lookback),
    "Fixed(offset)": ("phase.fixed", lambda d: Fixed(d), lambda p: p.offset_us),
    "Spread(max)": ("phase.spread.max", lambda d: Spread(max=d), lambda p: p.max_us),
    "Spread(step)": ("phase.spread.step", lambda d: Spread(max="1h", step=d), lambda p: p.step_us),
    "backoff(schedule)": (
        "schedule",
        lambda d: backoff(d, first="1m"),
        lambda b: b["max_retry_delay"] // datetime.timedelta(microseconds=1),
    ),
    "backoff(first)": (
        "first",
        lambda d: backoff("1d", first=d),
        lambda b: b["retry_delay"] // datetime.timedelta(microseconds=1),
    ),
}


@pytest.mark.parametrize("sample", SAMPLES, ids=list(SAMPLES))
@pytest.mark.parametrize("parameter", PARAMETERS, ids=list(PARAMETERS))
def test_every_duration_parameter_reads_every_duration_type(parameter, sample):
    _, build, read = PARAMETERS[parameter]
    assert read(build(SAMPLES[sample])) == FIVE_MINUTES


class _Period:
    """A schedule object whose period is a pendulum Duration, as backoff's cap."""

    period = pendulum.duration(hours=6)


def test_backoff_caps_at_a_pendulum_period():
    assert backoff(_Period(), first="5m")["max_retry_delay"] == datetime.timedelta(hours=6)


@pytest.mark.parametrize("parameter", PARAMETERS, ids=list(PARAMETERS))
def test_a_duration_in_calendar_months_is_refused_naming_the_parameter(parameter):
    field, build, _ = PARAMETERS[parameter]
    with pytest.raises(ValueError) as err:
        build(pendulum.duration(months=1))
    message = str(err.value)
    assert message.startswith(f"{field}: Duration(months=1) counts months"), message
    assert "give days, hours, minutes or seconds" in message, message


def test_a_hostile_value_is_named_in_the_refusal_not_a_recursion_error() -> None:
    """repr() of a deeply nested list recursed without bound, so the refusal itself failed with a
    RecursionError naming no field; the refusal now shows the value through the one safe renderer."""
    from tessera.timetables import Every

    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(TypeError, match=r"^every: \[\[\[.*\.\.\.\]\]\].* is a list; give a duration string"):
        Every(nested)
    with pytest.raises(TypeError, match=r"^every: <integer of about 5000 digits> is a int"):
        Every(10**5000)
