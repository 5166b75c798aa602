"""What a scheduled run says about the fires before it: queued, replayed, or dropped and why.

The scheduler decides which fire a tessera DAG runs next from its overlap policy and, for a
declared schedule, its CATCHUP policy (:mod:`tessera.timetables.owed_runs`); a fire it drops
never becomes a run, so nothing would show it. When a scheduled run starts, this step reads
what the scheduler knew when it created the run (the activity before it) and asks the timetable how each fire
since the previous run was treated. The run's note then says why it ran late (queued behind a
run that held ``MAX_CONCURRENT``, or replayed after the schedule was inactive) and which fires
were dropped, for which reason; the same goes to Airflow's audit log (Browse > Audit Log,
events :data:`QUEUED_EVENT` and :data:`SKIP_EVENT`, JSON in ``extra``) and to the metrics
``tessera.schedule.queued_fires`` and ``tessera.schedule.skipped_fires`` (tag ``reason``).

A plain timetable's run records only what its overlap policy decided (a queued fire, fires
dropped as ``BufferFull``, ``ConcurrencyForbidden`` or ``Superseded``); what its catch-up skips
after downtime or a pause is as before (a cursor function records those itself). A fire due
while no scheduler was heartbeating is the catch-up's, never the overlap policy's (the activity
reads the downtime, :mod:`.activity`): a catch-up run carries no queue record, and the fires it
passed over are not recorded as held or dropped by the overlap policy.

Bounded: at most :data:`MAX_LISTED` fires are examined per run; beyond that the count is "at
least". Runs that are not scheduled fires and DAGs without a tessera timetable cost no query
beyond the DAG's; a scheduled run of a tessera DAG costs the few indexed queries of its activity.
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING

from airflow.utils.types import DagRunType

from tessera.operators.functions.skip_events import SkipEvent
from tessera.operators.run_notes import Audit, append, at, read_at
from tessera.operators.stats import Metric, emit
from tessera.timetables.owed_runs import policy_of, treatments

from .._airflow import run_created_at
from .activity import read_activity
from .runs import dag_of, record_of_run

if TYPE_CHECKING:
    from airflow.models.dagrun import DagRun
    from sqlalchemy.orm import Session

MAX_LISTED = 1000
QUEUED_EVENT = "tessera.schedule.queued"
SKIP_EVENT = "tessera.schedule.skip"
QUEUED_METRIC = Metric("tessera.schedule.queued_fires", "counter")
SKIPPED_METRIC = Metric("tessera.schedule.skipped_fires", "counter")
RAN = ("due", "queued", "replayed")

WHY_DROPPED = {
    "BufferFull": "a fire was already queued behind the run in flight (overlap {overlap})",
    "ConcurrencyForbidden": "{limit} runs were in flight (overlap skip)",
    "Superseded": "a newer fire replaced the run in flight (overlap cancel_other)",
    "Suspended": "the schedule was inactive (CATCHUP false runs none of those fires)",
    "MissedDeadline": "the scheduler did not create them in time (it was down); the newest due fire ran instead",
}
OVERLAP_REASONS = ("BufferFull", "ConcurrencyForbidden", "Superseded")
"""What a plain timetable's run records: its overlap policy's drops (its catch-up's are recorded as before)."""
_AT = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)"
_DROPPED_LINE = re.compile(
    rf"Skipped (at least )?(\d+) fire\(s\) due {_AT}(?: to {_AT})?: ({'|'.join(WHY_DROPPED)}): (.*)\."
)


def dropped_line(event: SkipEvent) -> str:
    """The note's line for ``event``'s dropped fires: the one wording :func:`dropped_in` reads back."""
    count = f"{'at least ' if event.at_least else ''}{event.count}"
    span = f" to {at(event.last)}" if event.count > 1 else ""
    return f"Skipped {count} fire(s) due {at(event.first)}{span}: {event.reason}: {event.message}."


