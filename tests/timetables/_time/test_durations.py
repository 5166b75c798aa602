from __future__ import annotations

from datetime import timedelta

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
        pytest.param(" 5M ", 300_000_000, id="case-and-space-insensitive"),
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
    ],
)
def test_parse_duration_refuses_with_field_and_value(value, fragment):
    with pytest.raises(ValueError, match=fragment) as err:
        parse_duration("every", value)
    assert str(err.value).startswith(f"every: {value!r}")


def test_parse_duration_refuses_wrong_type():
    with pytest.raises(TypeError, match="every: 5 is a int"):
        parse_duration("every", 5)


def test_zero_allowed_where_asked():
    assert parse_duration("delay", "0s", allow_zero=True) == 0


@given(st.integers(min_value=0, max_value=400 * 86_400_000_000))
def test_format_then_parse_round_trips(us):
    assert parse_duration("x", format_duration(us), allow_zero=True) == us


@pytest.mark.parametrize(
    ("us", "text"),
    [(130_000_000, "2m10s"), (0, "0s"), (86_400_000_000 + 1_000, "1d1ms"), (1_500_000, "1.5s")],
)
def test_format_duration_reads_like_input(us, text):
    assert format_duration(us) == text
