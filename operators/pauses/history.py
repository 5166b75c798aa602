"""When a DAG was paused: read back from Airflow's own audit log, the only pause history Airflow keeps.

Airflow 3.3 stores only whether a DAG is paused *now* (``dag.is_paused``), and no hook
fires when a run is created or a DAG is (un)paused: the dag-run listeners fire when a
run starts or ends, and a policy package's ``task_instance_mutation_hook`` is skipped
at run creation unless an ``airflow_local_settings`` module exists. But every pause
and unpause made through Airflow is written to its audit log (the ``log`` table,
Browse > Audit Log), with its time:

* the UI's toggle and ``PATCH /api/v2/dags/{dag_id}`` (what airflowctl uses): event
  ``patch_dag``, with ``is_paused`` in ``extra``;
* ``airflow dags pause`` / ``unpause``: events ``cli_dag_pause`` / ``cli_dag_unpause``;
* tessera's pauses with a note (``tessera pause``, its REST route, ``pause_after_failures``):
  events ``tessera.dag.pause`` / ``tessera.dag.unpause`` (:mod:`tessera.operators.pauses.notes`);
* Airflow's own pause after ``max_consecutive_failed_dag_runs``: event ``paused``.

:func:`standing_pauses` reads, for many DAGs in one query, the pause each is in when tessera
made it (with its note), for the status and the Schedules page.

Not seen: a bulk ``PATCH /api/v2/dags`` by pattern (logged without a DAG id), a
direct database update, and entries removed by ``airflow db clean``. A pause this
module does not see makes a tick read as missed rather than suspended, and a run-now
queued while paused fires on unpause, as plain Airflow would.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.log import Log
from sqlalchemy import and_, func, or_, select

from .notes import PAUSE_EVENT, UNPAUSE_EVENT, PauseRecord

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

MAX_CHANGES = 100
"""At most this many pause changes are read per question: one query, bounded rows."""

_CLI = {"cli_dag_pause": True, "cli_dag_unpause": False, "paused": True}
_TESSERA = (PAUSE_EVENT, UNPAUSE_EVENT)
_API = ("patch_dag", *_TESSERA)


@dataclass(frozen=True)
class PauseChange:
    at: datetime.datetime
    paused: bool
    """The state the DAG was put in."""


def _paused_by(event: str, extra: str | None) -> bool | None:
    if event in _CLI:
        return _CLI[event]
    try:
        value = json.loads(extra or "{}").get("is_paused")
    except (ValueError, AttributeError):
        return None
    if isinstance(value, str):  # a query parameter arrives as text
        value = {"true": True, "false": False}.get(value.lower())
    return value if isinstance(value, bool) else None


def pause_changes(session: Session, dag_id: str, *, since: datetime.datetime) -> list[PauseChange]:
    """The DAG's pause changes logged after ``since``, oldest first (at most :data:`MAX_CHANGES`)."""
    rows = session.execute(
        select(Log.dttm, Log.event, Log.extra)
        .where(Log.dag_id == dag_id, Log.event.in_([*_CLI, *_API]), Log.dttm > since)
        .order_by(Log.dttm, Log.id)
        .limit(MAX_CHANGES)
    )
    changes = []
    for at, event, extra in rows:
        paused = _paused_by(event, extra)
        if paused is not None and at is not None:
            changes.append(PauseChange(at, paused))
    return changes


def was_paused_at_creation(session: Session, dag_id: str, created: datetime.datetime) -> bool:
    """Whether the DAG was paused when a run was created: its next pause change is an unpause."""
    changes = pause_changes(session, dag_id, since=created)
    return bool(changes) and not changes[0].paused


def paused_at(changes: list[PauseChange], moments: list[datetime.datetime]) -> list[bool]:
    """For each of ``moments`` (ascending, all after the ``since`` of ``changes``), whether the DAG was paused.

    Before the first change the DAG was in the state opposite to it; with no change at all,
    it was never paused in that span.
    """
    state = bool(changes) and not changes[0].paused
    answers, index = [], 0
    for moment in moments:
        while index < len(changes) and changes[index].at <= moment:
            state = changes[index].paused
            index += 1
        answers.append(state)
    return answers


