"""``exclude=`` and ``calendar=``: the local dates a schedule skips, as a user writes them and as Airflow stores them.

What may be given, alone or in a list (one level: a list of these):

* a date: ``datetime.date(2026, 12, 24)`` (a ``pendulum.Date`` too) or ``"2026-12-24"``;
  a ``datetime`` is refused, since its time of day would be silently dropped;
* a range of dates, both ends included: ``between("2026-12-24", "2027-01-01")``, at most
  366 days (a longer pause is what a DAG's ``end_date`` or pausing it is for);
* a holiday calendar: ``holidays_of("US", subdiv="NY")`` (see :mod:`.holiday_calendars`).

Dates are local dates in the timetable's timezone, from 1900-01-01 to 2999-12-31; a list
holds at most :data:`MAX_ENTRIES` dates and ranges and :data:`MAX_CALENDARS` calendars.
Each is checked when the DAG file is parsed, and refused with "``exclude[2]``: <value>;
<rule and fix>".
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any

from ._time.durations import shown
from ._time.excluded_days import MAX_SPAN_DAYS, ExcludedDays, ExcludedSpan, day_number
from ._time.supported import DATES, FIRST_DATE, LAST_DATE
from .holiday_calendars import HolidayCalendar

MAX_ENTRIES = 1000
"""The most dates and ranges one ``exclude=`` (or ``calendar=``) list holds."""
MAX_CALENDARS = 4
"""The most holiday calendars one list holds."""
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_FORMS = (
    "give a date (datetime.date(2026, 12, 24) or '2026-12-24'), between('2026-12-24', '2027-01-01'), "
    "holidays_of('US', subdiv='NY'), or a list of these"
)


@dataclass(frozen=True)
class DateRange:
    """Every local date from ``first`` to ``last``, both included; build one with :func:`between`."""

    first: object
    last: object


def between(first: datetime.date | str, last: datetime.date | str) -> DateRange:
    """The local dates from ``first`` to ``last``, both included (at most 366 days); checked where it is used."""
    return DateRange(first, last)


def _date(field: str, value: object) -> datetime.date:
    if isinstance(value, datetime.datetime):
        raise TypeError(
            f"{field}: {shown(value)} is a datetime; exclusions are whole local days: give its date, "
            f"e.g. {value.date().isoformat()!r} or value.date()"
        )
    if isinstance(value, str):
        try:
            parsed = datetime.date.fromisoformat(value) if _ISO_DATE.fullmatch(value) else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise ValueError(f"{field}: {shown(value)} is not a date written 'YYYY-MM-DD'; e.g. '2026-12-24'")
        value = parsed
    if not isinstance(value, datetime.date):
        raise TypeError(f"{field}: {shown(value)} is a {type(value).__name__}; {_FORMS}")
    if not FIRST_DATE <= value <= LAST_DATE:
        raise ValueError(f"{field}: {value.isoformat()} is outside {DATES}; give a date in between")
    return datetime.date(value.year, value.month, value.day)  # a plain date, whatever subclass came in


Entry = datetime.date | tuple[datetime.date, datetime.date] | HolidayCalendar


def _entry(field: str, value: object) -> Entry:
    if isinstance(value, HolidayCalendar):
        return value
    if isinstance(value, DateRange):
        first, last = _date(f"{field}.first", value.first), _date(f"{field}.last", value.last)
        days = (last - first).days + 1
        if not 1 <= days <= MAX_SPAN_DAYS:
            raise ValueError(
                f"{field}: between({first.isoformat()!r}, {last.isoformat()!r}) spans {days} days; a range runs "
                f"forward over 1 to {MAX_SPAN_DAYS} days: for a longer pause set the DAG's end_date or pause it"
            )
        return (first, last)
    if type(value).__module__.split(".")[0] == "holidays":
        raise TypeError(
            f"{field}: {shown(value)} is an object of the holidays package; pass the same arguments to "
            f"tessera's holidays_of('US', subdiv='NY'), which records the dates it computed so that every "
            f"Airflow component skips the same days"
        )
    return _date(field, value)


@dataclass(frozen=True)
class Exclusions:
    """A validated ``exclude=`` or ``calendar=`` value: dates, ranges and holiday calendars."""

    entries: tuple[Entry, ...]

    def days(self) -> ExcludedDays:
        """Every excluded local day, with the reason a person reads."""
        spans: list[ExcludedSpan] = []
        for entry in self.entries:
            if isinstance(entry, HolidayCalendar):
                spans += entry.spans()
            elif isinstance(entry, tuple):
                first, last = entry
                reason = f"excluded {first.isoformat()} to {last.isoformat()}"
                spans.append(ExcludedSpan(day_number(first), day_number(last), reason))
            else:
                spans.append(ExcludedSpan(day_number(entry), day_number(entry), "excluded date"))
        return ExcludedDays(spans)

    def describe(self) -> str:
        """``"holidays US-NY 1970-2099, 2 dates, 1 range"``: what the summary shows."""
        calendars = [entry.describe() for entry in self.entries if isinstance(entry, HolidayCalendar)]
        ranges = sum(isinstance(entry, tuple) for entry in self.entries)
        dates = len(self.entries) - len(calendars) - ranges
        parts = [*calendars]
        parts += [f"{dates} date{'s' if dates != 1 else ''}"] if dates else []
        parts += [f"{ranges} range{'s' if ranges != 1 else ''}"] if ranges else []
        return ", ".join(parts)

    def to_list(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for entry in self.entries:
            if isinstance(entry, HolidayCalendar):
                found.append(entry.to_dict())
            elif isinstance(entry, tuple):
                found.append({"from": entry[0].isoformat(), "to": entry[1].isoformat()})
            else:
                found.append({"date": entry.isoformat()})
        return found

    @classmethod
    def from_list(cls, field: str, data: list[dict[str, Any]] | None) -> Exclusions | None:
        """Read back :meth:`to_list` (a stored value), through the same checks as a user's."""
        if not data:
            return None
        values: list[object] = []
        for item in data:
            if "holidays" in item:
                values.append(HolidayCalendar.from_dict(field, item))
            elif "from" in item:
                values.append(DateRange(item["from"], item.get("to")))
            else:
                values.append(item.get("date"))
        return parse_exclusions(field, values)


def parse_exclusions(field: str, value: object) -> Exclusions | None:
    """Validate an ``exclude=``/``calendar=`` value; ``None`` (or an empty list) excludes nothing.

    :raises ValueError: naming ``field`` (``field[i]`` for an item of a list), the value and the rule.
    :raises TypeError: for a value of the wrong kind, likewise.
    """
    if value is None or isinstance(value, Exclusions):
        return value
    listed = isinstance(value, (list, tuple, set, frozenset))
    if listed:
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else list(value)  # type: ignore[arg-type]
    else:
        items = [value]
    calendars = sum(isinstance(item, HolidayCalendar) for item in items)
    if calendars > MAX_CALENDARS or len(items) - calendars > MAX_ENTRIES:
        raise ValueError(
            f"{field}: {len(items) - calendars} dates and ranges and {calendars} holiday calendars; give at most "
            f"{MAX_ENTRIES} dates and ranges (a range covers many days) and {MAX_CALENDARS} calendars"
        )
    entries = []
    for index, item in enumerate(items):
        where = f"{field}[{index}]" if listed else field
        if listed and isinstance(item, (list, tuple, set, frozenset)):
            raise TypeError(f"{where}: {shown(item)} is a {type(item).__name__} inside the list; {_FORMS}")
        entries.append(_entry(where, item))
    return Exclusions(tuple(entries)) if entries else None
