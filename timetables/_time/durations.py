"""Durations: parse "2m10s"-style strings into whole microseconds, and print them back.

Everything below the timetable adapters counts time in integer microseconds
since the Unix epoch (UTC). Integers make the epoch grid exact (no float
rounding) and cheap (no datetime allocation while stepping).

Every duration a user gives is at most :data:`MAX_DURATION`, so every instant
the schedules compute from the supported range of dates stays far inside what
``datetime`` can hold, and no loop can be sized by a user's number.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from fractions import Fraction

from .excerpt import excerpt

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
    """``repr(value)`` cut short, never failing: the one renderer of values in refusals (:func:`.excerpt.excerpt`).

    Not ``repr()`` itself: a megabyte of junk would become a megabyte of message, an int of more than
    4300 digits refuses to print, and a deeply nested list recurses without bound.
    """
    return excerpt(value, limit)


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


_ONE_US = timedelta(microseconds=1)
_CALENDAR_UNITS = ("years", "months")


def _exact_span(value: timedelta) -> int | None:
    """The elapsed microseconds from ``value.start`` to ``value.end`` when both are aware datetimes (an interval)."""
    start, end = getattr(value, "start", None), getattr(value, "end", None)
    if not (isinstance(start, datetime) and isinstance(end, datetime) and start.tzinfo and end.tzinfo):
        return None
    # In UTC, so two readings of one zone subtract as elapsed time, not as wall-clock time.
    utc_end, utc_start = end.astimezone(timezone.utc), start.astimezone(timezone.utc)
    return abs(timedelta.__floordiv__(datetime.__sub__(utc_end, utc_start), _ONE_US))  # type: ignore[operator]


def _subclass_us(field: str, value: timedelta, us: int) -> int:
    """``us`` (what timedelta's own arithmetic reads from ``value``) if the subclass agrees with it.

    Two disagreements are refused. One: the subclass's ``total_seconds()`` is not that value (its
    arithmetic was redefined). Two: it carries calendar units (pendulum's ``Duration(months=1)``),
    which its own library adds as calendar months and years (31 January + 1 month = 28 February)
    while ``timedelta`` counts 30 or 365 days; an interval between two instants (a difference of
    two pendulum datetimes) is exact elapsed time whatever months it spans, so it is taken.
    """
    try:
        seconds = value.total_seconds()
        units = {unit: getattr(value, unit, 0) for unit in _CALENDAR_UNITS}
        span = _exact_span(value)
    except Exception:  # a subclass's own code may raise anything; it is refused, never let through
        raise ValueError(
            f"{field}: {shown(value)} is a {type(value).__name__} whose value cannot be read; give a "
            f"datetime.timedelta or a duration string such as '5m'"
        ) from None
    if not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or round(seconds * US_PER_SECOND) != us:
        raise ValueError(
            f"{field}: {shown(value)} is a {type(value).__name__} whose total_seconds() says {shown(seconds, 30)} "
            f"while timedelta arithmetic reads {format_duration(us)}; give a datetime.timedelta or a duration "
            f"string such as '5m'"
        )
    calendar = [unit for unit, count in units.items() if count]
    if calendar and span != us:
        raise ValueError(
            f"{field}: {shown(value)} counts {' and '.join(calendar)}, which pendulum adds as calendar "
            f"{' and '.join(calendar)} but a timedelta as 30 or 365 days; give days, hours, minutes or seconds "
            f"(e.g. pendulum.duration(days=30)), or use Every.month(...) for calendar months"
        )
    return us


def parse_duration(field: str, value: object, *, allow_zero: bool = False) -> int:
    """Return ``value`` (a string such as ``"2m10s"`` or any ``timedelta``) in whole microseconds.

    Strings are ASCII digits, an optional decimal fraction and a lowercase unit, one or
    more times. A ``timedelta`` subclass (pendulum's ``Duration``, the difference of two
    pendulum datetimes) is taken at its elapsed time, unless its own arithmetic disagrees
    with timedelta's (see :func:`_subclass_us`). The result is at most :data:`MAX_DURATION`.

    :raises ValueError: naming ``field``, the value given and the accepted forms.
    :raises TypeError: when ``value`` is neither a string nor a ``timedelta``.
    """
    if isinstance(value, timedelta):
        # timedelta's own division, never the subclass's: pendulum's fails for a plain timedelta divisor.
        us = timedelta.__floordiv__(value, _ONE_US)
        if type(value) is not timedelta and MAX_DURATION >= us > 0:
            us = _subclass_us(field, value, us)
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
