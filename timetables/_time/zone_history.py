"""Every change of a zone's UTC offset over the supported years (1900-2999), read from its tz database file.

``zoneinfo`` answers "what is the offset at this instant" but not "when does it change",
and a probe at fixed steps misses a change that is undone before the next probe (Asia/Tokyo's
1948-1951 summers, a month of Ramadan time in Morocco). So this module reads the same TZif file
``zoneinfo`` loads (RFC 8536: the first of ``zoneinfo.TZPATH`` that has it, else the ``tzdata``
package) and lists its transitions exactly: the explicit ones, then, after the last of them,
those of the file's POSIX TZ rule (``CET-1CEST,M3.5.0,M10.5.0/3``) year by year up to 3000.

Cost: one file read and about two thousand date computations per zone, cached per process.
A file that cannot be read or understood gives ``None``: the caller then assumes the worst.
"""

from __future__ import annotations

import datetime
import functools
import os
import re
import struct
from dataclasses import dataclass
from importlib import resources
from zoneinfo import TZPATH

from .durations import US_PER_DAY, US_PER_HOUR, US_PER_SECOND
from .epoch import EPOCH_ORDINAL, days_in_month, is_leap
from .supported import END_YEAR, FIRST_YEAR

_FIRST = (datetime.date(FIRST_YEAR, 1, 1).toordinal() - EPOCH_ORDINAL) * US_PER_DAY
_END = (datetime.date(END_YEAR, 1, 1).toordinal() - EPOCH_ORDINAL) * US_PER_DAY
_CYCLE_YEARS = 400
_CYCLE = 146_097 * US_PER_DAY
"""The length of 400 Gregorian years."""
_HEADER = struct.Struct(">4sc15x6l")
_NAME = r"(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{3,}>)"
_CLOCK = r"[+-]?[0-9]{1,3}(?::[0-9]{1,2}){0,2}"
_DATE = r"J[0-9]{1,3}|[0-9]{1,3}|M[0-9]{1,2}\.[1-5]\.[0-6]"
_RULE = re.compile(
    rf"({_NAME})({_CLOCK})(?:({_NAME})({_CLOCK})?(?:,({_DATE})(?:/({_CLOCK}))?,({_DATE})(?:/({_CLOCK}))?)?)?"
)


@dataclass(frozen=True, slots=True)
class Transition:
    """At instant ``at`` the zone's UTC offset changes from ``before`` to ``after`` (all microseconds).

    ``after < before`` is a fold: the readings ``[at + after, at + before)`` happen twice.
    ``after > before`` is a gap: the readings ``[at + before, at + after)`` never happen.
    """

    at: int
    before: int
    after: int


@functools.lru_cache(maxsize=64)
def zone_history(key: str) -> tuple[Transition, ...] | None:
    """The offset changes of zone ``key`` at instants in [1900-01-01, 3000-01-01) UTC, oldest first.

    ``None`` when its file cannot be found or read: the history is unknown.
    """
    try:
        times, offsets, rule = _read_tzif(_tzif_bytes(key))
        changes = list(zip(times, offsets[1:])) + _from_rule(rule, times[-1] if times else _FIRST)
    except (OSError, ValueError, struct.error, IndexError, ImportError, UnicodeError):
        return None
    changes.sort(key=lambda change: change[0])  # stable: a rule's changes at one instant keep their order
    history: list[Transition] = []
    current = offsets[0]
    for at, after in changes:
        # Two changes at one instant (a permanent-DST rule ends a year as the next one starts) net out.
        before = history.pop().before if history and history[-1].at == at else current
        if after != before and _FIRST <= at < _END:
            history.append(Transition(at, before, after))
        current = after
    return tuple(history)


def _tzif_bytes(key: str) -> bytes:
    """The bytes of the file ``zoneinfo.ZoneInfo(key)`` reads: the search path first, then ``tzdata``."""
    for directory in TZPATH:
        path = os.path.join(directory, key)
        if os.path.isfile(path):
            with open(path, "rb") as file:
                return file.read(1 << 20)
    *package, name = key.split("/")
    return resources.files(".".join(["tzdata.zoneinfo", *package])).joinpath(name).read_bytes()


