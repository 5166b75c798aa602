"""Which cadence a ``Calendar`` steps: a calendar cadence or a business-day one, with its exclusions applied.

The rules that join the parts of what a user wrote, each refused with the field at fault:

* ``calendar=`` (holidays) belongs to a business-day cadence; on any other it is refused,
  pointing at ``exclude=``;
* ``exclude=`` needs a wall clock (a local date means nothing to a plain interval);
* every business day skips its holidays and its exclusions alike (one set of excluded days,
  one horizon check); the Nth business day of a month counts business days without the
  holidays, then skips the exclusions, and every month it meets must keep a business day.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._time.business_days import first_month_without_business_day
from ._time.business_spec import BUSINESS_DAY, BusinessDaySpec
from ._time.calendar_spec import CalendarSpec
from ._time.durations import shown
from ._time.excluded_days import ExcludedDays
from .exclusion_plan import with_exclusions
from .exclusions import Exclusions, parse_exclusions

if TYPE_CHECKING:
    from ._time.cadence import Cadence

Spec = CalendarSpec | BusinessDaySpec


def calendar_cadence(
    unit: object,
    *,
    every: object,
    on: object,
    at: object,
    timezone: object,
    business_day: object,
    calendar: object,
    exclude: object,
) -> tuple[Spec, Exclusions | None, Exclusions | None, Cadence]:
    """(spec, holidays, exclusions, cadence) of what a user wrote; refusals name the field."""
    if unit == BUSINESS_DAY or business_day is not None:
        return _business(unit, every, on, at, timezone, business_day, calendar, exclude)
    if calendar is not None:
        raise ValueError(
            f"calendar: {shown(calendar)} given for a {unit} cadence; calendar= names the holidays of a "
            f"business-day cadence (Every.business_day(...), Every.month(business_day=...)): to skip dates "
            f"use exclude="
        )
    spec = CalendarSpec.parse(unit, every=every, on=on, at=at, timezone=timezone)
    skipped = parse_exclusions("exclude", exclude)
    if skipped is not None and spec.timezone is None:
        raise ValueError(
            f"exclude: {shown(skipped.describe())} given for a cadence without a wall clock; exclusions are local "
            f"dates: anchor the cadence, e.g. Every.day(at='09:00', timezone='America/New_York', exclude=...)"
        )
    cadence = with_exclusions("exclude", spec.cadence(), skipped, spec.timezone or "UTC")
    return spec, None, skipped, cadence


def _business(
    unit: object,
    every: object,
    on: object,
    at: object,
    timezone: object,
    nth: object,
    calendar: object,
    exclude: object,
) -> tuple[Spec, Exclusions | None, Exclusions | None, Cadence]:
    if unit not in (BUSINESS_DAY, "month"):
        raise ValueError(f"business_day: {shown(nth)} given for a {shown(unit)} cadence; only Every.month takes it")
    if on is not None:
        raise ValueError(f"on: {shown(on)} given with business_day=; a month cadence runs on a day or a business day")
    spec = BusinessDaySpec.parse(unit, every=every, nth=nth, at=at, timezone=timezone)  # type: ignore[arg-type]
    holidays = parse_exclusions("calendar", calendar)
    skipped = parse_exclusions("exclude", exclude)
    days = ExcludedDays(()) if holidays is None else holidays.days()
    if spec.nth is None:  # every business day: a holiday and an excluded date are both skipped days
        both = (() if holidays is None else holidays.entries) + (() if skipped is None else skipped.entries)
        field = "calendar" if holidays is not None else "exclude"
        cadence = with_exclusions(field, spec.cadence(days), Exclusions(both) if both else None, spec.timezone)
        return spec, holidays, skipped, cadence
    empty = first_month_without_business_day(days, spec.every)
    if empty is not None:
        assert holidays is not None  # only holidays can empty a month
        raise ValueError(
            f"calendar: {shown(holidays.describe())} leaves no business day in {empty[0]}-{empty[1]:02d}; "
            f"every month a business-day cadence meets needs one: give fewer dates"
        )
    return spec, holidays, skipped, with_exclusions("exclude", spec.cadence(days), skipped, spec.timezone)
