"""Durations: parse "2m10s"-style strings into whole microseconds, and print them back.

Everything below the timetable adapters counts time in integer microseconds
since the Unix epoch (UTC). Integers make the epoch grid exact (no float
rounding) and cheap (no datetime allocation while stepping).
"""

from __future__ import annotations

import re
from datetime import timedelta

US_PER_MS = 1_000
US_PER_SECOND = 1_000_000
US_PER_MINUTE = 60 * US_PER_SECOND
US_PER_HOUR = 60 * US_PER_MINUTE
US_PER_DAY = 24 * US_PER_HOUR

_UNITS = {"ms": US_PER_MS, "s": US_PER_SECOND, "m": US_PER_MINUTE, "h": US_PER_HOUR, "d": US_PER_DAY}
# One or more "<number><unit>" parts, largest unit first by convention ("1h30m", "2m10s", "1.5s").
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+")


def parse_duration(field: str, value: object, *, allow_zero: bool = False) -> int:
    """Return ``value`` (a string such as ``"2m10s"`` or a ``timedelta``) in whole microseconds.

    :raises ValueError: naming ``field``, the value given and the accepted forms.
    :raises TypeError: when ``value`` is neither a string nor a ``timedelta``.
    """
    if isinstance(value, timedelta):
        us = value // timedelta(microseconds=1)
    elif isinstance(value, str):
        text = value.strip().lower()
        if not _WHOLE.fullmatch(text):
            raise ValueError(
                f"{field}: {value!r} is not a duration; write a number and a unit "
                f"(ms, s, m, h, d), e.g. '30s', '5m', '1h30m' or '2d'"
            )
        us = 0
        for number, unit in _PART.findall(text):
            us += round(float(number) * _UNITS[unit]) if "." in number else int(number) * _UNITS[unit]
    else:
        raise TypeError(
            f"{field}: {value!r} is a {type(value).__name__}; give a duration string such as '5m' "
            f"or a datetime.timedelta"
        )
    if us < 0 or (us == 0 and not allow_zero):
        lowest = "zero or more" if allow_zero else "more than zero"
        raise ValueError(f"{field}: {value!r} must be {lowest}; e.g. '30s' or '5m'")
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
