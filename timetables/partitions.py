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
mappers read by default). It is checked by use (:mod:`~tessera.timetables.key_format`): the
keys of fixed sample instants must read back with ``strptime`` as exactly those instants,
one key each, so a key names its period's start to the second. Two periods can share a
wall-clock reading when a ``"cronjob"`` cron fires at both instances of a time a fall-back
repeats (``"30 2 * * *"`` in Europe/Berlin, any year from 1900 to 2999): the default is then
``"%Y-%m-%dT%H:%M:%S%z"``, and a pattern without the offset is refused. The default also
carries it, as before, for every sub-daily cadence in a zone whose offset ever changes (one
that never repeats a reading, such as ``Every.hour(at=...)``, may drop it). A partitioned ``"cronjob"``
cron also keys a day whose every time a spring-forward skips: it runs once when the gap
ends (``2026-03-29T03:00:00+0200`` for ``"30 2 * * *"`` in Berlin). Keys are pure functions
of the period and the format, so every scheduler, process and restart computes the same ones.

**Local-day roll-ups across daylight saving.** Airflow's ``DayWindow`` expects one key per
wall-clock hour, a repeated hour at its *second* instance. ``Cron("0 * * * *",
timezone=..., partitioned=True)`` (the CronJob DST policy runs both instances) covers the
23- and 25-hour days; read its keys with ``StartOfDayMapper(timezone=...,
input_format="%Y-%m-%dT%H:%M:%S%z")``. ``Every.hour(at=..., timezone=...)`` runs a repeated
hour once, at its first instance, so a stock roll-up of its fall-back day never completes.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from ._time.durations import US_PER_DAY, shown
from ._time.repeated_readings import changes_offset, repeats_a_reading
from ._time.wallclock import load_zone
from .instants import from_us, to_us
from .key_format import check_key_format

if TYPE_CHECKING:
    from ._time.cadence import Cadence

DEFAULT_KEY_FORMAT = "%Y-%m-%dT%H:%M:%S"
"""The key of a period start when no two periods can share a wall-clock reading."""
ZONED_KEY_FORMAT = DEFAULT_KEY_FORMAT + "%z"
"""The default key when two periods can share a reading (see :func:`needs_offset`): the offset tells them apart."""
_SAFE_FIRST, _SAFE_LAST = datetime.datetime(1, 1, 2), datetime.datetime(9999, 12, 30)
MAX_KEY_FORMAT = 64
"""The longest ``key_format`` taken (Airflow stores keys of up to 250 characters)."""


def needs_offset(cadence: Cadence, zone: ZoneInfo) -> bool:
    """Whether keys of ``cadence`` read on ``zone``'s clock need the UTC offset to stay unique.

    True when two occurrences can show one reading (a ``"cronjob"`` cron firing in a fall-back
    fold of any year from 1900 to 2999), and, as before this rule existed, for every sub-daily
    cadence in a zone whose offset ever changes in those years.
    """
    if not changes_offset(zone.key):
        return False
    return cadence.shortest_gap < US_PER_DAY or repeats_a_reading(cadence, zone.key)


@dataclass(frozen=True, slots=True)
class PartitionKeys:
    """How one timetable turns a period start into a key and back."""

    zone: ZoneInfo
    key_format: str

    @classmethod
    def build(cls, key_format: object, *, timezone: str, cadence: Cadence) -> PartitionKeys:
        """Validate ``key_format`` (``None``: the default for this zone and cadence) by a round trip.

        :raises ValueError: naming ``key_format`` when its keys would not read back, one to one.
        :raises TypeError: when ``key_format`` is not a string.
        """
        zone = load_zone("timezone", timezone)
        offset = needs_offset(cadence, zone)
        example = ZONED_KEY_FORMAT if offset else DEFAULT_KEY_FORMAT
        if key_format is None:
            return cls(zone, example)
        if not isinstance(key_format, str):
            raise TypeError(
                f"key_format: {shown(key_format)} is a {type(key_format).__name__}; give a strftime pattern"
            )
        if not key_format or len(key_format) > MAX_KEY_FORMAT:
            raise ValueError(
                f"key_format: {shown(key_format)} has {len(key_format)} characters; give 1 to {MAX_KEY_FORMAT}, "
                f"e.g. {example!r}"
            )
        if not key_format.isprintable():
            raise ValueError(
                f"key_format: {shown(key_format)} has a control character or one that is not valid text; "
                f"use printable characters, e.g. {example!r}"
            )
        keys = cls(zone, key_format)
        check_key_format(keys, repeats=offset and repeats_a_reading(cadence, zone.key), example=example)
        return keys

    def encode(self, period_start: int) -> str:
        """The key of the period starting at ``period_start`` (microseconds since the epoch)."""
        return from_us(period_start).astimezone(self.zone).strftime(self.key_format)

    def candidates(self, key: str) -> list[int]:
        """The instants ``key`` may name: one, or two for a reading in a fall-back fold.

        :raises ValueError: when ``key`` does not match the format (the caller names the key).
        """
        try:
            parsed = datetime.datetime.strptime(key, self.key_format)
            if parsed.tzinfo is not None:
                return [to_us(parsed)]
            return sorted({to_us(parsed.replace(tzinfo=self.zone, fold=fold)) for fold in (0, 1)})
        except (OverflowError, re.error) as error:  # a year-1 key read with an offset; a pattern never checked
            raise ValueError(str(error)) from None

    def localize(self, moment: datetime.datetime) -> datetime.datetime:
        """``moment``'s wall-clock reading as an instant in this zone (Airflow's rule for partition bounds).

        A reading within a day of the ends of what ``datetime`` holds (0001-01-01, 9999-12-31) is
        moved a day inward, so that applying the zone's offset cannot overflow.
        """
        naive = min(max(moment.replace(tzinfo=None), _SAFE_FIRST), _SAFE_LAST)
        return naive.replace(tzinfo=self.zone).astimezone(datetime.timezone.utc)
