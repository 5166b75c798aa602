from __future__ import annotations

from datetime import timedelta

import pendulum
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tessera.timetables._time.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "us"),
    [
        pytest.param("30s", 30_000_000, id="seconds"),
        pytest.param("5m", 300_000_000, id="minutes"),
        pytest.param("1h30m", 5_400_000_000, id="hours-and-minutes"),
        pytest.param("2m10s", 130_000_000, id="seed-phase"),
        pytest.param("2d", 172_800_000_000, id="days"),
        pytest.param("250ms", 250_000, id="milliseconds"),
        pytest.param("1.5s", 1_500_000, id="fractional-seconds"),
        pytest.param(" 5m ", 300_000_000, id="space-insensitive"),
        pytest.param("366d", 366 * 86_400_000_000, id="the-maximum"),
        pytest.param("0005m", 300_000_000, id="leading-zeros"),
    ],
)
def test_parse_duration_strings(text, us):
    assert parse_duration("every", text) == us


def test_parse_duration_timedelta():
    assert parse_duration("delay", timedelta(minutes=1, milliseconds=5)) == 60_005_000


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        pytest.param("7", "not a duration", id="no-unit"),
        pytest.param("5 minutes", "not a duration", id="words"),
        pytest.param("-5m", "not a duration", id="negative-string"),
        pytest.param("", "not a duration", id="empty"),
        pytest.param("0s", "more than zero", id="zero"),
        pytest.param(timedelta(seconds=-1), "more than zero", id="negative-timedelta"),
        pytest.param("367d", "at most 366d", id="over-the-maximum"),
        pytest.param("366d1ms", "at most 366d", id="just-over-the-maximum"),
        pytest.param("999999999d", "at most 366d", id="huge-days"),
        pytest.param("9" * 5000 + "d", "too long", id="more-digits-than-int-parses"),
        pytest.param(timedelta(days=367), "at most 366d", id="timedelta-over-the-maximum"),
        pytest.param(timedelta.max, "at most 366d", id="timedelta-max"),
        pytest.param("\u0665m", "ASCII digits", id="arabic-indic-digit"),
        pytest.param("\uff15m", "ASCII digits", id="fullwidth-digit"),
        pytest.param("5M", "lowercase", id="uppercase-m-is-not-months"),
        pytest.param("1H30M", "lowercase", id="uppercase-parts"),
        pytest.param("5mS", "lowercase", id="mixed-case-unit"),
        pytest.param("inf", "not a duration", id="inf-text"),
        pytest.param("nanm", "not a duration", id="nan-text"),
        pytest.param("1e3s", "not a duration", id="exponent"),
    ],
)
def test_parse_duration_refuses_with_field_and_value(value, fragment):
    with pytest.raises(ValueError, match=fragment) as err:
        parse_duration("every", value)
    assert str(err.value).startswith(f"every: {value!r}"[:40])


@pytest.mark.parametrize("value", [5, 5.0, float("inf"), float("nan"), None, True, b"5m"])
def test_parse_duration_refuses_wrong_type(value):
    with pytest.raises(TypeError, match=f"every: {value!r} is a {type(value).__name__}"):
        parse_duration("every", value)


def test_uppercase_unit_message_says_m_is_not_months():
    with pytest.raises(ValueError) as err:
        parse_duration("every", "5M")
    assert "units are lowercase" in str(err.value)
    assert "'M' is not months" in str(err.value)
    assert "'5m'" in str(err.value)


def test_over_the_maximum_names_the_limit():
    with pytest.raises(ValueError) as err:
        parse_duration("delay", "999999999d")
    assert str(err.value) == (
        "delay: '999999999d' is longer than the maximum duration; every duration is at most 366d "
        "(one leap year), e.g. '366d' or '30d'"
    )


def test_zero_allowed_where_asked():
    assert parse_duration("delay", "0s", allow_zero=True) == 0


@given(st.integers(min_value=0, max_value=366 * 86_400_000_000))
def test_format_then_parse_round_trips(us):
    assert parse_duration("x", format_duration(us), allow_zero=True) == us


