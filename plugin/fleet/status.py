"""The status of a tessera DAG: last and next fire, lateness, last outcome, skip reason and conditions.

One derivation per kind of DAG. For a cursor function the outcome (last outcome,
skip reason, consecutive failures, conditions) is the function's own status
(:mod:`tessera.operators.functions.status`); for any other DAG it comes from its runs.
The fires, the next run and the lateness come from the runs and the timetable's
public plan for both.

Lateness is judged by :mod:`.lateness`.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow.utils.types import DagRunType
from sqlalchemy import Row

from tessera.operators.fan_in.freshness import stale_parent_ages
from tessera.operators.fan_in.release import last_completed
from tessera.operators.functions.skip_events import SkipEvent
from tessera.operators.schedules.held_fires import SKIP_EVENT
from tessera.operators.schedules.identity import record_of
from tessera.timetables.base import TesseraTimetable
from tessera.timetables.coverage import OWE
from tessera.timetables.instants import to_us

from .._airflow import utcnow
from ..scoped_reads import Scope, newest_entry_of, owed_window_counts
from .adapters import NOT_A_CURSOR_FUNCTION, CursorStatuses, cursor_function_statuses
from .lateness import assess_lateness
from .models import (
    ConditionModel,
    Contradiction,
    CursorStatus,
    DagStatus,
    DropModel,
    Lateness,
    RunSummary,
    StaleParentModel,
)
from .plans import stored_next_run
from .runs import RunHistory
from .schedules import ScheduledDag

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


@dataclass(frozen=True)
class Outcome:
    """What the DAG's newest work came to: the part of the status a cursor function answers itself."""

    last_outcome: str | None
    skip_reason: str | None
    consecutive_failures: int
    conditions: list[ConditionModel]


def cursor_outcome(cursor: CursorStatus) -> Outcome:
    return Outcome(cursor.last_outcome, cursor.last_skip_reason, cursor.consecutive_failures, list(cursor.conditions))


_SPEC_VALID = ConditionModel(type="SpecValid", status="True", reason="Parsed")
_READY = {  # by the newest finished run's outcome; shared by every row (never changed once built)
    "success": ConditionModel(type="Ready", status="True", reason="RunSucceeded"),
    "failed": ConditionModel(type="Ready", status="False", reason="RunFailed", message="the newest run failed"),
    None: ConditionModel(type="Ready", status="Unknown", reason="NoRunYet", message="no run has finished yet"),
}
_errors_index: tuple[Any, dict[str, str]] = (None, {})
"""The contradictions listed last and, per DAG id, the first error among them: indexed once per listing."""


def _first_errors(contradictions: list[Contradiction]) -> dict[str, str]:
    global _errors_index
    listed, index = _errors_index
    if listed is not contradictions:
        index = {}
        for contradiction in contradictions:
            if contradiction.severity == "error":
                for dag_id in contradiction.dag_ids:
                    index.setdefault(dag_id, contradiction.message)
        _errors_index = (contradictions, index)
    return index


def _conditions(
    item: ScheduledDag, contradictions: list[Contradiction], last_outcome: str | None
) -> list[ConditionModel]:
    error = _first_errors(contradictions).get(item.dag_id)
    if item.model.has_import_errors or error:
        message = error or "the DAG file has an import error"
        spec = ConditionModel(type="SpecValid", status="False", reason="SpecInvalid", message=message)
        return [spec, ConditionModel(type="Ready", status="False", reason="SpecInvalid", message=message)]
    return [_SPEC_VALID, _READY.get(last_outcome, _READY[None])]


def missed_ticks(
    timetable: TesseraTimetable | None, fires: list[Row], schedule_of: Callable[[Any], Any] | None = None
) -> str | None:
    """Whether the schedule skipped ticks between its two newest fires (paused or scheduler down).

    ``schedule_of`` reads a run's schedule facts (default: the plan's ``of_run``; a listing's memo).
    """
    ends = [fire.data_interval_end for fire in fires[:2]]
    if timetable is None or len(ends) < 2 or None in ends:
        return None
    read = schedule_of or timetable.plan.of_run
    newest, previous = read(fires[0]), read(fires[1])  # as each was created
    # The occurrence before the newest fire's is later than the previous fire's: some ran not.
    before_newest = to_us(newest.occurrence) - newest.interval_ms * 1000
    return "MissedTicks" if before_newest > to_us(previous.occurrence) else None


