"""Everything "why" reads about one DAG around an instant T, in a bounded number of indexed queries.

:func:`gather` reads, in order: the DAG row and the version in force at T
(:mod:`~tessera.plugin.explainer.versions`), the schedule around T (part 1,
:mod:`~tessera.plugin.explainer.schedule`), the runs between the occurrences around T, then the
records that can explain a missing or waiting run: pause changes and recorded skips (the audit
log), parse-state changes (:mod:`~tessera.plugin.fleet.broken`), scheduler jobs, active runs,
backfills, the task instances, fire records, note, pool and wave of the run the answer is about,
and the events of the assets an asset-driven DAG waits on. About twenty queries, each bounded.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow.utils.state import TaskInstanceState
from sqlalchemy.exc import SQLAlchemyError

from tessera.operators.functions.record import RECORD_KEY, FireRecord
from tessera.operators.functions.skip_events import LoggedSkip
from tessera.operators.pauses.history import LoggedPause

from .. import scoped_reads as reads
from ..fleet.broken import Broken, ParseEntry, broken_dags, parse_entries
from ..fleet.failures import failure
from ..scoped_reads import BackfillRow, PoolOccupancy, RunRow, Scope, TaskRow
from . import records
from .clock import ClockFinding, clock_findings
from .drops import Drop, Replaced, recorded_drops, replaced_run
from .schedule import ScheduleView, schedule_view
from .versions import DagAtT, Definition, dag_at
from .waits import AssetWait, WavePlace, asset_waits, is_gate, wave_place

if TYPE_CHECKING:
    from airflow.models.dag import DagModel
    from sqlalchemy.orm import Session

_WAITING = {None, TaskInstanceState.SCHEDULED.value, TaskInstanceState.QUEUED.value}


@dataclass
class Facts:
    dag_id: str
    at: datetime.datetime
    now: datetime.datetime
    dag: DagAtT
    definition: Definition | None
    view: ScheduleView
    view_error: str | None = None
    clock: list[ClockFinding] = field(default_factory=list)
    runs: list[RunRow] = field(default_factory=list)
    later: list[RunRow] = field(default_factory=list)
    occurrence_run: RunRow | None = None
    subject: RunRow | None = None
    due_at: datetime.datetime | None = None
    """When the occurrence became due (its run_after), or T: the instant the blockers are checked at."""
    pause: LoggedPause | None = None
    pauses: list[LoggedPause] = field(default_factory=list)
    parse: ParseEntry | None = None
    parses: list[ParseEntry] = field(default_factory=list)
    broken: Broken | None = None
    skips: list[LoggedSkip] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    """Fires tessera recorded as not run (overlap drops, catch-up skips), read from the scheduled runs after T."""
    replaced: Replaced | None = None
    """The subject run was failed by ``cancel_other`` when a newer run started."""
    gate: TaskRow | None = None
    """The subject run's wave gate task, when it was holding the run at T (even if it has released it since)."""
    scheduler: records.SchedulerCover | None = None
    active: list[RunRow] = field(default_factory=list)
    backfills: list[BackfillRow] = field(default_factory=list)
    tasks: list[TaskRow] = field(default_factory=list)
    fire_records: dict[str, FireRecord] = field(default_factory=dict)
    note: str | None = None
    pool: PoolOccupancy | None = None
    """The pool a task of the run waited for: its slots and holders, as far as the caller may read them."""
    wave: WavePlace | None = None
    assets: list[AssetWait] = field(default_factory=list)
    event_pauses: tuple[LoggedPause | None, list[LoggedPause]] = (None, [])
    """The pause in force when the first of those events arrived, and the changes after it up to T."""
    audit_floor: datetime.datetime | None = None
    job_floor: datetime.datetime | None = None
    missing: list[str] = field(default_factory=list)
    """Records the answer needed and did not find, collected while deciding."""

    @property
    def max_active_runs(self) -> int | None:
        return None if self.definition is None else self.definition.max_active_runs