def dropped_in(note: str | None) -> list[SkipEvent]:
    """The dropped fires a run's note records (its :func:`dropped_line` lines), oldest first.

    The note is in ``dag_run_note``, which ``airflow db clean --tables log`` keeps: the record of a
    drop that outlives its audit-log entry.
    """
    found = []
    for line in (note or "").splitlines():
        match = _DROPPED_LINE.fullmatch(line)
        if match is None:
            continue
        at_least, count, first, last, reason, why = match.groups()
        start = read_at(first)
        end = start if last is None else read_at(last)
        found.append(SkipEvent(reason, int(count), start, end, why, at_least is not None))
    return found


def fires_before(dag_run: DagRun, session: Session) -> str | None:
    """``on_dag_run_running``: note, log and count how the fires before this scheduled run were treated.

    Returns the note written, or ``None`` when there is nothing to say (a fire on time).
    """
    if dag_run.run_type != DagRunType.SCHEDULED or dag_run.data_interval_end is None:
        return None
    if dag_run.clear_number:
        return None  # a later attempt (a retry, a clear): its first start said it already
    dag = dag_of(dag_run, session)
    policy = policy_of(getattr(dag, "timetable", None))
    record = record_of_run(dag_run, session) if policy is not None and policy.declared else None
    if policy is None or (policy.declared and record is None):
        return None
    # Every scheduled run is read, even one created moments after it came due: a slot that freed
    # seconds after the tick held it all the same, and its note must say so.
    created = run_created_at(dag_run)
    slots = dag.max_active_runs or 1
    activity = read_activity(session, dag_run.dag_id, slots=slots, before=created)
    found, more = treatments(dag.timetable, activity, now=created, through=dag_run.data_interval_end, limit=MAX_LISTED)
    if not found:
        return None
    (due, mine), dropped = found[-1], found[:-1]
    if mine not in RAN:
        return None  # not a run the policy would have made (a tool or a person created it): nothing to explain
    lines: list[str] = []
    audit: list[Audit] = []
    limit = "MAX_CONCURRENT" if policy.declared else "max_active_runs"
    if mine == "queued":
        # The slot this run waited for freed after the run before it took one: when a run ended
        # before that one was created (it was queued too), or after (it was due with a slot free).
        ends = [end for end in (activity.freed_before, activity.freed_after) if end is not None]
        freed = f"; it was created when a slot freed at {at(max(ends))}" if ends else ""
        lines.append(
            f"Queued: this fire came due at {at(due)} while {limit} {slots} run(s) of "
            f"{dag_run.dag_id} were in flight (overlap {policy.overlap}){freed}."
        )
    elif mine == "replayed":
        lines.append(
            f"Catch-up: this fire came due at {at(due)} while schedule {(record or {}).get('name')} was inactive; "
            f"CATCHUP true runs those fires oldest first, one at a time."
        )
    by_reason: dict[str, list[datetime.datetime]] = {}
    recorded = WHY_DROPPED if policy.declared else OVERLAP_REASONS
    for when, how in dropped:
        if how in recorded:
            by_reason.setdefault(how, []).append(when)
    tags = {"dag_id": dag_run.dag_id, **({"schedule": str(record["name"])} if record else {})}
    for reason, times in by_reason.items():
        at_least = more and times[-1] == dropped[-1][0]
        why = WHY_DROPPED[reason].format(overlap=policy.overlap, limit=limit)
        event = SkipEvent(reason, len(times), times[0], times[-1], why, at_least)
        lines.append(dropped_line(event))
        audit.append(Audit(SKIP_EVENT, event.to_json()))
        emit(SKIPPED_METRIC, {**tags, "reason": reason}, len(times), where="core")
    if mine in ("queued", "replayed"):
        audit.append(Audit(QUEUED_EVENT, {"how": mine, "due": due.isoformat(), "overlap": policy.overlap}))
        emit(QUEUED_METRIC, {**tags, "how": mine}, where="core")
    append(dag_run, *lines, session=session, audit=audit)
    return "\n".join(lines) or None
