"""A caller's reads of the audit log and of the records the features keep in it (pauses, skips, parse states)."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from airflow.models.log import Log
from sqlalchemy import Row, and_, func, select

from tessera.operators.functions.skip_events import LoggedSkip, logged_skips
from tessera.operators.pauses.history import LoggedPause, logged_pauses, standing_pauses
from tessera.operators.pauses.notes import PauseRecord
from tessera.plugin.parse_watch import current_problems, newest_entries

from .scope import Scope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def audit_entries(
    session: Session,
    scope: Scope,
    dag_id: str,
    event: str,
    *,
    at: datetime.datetime,
    until: datetime.datetime,
    after_limit: int = 10,
) -> tuple[list[Row], list[Row]]:
    """``dag_id``'s newest ``event`` entry at or before ``at``, and those after it up to ``until``.

    ``event``: an entry of the DAG, written without a task id (a parse state, a pause). Rows of
    ``(id, dttm, extra)``, the ones after ``at`` oldest first, at most ``after_limit``.
    """
    if not scope.allows(dag_id):
        return [], []
    columns = (Log.id, Log.dttm, Log.extra)
    # through Airflow's (dag_id, task_id, ...) index with no task: the DAG's own entries, not every task event
    mine = and_(Log.dag_id == dag_id, Log.task_id.is_(None), Log.event == event)
    before = select(*columns).where(mine, Log.dttm <= at).order_by(Log.dttm.desc(), Log.id.desc()).limit(1)
    after = select(*columns).where(mine, Log.dttm > at, Log.dttm <= until).order_by(Log.dttm, Log.id)
    return list(session.execute(before)), list(session.execute(after.limit(after_limit)))


def oldest_audit_entry(session: Session) -> datetime.datetime | None:
    """When Airflow's audit log starts (``airflow db clean`` removes older entries); index ``idx_log_dttm``.

    Not scoped: an instant of the whole log, which names no DAG.
    """
    return session.scalar(select(func.min(Log.dttm)))


# -- readers of the features' own records, reached on a caller's behalf ------------------------------
# They live with their features (the scheduler and the CLI call them too); a request reaches them
# only through these, which pass on the DAGs in scope alone.


def pause_log(
    session: Session, scope: Scope, dag_id: str, *, at: datetime.datetime, until: datetime.datetime
) -> tuple[LoggedPause | None, list[LoggedPause]]:
    """:func:`~tessera.operators.pauses.history.logged_pauses` of ``dag_id``."""
    return logged_pauses(session, dag_id, at=at, until=until) if scope.allows(dag_id) else (None, [])


def skip_log(
    session: Session, scope: Scope, dag_id: str, *, since: datetime.datetime, until: datetime.datetime
) -> list[LoggedSkip]:
    """:func:`~tessera.operators.functions.skip_events.logged_skips` of ``dag_id``."""
    return logged_skips(session, dag_id, since=since, until=until) if scope.allows(dag_id) else []


def pauses_standing(session: Session, scope: Scope, dag_ids: Iterable[str]) -> dict[str, PauseRecord]:
    """:func:`~tessera.operators.pauses.history.standing_pauses` of ``dag_ids`` in scope."""
    ids = scope.only(dag_ids)
    return standing_pauses(session, ids) if ids else {}


def parse_problems(session: Session, scope: Scope, dag_ids: Iterable[str] | None) -> dict[str, dict[str, Any]]:
    """:func:`~tessera.plugin.parse_watch.current_problems` of ``dag_ids`` (None: every DAG) in scope."""
    problems = current_problems(session, None if dag_ids is None else scope.only(dag_ids))
    return {dag_id: problem for dag_id, problem in problems.items() if scope.allows(dag_id)}


def parse_records(session: Session, scope: Scope, dag_ids: Iterable[str]) -> dict[str, tuple[int, Any, dict]]:
    """:func:`~tessera.plugin.parse_watch.newest_entries` of ``dag_ids`` in scope."""
    ids = scope.only(dag_ids)
    return newest_entries(session, ids) if ids else {}


def run_entries(
    session: Session, scope: Scope, dag_id: str, events: Iterable[str], run_ids: Iterable[str], *, limit: int = 20
) -> list[Row]:
    """``dag_id``'s audit-log entries of ``events`` written about the runs ``run_ids``: ``(id, dttm, event, run_id,
    extra)``, oldest first, at most ``limit``."""
    runs = list(run_ids)[:10]
    if not scope.allows(dag_id) or not runs:
        return []
    query = (
        select(Log.id, Log.dttm, Log.event, Log.run_id, Log.extra)
        .where(Log.dag_id == dag_id, Log.event.in_(list(events)), Log.run_id.in_(runs))
        .order_by(Log.id)
        .limit(limit)
    )
    return list(session.execute(query))


def newest_entry_of(session: Session, scope: Scope, dag_ids: Iterable[str], event: str) -> dict[str, Row]:
    """Each of ``dag_ids``' newest ``event`` entry, ``(id, dttm, run_id, extra)`` by DAG id, in one query."""
    ids = scope.only(dag_ids)
    if not ids:
        return {}
    rank = func.row_number().over(partition_by=Log.dag_id, order_by=Log.id.desc()).label("rank")
    ranked = (
        select(Log.dag_id, Log.id, Log.dttm, Log.run_id, Log.extra, rank)
        .where(Log.dag_id.in_(ids), Log.event == event)
        .subquery()
    )
    columns = (ranked.c.dag_id, ranked.c.id, ranked.c.dttm, ranked.c.run_id, ranked.c.extra)
    return {row[0]: row[1:] for row in session.execute(select(*columns).where(ranked.c.rank == 1))}
