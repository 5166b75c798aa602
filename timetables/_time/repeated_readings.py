"""Can a cadence put two of its occurrences on one wall-clock reading? The question behind a key's ``%z``.

A partition key reads a period's start on the timetable's wall clock. Two occurrences can
read the same only inside a *fold*, where a fall-back shows a stretch of readings twice, and
only if the cadence fires at both instances of a reading:

* a calendar cadence (:class:`~.calendar.LocalCadence`) and a ``dst="once"`` cron fire a
  repeated reading once: never;
* a ``dst="cronjob"`` cron fires every matching instant: when some fold of the zone, from
  1900 to 2999, holds a time the expression matches on a date it matches
  (``30 2 * * *`` in Europe/Berlin: every last Sunday of October);
* a cadence on absolute time read in a zone (``@every 1h``): when two occurrences fit in
  one fold, i.e. its shortest gap is at most the zone's deepest fold;
* a cadence with exclusions: when the cadence it filters does;
* a union: when a member does, or when it mixes a member on absolute time with others in a
  zone that ever falls back (that member can fire at the second instance of a reading
  another member fires at the first).

The answers come from :func:`~.zone_history.zone_history`; a zone whose history cannot be
read is taken to fold anywhere, so the answer errs toward an offset in the key.
"""

from __future__ import annotations

import datetime
from bisect import bisect_left

from .cadence import Cadence
from .calendar import LocalCadence
from .cron import CronCadence
from .cron_fields import CronFields
from .durations import US_PER_MINUTE
from .epoch import EPOCH_ORDINAL
from .excluding import ExcludingCadence
from .union import UnionCadence, times_of_day
from .zone_history import Transition, zone_history

_MINUTES_PER_DAY = 24 * 60


def changes_offset(key: str) -> bool:
    """True when zone ``key``'s UTC offset changes at some instant from 1900 to 2999 (or is unknown)."""
    history = zone_history(key)
    return history is None or bool(history)


def folds(key: str) -> tuple[Transition, ...] | None:
    """The fall-backs of zone ``key`` from 1900 to 2999, oldest first (``None``: unknown)."""
    history = zone_history(key)
    return None if history is None else tuple(change for change in history if change.after < change.before)


def repeats_a_reading(cadence: Cadence, key: str) -> bool:
    """True when two occurrences of ``cadence`` can show one reading of zone ``key``'s clock."""
    if isinstance(cadence, ExcludingCadence):
        return repeats_a_reading(cadence.inner, key)  # removing occurrences cannot make two share a reading
    if isinstance(cadence, UnionCadence):
        # Wall-clock members fire a repeated reading at its first instance unless they repeat it themselves;
        # a member on absolute time can fire at the second instance of what another fires at the first.
        if any(times_of_day(member) is None for member in cadence.members):
            found = folds(key)
            return found is None or bool(found)
        return any(repeats_a_reading(member, key) for member in cadence.members)
    if isinstance(cadence, LocalCadence):
        return False  # a repeated wall time runs once, at its first instance
    if isinstance(cadence, CronCadence):
        return cadence.clock.policy != "once" and _cron_fires_in_a_fold(cadence.fields, key)
    found = folds(key)
    if found is None:
        return True
    return any(change.before - change.after >= cadence.shortest_gap for change in found)


def _cron_fires_in_a_fold(fields: CronFields, key: str) -> bool:
    found = folds(key)
    if found is None:
        return True
    minutes = fields.minutes_of_day
    for change in found:
        # The repeated readings are [at + after, at + before); a cron reads whole minutes.
        first = -(-(change.at + change.after) // US_PER_MINUTE)
        end = -(-(change.at + change.before) // US_PER_MINUTE)
        for day in range(first // _MINUTES_PER_DAY, (end - 1) // _MINUTES_PER_DAY + 1):
            if not fields.matches(datetime.date.fromordinal(day + EPOCH_ORDINAL)):
                continue
            low = max(first - day * _MINUTES_PER_DAY, 0)
            high = min(end - day * _MINUTES_PER_DAY, _MINUTES_PER_DAY)
            index = bisect_left(minutes, low)
            if index < len(minutes) and minutes[index] < high:
                return True
    return False