def runs_outcome(
    item: ScheduledDag, contradictions: list[Contradiction], history: RunHistory, drop: DropModel | None = None
) -> Outcome:
    """The outcome of a DAG that is not a cursor function: its newest finished runs, its ticks and its drops."""
    if item.model.is_paused:
        skip_reason: str | None = "Suspended"
    elif drop is not None:  # the recorded cause of the newest unrun fires, however many runs started since
        skip_reason = drop.reason
    else:
        skip_reason = missed_ticks(item.timetable, history.fires, item.schedule_of)
    return Outcome(
        history.last_outcome,
        skip_reason,
        history.consecutive_failures,
        _conditions(item, contradictions, history.last_outcome),
    )


def _summary(
    run: Row | None, timetable: TesseraTimetable | None, schedule_of: Callable[[Any], Any] | None = None
) -> RunSummary | None:
    if run is None:
        return None
    occurrence = None
    if timetable is not None and run.data_interval_end is not None and run.run_type == DagRunType.SCHEDULED:
        schedule = (schedule_of or timetable.plan.of_run)(run)
        occurrence = None if schedule is None else schedule.occurrence
    return RunSummary(
        run_id=run.run_id,
        run_type=str(run.run_type),
        state=str(run.state),
        triggered_by=getattr(run.triggered_by, "value", run.triggered_by),
        occurrence=occurrence,
        run_after=run.run_after,
        start_date=run.start_date,
        end_date=run.end_date,
    )


def freshness_rule(item: ScheduledDag) -> tuple[list[str], float]:
    """The AFTER parents of the DAG's declared schedule and its PARENT_FRESHNESS hours (none: no check)."""
    record = record_of(item.stored.default_args if item.stored is not None else None)
    hours = float((record or {}).get("parent_freshness_hours") or 0)
    if not record or not record.get("after") or not hours:
        return [], 0.0
    return list(record["after"]), hours


@dataclass(frozen=True)
class GroupedReads:
    """What the statuses of DAGs listed together read once for all of them, never DAG by DAG."""

    completed: Mapping[str, datetime.datetime | None]
    """When each AFTER parent of theirs last completed a fire (:func:`parent_fires`)."""
    cursors: CursorStatuses
    """The status of their cursor functions, by DAG id (a DAG without one is not in it)."""
    drops: Mapping[str, DropModel] = field(default_factory=dict)
    """Each DAG's newest dropped fires (:func:`latest_drops`)."""
    owed: Mapping[str, int] = field(default_factory=dict)
    """How many windows each ``dropped="owe"`` DAG owes (:func:`owed_counts`); the others owe none."""


NOTHING_READ = GroupedReads(completed={}, cursors={})
"""For DAGs without a stored version: no schedule, so no parents, and no cursor tasks."""


def grouped_reads(
    items: Sequence[ScheduledDag],
    session: Session,
    scope: Scope,
    *,
    parents_of: Iterable[ScheduledDag] | None = None,
) -> GroupedReads:
    """The :class:`GroupedReads` of ``items``, read in the caller's ``scope``: a few grouped queries for any number.

    ``parents_of``: the DAGs whose AFTER parents' fires are read (default: ``items``; the page reads
    them for the rows it lists only, see :func:`parent_fires`).
    """
    cursor_tasks = {
        item.dag_id: item.stored.cursor_task_ids
        for item in items
        if item.stored is not None and item.stored.cursor_task_ids
    }
    return GroupedReads(
        parent_fires(items if parents_of is None else parents_of, session),
        cursor_function_statuses(cursor_tasks, session, scope),
        latest_drops([item.dag_id for item in items], session, scope),
        owed_counts(items, session, scope),
    )


