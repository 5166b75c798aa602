"""``Calendar``: every N hours, days, weeks or months, or every business day, at a wall-clock time in a timezone."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ._time.business_spec import BUSINESS_DAY
from .base import TesseraTimetable
from .business_calendar import calendar_cadence
from .decoded import decoded_once
from .exclusions import Exclusions
from .options import Options, check_options
from .union import Unites

if TYPE_CHECKING:
    from typing_extensions import Unpack

WallTime = str | datetime.time
Zone = str | ZoneInfo


class CalendarOptions(Options, total=False):
    """The keywords every calendar constructor takes besides its own (see :class:`Calendar`)."""

    exclude: object


class Calendar(Unites, TesseraTimetable):
    """A calendar cadence: a unit (hour, day, week, month) times ``every``, optionally anchored.

    Build one with :meth:`hour`, :meth:`day`, :meth:`week`, :meth:`month` or
    :meth:`business_day` (also reachable as ``Every.day(...)`` etc.).

    Anchored (``at=``) cadences add the period on the local calendar of
    ``timezone`` and only then convert to an instant: "daily at 09:00" stays
    09:00 local across daylight saving, so a transition day's run comes 23 or
    25 hours after the previous one, and its window (previous occurrence ->
    occurrence) is 23 or 25 hours long. A wall time in the spring-forward gap
    runs when the gap ends (02:30 -> 03:00); one the autumn repeat shows twice
    runs once, at its first instance; a date the zone skipped entirely has no
    run. Multi-period cadences count from fixed local dates (days from
    1970-01-01, weeks from the week of Monday 1970-01-05, months from January
    1970), so every scheduler picks the same days.

    Unanchored cadences (no anchor) are plain intervals on absolute time. Day, week
    and month cadences run from the last run: each occurrence is the previous
    scheduled run's plus N days, 7N days or a flat 30N days; the first run's period
    starts at the DAG's start date (without one, the first run is due when the DAG
    is first scheduled). Every later step is read from the stored runs, so every
    scheduler and restart agrees. Hour cadences stay on the epoch grid of N hours.

    Common keywords, as for :class:`~tessera.timetables.Every`:

    :param delay: shifts both window bounds back; the run is still due at the occurrence.
    :param window: evaluate this fixed lookback instead of the time since the previous occurrence.
    :param phase: none by default (runs start at the authored time); ``Spread()`` spreads runs
        over 15 minutes by a stable hash of the DAG id, ``anti_herd()`` by 0-14 whole minutes,
        ``Fixed("2m")`` delays every run. The phase only moves ``run_after``: the logical date,
        the window and the next run the UI shows stay nominal.
    :param catch_up: ``Latest()`` (default) or ``Backfill(limit=N)``.
    :param key: hash this instead of the DAG id to pick the phase.
    :param exclude: local dates (in ``timezone``) on which the cadence does not run: dates, ``between(...)``
        ranges and ``holidays_of(...)`` calendars (see :mod:`tessera.timetables.exclusions`); anchored
        cadences only. The run after an excluded day evaluates the time since the last run, excluded day
        included, so windows still tile.
    :param partitioned: give each run Airflow's ``partition_key`` (its period's start on this
        calendar's wall clock) and ``partition_date``; see :mod:`tessera.timetables.partitions`.
    :param key_format: the keys' ``strftime`` pattern (default ``"%Y-%m-%dT%H:%M:%S"``, plus ``%z``
        for a sub-daily cadence in a zone with daylight saving).
    :param overlap: what a run that comes due while ``max_active_runs`` runs are in flight does:
        ``"allow_all"`` (default: it waits and runs, none dropped), ``"buffer_one"``, ``"buffer_all"``,
        ``"skip"`` or ``"cancel_other"`` (see :mod:`tessera.timetables.run_policy`).
    :param pause_after_failures: pause the DAG after this many failed runs in a row (1 to 1000).
    :param dropped: what happens to the window of a fire that does not run (dropped by ``overlap``,
        the catch-up or a deadline): ``"cover"`` (default: the next run that starts evaluates it too)
        or ``"owe"`` (each run keeps its own window; the dropped ones are owed, to backfill; the
        default when ``partitioned``); see :mod:`tessera.timetables.coverage`.
    """

    def __init__(
        self,
        unit: str,
        *,
        every: int = 1,
        on: str | int | None = None,
        at: WallTime | None = None,
        timezone: Zone | None = None,
        business_day: int | None = None,
        calendar: object = None,
        exclude: object = None,
        **options: Unpack[Options],
    ) -> None:
        check_options("Calendar", options)  # first: a misspelt keyword is named before any other check
        self._calendar, self._holidays, self._exclude, cadence = calendar_cadence(
            unit,
            every=every,
            on=on,
            at=at,
            timezone=timezone,
            business_day=business_day,
            calendar=calendar,
            exclude=exclude,
        )
        self._timezone, self._wall_clock = self._calendar.timezone or "UTC", self._calendar.at is not None
        self._configure(cadence, **options)

    @classmethod
    def hour(
        cls,
        every: int = 1,
        at: WallTime | None = None,
        *,
        timezone: Zone | None = None,
        **options: Unpack[CalendarOptions],
    ) -> Calendar:
        """Every ``every`` hours (1, 2, 3, 4, 6, 8 or 12).

        With ``at="HH:MM"`` and ``timezone`` (both or neither) the runs are at that wall time plus
        whole multiples of ``every`` hours in ``timezone``: ``hour(6, at="03:00")`` runs at 03:00, 09:00, 15:00
        and 21:00 every day. Without it the runs are every ``every`` hours on absolute time.
        """
        return cls("hour", every=every, at=at, timezone=timezone, **options)

    @classmethod
    def day(
        cls,
        at: WallTime | None = None,
        *,
        every: int = 1,
        timezone: Zone | None = None,
        **options: Unpack[CalendarOptions],
    ) -> Calendar:
        """Every ``every`` days (1 to 30) at ``at`` in ``timezone`` (both or neither; ``timezone="UTC"`` for UTC).

        Without ``at`` the runs are a plain ``every`` x 24 hours apart on absolute time.
        """
        return cls("day", every=every, at=at, timezone=timezone, **options)

    @classmethod
    def week(
        cls,
        on: str | int | None = None,
        at: WallTime | None = None,
        *,
        every: int = 1,
        timezone: Zone | None = None,
        **options: Unpack[CalendarOptions],
    ) -> Calendar:
        """Every ``every`` weeks (1 to 4) on weekday ``on`` (``"monday"`` or 0-6, 0 = Sunday) at ``at``.

        ``on``, ``at`` and ``timezone`` go together, all three or none (a partial anchor is refused,
        naming what is missing); without them the cadence is a plain 7 x ``every`` days interval.
        """
        return cls("week", every=every, on=on, at=at, timezone=timezone, **options)

    @classmethod
    def month(
        cls,
        on: int | None = None,
        at: WallTime | None = None,
        *,
        every: int = 1,
        timezone: Zone | None = None,
        business_day: int | None = None,
        calendar: object = None,
        **options: Unpack[CalendarOptions],
    ) -> Calendar:
        """Every ``every`` months (1 to 12) on day ``on`` (1 to 31), or on business day ``business_day``, at ``at``.

        A day the month lacks means its last day, so ``on=31`` is the month's end and
        ``on=29`` is 28 February in common years: no month is silently skipped. ``on``, ``at``
        and ``timezone`` go together, all three or none; without them the cadence is a flat
        30 x ``every`` days interval.

        ``business_day=N`` (1 to 23) runs on the month's Nth business day, ``-N`` on its Nth-last
        (``-1``: the last business day): a Monday to Friday that ``calendar`` (holidays, as for
        ``exclude``) does not name. A month with fewer business days runs on its last (first) one;
        ``at`` and ``timezone`` are required.
        """
        return cls(
            "month",
            every=every,
            on=on,
            at=at,
            timezone=timezone,
            business_day=business_day,
            calendar=calendar,
            **options,
        )

    @classmethod
    def business_day(
        cls,
        at: WallTime | None = None,
        *,
        timezone: Zone | None = None,
        calendar: object = None,
        **options: Unpack[CalendarOptions],
    ) -> Calendar:
        """Every business day at ``at`` in ``timezone``: Monday to Friday, except the dates of ``calendar``.

        ``calendar`` takes what ``exclude`` takes (``holidays_of("US", subdiv="NY")``, dates, ranges).
        A holiday is an excluded occurrence: the plan lists it with its name, and the next run's
        window covers it (Monday's run evaluates Friday's occurrence to Monday's).
        """
        return cls(BUSINESS_DAY, at=at, timezone=timezone, calendar=calendar, **options)

    @property
    def period(self) -> datetime.timedelta:
        """One nominal period (N hours, N days, 7N days or 30N days), e.g. to cap a retry backoff."""
        return datetime.timedelta(microseconds=self._calendar.period_us)

    def _cadence_summary(self) -> str:
        text = self._calendar.describe()
        if self._holidays is not None:
            text += f" (holidays: {self._holidays.describe()})"
        return text if self._exclude is None else f"{text} except {self._exclude.describe()}"

    @property
    def description(self) -> str:  # type: ignore[override]
        text = super().description
        if self._plan.from_last_run:
            text += (
                " Each occurrence is the previous scheduled run's plus one period; the first run's period"
                " starts at the DAG's start date, or without one the first run is due when the DAG is first"
                " scheduled."
            )
        return text

    def _spec(self) -> dict[str, Any]:
        spec = self._calendar
        return {
            "unit": spec.unit,
            "every": spec.every,
            "on": spec.on,
            "at": spec.at_text,
            "timezone": spec.timezone,
            # Added keys, absent (None) for a DAG serialized before business days and exclusions existed.
            "business_day": getattr(spec, "nth", None),
            "calendar": None if self._holidays is None else self._holidays.to_list(),
            "exclude": None if self._exclude is None else self._exclude.to_list(),
        }

    @classmethod
    @decoded_once
    def deserialize(cls, data: dict[str, Any]) -> Calendar:
        timetable = cls(
            data["unit"],
            every=data.get("every", 1),
            on=data.get("on"),
            at=data.get("at"),
            timezone=data.get("timezone"),
            business_day=data.get("business_day"),
            calendar=Exclusions.from_list("calendar", data.get("calendar")),
            exclude=Exclusions.from_list("exclude", data.get("exclude")),
            **cls._common_kwargs(data),
        )
        return timetable._restore_binding(data)
