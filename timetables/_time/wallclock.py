"""Wall-clock time in one IANA zone <-> instants: the one place that resolves daylight-saving gaps and folds.

A *local* time here is an integer: microseconds since 1970-01-01 00:00 on the
zone's wall clock (no offset applied), so local dates and times of day are
plain integer division, as instants are. The zone's rules come from
``zoneinfo`` (the system tz database, or the ``tzdata`` package).

A reading such as "01:30 on 2026-11-01 in America/New_York" names zero, one or
two instants: none inside a spring-forward *gap* (the clock jumps over it), two
inside a fall-back *fold* (the clock shows it twice), one otherwise. Python's
PEP 495 ``fold`` attribute classifies a reading without touching zone internals:
``utcoffset`` at ``fold=0`` is the offset before a transition and at ``fold=1``
the offset after, so equal offsets mean an ordinary reading, a larger ``fold=0``
offset a fold and a smaller one a gap. Two rules use it:

* **Calendar cadences** (:class:`WallClock`): a wall time runs at the first
  instant at which the clock reads that time or later: a repeated time once, at
  its first instance; a gap time when the gap ends, so no run is lost; a local
  date the zone skipped entirely (Pacific/Apia went from 2011-12-29 to
  2011-12-31) has no times at all. The map from local time to instant is
  non-decreasing, which lets a cadence find the occurrence after an instant
  without searching.
* **Cron** (:class:`DstClock`), under a DST policy: ``"cronjob"`` fires every
  instant whose reading matches (a repeated reading twice, a skipped one never),
  as a Kubernetes CronJob does; ``"once"`` fires each reading once, a repeated
  one at its first instance and a skipped one when its gap ends, several skipped
  readings of one gap collapsing into that instant. Unlike the calendar rule,
  this holds for a date a zone skipped whole too: a cron time is a reading, not a
  calendar day. A partitioned ``"cronjob"`` cron steps as ``"cronjob-partitioned"``:
  as ``"cronjob"``, except that a day whose every matching reading a gap skips runs
  once when the gap ends (if that is still the same day), so each day the expression
  matches has a partition; Airflow's ``CronPartitionTimetable`` keys that day too.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import date, datetime, timedelta, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from .durations import US_PER_DAY, US_PER_MINUTE, shown
from .epoch import EPOCH_ORDINAL, LOCAL_EPOCH, UTC_EPOCH

DstPolicy = Literal["cronjob", "once", "cronjob-partitioned"]
DST_POLICIES: tuple[str, ...] = ("cronjob", "once")
"""The policies a user chooses from; a partitioned ``"cronjob"`` cron steps as ``"cronjob-partitioned"``."""
# 'localtime' is the host's zone (every scheduler must compute the same instants); 'Factory' is no place.
_REFUSED_KEYS = frozenset({"localtime", "Factory"})
_ONE_US = timedelta(microseconds=1)


def _us(delta: timedelta) -> int:
    return delta // _ONE_US


MAX_ZONE_NAME = 64
"""Longer than any IANA name; a longer text is refused before it reaches the file system."""


@functools.cache
def _zone_names() -> frozenset[str]:
    # Read once per process (tens of milliseconds): the tz database's names, as zoneinfo lists them.
    # zoneinfo alone would also load files that are no zone name: 'posixrules', 'posix/UTC', 'right/UTC'.
    return frozenset(available_timezones()) - _REFUSED_KEYS


def load_zone(field: str, value: object) -> ZoneInfo:
    """The ``ZoneInfo`` for an IANA name (or a ``ZoneInfo`` with a key): the one zone rule of tessera.

    A name is accepted when it is a key of ``zoneinfo.available_timezones()`` other than
    ``'localtime'`` and ``'Factory'``, at most :data:`MAX_ZONE_NAME` characters.

    :raises ValueError: naming ``field`` and the value when the name is unknown or machine-dependent.
    :raises TypeError: when ``value`` is neither a string nor a ``ZoneInfo``.
    """
    if isinstance(value, ZoneInfo) and value.key:
        value = value.key
    if not isinstance(value, str):
        kind = "a tzinfo without an IANA key" if isinstance(value, tzinfo) else f"a {type(value).__name__}"
        raise TypeError(f"{field}: {shown(value)} is {kind}; give an IANA timezone name such as 'Europe/Amsterdam'")
    try:
        if len(value) > MAX_ZONE_NAME or value not in _zone_names():
            raise ZoneInfoNotFoundError(value)
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"{field}: {shown(value)} is not an IANA timezone name; use a name such as 'Europe/Amsterdam', "
            f"'America/New_York' or 'UTC' (a key of zoneinfo.available_timezones() other than "
            f"'localtime', which differs between machines, and the placeholder 'Factory')"
        ) from None


def check_dst_policy(value: object) -> DstPolicy:
    if value not in DST_POLICIES:
        raise ValueError(
            f"dst: {shown(value)} is not a DST policy; use 'cronjob' (a repeated time fires twice, a "
            f"skipped one never) or 'once' (each wall-clock time fires exactly once)"
        )
    return value  # type: ignore[return-value]


def _offset_at(zone: ZoneInfo, instant: int) -> int:
    return _us((UTC_EPOCH + timedelta(microseconds=instant)).astimezone(zone).utcoffset())  # type: ignore[arg-type]


def _offsets(zone: ZoneInfo, naive: datetime) -> tuple[int, int]:
    """The UTC offsets a reading has before (fold=0) and after (fold=1) a transition (PEP 495)."""
    return _us(zone.utcoffset(naive)), _us(zone.utcoffset(naive.replace(fold=1)))  # type: ignore[arg-type]


def _gap_end(zone: ZoneInfo, low: int, high: int) -> int:
    """The instant in ``(low, high]`` at which the zone's offset changes: where a gap ends.

    A reading inside a gap, taken at the offset after the jump (``low``), falls before the
    transition, and at the offset before it (``high``) after it: bisect between them.
    """
    before = _offset_at(zone, low)
    while high - low > 1:
        middle = (low + high) // 2
        if _offset_at(zone, middle) == before:
            low = middle
        else:
            high = middle
    return high


class WallClock:
    """The wall clock of one zone under the calendar rule: what it reads at an instant, when it first reads a time."""

    __slots__ = ("zone",)

    def __init__(self, zone: ZoneInfo) -> None:
        self.zone = zone

    def reading(self, t: int) -> int:
        """The local time the clock shows at instant ``t``."""
        return t + _offset_at(self.zone, t)

    def first_instant(self, local: int) -> int | None:
        """The first instant at which the clock reads ``local`` or later; ``None`` if its date was skipped."""
        before, after = _offsets(self.zone, LOCAL_EPOCH + timedelta(microseconds=local))
        if before >= after:
            # Ordinary time (equal offsets), or a repeated one: the larger offset is its first instance.
            return local - before
        end = _gap_end(self.zone, local - after, local - before)
        day = local // US_PER_DAY
        if self.reading(end) // US_PER_DAY != day and self.reading(end - 1) // US_PER_DAY != day:
            return None  # the jump starts before this date and ends after it: the date never happened
        return end


class DstClock:
    """One zone's wall clock read under a DST policy: cron readings as instants."""

    __slots__ = ("zone", "policy")

    def __init__(self, zone: ZoneInfo, policy: DstPolicy) -> None:
        self.zone = zone
        self.policy = policy

    def instants(self, day: int, minutes: Sequence[int]) -> list[int]:
        """The instants, ascending, at which the clock reads ``minutes`` (minutes of the day) on ``day``.

        ``day`` counts local calendar days since 1970-01-01. Each reading is at second 0.
        """
        current = date.fromordinal(day + EPOCH_ORDINAL)
        year, month, dom, zone = current.year, current.month, current.day, self.zone
        midnight = day * US_PER_DAY
        found: list[int] = []
        irregular = False
        skipped: tuple[int, int] | None = None  # the bounds of the first gap a reading fell into
        for minute in minutes:
            hour, minute_of_hour = divmod(minute, 60)
            before, after = _offsets(zone, datetime(year, month, dom, hour, minute_of_hour))
            reading = midnight + minute * US_PER_MINUTE
            if before == after:
                found.append(reading - before)
                continue
            irregular = True
            if before > after:  # a fold: the reading happens at two instants
                found.append(reading - before)
                if self.policy != "once":
                    found.append(reading - after)
            elif self.policy == "once":  # a gap: the reading never happens
                found.append(_gap_end(zone, reading - after, reading - before))
            elif skipped is None:
                skipped = (reading - after, reading - before)
        if not found and skipped is not None and self.policy == "cronjob-partitioned":
            # Every time of this day fell into the gap: run once where it ends, if that is still this day.
            end = _gap_end(zone, *skipped)
            return [end] if (end + _offset_at(zone, end)) // US_PER_DAY == day else []
        # Inside a fold the instants of later readings can precede those of earlier ones,
        # and under "once" several skipped readings share the instant that ends their gap.
        return sorted(set(found)) if irregular else found
