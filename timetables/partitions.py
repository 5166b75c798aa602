"""Partition keys: the name Airflow addresses a tessera window by (backfill, clear, asset alignment).

**What a key names.** A run stands for one *period* of its schedule: from the previous
occurrence to its own. The key is that period's start, read on the timetable's wall
clock (``"2026-03-10T12:00:00"`` for the hourly period 12:00-13:00), and the run's
``partition_date`` is the same instant in UTC. Without ``delay`` and ``window`` the
period *is* the run's window (``data_interval``); otherwise:

* ``delay`` shifts the window back, not the period: the 13:00 occurrence of an hourly
  schedule with a 5 minute delay evaluates 11:55 -> 12:55 and is still the ``12:00``
  partition. Keys stay on the cadence's grid, so Airflow's stock mappers (which
  expect hour or day starts) align them.
* ``window=`` (an overlapping lookback) keeps the same rule: the key names the period,
  never the lookback, so keys tile time even when windows overlap, and each key
  belongs to exactly one run.

**Format.** A ``strftime`` pattern, ``"%Y-%m-%dT%H:%M:%S"`` by default (what the stock
mappers read by default). It must carry every field of a period start (``%Y %m %d %H %M
%S``) so a key decodes back to exactly one instant. In a zone that observes daylight
saving a sub-daily cadence also needs ``%z``: a fall-back hour repeats the same wall
clock reading, and two periods must never share a key; the default then is
``"%Y-%m-%dT%H:%M:%S%z"``. Keys are pure functions of the period and the format, so
every scheduler, process and restart computes the same ones.

**Local-day roll-ups across daylight saving.** Airflow's ``DayWindow`` expects one key per
wall-clock hour, a repeated hour at its *second* instance. ``Cron("0 * * * *",
timezone=..., partitioned=True)`` (the CronJob DST policy runs both instances) covers the
23- and 25-hour days; read its keys with ``StartOfDayMapper(timezone=...,
input_format="%Y-%m-%dT%H:%M:%S%z")``. ``Every.hour(at=..., timezone=...)`` runs a repeated
hour once, at its first instance, so a stock roll-up of its fall-back day never completes.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ._time.durations import US_PER_DAY, shown
from ._time.wallclock import load_zone
from .instants import from_us, to_us

DEFAULT_KEY_FORMAT = "%Y-%m-%dT%H:%M:%S"
"""The key of a period start in a zone without daylight saving (or of a daily or longer cadence)."""
ZONED_KEY_FORMAT = DEFAULT_KEY_FORMAT + "%z"
"""The default key of a sub-daily cadence in a zone with daylight saving: the offset tells folded hours apart."""
MAX_KEY_FORMAT = 64
"""The longest ``key_format`` taken (Airflow stores keys of up to 250 characters)."""
_FIELDS = ("%Y", "%m", "%d", "%H", "%M", "%S")


def observes_dst(zone: ZoneInfo) -> bool:
    """True when ``zone``'s UTC offset changes within some year from 1970 to 2037 (a fixed set of probes)."""
    probes = (datetime.datetime(year, month, 1, tzinfo=zone) for year in range(1970, 2038) for month in (1, 7))
    return len({probe.utcoffset() for probe in probes}) > 1


@dataclass(frozen=True, slots=True)
class PartitionKeys:
    """How one timetable turns a period start into a key and back."""

    zone: ZoneInfo
    key_format: str

    @classmethod
    def build(cls, key_format: object, *, timezone: str, shortest_gap_us: int) -> PartitionKeys:
        """Validate ``key_format`` (``None``: the default for this zone and cadence).

        :raises ValueError: naming ``key_format`` when it misses a field a key needs to be unique.
        :raises TypeError: when ``key_format`` is not a string.
        """
        zone = load_zone("timezone", timezone)
        needs_offset = shortest_gap_us < US_PER_DAY and observes_dst(zone)
        if key_format is None:
            return cls(zone, ZONED_KEY_FORMAT if needs_offset else DEFAULT_KEY_FORMAT)
        if not isinstance(key_format, str):
            raise TypeError(
                f"key_format: {shown(key_format)} is a {type(key_format).__name__}; give a strftime pattern"
            )
        if not key_format or len(key_format) > MAX_KEY_FORMAT:
            raise ValueError(
                f"key_format: {shown(key_format)} has {len(key_format)} characters; give 1 to {MAX_KEY_FORMAT}"
            )
        missing = [field for field in _FIELDS if field not in key_format]
        if missing:
            raise ValueError(
                f"key_format: {shown(key_format)} lacks {' '.join(missing)}; a key must name its period's start to "
                f"the second, e.g. {DEFAULT_KEY_FORMAT!r}"
            )
        if needs_offset and "%z" not in key_format:
            raise ValueError(
                f"key_format: {shown(key_format)} has no %z; {zone.key} observes daylight saving, so two periods of "
                f"a sub-daily cadence can start at the same wall-clock time: add %z, e.g. {ZONED_KEY_FORMAT!r}"
            )
        return cls(zone, key_format)

    def encode(self, period_start: int) -> str:
        """The key of the period starting at ``period_start`` (microseconds since the epoch)."""
        return from_us(period_start).astimezone(self.zone).strftime(self.key_format)

    def candidates(self, key: str) -> list[int]:
        """The instants ``key`` may name: one, or two for a reading in a fall-back fold.

        :raises ValueError: when ``key`` does not match the format (the caller names the key).
        """
        parsed = datetime.datetime.strptime(key, self.key_format)
        if parsed.tzinfo is not None:
            return [to_us(parsed)]
        instants = {to_us(parsed.replace(tzinfo=self.zone, fold=fold)) for fold in (0, 1)}
        return sorted(instants)

    def localize(self, moment: datetime.datetime) -> datetime.datetime:
        """``moment``'s wall-clock reading as an instant in this zone (Airflow's rule for partition bounds)."""
        naive = moment.replace(tzinfo=None)
        return naive.replace(tzinfo=self.zone).astimezone(datetime.timezone.utc)
