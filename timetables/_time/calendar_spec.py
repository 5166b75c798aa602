"""What a user writes for a calendar cadence (unit x multiplier, optional anchor), validated and described.

A cadence is a time unit and a multiplier, optionally anchored to a wall-clock
time in a timezone:

=====  ================================  ====================================
unit   every                             anchor
=====  ================================  ====================================
hour   1, 2, 3, 4, 6, 8 or 12 (divides   ``at`` and ``timezone``, both or
       24, so each day repeats the same  neither
       times)
day    1 to 30                           ``at`` and ``timezone``, both or
                                         neither
week   1 to 4                            ``on`` (weekday), ``at`` and
                                         ``timezone``, all three or none
month  1 to 12                           ``on`` (day 1-31), ``at`` and
                                         ``timezone``, all three or none
=====  ================================  ====================================

A partial anchor is refused naming the missing part: a time read in a zone
nobody wrote (UTC behind the user's back) runs hours off for everyone who
assumed their own, so even UTC is written out (``timezone="UTC"``).

Without an anchor a cadence is a plain interval on absolute time, unaffected
by daylight saving. Day, week and month cadences count it from the last run
(plus N days, 7N days or a flat 30N days, not a calendar month; see
:mod:`.from_last_run`). Hour cadences keep the epoch grid of N hours: a
divisor of 24 then means the same clean hours every day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time

from .cadence import Cadence
from .calendar import daily, hourly, monthly, weekly
from .durations import US_PER_DAY, US_PER_HOUR, US_PER_MINUTE, format_duration, shown
from .from_last_run import FromLastRun
from .grid import EpochGrid
from .wallclock import WallClock, load_zone

UNITS = ("hour", "day", "week", "month")
EVERY: dict[str, tuple[int, ...]] = {
    "hour": (1, 2, 3, 4, 6, 8, 12),
    "day": tuple(range(1, 31)),
    "week": (1, 2, 3, 4),
    "month": tuple(range(1, 13)),
}
WEEKDAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_NOMINAL_DAYS = {"day": 1, "week": 7, "month": 30}
# [0-9], not \d: \d also matches the digits of other scripts ("٠٩:00"), which no one means to type.
_HH_MM = re.compile(r"([0-9]{1,2}):([0-9]{2})")


def _parse_every(unit: str, every: object) -> int:
    allowed = EVERY[unit]
    text = "1, 2, 3, 4, 6, 8 or 12 (the divisors of 24)" if unit == "hour" else f"1 to {allowed[-1]}"
    if isinstance(every, bool) or not isinstance(every, int):
        kind = type(every).__name__
        raise TypeError(f"every: {shown(every)} is a {kind}; give a whole number of {unit}s: {text}")
    if every not in allowed:
        drifts = unit == "hour" and 0 < every < 24
        why = " (it does not divide a day, so the times would drift)" if drifts else ""
        raise ValueError(f"every: {shown(every)} {unit}s is not allowed{why}; use {text}")
    return every


def _parse_at(at: object) -> int:
    """Minutes after local midnight."""
    if isinstance(at, time) and at.tzinfo is None and not (at.second or at.microsecond):
        return at.hour * 60 + at.minute
    match = _HH_MM.fullmatch(at.strip()) if isinstance(at, str) else None
    if match and int(match[1]) < 24 and int(match[2]) < 60:
        return int(match[1]) * 60 + int(match[2])
    raise ValueError(
        f"at: {shown(at)} is not a wall-clock time; write 'HH:MM' in ASCII digits from '00:00' to '23:59' "
        f"(e.g. '09:00'), or a datetime.time without seconds or tzinfo; the zone goes in timezone="
    )


def _parse_on(unit: str, on: object) -> int:
    if unit == "week":
        if isinstance(on, str) and (name := on.strip().lower()) in WEEKDAYS + tuple(d[:3] for d in WEEKDAYS):
            return [d[:3] for d in WEEKDAYS].index(name[:3])
        if isinstance(on, int) and not isinstance(on, bool) and 0 <= on <= 6:
            return on
        raise ValueError(
            f"on: {shown(on)} is not a weekday; use a name ('monday' ... 'sunday', or 'mon') or a number "
            f"0 to 6 with 0 = Sunday"
        )
    if isinstance(on, int) and not isinstance(on, bool) and 1 <= on <= 31:
        return on
    raise ValueError(
        f"on: {shown(on)} is not a day of the month; use 1 to 31, where a day the month lacks means its "
        f"last day (31 = month's end, 29 = 28 February in common years)"
    )


_ANCHOR_EXAMPLES = {
    "hour": "at='03:00', timezone='Europe/Amsterdam'",
    "day": "at='09:00', timezone='America/New_York'",
    "week": "on='monday', at='07:00', timezone='Europe/Amsterdam'",
    "month": "on=31, at='06:00', timezone='UTC'",
}


def _check_anchor_complete(unit: str, *, on: object, at: object, timezone: object) -> None:
    """Refuse a partial anchor: its parts are all given or none, and a missing one is named, never guessed.

    A wall time read in a zone nobody wrote would run hours off on every server whose
    operator assumed their own zone, and a weekday without a time (or a time without a
    weekday) has no single meaning; so nothing defaults, not even UTC.
    """
    parts = ("on", "at", "timezone") if unit in ("week", "month") else ("at", "timezone")
    values = {"on": on, "at": at, "timezone": timezone}
    given = [part for part in parts if values[part] is not None]
    if not given or len(given) == len(parts):
        return
    missing = [part for part in parts if values[part] is None]
    adverb = {"hour": "an hourly", "day": "a daily", "week": "a weekly", "month": "a monthly"}[unit]
    together = "all three or none" if len(parts) == 3 else "all or none"
    utc = "; for UTC write timezone='UTC'" if "timezone" in missing else ""
    also = f" (so is {' and '.join(missing[1:])})" if len(missing) > 1 else ""
    raise ValueError(
        f"{missing[0]}: missing{also} while {' and '.join(given)} {'is' if len(given) == 1 else 'are'} given; "
        f"{adverb} cadence is anchored by {', '.join(parts[:-1])} and {parts[-1]}, {together} "
        f"(e.g. {_ANCHOR_EXAMPLES[unit]}); without an anchor it is a plain interval from the last run{utc}"
    )


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


@dataclass(frozen=True, slots=True)
class CalendarSpec:
    """A validated calendar cadence; build one with :meth:`parse`."""

    unit: str
    every: int
    on: int | None
    """The weekday (0 = Sunday) or the day of the month; ``None`` for hour and day cadences."""
    at: int | None
    """Minutes after local midnight; ``None`` for an unanchored cadence."""
    timezone: str | None
    """The IANA zone ``at`` is read in; ``None`` exactly when unanchored."""

    @classmethod
    def parse(cls, unit: object, *, every: object, on: object, at: object, timezone: object) -> CalendarSpec:
        """Validate what the user wrote; every error names the field, the value and what is allowed."""
        if not isinstance(unit, str) or unit not in UNITS:
            raise ValueError(f"unit: {shown(unit)} is not a calendar unit; use 'hour', 'day', 'week' or 'month'")
        count = _parse_every(unit, every)
        if on is not None and unit in ("hour", "day"):
            raise ValueError(f"on: {shown(on)} given for a {unit} cadence; only week and month cadences take on=")
        # Each part given is checked on its own first, so a typo is named before a missing part.
        minutes = None if at is None else _parse_at(at)
        day = None if on is None else _parse_on(unit, on)
        zone = None if timezone is None else load_zone("timezone", timezone).key
        _check_anchor_complete(unit, on=on, at=at, timezone=timezone)
        return cls(unit, count, day, minutes, zone)

    @property
    def period_us(self) -> int:
        """One nominal period: N hours, N days, 7N days or 30N days (the real spacing varies)."""
        if self.unit == "hour":
            return self.every * US_PER_HOUR
        return self.every * _NOMINAL_DAYS[self.unit] * US_PER_DAY

    @property
    def at_text(self) -> str | None:
        return None if self.at is None else f"{self.at // 60:02d}:{self.at % 60:02d}"

    def cadence(self) -> Cadence:
        if self.at is None or self.timezone is None:
            return EpochGrid(self.period_us) if self.unit == "hour" else FromLastRun(self.period_us)
        clock, at_us = WallClock(load_zone("timezone", self.timezone)), self.at * US_PER_MINUTE
        if self.unit == "hour":
            return hourly(clock, at_us, self.every)
        if self.unit == "day":
            return daily(clock, at_us, self.every)
        assert self.on is not None
        if self.unit == "week":
            return weekly(clock, at_us, self.every, self.on)
        return monthly(clock, at_us, self.every, self.on)

    def describe(self) -> str:
        """The cadence as a sentence, for the UI: ``"every 2 weeks on Monday at 07:00 Europe/Amsterdam"``."""
        if self.at is None and self.unit == "hour":
            return f"every {format_duration(self.period_us)} on absolute time (UTC epoch grid)"
        if self.at is None:
            return f"every {format_duration(self.period_us)} from the last run"
        adverb = {"hour": "hourly", "day": "daily", "week": "weekly", "month": "monthly"}[self.unit]
        head = adverb if self.every == 1 else f"every {self.every} {self.unit}s"
        if self.unit == "hour":
            minutes = [(self.at % (self.every * 60)) + i * self.every * 60 for i in range(24 // self.every)]
            times = [f"{m // 60:02d}:{m % 60:02d}" for m in minutes]
            when = f":{self.at % 60:02d}" if self.every == 1 else ", ".join(times)
            if len(times) > 4 and self.every > 1:
                when = f"{times[0]}, {times[1]}, ... {times[-1]}"
            return f"{head} at {when} {self.timezone}"
        if self.unit == "week":
            assert self.on is not None
            return f"{head} on {WEEKDAYS[self.on].capitalize()} at {self.at_text} {self.timezone}"
        if self.unit == "month":
            assert self.on is not None
            day = "the last day" if self.on == 31 else f"the {_ordinal(self.on)}"
            clamp = " (or the month's last day)" if self.on in (29, 30) else ""
            return f"{head} on {day}{clamp} at {self.at_text} {self.timezone}"
        return f"{head} at {self.at_text} {self.timezone}"
