"""Why a paused DAG is paused, on its status and page rows: the note and reason of the pause tessera recorded.

Read after the rows are built, with one grouped query for every paused DAG listed
(:func:`~tessera.plugin.scoped_reads.pauses_standing`), none when no listed DAG is
paused; so the lists keep a fixed number of queries whatever the fleet. The rows are the
caller's: each was read in the caller's scope, so the scope of a read here is the rows' DAGs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tessera.operators.pauses.notes import PauseRecord

from ..scoped_reads import Scope, pauses_standing
from .models import MAX_FAILED_RUNS_LISTED, DagStatus, PauseNote

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def pause_note(record: PauseRecord) -> PauseNote:
    return PauseNote(
        note=record.note,
        by=record.by,
        at=record.at,
        reason=record.reason,
        failed_runs=list(record.failed_runs[:MAX_FAILED_RUNS_LISTED]),
        failed_run_count=len(record.failed_runs),
    )


def pause_notes(session: Session, paused: Iterable[str]) -> dict[str, PauseNote]:
    """For each of the ``paused`` DAGs that tessera paused, why; one query (none for no DAG)."""
    ids = set(paused)
    if not ids:
        return {}
    return {dag_id: pause_note(record) for dag_id, record in pauses_standing(session, Scope.of(ids), ids).items()}


def with_pause_notes(session: Session, rows: list[DagStatus]) -> list[DagStatus]:
    """``rows`` with ``pause`` set on each paused DAG that tessera paused."""
    notes = pause_notes(session, (row.dag_id for row in rows if row.is_paused))
    return [row.model_copy(update={"pause": notes[row.dag_id]}) if row.dag_id in notes else row for row in rows]


def add_pause_notes(session: Session, rows: list[dict[str, Any]]) -> None:
    """Set ``pause`` on each of the page's ``rows`` (null unless tessera paused its DAG)."""
    notes = pause_notes(session, (row["dag_id"] for row in rows if row["is_paused"]))
    for row in rows:
        row["pause"] = notes.get(row["dag_id"])