MAX_OWING_DAGS_COUNTED = 100
"""The ``dropped="owe"`` DAGs one answer counts the owed windows of (two queries for all of them, each
reading at most :data:`~tessera.operators.coverage.MAX_RUNS_READ` runs per DAG); past them a DAG's
``owed_windows`` is null: not counted. Under the default ``"cover"`` nothing is owed
and nothing is read."""


def owed_counts(items: Sequence[ScheduledDag], session: Session, scope: Scope) -> dict[str, int]:
    """How many windows each of the first :data:`MAX_OWING_DAGS_COUNTED` ``dropped="owe"`` DAGs owes."""
    owing = [item for item in items if item.timetable is not None and item.timetable.dropped == OWE]
    return owed_window_counts(session, scope, {item.dag_id: item.plan for item in owing[:MAX_OWING_DAGS_COUNTED]})


def latest_drops(dag_ids: Collection[str], session: Session, scope: Scope) -> dict[str, DropModel]:
    """Each DAG's newest record of fires its schedule did not run (overlap drops, catch-up skips): one query."""
    found = {}
    for dag_id, (log_id, _, run_id, extra) in newest_entry_of(session, scope, dag_ids, SKIP_EVENT).items():
        event = SkipEvent.from_json(extra)
        if event is not None:
            found[dag_id] = DropModel(
                reason=event.reason,
                count=event.count,
                at_least=event.at_least,
                first=event.first,
                last=event.last,
                message=event.message,
                run_id=run_id,
                record=f"audit log #{log_id} ({SKIP_EVENT})",
            )
    return found


def owed_windows(item: ScheduledDag, reads: GroupedReads) -> int | None:
    """How many of the DAG's dropped windows are owed: 0 under ``dropped="cover"`` (the next run
    evaluates them); under ``"owe"`` the gaps between its scheduled runs' windows that no run has
    filled (:func:`owed_counts`); None: not a tessera timetable, or past the DAGs counted."""
    if item.timetable is None:
        return None
    if item.timetable.dropped != OWE:
        return 0
    return reads.owed.get(item.dag_id)


def parent_fires(items: Iterable[ScheduledDag], session: Session) -> dict[str, datetime.datetime | None]:
    """When each AFTER parent of any of ``items`` last completed a fire: one grouped query for all of them."""
    parents = sorted({parent for item in items for parent in freshness_rule(item)[0]})
    return last_completed(parents, session) if parents else {}


def stale_parents_of(
    item: ScheduledDag, completed: Mapping[str, datetime.datetime | None], now: datetime.datetime
) -> list[StaleParentModel]:
    """The AFTER parents of the DAG's declared schedule outside its freshness window now.

    ``completed``: :func:`parent_fires` of the DAGs listed with this one.
    """
    parents, hours = freshness_rule(item)
    if not parents:
        return []
    stale = stale_parent_ages(parents, {p: completed.get(p) for p in parents}, now=now, hours=hours)
    return [StaleParentModel.model_validate(parent) for parent in stale]


@dataclass(frozen=True)
class StatusParts:
    """What a status derives about one DAG, shared by its full status and the page's row."""

    outcome: Outcome
    drop: DropModel | None
    cursors: list[CursorStatus]
    cursor_status: str
    lateness: Lateness
    stale_parents: list[StaleParentModel]


def _cursors_of(item: ScheduledDag, statuses: CursorStatuses) -> tuple[list[CursorStatus], str]:
    """The DAG's cursor functions' statuses (none without a stored version) and what they come to."""
    if item.stored is None:
        return [], NOT_A_CURSOR_FUNCTION
    return statuses.get(item.dag_id, ([], NOT_A_CURSOR_FUNCTION))


def unstarted_fire(history: RunHistory) -> Row | None:
    """The DAG's newest fire when it has not started yet (queued): the run its lateness judges first."""
    newest = history.fires[0] if history.fires else None
    return newest if newest is not None and newest.start_date is None else None