def _matches(run: RunRow, view: ScheduleView) -> bool:
    """Whether ``run`` is the run of the view's focus occurrence."""
    focus = view.focus
    if focus is None or not run.automated and run.run_type != "asset_triggered":
        return False
    if focus.window_end is not None and run.data_interval_end == focus.window_end and run.automated:
        return True
    return run.run_type == "scheduled" and run.run_after == focus.run_after


def _subject(facts: Facts) -> RunRow | None:
    """The run the answer is about: a run asked for (manual, asset-driven) at T, else the occurrence's.

    Asked for "at T": triggered after the occurrence came due and at or before T, or running at T
    (from its ``run_after``, the moment it was asked for, to its end). Scheduled and backfill
    runs of other occurrences are not it: they answer their own occurrence (and may be what
    held this one: the evidence names them).
    """
    occurrence, at, focus = facts.occurrence_run, facts.at, facts.view.focus
    since = focus.run_after if focus is not None and facts.view.due else None

    def asked_at_t(run: RunRow) -> bool:
        if run.automated or run is occurrence or run.run_after > at:
            return False
        running = run.end_date is None or run.end_date >= at
        return running or (since is not None and run.run_after > since)

    other = max(filter(asked_at_t, facts.runs), key=lambda r: r.run_after, default=None)
    return other if other is not None else occurrence


def _view(definition: Definition, at: datetime.datetime, anchor: Any) -> tuple[ScheduleView, str | None]:
    try:
        view = schedule_view(
            definition.timetable,
            at=at,
            start=definition.start,
            end=definition.end,
            catchup=definition.catchup,
            anchor=anchor,
        )
        return view, None
    except SQLAlchemyError:
        raise
    except Exception as error:  # a timetable that raises: the answer says so, never a 500
        return ScheduleView("other", definition.summary), failure(
            "reading the schedule", definition.version.record, error
        )


def reach_of(view: ScheduleView) -> datetime.timedelta:
    """How long before its ``run_after`` a run's logical date may lie: twice the schedule's longest span around T.

    The runs are read along Airflow's ``(dag_id, logical_date)`` index (it has none on ``run_after``);
    twice the span keeps a run made under a schedule with somewhat longer windows in reach, and
    :data:`~tessera.plugin.scoped_reads.runs.REACH` stands in when the view has no window.
    """
    spans = [x.run_after - x.window_start for x in (view.previous, view.focus, view.following) if x and x.window_start]
    return max(reads.REACH if not spans else 2 * max(spans), datetime.timedelta(minutes=10))