def paused_spans(
    session: Session, dag_id: str, *, since: datetime.datetime, until: datetime.datetime | None = None
) -> list[tuple[datetime.datetime, datetime.datetime]]:
    """The ``[paused, unpaused)`` spans of the DAG after ``since`` (clipped to it), each ended by an unpause.

    A DAG whose first change after ``since`` is an unpause was paused at ``since`` (a schedule
    declared inactive was paused from its creation). A pause with no unpause logged after it
    (``until``, or the DAG is paused now, or the unpause was not logged) opens no span.
    """
    spans: list[tuple[datetime.datetime, datetime.datetime]] = []
    changes = pause_changes(session, dag_id, since=since)
    start = since if changes and not changes[0].paused else None
    for change in changes:
        if until is not None and change.at > until:
            break
        if change.paused and start is None:
            start = change.at
        elif not change.paused and start is not None:
            spans.append((start, change.at))
            start = None
    return spans


@dataclass(frozen=True)
class LoggedPause:
    """One pause change with the audit-log entry that records it (for answers that cite their proof)."""

    log_id: int
    at: datetime.datetime
    paused: bool
    event: str
    """``patch_dag`` (UI or REST), ``cli_dag_pause`` / ``cli_dag_unpause``, ``paused``, or tessera's events."""
    record: PauseRecord | None = None
    """Tessera's own record of it (who, the note, the reason, the failed runs); ``None`` for Airflow's entries."""


def logged_pauses(
    session: Session, dag_id: str, *, at: datetime.datetime, until: datetime.datetime, limit: int = 20
) -> tuple[LoggedPause | None, list[LoggedPause]]:
    """The newest pause change at or before ``at``, and the changes after it up to ``until`` (at most ``limit``).

    Two bounded queries. An entry whose ``extra`` does not say the new state is passed over,
    as :func:`pause_changes` does.
    """
    # A pause is an entry of the DAG, not of a task: through Airflow's (dag_id, task_id, ...) index with
    # no task, never along every task event the DAG ever logged (the log has no (dag_id, event) index).
    kinds = and_(Log.dag_id == dag_id, Log.task_id.is_(None), Log.event.in_([*_CLI, *_API]))
    columns = (Log.id, Log.dttm, Log.event, Log.extra, Log.owner)
    before = session.execute(
        select(*columns)
        .where(kinds, Log.dttm <= at)
        .order_by(Log.dttm.desc(), Log.id.desc())
        # a few more than one: a PATCH that changed another field carries no is_paused
        .limit(5)
    )
    after = session.execute(
        select(*columns).where(kinds, Log.dttm > at, Log.dttm <= until).order_by(Log.dttm, Log.id).limit(limit)
    )

    def logged(rows: Any) -> list[LoggedPause]:
        found = []
        for log_id, moment, event, extra, owner in rows:
            paused = _paused_by(event, extra)
            if paused is not None and moment is not None:
                record = PauseRecord.of_entry(dag_id, event, moment, owner, extra) if event in _TESSERA else None
                found.append(LoggedPause(log_id, moment, paused, event, record))
        return found

    newest = logged(before)
    return (newest[0] if newest else None), logged(after)


def standing_pauses(session: Session, dag_ids: Collection[str]) -> dict[str, PauseRecord]:
    """The pause each of ``dag_ids`` is in, when tessera made it: its newest pause change is tessera's pause.

    One grouped query for any number of DAGs. A DAG whose newest change is Airflow's own (the UI's
    toggle, ``airflow dags pause``, ``max_consecutive_failed_dag_runs``) or an unpause is left out:
    no note stands for it. A ``PATCH`` that does not set ``is_paused`` is no pause change.
    """
    ids = sorted(set(dag_ids))
    if not ids:
        return {}
    changes = or_(Log.event.in_(list(_CLI)), and_(Log.event.in_(_API), Log.extra.like('%"is_paused"%')))
    newest = select(func.max(Log.id).label("id")).where(Log.dag_id.in_(ids), changes).group_by(Log.dag_id).subquery()
    rows = session.execute(
        select(Log.dag_id, Log.event, Log.dttm, Log.owner, Log.extra)
        .join(newest, newest.c.id == Log.id)
        .where(Log.event == PAUSE_EVENT)
    )
    return {
        dag_id: PauseRecord.of_entry(dag_id, event, at, owner, extra)
        for dag_id, event, at, owner, extra in rows
        if at is not None
    }