def lateness_of(item: ScheduledDag, unstarted: Any | None, now: datetime.datetime) -> Lateness:
    """The DAG's lateness at ``now``: its stored next run, and its newest fire if not started (``unstarted``)."""
    return assess_lateness(
        wall_clock=item.cadence_kind == "wall_clock",
        paused=bool(item.model.is_paused),
        pending=item.next_stored,
        queued=None if unstarted is None else item.schedule_of(unstarted),
        now=now,
    )


@dataclass(frozen=True)
class Verdict:
    """What a list judges every DAG by (late, not ready, failed last): the fields of its status they read.

    :func:`verdict` derives them from a light read of the runs (each DAG's newest outcome, its newest
    fire if it has not started) with the same functions as :func:`status_parts`, so they are what
    the full status says.
    """

    last_outcome: str | None
    conditions: list[ConditionModel]
    lateness: Lateness

    @classmethod
    def of(cls, parts: StatusParts) -> Verdict:
        """The verdict a full status holds."""
        return cls(parts.outcome.last_outcome, parts.outcome.conditions, parts.lateness)


def verdict(
    item: ScheduledDag,
    contradictions: list[Contradiction],
    cursors: CursorStatuses,
    *,
    last_outcome: str | None,
    unstarted: Any | None,
    now: datetime.datetime,
) -> Verdict:
    """The DAG's :class:`Verdict`, as :func:`status_parts` judges it, from its newest finished run's state
    (``last_outcome``), its newest fire if it has not started (``unstarted``: a row with the run's id and
    window) and its cursor functions' statuses (``cursors``: of :func:`grouped_reads`)."""
    mine, _ = _cursors_of(item, cursors)
    if mine:
        outcome = cursor_outcome(mine[0])
        return Verdict(outcome.last_outcome, outcome.conditions, lateness_of(item, unstarted, now))
    conditions = _conditions(item, contradictions, last_outcome)
    return Verdict(last_outcome, conditions, lateness_of(item, unstarted, now))


def status_parts(
    item: ScheduledDag,
    contradictions: list[Contradiction],
    history: RunHistory,
    reads: GroupedReads,
    *,
    now: datetime.datetime | None = None,
) -> StatusParts:
    """The DAG's outcome, lateness and stale parents from its row, its runs, its parents' fires and its functions.

    The runs, the parents' fires and the cursor functions' statuses are read for many DAGs at
    once (:func:`grouped_reads`), so deriving one row reads nothing. ``now``: the instant judged
    (default: the clock's), one for every row of a list.
    """
    cursors, cursor_status = _cursors_of(item, reads.cursors)
    drop = reads.drops.get(item.dag_id)
    outcome = cursor_outcome(cursors[0]) if cursors else runs_outcome(item, contradictions, history, drop)
    now = utcnow() if now is None else now
    lateness = lateness_of(item, unstarted_fire(history), now)
    return StatusParts(outcome, drop, cursors, cursor_status, lateness, stale_parents_of(item, reads.completed, now))


def dag_status(
    item: ScheduledDag, contradictions: list[Contradiction], history: RunHistory, reads: GroupedReads
) -> DagStatus:
    """One DAG's status: :func:`status_parts`, its newest runs and the next one stored on its row."""
    parts = status_parts(item, contradictions, history, reads)
    fires = history.fires
    return DagStatus(
        dag_id=item.dag_id,
        summary=item.summary,
        is_paused=bool(item.model.is_paused),
        last_fire=_summary(fires[0] if fires else None, item.timetable, item.schedule_of),
        last_run=_summary(history.last_run, item.timetable, item.schedule_of),
        next_fire=stored_next_run(item),
        lateness=parts.lateness,
        last_outcome=parts.outcome.last_outcome,
        skip_reason=parts.outcome.skip_reason,
        latest_drop=parts.drop,
        owed_windows=owed_windows(item, reads),
        consecutive_failures=parts.outcome.consecutive_failures,
        conditions=parts.outcome.conditions,
        cursors=parts.cursors,
        cursor_status=parts.cursor_status,
        stale_parents=parts.stale_parents,
    )
