"""Durations: parse "2m10s"-style strings into whole microseconds, and print them back.

Everything below the timetable adapters counts time in integer microseconds
since the Unix epoch (UTC). Integers make the epoch grid exact (no float
rounding) and cheap (no datetime allocation while stepping).

Every duration a user gives is at most :data:`MAX_DURATION`, so every instant
the schedules compute from the supported range of dates stays far inside what
``datetime`` can hold, and no loop can be sized by a user's number.
"""

from __future__ import annotations

import re
from datetime import timedelta
from fractions import Fraction

US_PER_MS = 1_000
US_PER_SECOND = 1_000_000
US_PER_MINUTE = 60 * US_PER_SECOND
US_PER_HOUR = 60 * US_PER_MINUTE
US_PER_DAY = 24 * US_PER_HOUR

MAX_DURATION = 366 * US_PER_DAY
"""The longest duration anything accepts (interval, delay, window, phase, deadline ...): one leap year."""

_UNITS = {"ms": US_PER_MS, "s": US_PER_SECOND, "m": US_PER_MINUTE, "h": US_PER_HOUR, "d": US_PER_DAY}
# One or more "<number><unit>" parts, largest unit first by convention ("1h30m", "2m10s", "1.5s").
# [0-9], not \d: \d also matches the digits of other scripts ("٥m"), which no one means to type.
_PART = re.compile(r"([0-9]+)(?:\.([0-9]+))?(ms|s|m|h|d)")
_WHOLE = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h|d))+")
_ANY_CASE = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h|d))+", re.IGNORECASE | re.ASCII)
# No duration within the maximum needs more characters than this ("366d" is 4); the cap keeps
# int() away from numbers with thousands of digits (which it refuses with its own message).
_MAX_CHARS = 64
_FORMS = "write a number and a lowercase unit (ms, s, m, h, d), e.g. '30s', '5m', '1h30m' or '2d'"


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut short so a megabyte of junk does not become a megabyte of error message."""
    try:
        text = repr(value)
    except ValueError:  # an int of more than 4300 digits refuses to print itself
        text = f"<{type(value).__name__} too long to print>"
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _refuse_text(field: str, value: str, text: str) -> None:
    if len(text) > _MAX_CHARS:
        raise ValueError(
            f"{field}: {shown(value)} is too long ({len(text)} characters) to be a duration; every duration "
            f"is at most 366d, {_FORMS}"
        )
    if not text.isascii() and any(c.isdigit() for c in text):
        raise ValueError(f"{field}: {shown(value)} has digits that are not ASCII digits 0-9; {_FORMS}")
    if _ANY_CASE.fullmatch(text):
        raise ValueError(
            f"{field}: {shown(value)} has an uppercase unit; units are lowercase: ms, s, m (minutes), h, d, "
            f"and 'M' is not months: write '5m' for five minutes, and use Every.month(...) for months"
        )
    raise ValueError(f"{field}: {shown(value)} is not a duration; {_FORMS}")


def _parse_text(field: str, value: str) -> int:
    text = value.strip()
    if len(text) > _MAX_CHARS or not _WHOLE.fullmatch(text):
        _refuse_text(field, value, text)
    us = 0
    for whole, fraction, unit in _PART.findall(text):
        us += int(whole) * _UNITS[unit]
        if fraction:  # exact decimal arithmetic, rounded once to the microsecond
            us += round(Fraction(int(fraction), 10 ** len(fraction)) * _UNITS[unit])
    return us


def parse_duration(field: str, value: object, *, allow_zero: bool = False) -> int:
    """Return ``value`` (a string such as ``"2m10s"`` or a ``timedelta``) in whole microseconds.

    Strings are ASCII digits, an optional decimal fraction and a lowercase unit, one or
    more times. The result is at most :data:`MAX_DURATION`.

    :raises ValueError: naming ``field``, the value given and the accepted forms.
    :raises TypeError: when ``value`` is neither a string nor a ``timedelta``.
    """
    if isinstance(value, timedelta):
        us = value // timedelta(microseconds=1)
    elif isinstance(value, str):
        us = _parse_text(field, value)
    else:
        raise TypeError(
            f"{field}: {shown(value)} is a {type(value).__name__}; give a duration string such as '5m' "
            f"or a datetime.timedelta"
        )
    if us < 0 or (us == 0 and not allow_zero):
        lowest = "zero or more" if allow_zero else "more than zero"
        raise ValueError(f"{field}: {shown(value)} must be {lowest}; e.g. '30s' or '5m'")
    if us > MAX_DURATION:
        raise ValueError(
            f"{field}: {shown(value)} is longer than the maximum duration; every duration is at most 366d "
            f"(one leap year), e.g. '366d' or '30d'"
        )
    return us


def format_duration(us: int) -> str:
    """Print microseconds the way users write them: ``130_000_000`` -> ``"2m10s"``."""
    if us == 0:
        return "0s"
    sign, us = ("-", -us) if us < 0 else ("", us)
    parts = []
    for unit, size in (("d", US_PER_DAY), ("h", US_PER_HOUR), ("m", US_PER_MINUTE)):
        count, us = divmod(us, size)
        if count:
            parts.append(f"{count}{unit}")
    seconds, micros = divmod(us, US_PER_SECOND)
    if micros and micros % US_PER_MS == 0 and not seconds:
        parts.append(f"{micros // US_PER_MS}ms")
    elif micros:
        parts.append(f"{seconds}.{micros:06d}".rstrip("0") + "s")
    elif seconds:
        parts.append(f"{seconds}s")
    return sign + "".join(parts)
