"""The public, read-only plan of a tessera timetable: what every other part of tessera asks about "when".

The REST API, ``tessera plan``, the Schedules page, function status, lateness and the
failure backoff read a schedule only through this surface, never through the private
plan, so none of them can disagree with the scheduler: ``upcoming`` bounds each run's
period by the DAG's dates exactly as ``next_dagrun_info_v2`` does.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from ._time.from_last_run import origin_for
from ._time.lane import MAX_STEPS, LaneShape, Segment, lane
from ._time.plan import Plan, PlannedRun
from .instants import from_us, to_us
from .run_info import RunSchedule
from .run_record import RunRecord

__all__ = ["MAX_LANE_RANGE", "MAX_STEPS", "ClockChange", "LaneShape", "PublicPlan", "Segment"]

MAX_LANE_RANGE = datetime.timedelta(days=400)
"""The longest range a lane describes (it reads the zone's offset once a day of it)."""

_CLOCK_PROBE = datetime.timedelta(hours=12)
"""Offsets are compared this far apart when looking for clock changes: zones change theirs months apart."""
MAX_CLOCK_SPAN = datetime.timedelta(days=400)
"""The longest span :meth:`PublicPlan.clock_changes` searches (about 800 offset look-ups at most)."""


@dataclass(frozen=True, slots=True)
class ClockChange:
    """The schedule's zone changed its UTC offset at ``at``: a gap (the clock jumps ahead) or a fold."""

    at: datetime.datetime
    offset_before: datetime.timedelta
    offset_after: datetime.timedelta

    @property
    def is_gap(self) -> bool:
        """True when wall-clock readings were skipped (spring forward), False when repeated (fall back)."""
        return self.offset_after > self.offset_before


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
        anchor: datetime.datetime | None = None,
    ) -> list[RunSchedule]:
        """The next ``count`` runs that may start strictly after ``after``, exactly as the scheduler creates them.

        ``start_date`` and ``end_date`` are the DAG's: they bound each run's period as they do for
        the scheduler (see the class docstring); ``until`` stops at the first run starting after it.
        ``anchor`` is the window end of a run the scheduler created or stored for the DAG (the DAG
        row's next run): a schedule that counts from the last run steps from it. Without one it
        steps from ``start_date``, else from a first run due at ``after``, as the scheduler would.
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

    @property
    def catch_up_limit(self) -> int:
        """How many due occurrences the schedule runs after downtime (1: only the newest; the catch-up policy)."""
        return self._catch_up.backlog  # type: ignore[attr-defined]  # TesseraTimetable's

    @property
    def dst_rule(self) -> str | None:
        """What the schedule does with a wall-clock time a DST change skips or repeats; ``None`` on absolute time."""
        if not self.is_wall_clock:
            return None
        policy = getattr(self, "_dst", None)  # Cron's DST policy; calendar cadences have one rule
        if policy == "cronjob":
            return "a time the clock skips never fires; a time it repeats fires at both instants (CronJob)"
        if policy == "once":
            return (
                "each wall-clock time fires once: a repeated one at its first instant, a skipped one when the gap ends"
            )
        return "a skipped wall-clock time runs when the gap ends; a repeated one runs once, at its first instant"

    def clock_changes(self, start: datetime.datetime, end: datetime.datetime) -> list[ClockChange]:
        """The UTC-offset changes of the schedule's zone in ``(start, end]``; empty on absolute time.

        At most :data:`MAX_CLOCK_SPAN` after ``start`` is searched.
        """
        if not self.is_wall_clock or end <= start:
            return []
        zone = ZoneInfo(self.timezone)
        end = min(end, start + MAX_CLOCK_SPAN)
        changes, low = [], start
        while low < end:
            high = min(low + _CLOCK_PROBE, end)
            before, after = low.astimezone(zone).utcoffset(), high.astimezone(zone).utcoffset()
            if before != after:
                changes.append(ClockChange(_offset_change(zone, low, high), before, after))  # type: ignore[arg-type]
            low = high
        return changes

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
        """
        end = getattr(dag_model, "next_dagrun_data_interval_end", None)
        return None if end is None else self.run_of(end)

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


def _offset_change(zone: ZoneInfo, low: datetime.datetime, high: datetime.datetime) -> datetime.datetime:
    """The first instant in ``(low, high]`` with ``high``'s offset (one change between them), to the second."""
    offset = high.astimezone(zone).utcoffset()
    while high - low > datetime.timedelta(seconds=1):
        middle = low + (high - low) / 2
        if middle.astimezone(zone).utcoffset() == offset:
            high = middle
        else:
            low = middle
    return high.replace(microsecond=0) if high.microsecond else high
