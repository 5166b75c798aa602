"""Holiday calendars from the ``holidays`` package, resolved to dates once, where the DAG file is parsed.

``holidays_of("US", subdiv="NY")`` asks the package for every holiday of the years it
covers (1970-2099 by default) and keeps the dates and names. That list, not the question,
is what a timetable serializes: Airflow stores the timetable in its database, and the
scheduler, the API server and the CLI read it back from there without importing
``holidays`` at all. So every component computes the same occurrences even when two
machines have different versions of the package installed (or none): the dates are those
the dag-processor computed, and the version that computed them is recorded beside them
(``package``). Upgrading the package where DAG files are parsed can change a calendar (a
newly declared holiday); the new dates then arrive as a new version of the DAG, as any
change to a DAG file does. Workers parse the DAG file themselves: give them the same
version (``run_schedule`` of a task reads the windows the scheduler stored, not the list).

Outside the years it covers a calendar excludes nothing; widen ``years`` for older backfills.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._time.durations import shown
from ._time.excluded_days import ExcludedSpan, day_number
from ._time.supported import FIRST_YEAR, LAST_YEAR, YEARS

DEFAULT_YEARS = (1970, 2099)
"""The years a holiday calendar covers unless told otherwise."""
MAX_YEARS = 200
"""The most years one calendar covers (its dates are stored with the DAG)."""
MAX_DATES = 20_000
"""The most dates one calendar holds (a hundred a year for two hundred years)."""
MAX_NAME = 120
"""A holiday's name is cut to this many characters (the package's longest is under 100)."""
_MAX_CODE = 16
_MAX_CATEGORIES = 8


def _text(field: str, value: object, example: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{field}: {shown(value)} is a {type(value).__name__}; give a code such as {example!r}")
    if not value or len(value) > _MAX_CODE or not value.isascii() or not value.isprintable():
        raise ValueError(
            f"{field}: {shown(value)} is not a code; give 1 to {_MAX_CODE} ASCII letters, e.g. {example!r}"
        )
    return value


def _categories(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (list, tuple, set, frozenset)) or not 1 <= len(items) <= _MAX_CATEGORIES:
        raise TypeError(
            f"holidays_of.categories: {shown(value)} is not 1 to {_MAX_CATEGORIES} category names; give e.g. "
            f"('public', 'bank')"
        )
    return tuple(sorted(_text("holidays_of.categories", item, "public") for item in items))


def _years(value: object) -> tuple[int, int]:
    ok = isinstance(value, (tuple, list)) and len(value) == 2
    ok = ok and all(isinstance(year, int) and not isinstance(year, bool) for year in value)  # type: ignore[union-attr]
    if not ok:
        raise TypeError(f"holidays_of.years: {shown(value)} is not (first, last); give two years, e.g. (1970, 2099)")
    first, last = value  # type: ignore[misc]
    if not FIRST_YEAR <= first <= last <= LAST_YEAR or last - first >= MAX_YEARS:
        raise ValueError(
            f"holidays_of.years: {shown(value)} is not a span of 1 to {MAX_YEARS} years within {YEARS}; "
            f"give (first, last), e.g. (1970, 2099)"
        )
    return first, last


@dataclass(frozen=True)
class HolidayCalendar:
    """The holidays of one country (and subdivision) or one financial market, as dates and names.

    Build one with :func:`holidays_of`; pass it to ``exclude=`` or to a business-day cadence's ``calendar=``.
    """

    country: str | None
    market: str | None
    subdiv: str | None
    categories: tuple[str, ...] | None
    observed: bool
    years: tuple[int, int]
    package: str
    """The ``holidays`` version that computed the dates."""
    dates: tuple[tuple[int, str], ...]
    """(local day since 1970-01-01, name), ascending."""

    def __repr__(self) -> str:
        return f"<HolidayCalendar {self.describe()}: {len(self.dates)} dates, holidays {self.package}>"

    @property
    def label(self) -> str:
        """``"holidays US-NY"``, ``"holidays NYSE"``: what a reason names the calendar by."""
        code = self.market or f"{self.country}{'-' + self.subdiv if self.subdiv else ''}"
        return f"holidays {code}"

    def spans(self) -> list[ExcludedSpan]:
        return [ExcludedSpan(day, day, f"{name} ({self.label})") for day, name in self.dates]

    def describe(self) -> str:
        return f"{self.label} {self.years[0]}-{self.years[1]}"

    def to_dict(self) -> dict[str, Any]:
        names = sorted({name for _, name in self.dates})
        index = {name: i for i, name in enumerate(names)}
        days = [day for day, _ in self.dates]
        return {
            "holidays": self.market or self.country,
            "market": self.market is not None,
            "subdiv": self.subdiv,
            "categories": None if self.categories is None else list(self.categories),
            "observed": self.observed,
            "years": list(self.years),
            "package": self.package,
            "names": names,
            # Day numbers as steps from the previous one: a tenth of the size of ISO dates.
            "days": [b - a for a, b in zip([0, *days], days)],
            "name_of": [index[name] for _, name in self.dates],
        }

    @classmethod
    def from_dict(cls, field: str, data: dict[str, Any]) -> HolidayCalendar:
        """Read back :meth:`to_dict`, checking only what a stored value could break (the sizes)."""
        names, steps, name_of = data.get("names", []), data.get("days", []), data.get("name_of", [])
        if not (len(steps) == len(name_of) <= MAX_DATES and len(names) <= MAX_DATES):
            raise ValueError(f"{field}: a stored holiday calendar of {len(steps)} dates; at most {MAX_DATES}")
        days, day = [], 0
        for step in steps:
            day += step
            days.append(day)
        code = data["holidays"]
        market = bool(data.get("market"))
        categories = data.get("categories")
        return cls(
            country=None if market else code,
            market=code if market else None,
            subdiv=data.get("subdiv"),
            categories=None if categories is None else tuple(categories),
            observed=data.get("observed", True),
            years=_years(tuple(data.get("years", DEFAULT_YEARS))),
            package=str(data.get("package", "")),
            dates=tuple((day, names[i][:MAX_NAME]) for day, i in zip(days, name_of)),
        )


def _resolve(country: str | None, market: str | None, **options: Any) -> Iterable[tuple[datetime.date, str]]:
    import holidays  # only where a DAG file is parsed: stored calendars never need the package

    try:
        if market is not None:
            return holidays.financial_holidays(market, **options).items()
        return holidays.country_holidays(country, **options).items()  # type: ignore[arg-type]
    except (NotImplementedError, ValueError, KeyError) as error:
        field = "holidays_of.market" if market is not None else "holidays_of.country"
        what = {"holidays_of.market": "a market such as 'NYSE'", "holidays_of.country": "a country such as 'US'"}
        raise ValueError(
            f"{field}: the holidays package refused {shown(market or country)} with {shown(options.get('subdiv'))}, "
            f"{shown(options.get('categories'))}: {shown(str(error), 120)}; give {what[field]} (see "
            f"holidays.list_supported_countries() and list_supported_financial())"
        ) from None


def holidays_of(
    country: str | None = None,
    *,
    subdiv: str | None = None,
    market: str | None = None,
    categories: str | Iterable[str] | None = None,
    observed: bool = True,
    years: tuple[int, int] = DEFAULT_YEARS,
) -> HolidayCalendar:
    """The holidays of a country (``holidays_of("US", subdiv="NY")``) or a market (``holidays_of(market="NYSE")``).

    :param country: an ISO 3166-1 alpha-2 code the ``holidays`` package knows (``"US"``, ``"GB"``).
    :param subdiv: a subdivision of that country (``"NY"``, ``"ENG"``).
    :param market: instead of a country, a financial market (``"NYSE"``, ``"XNYS"``).
    :param categories: the package's holiday categories (default: its public holidays).
    :param observed: include the days a holiday is observed on when it falls on a weekend (default True).
    :param years: the first and last year covered, at most 200 years within 1900-2999 (default 1970-2099).
    """
    if (country is None) == (market is None):
        raise ValueError(
            f"holidays_of.country: {shown(country)} with market {shown(market)}; give exactly one: a country "
            f"(holidays_of('US', subdiv='NY')) or a market (holidays_of(market='NYSE'))"
        )
    if country is not None:
        country = _text("holidays_of.country", country, "US")
    if market is not None:
        market = _text("holidays_of.market", market, "NYSE")
    if subdiv is not None:
        subdiv = _text("holidays_of.subdiv", subdiv, "NY")
    if not isinstance(observed, bool):
        raise TypeError(f"holidays_of.observed: {shown(observed)} is a {type(observed).__name__}; give True or False")
    kinds, span = _categories(categories), _years(years)
    found = _resolve(
        country, market, subdiv=subdiv, categories=kinds, observed=observed, years=range(span[0], span[1] + 1)
    )
    low, high = datetime.date(span[0], 1, 1), datetime.date(span[1], 12, 31)
    dates = tuple(sorted((day_number(day), str(name)[:MAX_NAME]) for day, name in found if low <= day <= high))
    if len(dates) > MAX_DATES:
        raise ValueError(f"holidays_of.years: {shown(years)} holds {len(dates)} holidays; cover fewer years")
    import holidays

    return HolidayCalendar(country, market, subdiv, kinds, observed, span, holidays.__version__, dates)