@pytest.mark.parametrize(
    ("us", "text"),
    [(130_000_000, "2m10s"), (0, "0s"), (86_400_000_000 + 1_000, "1d1ms"), (1_500_000, "1.5s")],
)
def test_format_duration_reads_like_input(us, text):
    assert format_duration(us) == text


# -- timedelta subclasses: pendulum's Duration and Interval are what Airflow users hold -----------------------
def _berlin(*args: int) -> pendulum.DateTime:
    return pendulum.datetime(*args, tz="Europe/Berlin")


@pytest.mark.parametrize(
    ("value", "us"),
    [
        pytest.param(pendulum.duration(minutes=5), 300_000_000, id="duration-minutes"),
        pytest.param(pendulum.duration(weeks=1, hours=2), (7 * 24 + 2) * 3_600_000_000, id="duration-weeks"),
        pytest.param(pendulum.duration(seconds=1.5), 1_500_000, id="duration-fraction"),
        pytest.param(pendulum.duration(days=366), 366 * 86_400_000_000, id="duration-the-maximum"),
        pytest.param(_berlin(2026, 1, 1, 0, 5) - _berlin(2026, 1, 1), 300_000_000, id="difference-of-datetimes"),
        # Across the spring-forward night the wall clock moves 5 hours, elapsed time 4: a duration is elapsed time.
        pytest.param(_berlin(2026, 3, 29, 5) - _berlin(2026, 3, 29), 4 * 3_600_000_000, id="difference-across-dst"),
        # An interval of months is the exact elapsed time between its two instants (59 days here).
        pytest.param(_berlin(2026, 3, 1) - _berlin(2026, 1, 1), 59 * 86_400_000_000, id="difference-of-months"),
        pytest.param(pendulum.datetime(2026, 1, 1).diff(pendulum.datetime(2026, 1, 2)), 86_400_000_000, id="diff"),
    ],
)
def test_pendulum_durations_are_their_elapsed_time(value, us):
    assert parse_duration("every", value) == us


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        pytest.param(pendulum.duration(months=1), "months", id="calendar-months"),
        pytest.param(pendulum.duration(years=1), "years", id="calendar-years"),
        pytest.param(pendulum.duration(months=1, days=-30, minutes=5), "months", id="months-cancelled-by-days"),
    ],
)
def test_a_duration_in_calendar_units_is_refused_naming_the_unit_and_fix(value, fragment):
    # pendulum adds these as calendar units (Jan 31 + 1 month = Feb 28), timedelta as 30 or 365 days.
    with pytest.raises(ValueError) as err:
        parse_duration("every", value)
    message = str(err.value)
    assert message.startswith(f"every: {value!r}"[:40]), message
    assert f"counts {fragment}, which pendulum adds as calendar {fragment}" in message, message
    assert "Every.month" in message, message


class _Lying(timedelta):
    """A subclass whose own arithmetic disagrees with the value timedelta's arithmetic reads."""

    def total_seconds(self) -> float:
        return 5.0


class _Broken(timedelta):
    @property
    def months(self) -> int:
        raise RuntimeError("no")


def test_a_subclass_whose_arithmetic_disagrees_with_timedelta_is_refused():
    with pytest.raises(ValueError) as err:
        parse_duration("delay", _Lying(minutes=5))
    message = str(err.value)
    assert message.startswith("delay: _Lying(seconds=300)"), message
    assert "total_seconds() says 5.0" in message and "datetime.timedelta(minutes=5)" not in message, message
    with pytest.raises(ValueError, match=r"^delay: _Broken\(seconds=300\) .*cannot be read"):
        parse_duration("delay", _Broken(minutes=5))


def test_a_negative_pendulum_difference_is_refused_as_negative():
    with pytest.raises(ValueError, match="must be more than zero"):
        parse_duration("every", _berlin(2026, 1, 1) - _berlin(2026, 1, 1, 0, 5))
