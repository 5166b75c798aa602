"""The public, read-only plan of a tessera timetable: what every other part of tessera asks about "when".

``timetable.plan`` is a :class:`PublicPlan`: an immutable value holding the timetable's private
plan and the few facts of its own the answers need (its zone, whether it follows a wall clock,
its DST policy, its catch-up backlog, its partition keys). The REST API, ``tessera plan``, the
Schedules page, function status, missed ticks, lateness and the failure backoff read a schedule
only through it, never through the private plan, so none of them can disagree with the
scheduler: ``upcoming`` bounds each run's period by the DAG's dates exactly as
``next_dagrun_info_v2`` does.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._time.from_last_run import origin_for
from ._time.lane import MAX_STEPS, LaneShape, Segment, lane
from ._time.plan import Plan, PlannedRun
from .clock_changes import ClockChange, dst_rule_of, offset_changes
from .coverage import MAX_OWED, owed_runs
from .exclusion_plan import ExcludedOccurrence, excluded_occurrences
from .instants import from_us, to_us
from .partition_plan import partition_of
from .partitions import PartitionKeys
from .run_facts.record import RunRecord

__all__ = ["MAX_LANE_RANGE", "MAX_OWED", "MAX_STEPS", "LaneShape", "PublicPlan", "Segment"]

MAX_LANE_RANGE = datetime.timedelta(days=400)
MAX_MISSED = 10_000
"""The most ticks :meth:`PublicPlan.missed_between` enumerates, whatever ``limit`` a caller asks for."""
"""The longest range a lane describes (it reads the zone's offset once a day of it)."""


@dataclass(frozen=True)
class RunSchedule:
    """The schedule facts pinned to one run, in the units tasks use (ms and aware datetimes)."""

    occurrence: Any
    run_after: Any
    window_start: Any
    window_end: Any
    phase_ms: int
    interval_ms: int
    """The real spacing of this occurrence from the previous one (23h or 25h across a DST change)."""
    partition_key: str | None = None
    """Airflow's ``partition_key`` of this run when its timetable is ``partitioned`` (its period's start)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PublicPlan:
    """What a tessera timetable plans, as a value: ``timetable.plan`` (never changed once built).

    Built from the timetable's private plan and a few plain facts of the timetable; the
    scheduler (``next_dagrun_info_v2``) steps the private plan itself.
    """

    _plan: Plan
    timezone: str = "UTC"
    """The IANA zone the schedule is read in (``"UTC"`` for absolute-time cadences)."""
    is_wall_clock: bool = False
    """True when occurrences follow a wall clock (calendar, cron); False on absolute time."""
    catch_up_limit: int = 1
    """How many due occurrences the schedule runs after downtime (1: only the newest; the catch-up policy)."""
    _dst: str | None = None
    """Cron's DST policy (``"cronjob"`` or ``"once"``); None: the calendar cadences' one rule."""
    _partition_keys: PartitionKeys | None = None
    """How a partitioned timetable names each run's period (None: not partitioned)."""

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

    def upcoming(
        self,
        *,
        after: datetime.datetime,
        count: int,
        until: datetime.datetime | None = None,
        start_date: datetime.datetime | None = None,
        end_date: datetime.datetime | None = None,
        anchor: datetime.datetime | None = None,
    ) -> list[RunSchedule]:
        """The next ``count`` runs that may start strictly after ``after``, exactly as the scheduler creates them.

        ``start_date`` and ``end_date`` are the DAG's: they bound each run's period as they do for
        the scheduler (see :class:`~tessera.timetables.base.TesseraTimetable`); ``until`` stops at
        the first run starting after it. ``anchor`` is the window end of a run the scheduler created
        or stored for the DAG (the DAG row's next run): a schedule that counts from the last run
        steps from it. Without one it steps from ``start_date``, else from a first run due at
        ``after``, as the scheduler would.
        """
        runs = self._plan.upcoming(
            to_us(after),
            count,
            earliest=None if start_date is None else to_us(start_date),
            latest=None if end_date is None else to_us(end_date),
            until=None if until is None else to_us(until),
            anchor=None if anchor is None else self._plan.occurrence_of_window_end(to_us(anchor)),
        )
        return [self._schedule(run) for run in runs]

    def due_at_or_before(
        self,
        at: datetime.datetime,
        *,
        start_date: datetime.datetime | None = None,
        end_date: datetime.datetime | None = None,
        anchor: datetime.datetime | None = None,
    ) -> RunSchedule | None:
        """The newest run the schedule makes due (``run_after``) at or before ``at``; ``None`` before the first.

        The bounds and ``anchor`` mean what they mean for :meth:`upcoming`, so the run is one the
        scheduler creates (or would have, had nothing stopped it); past ``end_date`` it is the last one.
        """
        plan = self._plan
        moment = to_us(at)
        anchored = plan.anchored_at(
            origin_for(
                last=None if anchor is None else plan.occurrence_of_window_end(to_us(anchor)),
                earliest=None if start_date is None else to_us(start_date),
                moment=moment,
                phase=plan.phase,
            )
        )
        first, last = anchored.period_bounds(
            None if start_date is None else to_us(start_date), None if end_date is None else to_us(end_date)
        )
        occurrence = anchored.cadence.at_or_before(moment - plan.phase)
        if last is not None and occurrence > last:
            occurrence = last
        if first is not None and occurrence < first:
            return None
        return self._schedule(anchored.run(occurrence))

    def previous(self, run: RunSchedule) -> RunSchedule:
        """The run of the occurrence just before ``run``'s, as :meth:`upcoming` gives it (the DAG's dates aside).

        ``run`` is one of this schedule's runs (from :meth:`upcoming`, :meth:`run_of`, :meth:`of_run`):
        a schedule that counts from the last run steps back from it.
        """
        occurrence = to_us(run.occurrence)
        anchored = self._plan.anchored_at(occurrence)
        return self._schedule(anchored.run(anchored.cadence.at_or_before(occurrence - 1)))

    def missed_between(
        self, after: datetime.datetime, before: datetime.datetime, *, limit: int
    ) -> tuple[list[datetime.datetime], bool]:
        """The ``run_after`` of the ticks due strictly between two runs' ``run_after``, oldest first; and if cut short.

        The runs the schedule makes due after the one due at ``after`` and before the one due at
        ``before``: ticks a catch-up policy or a starting deadline passed over, or that came while
        the DAG was paused. At most ``limit`` are enumerated (one cadence step each); when there
        are more, the list holds the oldest ``limit`` and then the newest one, still exact, and the
        flag is True. ``limit`` is capped at :data:`MAX_MISSED` (and at least 0).
        """
        limit = max(0, min(limit, MAX_MISSED))
        plan, low, high = self._plan, to_us(after), to_us(before)
        runs = plan.upcoming(low, limit + 1, until=high - 1)
        ticks = [from_us(run.run_after) for run in runs]
        if len(ticks) <= limit:
            return ticks, False
        # Cut short: the newest tick passed over is the one due just before `before`, stepped as above.
        anchored = plan.anchored_at(origin_for(last=None, earliest=None, moment=low, phase=plan.phase))
        newest = anchored.cadence.at_or_before(high - 1 - plan.phase) + plan.phase
        return [*ticks[:limit], from_us(newest)], True

    def owed_windows(
        self,
        scheduled: Sequence[tuple[datetime.datetime, datetime.datetime]],
        *,
        ran: Sequence[tuple[datetime.datetime, datetime.datetime]] = (),
        limit: int = 100,
    ) -> tuple[list[RunSchedule], bool]:
        """The runs of the fires whose windows no run evaluated, oldest first; and whether cut short.

        ``scheduled`` are the data intervals (start, end) of the DAG's scheduled runs, ``ran``
        those of its backfill and manual runs. Between two consecutive scheduled runs, an
        occurrence is owed when the later run's window does not reach back over its window
        (``dropped="owe"``; under ``"cover"`` it does, and nothing is owed) and no other run
        evaluated exactly that window. ``airflow backfill create --from-date F --to-date T``
        with ``F`` and ``T`` the ``occurrence`` of :meth:`previous` of the first and last owed
        run (the start of their periods) creates exactly the owed ones: the others in the range
        have runs. At most ``limit`` (1 to :data:`MAX_OWED`) are listed.

        :raises ValueError: naming ``limit`` when it is not 1 to :data:`MAX_OWED`.
        """
        owed = owed_runs(
            self._plan,
            [(to_us(start), to_us(end)) for start, end in scheduled],
            [(to_us(start), to_us(end)) for start, end in ran],
            limit=limit,
        )
        return [self._schedule(run) for run in owed.runs], owed.truncated

    @property
    def dst_rule(self) -> str | None:
        """What the schedule does with a wall-clock time a DST change skips or repeats; ``None`` on absolute time."""
        return dst_rule_of(self._dst) if self.is_wall_clock else None

    def clock_changes(self, start: datetime.datetime, end: datetime.datetime) -> list[ClockChange]:
        """The UTC-offset changes of the schedule's zone in ``(start, end]``; empty on absolute time.

        At most :data:`~tessera.timetables.clock_changes.MAX_CLOCK_SPAN` after ``start`` is searched.
        """
        return offset_changes(self.timezone, start, end) if self.is_wall_clock else []

    def excluded(
        self, *, after: datetime.datetime, until: datetime.datetime, count: int = 100
    ) -> list[ExcludedOccurrence]:
        """The occurrences in ``(after, until]`` the schedule skips for its exclusions, oldest first.

        At most ``count`` (1 to :data:`~tessera.timetables.exclusion_plan.MAX_EXCLUDED`), each with
        its reasons. A schedule without exclusions, or whose exclusions fall elsewhere, gives an
        empty list.
        """
        return excluded_occurrences(self._plan.cadence, self.timezone, after, until, count)

    def lane(
        self,
        *,
        after: datetime.datetime,
        until: datetime.datetime,
        start_date: datetime.datetime | None = None,
        end_date: datetime.datetime | None = None,
        anchor: datetime.datetime | None = None,
    ) -> LaneShape:
        """Every run :meth:`upcoming` lists from ``after`` through ``until``, however many, as a few segments.

        The same arguments as :meth:`upcoming` without a count: what the Schedules page draws a
        DAG's timeline from. A repeating cadence costs a few segments whatever its density (a
        5-minute cadence over 70 days is one); a cadence that does not repeat is stepped run by
        run up to :data:`MAX_STEPS` (``through`` then says how far the lane reaches). Instants and
        durations are microseconds since the Unix epoch (see :class:`LaneShape`).

        :raises ValueError: ``until`` before ``after`` or more than :data:`MAX_LANE_RANGE` after it.
        """
        if not datetime.timedelta(0) <= until - after <= MAX_LANE_RANGE:
            raise ValueError(
                f"until: {until.isoformat()} is not within {MAX_LANE_RANGE.days} days after {after.isoformat()}; "
                f"ask for a lane of at most {MAX_LANE_RANGE.days} days"
            )
        return lane(
            self._plan,
            to_us(after),
            to_us(until),
            earliest=None if start_date is None else to_us(start_date),
            latest=None if end_date is None else to_us(end_date),
            anchor=None if anchor is None else self._plan.occurrence_of_window_end(to_us(anchor)),
        )

    def first_of(self, lane: LaneShape, *, after: datetime.datetime | None = None) -> RunSchedule | None:
        """The first run of ``lane`` (that starts after ``after``) as :meth:`upcoming` gives it; None without one.

        With its partition key too. A lane of a wider range answers for any ``after`` within it.
        """
        run = lane.first_run(None if after is None else to_us(after))
        return None if run is None else self._schedule(run)

    def run_of(self, window_end: datetime.datetime) -> RunSchedule:
        """The schedule facts of the run whose window ends at ``window_end`` (a stored run's data interval end)."""
        return self._schedule(self._plan.run(self._plan.occurrence_of_window_end(to_us(window_end))))

    def next_stored(self, dag_model: Any) -> RunSchedule | None:
        """The run the scheduler creates next, stored on the DAG row, as the plan reads it (None: none stored).

        The one reader of that stored run for every part of tessera (status, the REST API, the page).
        Its window starts where the stored one does: after dropped fires it covers their windows.
        """
        end = getattr(dag_model, "next_dagrun_data_interval_end", None)
        if end is None:
            return None
        run, start = self.run_of(end), getattr(dag_model, "next_dagrun_data_interval_start", None)
        return run if start is None else dataclasses.replace(run, window_start=start)

    def of_run(self, dag_run: Any) -> RunSchedule | None:
        """The schedule facts of a stored run (``run_id``, ``data_interval_start``/``_end``), as it was created.

        A run records its phase, delay and interval in its id when it is created (see
        :mod:`.run_record`), so a schedule changed since does not rewrite its history; a run
        created before that record existed is read through the current schedule (:meth:`run_of`).
        ``None`` for a run without a data interval.
        """
        end, start = getattr(dag_run, "data_interval_end", None), getattr(dag_run, "data_interval_start", None)
        if end is None:
            return None
        record = RunRecord.of(getattr(dag_run, "run_id", None))
        if record is None or start is None:
            return self.run_of(end)
        occurrence = to_us(end) + record.delay
        return RunSchedule(
            occurrence=from_us(occurrence),
            run_after=from_us(occurrence + record.phase),
            window_start=start,
            window_end=end,
            phase_ms=record.phase // 1000,
            interval_ms=record.interval // 1000,
        )

    def _schedule(self, run: PlannedRun) -> RunSchedule:
        partition = partition_of(self._partition_keys, self._plan.cadence, run.occurrence)
        return RunSchedule(
            occurrence=from_us(run.occurrence),
            run_after=from_us(run.run_after),
            window_start=from_us(run.window_start),
            window_end=from_us(run.window_end),
            phase_ms=self._plan.phase // 1000,
            interval_ms=run.interval // 1000,
            partition_key=None if partition is None else partition[1],
        )
