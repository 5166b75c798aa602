"""Wall-clock time in one IANA zone <-> instants, with the rule for times daylight saving skips or repeats.

A *local* time here is an integer: microseconds since 1970-01-01 00:00 on the
zone's wall clock (no offset applied), so local dates and times of day are
plain integer division, as instants are. The zone's rules come from
``zoneinfo`` (the system tz database, or the ``tzdata`` package).

Normalisation rule: a wall time runs at the **first instant at which the
zone's clock reads that time or later**.

* An ordinary time maps to its one instant.
* A time the autumn repeat shows twice runs once, at its first instance
  (01:30 on New York's fall-back day is 01:30 EDT, never also 01:30 EST).
* A time in the spring-forward gap runs at the instant the gap ends (02:30 on
  New York's spring-forward day runs at 03:00 EDT), so no run is lost.
* A local date the zone skipped entirely (Pacific/Apia went from 2011-12-29
  to 2011-12-31) has no times at all: nothing is due on it.

The map from local time to instant is therefore non-decreasing, which is what
lets a cadence find the occurrence after an instant without searching, and
two wall times may share an instant (both ends of a gap) but never swap order.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .durations import US_PER_DAY, shown

_UTC_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_LOCAL_EPOCH = datetime(1970, 1, 1)
# 'localtime' is the host's zone (every scheduler must compute the same instants); 'Factory' is no place.
_REFUSED_KEYS = frozenset({"localtime", "Factory"})


def _us(delta: timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def load_zone(field: str, value: object) -> ZoneInfo:
    """The ``ZoneInfo`` for an IANA name (or a ``ZoneInfo`` with a key), refusing anything else.

    :raises ValueError: naming ``field`` and the value when the name is unknown or machine-dependent.
    :raises TypeError: when ``value`` is neither a string nor a ``ZoneInfo``.
    """
    if isinstance(value, ZoneInfo) and value.key:
        value = value.key
    if not isinstance(value, str):
        kind = "a tzinfo without an IANA key" if isinstance(value, tzinfo) else f"a {type(value).__name__}"
        raise TypeError(f"{field}: {shown(value)} is {kind}; give an IANA timezone name such as 'Europe/Amsterdam'")
    try:
        if value in _REFUSED_KEYS:
            raise ZoneInfoNotFoundError(value)
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"{field}: {shown(value)} is not an IANA timezone name; use a name such as 'Europe/Amsterdam', "
            f"'America/New_York' or 'UTC' (a key of zoneinfo.available_timezones() other than "
            f"'localtime', which differs between machines, and the placeholder 'Factory')"
        ) from None


class WallClock:
    """The wall clock of one zone: what it reads at an instant, and when it first reads a time."""

    __slots__ = ("zone",)

    def __init__(self, zone: ZoneInfo) -> None:
        self.zone = zone

    def reading(self, t: int) -> int:
        """The local time the clock shows at instant ``t``."""
        local = (_UTC_EPOCH + timedelta(microseconds=t)).astimezone(self.zone)
        return t + _us(local.utcoffset())  # type: ignore[arg-type]

    def first_instant(self, local: int) -> int | None:
        """The first instant at which the clock reads ``local`` or later; ``None`` if its date was skipped."""
        naive = _LOCAL_EPOCH + timedelta(microseconds=local)
        # PEP 495: fold=0 asks for the offset in force before a transition, fold=1 the one after.
        before = _us(self.zone.utcoffset(naive))  # type: ignore[arg-type]
        after = _us(self.zone.utcoffset(naive.replace(fold=1)))  # type: ignore[arg-type]
        if before >= after:
            # Ordinary time (equal offsets), or a repeated one: the larger offset is its first instance.
            return local - before
        return self._end_of_gap(local, local - after, local - before)

    def _end_of_gap(self, local: int, low: int, high: int) -> int | None:
        """The instant in ``(low, high]`` at which the clock jumps from below ``local`` to above it."""
        while high - low > 1:
            middle = (low + high) // 2
            if self.reading(middle) >= local:
                high = middle
            else:
                low = middle
        day = local // US_PER_DAY
        if self.reading(high) // US_PER_DAY != day and self.reading(high - 1) // US_PER_DAY != day:
            return None  # the jump starts before this date and ends after it: the date never happened
        return high
