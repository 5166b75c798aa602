"""A DAG's plan as the API answers it: its next runs with their windows and phase, and its lane.

The runs are the timetable's public plan (``upcoming``) and the lane its description of a
range (``lane``), both bounded by the DAG's start and end dates as the scheduler bounds them
(:func:`~tessera.plugin.fleet.schedules.planned_runs`).
"""

from __future__ import annotations

import datetime
from typing import Any

from tessera.timetables.public_plan import LaneShape, PublicPlan
from tessera.timetables.run_facts.of_task import RunSchedule

from .excluded import excluded_runs
from .memo import memo_of
from .models import Contradiction, DagPlan, Lane, LaneSegment, StoredNextRun
from .schedules import ScheduledDag, duration_text, occurrence_fields, occurrence_of, planned_runs, run_bounds

_MS = datetime.timedelta(milliseconds=1)


def lane_of(shape: Any) -> Lane:
    """A :class:`~tessera.timetables.public_plan.LaneShape` as the API sends it (built without validation)."""
    segments = [
        LaneSegment.model_construct(first=s.first, period=s.period, offsets=list(s.offsets), count=s.count)
        for s in shape.segments
    ]
    return Lane.model_construct(
        after=shape.after,
        until=shape.until,
        before=shape.before,
        phase=shape.phase,
        delay=shape.delay,
        lookback=shape.lookback,
        through=shape.through,
        segments=segments,
    )


def stored_next_run(item: ScheduledDag) -> StoredNextRun:
    """The run the scheduler will create next, as stored on the DAG row, with its nominal occurrence."""
    model, run = item.model, item.next_stored
    return StoredNextRun(
        occurrence=None if run is None else run.occurrence,
        run_after=model.next_dagrun_create_after,
        window_start=model.next_dagrun_data_interval_start,
        window_end=model.next_dagrun_data_interval_end,
    )


LANE_GRAIN = datetime.timedelta(hours=1)
"""A lane starts at the hour ``now`` is in, so one computed lane serves every load within the hour."""
_UTC = datetime.timezone.utc


def lane_start(now: datetime.datetime) -> datetime.datetime:
    return now - (now - datetime.datetime(1970, 1, 1, tzinfo=now.tzinfo)) % LANE_GRAIN


def plain_instant(moment: datetime.datetime) -> datetime.datetime:
    """An aware datetime (pendulum's, as the plan and the DB give them) as a plain UTC ``datetime``."""
    utc = moment.astimezone(_UTC) if moment.utcoffset() else moment
    return datetime.datetime(utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.microsecond, _UTC)


def _lane(item: ScheduledDag, plan: PublicPlan, start: datetime.datetime, until: datetime.datetime) -> LaneShape:
    """The DAG's lane over ``[start, until]``: computed once per stored version, stored next run and range.

    A lane is a pure function of the timetable and the DAG's bounds (both of the stored version), the
    anchor (the DAG row's next run) and the range (see :mod:`.memo`).
    """
    anchor = item.model.next_dagrun_data_interval_end  # a schedule from the last run steps from it
    earliest, latest = run_bounds(item.stored)

    def compute() -> LaneShape:
        return plan.lane(after=start, until=until, start_date=earliest, end_date=latest, anchor=anchor)

    return memo_of(item.dag_id, item.stored).lane_for((anchor, start, until), compute)


def next_and_lane(
    item: ScheduledDag, *, now: datetime.datetime, lane_until: datetime.datetime
) -> tuple[dict[str, Any] | None, LaneShape | None]:
    """The DAG's next run after ``now`` (as the page lists it) and its lane from the hour ``now`` is in.

    The next run is the lane's first after ``now`` (the public plan's ``first_of``), or, beyond the
    lane, the plan's next run (``upcoming``); it stays the next run until it starts (:mod:`.memo`).
    """
    plan = item.plan
    if plan is None or item.stored is None:
        return None, None
    lane = _lane(item, plan, lane_start(now), lane_until)

    def compute() -> tuple[RunSchedule | None, dict[str, Any] | None]:
        first = plan.first_of(lane, after=now)
        if first is None:
            anchor = item.model.next_dagrun_data_interval_end
            runs = planned_runs(plan, item.stored, after=now, count=1, until=None, anchor=anchor)
            first = runs[0] if runs else None
        if first is None:
            return None, None
        fields = occurrence_fields(first, item.timezone)
        for name in ("occurrence", "run_after", "window_start", "window_end"):
            fields[name] = plain_instant(fields[name])
        return first, fields

    _, fields = memo_of(item.dag_id, item.stored).first_after(lane, now, compute)
    return fields, lane


def dag_plan(
    item: ScheduledDag,
    *,
    after: datetime.datetime,
    count: int,
    until: datetime.datetime | None,
    contradictions: list[Contradiction],
    lane_until: datetime.datetime | None = None,
) -> DagPlan:
    """The DAG's next ``count`` runs; with ``lane_until`` also its lane from ``after`` to then."""
    timetable, plan = item.timetable, item.plan
    mine = [
        c
        for c in contradictions
        if item.dag_id in c.dag_ids or (c.schedule is not None and c.schedule == item.declared_schedule)
    ]
    runs, description, lane = [], item.model.timetable_description, None
    if plan is not None and item.stored is not None:
        # a schedule from the last run steps from the run stored on the DAG row
        anchor = item.model.next_dagrun_data_interval_end
        runs = planned_runs(plan, item.stored, after=after, count=count, until=until, anchor=anchor)
        description = item.stored.description
        if lane_until is not None:
            start, end = run_bounds(item.stored)
            shape = plan.lane(after=after, until=lane_until, start_date=start, end_date=end, anchor=anchor)
            lane = lane_of(shape)
    lookback = None if plan is None else plan.lookback
    return DagPlan(
        dag_id=item.dag_id,
        summary=item.summary,
        description=description,
        timezone=item.timezone,
        cadence_kind=item.cadence_kind,
        phase=None if plan is None else duration_text(plan.phase),
        phase_ms=None if plan is None else plan.phase // _MS,
        delay=None if plan is None or not plan.delay else duration_text(plan.delay),
        lookback=None if lookback is None else duration_text(lookback),
        is_paused=bool(item.model.is_paused),
        declared_schedule=item.declared_schedule,
        next_stored_run=stored_next_run(item),
        occurrences=[occurrence_of(run, item.timezone) for run in runs],
        excluded=excluded_runs(timetable, after=after, until=runs[-1].occurrence if runs else None),
        contradictions=mine,
        lane=lane,
    )
