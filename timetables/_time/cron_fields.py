"""The five-field grammar of a Kubernetes CronJob, rule for rule.

A CronJob's schedule is read by robfig/cron v3's standard parser (``ParseStandard``);
this module ports its field rules so that tessera accepts, refuses and reads every
expression as a CronJob does:

- Fields are split on Go's Unicode white space; items on ``,`` (empty items are
  skipped, so ``1,,2`` is ``1,2``). An item is ``*`` or ``?`` (the whole field;
  anything after a ``*-`` is ignored), ``N``, ``N-M`` (N at most M: ``5-3`` is
  refused), or any of these with ``/step``, where ``N/step`` means ``N-max/step``.
- Numbers are Go ``Atoi``: ASCII digits with an optional sign, so ``05`` and ``+5``
  are 5 and ``-1`` is refused. Names (``jan``-``dec``, ``sun``-``sat``, any case) are
  allowed only in the month and day-of-week fields, and not as steps.
- Bounds: minute 0-59, hour 0-23, day-of-month 1-31, month 1-12, day-of-week 0-6
  (0 is Sunday; 7 is refused). A step must be at least 1; one past the range keeps
  only the start.
- Day-of-month and day-of-week are AND-ed when either field has an item ``*`` or
  ``?`` with no step above 1 (``*,5`` and ``*/1`` count; ``*/2`` and ``1-31`` do not),
  and OR-ed otherwise.

Unlike a CronJob, which accepts an expression that can never fire and then never
runs it, an expression that matches no time at all (``0 0 30 2 *``) is refused here.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass

from .epoch import days_in_month


class CronInvalid(ValueError):
    """A cron expression a CronJob would refuse; the message names the expression and the fix."""


FIX = (
    "write five fields 'minute hour day-of-month month day-of-week' such as '0 6 * * *', or one of "
    "@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or '@every 5m'"
)
DESCRIPTORS = {  # spelled exactly so (lowercase, nothing around them), as a CronJob requires
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_BOUNDS = (  # (field name, lowest, highest, names)
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day-of-month", 1, 31, {}),
    ("month", 1, 12, {name: i + 1 for i, name in enumerate(_MONTHS)}),
    ("day-of-week", 0, 6, {name: i for i, name in enumerate(_WEEKDAYS)}),
)
# Go's unicode.IsSpace (strings.Fields), which is narrower than str.split(): no \x1c-\x1f.
_FIELD = re.compile("[^\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_ATOI = re.compile("[+-]?[0-9]+")
# Other crons' last day, nearest weekday, nth weekday and hashed forms, to say so in the error.
_EXTENSION = re.compile(r"L|LW|[0-9]+[LW]|[0-9]*#[0-9]*|H(?:\(.*)?")
_INT_MAX = 2**63 - 1  # Go's int on the 64-bit machines a control plane runs on
# Go lowercases names rune by rune with the simple mapping, under which these two become ASCII.
_LOWER = str.maketrans({**{chr(c): chr(c + 32) for c in range(65, 91)}, "\u0130": "i", "\u212a": "k"})


@dataclass(frozen=True, slots=True)
class CronFields:
    """A parsed five-field expression: what it matches on a local calendar day."""

    minutes_of_day: tuple[int, ...]
    months: frozenset[int]
    days: frozenset[int]
    weekdays: frozenset[int]
    """0 is Sunday."""
    days_or: bool
    """Both day fields are restricted, so a date matching either one matches."""

    def matches(self, date: datetime.date) -> bool:
        if date.month not in self.months:
            return False
        return self._day_matches(date.day, (date.weekday() + 1) % 7)

    def days_matching(self, year: int, month: int) -> list[int]:
        """The days of ``month`` in ``year`` that :meth:`matches`, ascending, without a ``date`` per day.

        Stepping a year costs twelve calls, not 365 date objects (a cold cadence pays it on each parse).
        """
        if month not in self.months:
            return []
        # The cron weekday (0 Sunday) of the month's day 0, so day d falls on (sunday_offset + d) % 7.
        sunday_offset = datetime.date(year, month, 1).isoweekday() - 1
        return [d for d in range(1, days_in_month(year, month) + 1) if self._day_matches(d, (sunday_offset + d) % 7)]

    def _day_matches(self, day: int, weekday: int) -> bool:
        on_day, on_weekday = day in self.days, weekday in self.weekdays
        return (on_day or on_weekday) if self.days_or else (on_day and on_weekday)


def split_fields(text: str) -> list[str]:
    """The whitespace-separated fields of ``text``, split where a CronJob splits them."""
    return _FIELD.findall(text)


def parse_fields(expression: str, text: str) -> CronFields:
    """Parse five fields (``text``); errors name ``expression``.

    :raises CronInvalid: for anything ``ParseStandard`` refuses, and for an expression that never fires.
    """
    fields = split_fields(text)
    if len(fields) != 5:
        problem = f"has {len(fields)} fields, not 5 (seconds and year fields are not supported)"
        raise CronInvalid(f"expression: {expression!r} {problem}; {FIX}")
    (minutes, _), (hours, _), (days, days_star), (months, _), (weekdays, weekdays_star) = (
        _field(expression, field, bounds) for field, bounds in zip(fields, _BOUNDS)
    )
    days_or = not (days_star or weekdays_star)
    some_day = any(day <= days_in_month(None, month) for month in months for day in days)
    fires = (some_day or bool(weekdays)) if days_or else (some_day and bool(weekdays))
    empty = [name for name, values in (("minute", minutes), ("hour", hours), ("month", months)) if not values]
    if empty or not fires:
        what = f"its {empty[0]} field matches nothing" if empty else "no date matches its three date fields together"
        raise CronInvalid(f"expression: {expression!r} never fires ({what}); {FIX}")
    return CronFields(
        tuple(sorted(hour * 60 + minute for hour in hours for minute in minutes)),
        months,
        days,
        weekdays,
        days_or,
    )


def plain_text(fields: CronFields) -> str:
    """``fields`` rewritten in the plain forms every cron reads alike, for a describer to word.

    A CronJob reads ``*,5``, ``1-01``, ``*/90`` or ``,`` its own way; a generic describer would
    word the written text differently, so it is given the parsed values instead.
    """
    minutes = frozenset(m % 60 for m in fields.minutes_of_day)
    hours = frozenset(m // 60 for m in fields.minutes_of_day)
    # OR-ed day fields are written without "*" (it would AND them); an empty one leaves the
    # other alone to decide, which is what "*" AND-ed with it means.
    star = not fields.days_or
    days = _plain(fields.days, 1, 31, star) if fields.days else "*"
    weekdays = _plain(fields.weekdays, 0, 6, star) if fields.weekdays else "*"
    return " ".join(
        (_plain(minutes, 0, 59, True), _plain(hours, 0, 23, True), days, _plain(fields.months, 1, 12, True), weekdays)
    )


def _plain(values: frozenset[int], low: int, high: int, star: bool) -> str:
    ordered = sorted(values)
    if star and len(ordered) == high - low + 1:
        return "*"
    first, steps = ordered[0], {b - a for a, b in zip(ordered, ordered[1:])}
    if len(ordered) > 2 and len(steps) == 1 and min(steps) > 1 and ordered[-1] + min(steps) > high:
        return f"{'*' if first == low else first}/{min(steps)}"
    runs: list[list[int]] = []
    for value in ordered:
        if runs and runs[-1][-1] == value - 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return ",".join(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)) for run in runs)


def _field(expression: str, field: str, bounds: tuple[str, int, int, dict[str, int]]) -> tuple[frozenset[int], bool]:
    """The values of one field, and whether it counts as ``*`` for the day rule (robfig's star bit)."""
    values: set[int] = set()
    star = False
    for item in field.split(","):
        if item:
            item_values, item_star = _item(expression, field, item, bounds)
            values.update(item_values)
            star = star or item_star
    return frozenset(values), star


def _item(expression: str, field: str, item: str, bounds: tuple[str, int, int, dict[str, int]]) -> tuple[range, bool]:
    name, low, high, names = bounds

    def invalid(problem: str) -> CronInvalid:
        return CronInvalid(f"expression: {expression!r} has an invalid {name} field {field!r}: {problem}; {FIX}")

    span_and_step = item.split("/")
    span = span_and_step[0].split("-")
    star = span[0] in ("*", "?")
    if star:  # like robfig, ignore whatever follows "*-"
        start, end = low, high
    else:
        start = _number(span[0], names, invalid)
        if len(span) > 2:
            raise invalid(f"{item!r} has more than one '-'")
        end = start if len(span) == 1 else _number(span[1], names, invalid)
    step = 1
    if len(span_and_step) > 2:
        raise invalid(f"{item!r} has more than one '/'")
    if len(span_and_step) == 2:
        step = _number(span_and_step[1], {}, invalid)
        if len(span) == 1:  # "N/step" means "N-max/step"
            end = high
        star = star and step <= 1
    if start < low:
        raise invalid(f"{start} is out of range (the lowest {name} is {low})")
    if end > high:
        sunday = "; Sunday is 0" if name == "day-of-week" else ""
        raise invalid(f"{end} is out of range (the highest {name} is {high}{sunday})")
    if start > end:
        raise invalid(f"the range {item!r} starts after it ends; write it lowest first")
    if step == 0:
        raise invalid(f"the step of {item!r} is 0; use 1 or more")
    return range(start, end + 1, step), star


def _number(text: str, names: dict[str, int], invalid: Callable[[str], CronInvalid]) -> int:
    """Go's ``Atoi`` on ``text``, after the field's names; refuses negatives like robfig."""
    if names:
        value = names.get(text.translate(_LOWER))
        if value is not None:
            return value
    if not _ATOI.fullmatch(text):
        if _EXTENSION.fullmatch(text):
            hint = " (L, W, # and H are not supported)"
        elif names:
            hint = f" or a name such as {next(iter(names))!r}"
        elif text.isalpha():
            hint = " (names are allowed only in the month and day-of-week fields)"
        else:
            hint = ""
        raise invalid(f"{text!r} is not a number{hint}")
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > 19 or int(digits or "0") > _INT_MAX:
        raise invalid(f"{text!r} is out of range")
    if text.startswith("-") and digits:
        raise invalid(f"{text!r} is negative")
    return int(digits or "0")
