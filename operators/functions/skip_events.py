"""The skip event: a declined tick, or a run of ticks, written to Airflow's audit log where every viewer sees it.

A tick that never becomes a run (passed over after downtime, slept through while
paused) has no task instance to hold a :class:`~tessera.operators.functions.record.FireRecord`.
So the scheduler-side admission also writes an event to Airflow's audit log (the
``log`` table: Browse > Audit Log in the UI, ``GET /api/v2/eventLogs``), event
:data:`EVENT`, tagged with the DAG, the cursor task and the run that was being
started when the skip was found. Its ``extra`` is JSON: the reason, how many ticks,
the first and last of them, and a message. Two events:

* :data:`EVENT` for a run whose cursor task was declined (its fire record says the same);
* :data:`PASSED_OVER` for ticks that never became runs; the status reads the newest one
  back, since no run holds them.

It is written through the scheduler's own session, so it commits with the run's start.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from airflow.models.log import Log
from sqlalchemy import func, select

from ..tessera_names import AUDIT_OWNER
from .record import iso, parse_iso

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

EVENT = "tessera.skip"
PASSED_OVER = "tessera.skip.passed_over"


@dataclass(frozen=True)
class SkipEvent:
    """``count`` ticks from ``first`` to ``last`` (their ``run_after``) were declined for ``reason``."""

    reason: str
    count: int
    first: datetime.datetime
    last: datetime.datetime
    message: str
    at_least: bool = False
    """True when the count stopped at its bound: there were ``count`` or more."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "reason": self.reason,
                "count": self.count,
                "at_least": self.at_least,
                "first": iso(self.first),
                "last": iso(self.last),
                "message": self.message,
            }
        )

    @classmethod
    def from_json(cls, text: str | None) -> SkipEvent | None:
        try:
            data = json.loads(text or "")
            first, last = parse_iso(data["first"]), parse_iso(data["last"])
            if first is None or last is None:
                return None
            return cls(
                str(data["reason"]), int(data["count"]), first, last, str(data.get("message", "")), data["at_least"]
            )
        except (ValueError, KeyError, TypeError):
            return None


def write(
    session: Session, *, dag_id: str, task_id: str, run_id: str, event: SkipEvent, passed_over: bool = False
) -> None:
    name = PASSED_OVER if passed_over else EVENT
    session.add(Log(name, owner=AUDIT_OWNER, dag_id=dag_id, task_id=task_id, run_id=run_id, extra=event.to_json()))


def newest_passed_over(session: Session, dag_id: str, task_id: str) -> SkipEvent | None:
    """The passed-over ticks whose last is the newest (of the few written last: one run writes at most two)."""
    return newest_passed_over_of(session, [(dag_id, task_id)]).get((dag_id, task_id))


def newest_passed_over_of(session: Session, functions: Collection[tuple[str, str]]) -> dict[tuple[str, str], SkipEvent]:
    """:func:`newest_passed_over` of each ``(dag_id, task_id)`` that has one, in one query whatever their number."""
    wanted = set(functions)
    if not wanted:
        return {}
    dag_ids = sorted({dag_id for dag_id, _ in wanted})
    rank = func.row_number().over(partition_by=(Log.dag_id, Log.task_id), order_by=Log.id.desc()).label("rank")
    ranked = (
        select(Log.dag_id, Log.task_id, Log.extra, rank)
        .where(Log.dag_id.in_(dag_ids), Log.event == PASSED_OVER)
        .subquery()
    )
    newest: dict[tuple[str, str], SkipEvent] = {}
    for dag_id, task_id, extra in session.execute(
        select(ranked.c.dag_id, ranked.c.task_id, ranked.c.extra).where(ranked.c.rank <= 2)
    ):
        event = SkipEvent.from_json(extra)
        key = (dag_id, task_id)
        if event is not None and key in wanted and (key not in newest or event.last > newest[key].last):
            newest[key] = event
    return newest


@dataclass(frozen=True)
class LoggedSkip:
    """A skip event with the audit-log entry that holds it."""

    log_id: int
    written: datetime.datetime
    passed_over: bool
    """True for ticks that never became runs; False for a run whose cursor task was declined."""
    task_id: str | None
    run_id: str | None
    event: SkipEvent


def logged_skips(
    session: Session, dag_id: str, *, since: datetime.datetime, until: datetime.datetime, limit: int = 20
) -> list[LoggedSkip]:
    """The DAG's skip events written from ``since`` to ``until``, oldest first (at most ``limit``, one query).

    A passed-over event is written when the next scheduled run starts, so the ticks it covers
    lie before it was written: ask from the first tick of interest onwards.
    """
    # Along the index on dttm, from ``since``: Airflow's log has no (dag_id, event, dttm) index, and its
    # (dag_id, task_id, ...) index holds every task event the DAG ever logged. ``|| ''`` keeps SQLite's
    # planner (it has no statistics) off that index and the event one: the walk stops at ``limit`` entries.
    rows = session.execute(
        select(Log.id, Log.dttm, Log.event, Log.task_id, Log.run_id, Log.extra)
        .where((Log.dag_id + "") == dag_id, (Log.event + "").in_([EVENT, PASSED_OVER]))
        .where(Log.dttm >= since, Log.dttm <= until)
        .order_by(Log.dttm, Log.id)
        .limit(limit)
    )
    found = []
    for log_id, written, name, task_id, run_id, extra in rows:
        event = SkipEvent.from_json(extra)
        if event is not None and written is not None:
            found.append(LoggedSkip(log_id, written, name == PASSED_OVER, task_id, run_id, event))
    return found