def _read_tzif(data: bytes) -> tuple[list[int], list[int], str]:
    """Transition instants, the offset in force from each (offsets[0]: before the first), and the TZ rule."""
    magic, version, *counts = _HEADER.unpack_from(data)
    if magic != b"TZif":
        raise ValueError("not a TZif file")
    size, position = 4, _HEADER.size
    if version >= b"2":  # skip the 32-bit block: the 64-bit one repeats it
        isut, isstd, leap, count, types, chars = counts
        position += count * 5 + types * 6 + chars + leap * 8 + isstd + isut
        _, _, *counts = _HEADER.unpack_from(data, position)
        size, position = 8, position + _HEADER.size
    isut, isstd, leap, count, types, chars = counts
    times = list(struct.unpack_from(f">{count}{'q' if size == 8 else 'l'}", data, position))
    position += count * size
    indices = data[position : position + count]
    position += count
    utc_offsets = [struct.unpack_from(">l", data, position + 6 * i)[0] for i in range(types)]
    position += types * 6 + chars + leap * (size + 4) + isstd + isut
    rule = data[position:].split(b"\n")[1].decode("ascii") if version >= b"2" else ""
    offsets = [utc_offsets[0] * US_PER_SECOND] + [utc_offsets[i] * US_PER_SECOND for i in indices]
    return [t * US_PER_SECOND for t in times], offsets, rule


def _clock(text: str | None, default: int = 2 * US_PER_HOUR) -> int:
    """A POSIX ``[+-]hh[:mm[:ss]]`` in microseconds."""
    if text is None:
        return default
    sign = -1 if text.startswith("-") else 1
    parts = [int(part) for part in text.lstrip("+-").split(":")]
    return sign * sum(part * US_PER_SECOND * 60 ** (2 - i) for i, part in enumerate(parts + [0] * (3 - len(parts))))


def _day(rule: str, year: int) -> int:
    """The local day (since 1970-01-01) a POSIX date rule names in ``year``."""
    if rule.startswith("M"):
        month, week, weekday = (int(part) for part in rule[1:].split("."))
        first = datetime.date(year, month, 1)
        day = 1 + (weekday - (first.weekday() + 1) % 7) % 7 + (week - 1) * 7
        while day > days_in_month(year, month):  # week 5 means the last such weekday
            day -= 7
        ordinal = datetime.date(year, month, day).toordinal()
    elif rule.startswith("J"):  # 1-365, 29 February never counted
        number = int(rule[1:])
        ordinal = datetime.date(year, 1, 1).toordinal() + number - 1 + (1 if is_leap(year) and number >= 60 else 0)
    else:  # 0-365, 29 February counted
        ordinal = datetime.date(year, 1, 1).toordinal() + int(rule)
    return ordinal - EPOCH_ORDINAL


def _from_rule(rule: str, last: int) -> list[tuple[int, int]]:
    """The changes the POSIX TZ ``rule`` makes after instant ``last`` (the last explicit transition)."""
    match = _RULE.fullmatch(rule)
    if not rule or match is None:
        if rule:
            raise ValueError(f"unknown TZ rule {rule!r}")
        return []
    _, std_text, dst_name, dst_text, start, start_time, end, end_time = match.groups()
    std = -_clock(std_text)  # POSIX offsets count west of Greenwich
    if dst_name is None:  # standard time all year: the last explicit transition already set it
        return []
    if start is None:
        raise ValueError(f"TZ rule {rule!r} has daylight time but no dates")
    dst = std + US_PER_HOUR if dst_text is None else -_clock(dst_text)
    first_year = max(FIRST_YEAR, datetime.date.fromordinal(EPOCH_ORDINAL + last // US_PER_DAY).year)
    begin_clock, end_clock = _clock(start_time), _clock(end_time)
    cycle: list[tuple[int, int]] = []
    for year in range(first_year, min(first_year + _CYCLE_YEARS, END_YEAR)):
        # A start is read on standard time, an end on daylight time.
        cycle.append((_day(start, year) * US_PER_DAY + begin_clock - std, dst))
        cycle.append((_day(end, year) * US_PER_DAY + end_clock - dst, std))
    # The Gregorian calendar repeats every 400 years to the weekday, and so does an annual rule.
    repeats = -(-(END_YEAR - first_year) // _CYCLE_YEARS)
    return [(at + n * _CYCLE, after) for n in range(repeats) for at, after in cycle if at + n * _CYCLE > last]
