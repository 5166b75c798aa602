"""Checking a partition ``key_format`` by what it does, not by what it contains.

A pattern passes when every key it writes reads back as the one instant it was written
for, and no two instants share a key. :func:`check_key_format` writes the keys of a
fixed set of sample instants and reads each back with ``strptime``:

* readings that vary every field (years 1900 to 2999, every month, days 1 to 31, hours,
  minutes and seconds), so a pattern that drops or garbles a field, escapes it (``%%Y``),
  ends at a NUL, ends in a lone ``%`` or names a field twice fails;
* when the timetable can fire twice at one wall-clock reading (see
  :mod:`~tessera.timetables._time.repeated_readings`), both instances of a reading the zone
  repeats, so a pattern without the offset (``%z``) fails, and an instant on each side of
  the zone's latest change before 2027.

The samples are fixed (about fifty), so the check costs a millisecond or two and every
process reaches the same verdict. Directives a machine's locale spells (``%a %A %b %B %c %h
%p %P %r %x %X`` and the ``E``/``O`` forms) are refused first: keys must be the same on every
machine, and the samples cannot see a locale.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from ._time.durations import US_PER_SECOND, shown
from ._time.repeated_readings import folds
from ._time.supported import FIRST_YEAR, LAST_YEAR
from ._time.zone_history import zone_history
from .instants import to_us

if TYPE_CHECKING:
    from .partitions import PartitionKeys

MAX_KEY = 250
"""Airflow's ``partition_key`` column holds 250 characters."""
_LOCALE_DIRECTIVES = frozenset("aAbBchpPrxXEO")
_DIRECTIVE = re.compile(r"%(.?)", re.DOTALL)
_YEARS = (FIRST_YEAR, FIRST_YEAR + 1, 1969, 1970, 1999, 2000, 2001, 2026, 2099, 2100, LAST_YEAR)
_DAYS_IN_MONTH = {1: 31, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31, 2: 28}
_LAST_SAMPLED_CHANGE = to_us(datetime.datetime(2027, 1, 1, tzinfo=datetime.timezone.utc))


def check_key_format(keys: PartitionKeys, *, repeats: bool, example: str) -> None:
    """Refuse ``keys.key_format`` unless the sample instants' keys read back exactly and are distinct.

    :param repeats: the timetable can fire at both instances of a repeated reading.
    :param example: a pattern to suggest.
    :raises ValueError: naming ``key_format``, the first failing sample and the fix.
    """
    pattern = keys.key_format
    local = sorted({char for char in _DIRECTIVE.findall(pattern) if char in _LOCALE_DIRECTIVES})
    if local:
        named = " ".join(f"%{char}" for char in local)
        raise ValueError(
            f"key_format: {shown(pattern)} uses {named}, which each machine's locale spells its own way; "
            f"keys must be the same everywhere: use numeric fields, e.g. {example!r}"
        )
    seen: dict[str, int] = {}
    for instant in _samples(keys.zone, repeats):
        key = _round_trip(keys, instant, example)
        if key in seen:
            raise ValueError(_shared(keys, key, seen[key], instant, example))
        seen[key] = instant


def _round_trip(keys: PartitionKeys, instant: int, example: str) -> str:
    moment = _local(keys.zone, instant)
    try:
        key = keys.encode(instant)
        candidates = keys.candidates(key)
    except Exception as error:  # strftime/strptime raise ValueError, re.error, UnicodeError ...: all refusals
        problem = f"cannot write or read back the key of {moment} ({shown(str(error), 80)})"
    else:
        if len(key) > MAX_KEY:
            problem = f"writes a key of {len(key)} characters for {moment}, more than Airflow's {MAX_KEY}"
        elif instant not in candidates:
            read = datetime.datetime.strptime(key, keys.key_format).isoformat()  # as read: may be year 1
            problem = f"writes {shown(key)} for {moment}, which reads back as {read}"
        else:
            return key
    raise ValueError(
        f"key_format: {shown(keys.key_format)} {problem}; a key must name its period's start to the second, "
        f"e.g. {example!r}"
    )


def _shared(keys: PartitionKeys, key: str, first: int, second: int, example: str) -> str:
    pattern, zone = shown(keys.key_format), keys.zone.key
    if _local(keys.zone, first)[:19] == _local(keys.zone, second)[:19]:
        return (
            f"key_format: {pattern} gives two periods the same key {shown(key)}: {zone} shows "
            f"{_local(keys.zone, first)[:19]} twice when its clocks go back, and this schedule runs at both; "
            f"add the UTC offset %z, e.g. {example!r}"
        )
    return (
        f"key_format: {pattern} gives {_local(keys.zone, first)} and {_local(keys.zone, second)} the same key "
        f"{shown(key)}; a key must name its period's start to the second, e.g. {example!r}"
    )


def _local(zone: ZoneInfo, instant: int) -> str:
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return (epoch + datetime.timedelta(microseconds=instant)).astimezone(zone).isoformat()


def _samples(zone: ZoneInfo, repeats: bool) -> Iterator[int]:
    """About fifty instants: every field varied, and the zone's repeated readings when they matter."""
    for index in range(48):
        year, month = _YEARS[index % len(_YEARS)], 1 + (index * 5) % 12
        day = 1 + (index * 11) % _DAYS_IN_MONTH[month]
        reading = datetime.datetime(year, month, day, (index * 7) % 24, (index * 13) % 60, (index * 17 + 1) % 60)
        instant = to_us(reading.replace(tzinfo=zone))
        if to_us(reading.replace(tzinfo=zone, fold=1)) == instant:  # skip a reading a fold or gap makes ambiguous
            yield instant
    history = zone_history(zone.key) or ()
    changes = [change for change in history if change.at < _LAST_SAMPLED_CHANGE] or list(history[:1])
    for change in changes[-1:]:
        yield from (change.at - US_PER_SECOND, change.at, change.at + US_PER_SECOND)
    found = folds(zone.key) or ()
    recent = [change for change in found if change.at < _LAST_SAMPLED_CHANGE] or list(found[:1])
    if repeats and recent:
        fold = recent[-1]
        middle = (fold.before - fold.after) // 2 // US_PER_SECOND * US_PER_SECOND
        yield from (fold.at - (fold.before - fold.after) + middle, fold.at + middle)
