"""Pause or unpause a tessera DAG with a note, for the REST route (the domain half; HTTP is the route's).

The pause itself, its bound on the note and its audit-log entry are
:func:`tessera.operators.pauses.notes.set_paused`, shared with ``tessera pause`` and with the pause
after failed runs; this module only refuses in the API's own words: a DAG that is not
tessera-scheduled is :class:`~.errors.NotFound`, a note out of bounds :class:`~.errors.Unprocessable`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tessera.operators.pauses.notes import UnknownDag, check_note, set_paused

from ..errors import Unprocessable
from ..fleet.schedules import not_scheduled, scheduled_model
from .models import PauseState

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def pause(session: Session, dag_id: str, *, paused: bool, note: str | None, by: str) -> PauseState:
    """Set the DAG's ``is_paused`` and record ``note``; committed with the request's session."""
    try:
        note = check_note(note)
    except (TypeError, ValueError) as refused:
        raise Unprocessable(str(refused)) from None
    scheduled_model(session, dag_id)
    try:
        record = set_paused(session, dag_id, paused=paused, note=note, by=by)
    except UnknownDag:
        raise not_scheduled(session, dag_id) from None
    return PauseState(
        dag_id=record.dag_id,
        is_paused=record.paused,
        note=record.note,
        by=record.by,
        at=record.at,
        reason=record.reason,
        failed_runs=list(record.failed_runs),
    )