def gather(
    session: Session,
    model: DagModel,
    at: datetime.datetime,
    now: datetime.datetime,
    scope: Scope,
) -> Facts:
    dag_id = model.dag_id
    dag = dag_at(session, model, at)
    definition = dag.then or dag.now
    if definition is None or definition.error is not None:
        summary = "(never stored)" if definition is None else definition.summary
        view, view_error = ScheduleView("other", summary), None if definition is None else definition.error
    else:
        anchor = next(iter(reads.runs_before(session, scope, dag_id, at, limit=1, automated=True)), None)
        view, view_error = _view(definition, at, anchor)
    facts = Facts(dag_id, at, now, dag, definition, view, view_error, clock_findings(view, at))
    focus = view.focus
    low = min(x.run_after for x in (view.previous, focus) if x is not None) if focus else at
    high = max([at] + [x.run_after for x in (view.following,) if x is not None])
    reach = reach_of(view)
    around = {run.id: run for run in reads.runs_between(session, scope, dag_id, min(low, at), high, reach=reach)}
    around.update({run.id: run for run in reads.runs_before(session, scope, dag_id, at, limit=3)})
    facts.runs = sorted(around.values(), key=lambda run: (run.run_after, run.id))
    facts.later = reads.runs_after(session, scope, dag_id, high, reach=reach)
    if view.due and focus is not None:
        facts.occurrence_run = next((run for run in facts.runs if _matches(run, view)), None)
    facts.subject = _subject(facts)
    due = focus.run_after if view.due and focus is not None else at
    facts.due_at = min(due, at)
    facts.pause, facts.pauses = reads.pause_log(session, scope, dag_id, at=facts.due_at, until=now)
    facts.parse, facts.parses = parse_entries(session, scope, dag_id, at=facts.due_at, until=now)
    facts.broken = broken_dags(session, scope, [dag_id]).get(dag_id)
    facts.skips = reads.skip_log(session, scope, dag_id, since=facts.due_at, until=now)
    after_due = [run for run in [*facts.runs, *facts.later] if run.run_after > facts.due_at]
    facts.drops = recorded_drops(session, scope, dag_id, after_due)
    facts.scheduler = records.scheduler_at(session, facts.due_at)
    limit = min(50, (facts.max_active_runs or 16) + 1)
    facts.active = reads.active_runs_at(session, scope, dag_id, facts.due_at, limit=limit, reach=reach)
    backfill_ids = [run.backfill_id for run in facts.runs if run.backfill_id is not None]
    facts.backfills = reads.backfills(session, scope, dag_id, at=at, ids=backfill_ids)
    _read_subject(session, scope, facts)
    if view.kind == "assets":
        last = max((run.created for run in facts.runs if run.created <= at), default=None)
        facts.assets = asset_waits(
            session, dag_id, None if definition is None else definition.default_args, since=last, until=at
        )
        first_event = min((wait.oldest for wait in facts.assets if wait.oldest is not None), default=None)
        if first_event is not None:  # Airflow queues no run for an event that arrives while the DAG is paused
            facts.event_pauses = reads.pause_log(session, scope, dag_id, at=first_event, until=at)
    facts.audit_floor = reads.oldest_audit_entry(session)
    facts.job_floor = records.oldest_scheduler_job(session)
    return facts


def _read_subject(session: Session, scope: Scope, facts: Facts) -> None:
    """The subject run's task instances, fire records and note; its pool or wave when a task waited at T."""
    run = facts.subject
    if run is None:
        return
    facts.tasks = reads.tasks_of(session, scope, facts.dag_id, run.run_id)
    records_left = reads.xcom_values(session, scope, facts.dag_id, run.run_id, RECORD_KEY, limit=50)
    facts.fire_records = _fire_records(records_left)
    facts.note = reads.note_of(session, scope, facts.dag_id, run.id)
    if run.state == "failed":
        facts.replaced = replaced_run(session, scope, facts.dag_id, run, facts.note)
    at = facts.at
    default_args = None if facts.definition is None else facts.definition.default_args
    for task in facts.tasks:
        if is_gate(task.task_id) and _held_at(task, at):
            facts.gate = task
            facts.wave = wave_place(session, scope, facts.dag_id, run.run_id, default_args)
        elif _waiting_for_slot(task, at) and facts.pool is None:
            facts.pool = reads.pool_occupancy(session, scope, task.pool, at)


def _fire_records(values: list[tuple[str, Any]]) -> dict[str, FireRecord]:
    """The fire records (skips, failed fires) the run's cursor tasks left, by task id."""
    found = {}
    for task_id, value in values:
        record = FireRecord.from_json(value)
        if record is not None:
            found[task_id] = record
    return found


def _held_at(task: TaskRow, at: datetime.datetime) -> bool:
    """A gate holding its run at ``at``: started by then and not finished, whatever it came to since."""
    started = task.start_date is not None and task.start_date <= at
    return started and (task.end_date is None or task.end_date > at)


def _waiting_for_slot(task: TaskRow, at: datetime.datetime) -> bool:
    """Scheduled by ``at`` but not yet queued to an executor (a pool, or a concurrency limit, held it)."""
    if task.scheduled is None or task.scheduled > at:
        return False
    return (task.queued is None or task.queued > at) and (task.state in _WAITING or task.queued is not None)
