"""Pausing a DAG with a note: who paused it, when, and why, in Airflow's audit log.

Airflow keeps only whether a DAG is paused now. A pause made through tessera (``tessera pause
DAG --note``, ``POST /tessera/api/v1/dags/{id}/pause``, or :mod:`~tessera.operators.pauses.after_failures`
after failed runs) sets ``is_paused`` and writes one audit-log entry (Browse > Audit Log), event
:data:`PAUSE_EVENT` or :data:`UNPAUSE_EVENT`, ``extra`` a JSON object: ``is_paused``, ``note``,
``reason`` (:data:`BY_HAND` or :data:`AFTER_FAILURES`) and, after failures, the failed runs. The
same reader that reads Airflow's own pause entries (:mod:`~tessera.operators.pauses.history`)
reads these, so a declared schedule's CATCHUP and a cursor function's ``Suspended`` see them too;
:func:`latest_pauses` reads the newest one per DAG, with its note.

A note is text of at most :data:`MAX_NOTE_BYTES` bytes of UTF-8 (valid Unicode, no control
characters but newline and tab); anything else is refused naming ``note``. The pause reader
asks for the newest entry per DAG of many DAGs in one query (:func:`latest_pauses`).
"""

from __future__ import annotations

import datetime
import json
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from airflow.models.log import Log
from sqlalchemy import func, select, update

from tessera.timetables.rules import excerpt, not_unicode

from .._airflow import utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

PAUSE_EVENT = "tessera.dag.pause"
UNPAUSE_EVENT = "tessera.dag.unpause"
EVENTS = (PAUSE_EVENT, UNPAUSE_EVENT)
BY_HAND, AFTER_FAILURES = "by_hand", "pause_after_failures"
MAX_NOTE_BYTES = 1024
_ALLOWED_CONTROLS = "\n\t"


class UnknownDag(LookupError):
    """No DAG of that id is known to Airflow (or it was removed)."""


def check_note(note: object) -> str | None:
    """``note`` if it is ``None`` or text a pause may carry; else ``ValueError``/``TypeError`` naming ``note``."""
    if note is None:
        return None
    if not isinstance(note, str):
        raise TypeError(f"note: {excerpt(note)} is a {type(note).__name__}; give text, e.g. 'source down, see INC-12'")
    if problem := not_unicode("note", note):
        raise ValueError(problem)
    size = len(note.encode("utf-8"))
    if size > MAX_NOTE_BYTES:
        raise ValueError(f"note: {size} bytes of UTF-8; a pause note is at most {MAX_NOTE_BYTES} bytes, so shorten it")
    control = next((c for c in note if unicodedata.category(c) == "Cc" and c not in _ALLOWED_CONTROLS), None)
    if control is not None:
        raise ValueError(
            f"note: {excerpt(note)} holds the control character U+{ord(control):04X}; write plain text "
            "(newlines and tabs are kept)"
        )
    return note


@dataclass(frozen=True)
class PauseRecord:
    """One pause or unpause made through tessera, as the audit log holds it."""

    dag_id: str
    paused: bool
    at: datetime.datetime
    by: str | None
    note: str | None
    reason: str
    failed_runs: tuple[str, ...] = ()

    @classmethod
    def of_entry(cls, dag_id: str, event: str, at: datetime.datetime, owner: str | None, extra: str | None) -> Any:
        try:
            data = json.loads(extra or "{}")
        except ValueError:
            data = {}
        data = data if isinstance(data, dict) else {}
        note = data.get("note")
        runs = data.get("failed_runs")
        return cls(
            dag_id=dag_id,
            paused=event == PAUSE_EVENT,
            at=at,
            by=owner,
            note=note if isinstance(note, str) else None,
            reason=str(data.get("reason") or BY_HAND),
            failed_runs=tuple(str(run) for run in runs) if isinstance(runs, list) else (),
        )


def set_paused(
    session: Session,
    dag_id: str,
    *,
    paused: bool,
    note: str | None,
    by: str,
    reason: str = BY_HAND,
    failed_runs: Collection[str] = (),
) -> PauseRecord:
    """Pause (or unpause) ``dag_id`` and record it with ``note``, in ``session``'s transaction.

    :raises UnknownDag: Airflow has no such DAG (or it is stale: its file is gone).
    """
    note = check_note(note)
    known = session.scalar(select(DagModel.dag_id).where(DagModel.dag_id == dag_id, DagModel.is_stale.is_(False)))
    if known is None:
        raise UnknownDag(dag_id)
    session.execute(
        update(DagModel)
        .where(DagModel.dag_id == dag_id)
        .values(is_paused=paused)
        .execution_options(synchronize_session="fetch")
    )
    extra: dict[str, Any] = {"is_paused": paused, "note": note, "reason": reason}
    if failed_runs:
        extra["failed_runs"] = list(failed_runs)
    at = utcnow()
    event = PAUSE_EVENT if paused else UNPAUSE_EVENT
    entry = Log(event, owner=by, dag_id=dag_id, extra=json.dumps(extra))
    entry.dttm = at
    session.add(entry)
    return PauseRecord(dag_id, paused, at, by, note, reason, tuple(failed_runs))


def latest_pauses(session: Session, dag_ids: Collection[str]) -> dict[str, PauseRecord]:
    """Each DAG's newest pause or unpause made through tessera, for any number of DAGs in one query."""
    ids = sorted(set(dag_ids))
    if not ids:
        return {}
    newest = (
        select(Log.dag_id, func.max(Log.id).label("id"))
        .where(Log.dag_id.in_(ids), Log.event.in_(EVENTS))
        .group_by(Log.dag_id)
        .subquery()
    )
    rows = session.execute(
        select(Log.dag_id, Log.event, Log.dttm, Log.owner, Log.extra).join(newest, newest.c.id == Log.id)
    )
    return {dag_id: PauseRecord.of_entry(dag_id, event, at, owner, extra) for dag_id, event, at, owner, extra in rows}
