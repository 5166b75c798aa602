"""The public, read-only plan of a tessera timetable: what every other part of tessera asks about "when".

The REST API, ``tessera plan``, the Schedules page, function status, lateness and the
failure backoff read a schedule only through this surface, never through the private
plan, so none of them can disagree with the scheduler: ``upcoming`` bounds each run's
period by the DAG's dates exactly as ``next_dagrun_info_v2`` does.
"""

from __future__ import annotations

import datetime

from ._time.plan import Plan, PlannedRun
from .instants import from_us, to_us
from .run_info import RunSchedule


class PublicPlan:
    """Mixed into :class:`~tessera.timetables.base.TesseraTimetable`; reads its private plan, never changes it."""

    _plan: Plan

    @property
    def phase(self) -> datetime.timedelta:
        """How long after its occurrence each run may start (never moves the window)."""
        return datetime.timedelta(microseconds=self._plan.phase)

    @property
    def delay(self) -> datetime.timedelta:
        """How far both window bounds are shifted back from the occurrence."""
        return datetime.timedelta(microseconds=self._plan.delay)

    @property
    def lookback(self) -> datetime.timedelta | None:
        """The fixed window span (``window=``), or ``None`` when windows tile occurrence to occurrence."""
        lookback = self._plan.lookback
        return None if lookback is None else datetime.timedelta(microseconds=lookback)

    @property
    def timezone(self) -> str:
        """The IANA zone the schedule is read in (``"UTC"`` for absolute-time cadences)."""
        return "UTC"

    @property
    def is_wall_clock(self) -> bool:
        """True when occurrences follow a wall clock (calendar, cron); False on absolute time."""
        return False

    def upcoming(
        self,
        *,
        after: datetime.datetime,
        count: int,
        until: datetime.datetime | None = None,
        start_date: datetime.datetime | None = None,
        end_date: datetime.datetime | None = None,
    ) -> list[RunSchedule]:
        """The next ``count`` runs that may start strictly after ``after``, exactly as the scheduler creates them.

        ``start_date`` and ``end_date`` are the DAG's: they bound each run's period as they do for
        the scheduler (see the class docstring); ``until`` stops at the first run starting after it.
        """
        runs = self._plan.upcoming(
            to_us(after),
            count,
            earliest=None if start_date is None else to_us(start_date),
            latest=None if end_date is None else to_us(end_date),
            until=None if until is None else to_us(until),
        )
        return [self._schedule(run) for run in runs]

    def run_of(self, window_end: datetime.datetime) -> RunSchedule:
        """The schedule facts of the run whose window ends at ``window_end`` (a stored run's data interval end)."""
        return self._schedule(self._plan.run(self._plan.occurrence_of_window_end(to_us(window_end))))

    def _schedule(self, run: PlannedRun) -> RunSchedule:
        return RunSchedule(
            occurrence=from_us(run.occurrence),
            run_after=from_us(run.run_after),
            window_start=from_us(run.window_start),
            window_end=from_us(run.window_end),
            phase_ms=self._plan.phase // 1000,
            interval_ms=run.interval // 1000,
            partition_key=self._partition_key(run),
        )

    def _partition_key(self, run: PlannedRun) -> str | None:
        partition = self._partition_of(run.occurrence)  # type: ignore[attr-defined]  # PartitionPlan's
        return None if partition is None else partition[1]
