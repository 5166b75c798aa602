"""What tessera recorded about fires it did not run: overlap drops, and runs replaced under ``cancel_other``.

A fire the overlap policy drops (``BufferFull``, ``ConcurrencyForbidden``, ``Superseded``) or a
declared schedule's catch-up skips never becomes a run; the next scheduled run to start says so
in two places (:mod:`tessera.operators.schedules.held_fires`): a line of its note and an audit-log
entry (event ``tessera.schedule.skip``). A run ``cancel_other`` replaced is failed with a note line
and an entry (event ``tessera.schedule.replaced``) naming the run that replaced it
(:mod:`tessera.operators.replaced_runs`). The note lives in ``dag_run_note``, which
``airflow db clean --tables log`` keeps, so a drop stays explained after the audit log is cleaned;
each answer cites every record it found. Two scoped queries for at most a few runs.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tessera.operators.functions.skip_events import SkipEvent
from tessera.operators.replaced_runs import REPLACED_EVENT, REPLACED_NOTE
from tessera.operators.schedules.held_fires import OVERLAP_REASONS, SKIP_EVENT, dropped_in

from .. import scoped_reads as reads
from ..scoped_reads import RunRow, Scope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

RECORDING_RUNS = 3
"""Scheduled runs after a tick whose records are read: the one that recorded its drop started first among them."""


@dataclass(frozen=True)
class Drop:
    """Fires from ``first`` to ``last`` (their due times) that were not run, and the records that say so."""

    event: SkipEvent
    run_id: str
    """The run that recorded the drop when it started."""
    records: tuple[str, ...]

    @property
    def overlap(self) -> bool:
        """Dropped by the overlap policy (not by a declared schedule's catch-up)."""
        return self.event.reason in OVERLAP_REASONS

    def covers(self, due: datetime.datetime) -> bool:
        return self.event.first <= due <= self.event.last

    @property
    def record(self) -> str:
        return "; ".join(self.records)


@dataclass(frozen=True)
class Replaced:
    """A run ``cancel_other`` failed because a newer scheduled run started."""

    by: str
    line: str
    records: tuple[str, ...]


def _event_key(event: SkipEvent) -> tuple[str, datetime.datetime, datetime.datetime]:
    return event.reason, event.first.replace(microsecond=0), event.last.replace(microsecond=0)


def recorded_drops(session: Session, scope: Scope, dag_id: str, runs: list[RunRow]) -> list[Drop]:
    """The drops the scheduled ``runs`` recorded when they started: from their notes and their audit-log entries."""
    runs = [run for run in runs if run.run_type == "scheduled"][:RECORDING_RUNS]
    if not runs:
        return []
    notes = reads.notes_of(session, scope, dag_id, [run.id for run in runs])
    entries = reads.run_entries(session, scope, dag_id, [SKIP_EVENT], [run.run_id for run in runs])
    logged: dict[tuple[str, tuple[str, datetime.datetime, datetime.datetime]], tuple[int, SkipEvent]] = {}
    for log_id, _, _, run_id, extra in entries:
        event = SkipEvent.from_json(extra)
        if event is not None:
            logged.setdefault((run_id, _event_key(event)), (log_id, event))
    found = []
    for run in runs:
        for event in dropped_in(notes.get(run.id)):
            entry = logged.pop((run.run_id, _event_key(event)), None)
            records = [f"note of dag_run {run.run_id!r}"]
            if entry is not None:
                records.insert(0, f"audit log #{entry[0]} ({SKIP_EVENT})")
                event = entry[1]  # the entry keeps the instants to the microsecond
            found.append(Drop(event, run.run_id, tuple(records)))
    # An entry whose note line is gone (a long note keeps its newest lines) still counts.
    for (run_id, _), (log_id, event) in logged.items():
        found.append(Drop(event, run_id, (f"audit log #{log_id} ({SKIP_EVENT})",)))
    return found


def replaced_run(session: Session, scope: Scope, dag_id: str, run: RunRow, note: str | None) -> Replaced | None:
    """Whether ``cancel_other`` replaced ``run``: its note line, and its audit-log entry while the log keeps it."""
    line = next((line for line in (note or "").splitlines() if line.startswith(REPLACED_NOTE)), None)
    entries = reads.run_entries(session, scope, dag_id, [REPLACED_EVENT], [run.run_id], limit=1)
    if line is None and not entries:
        return None
    records = [f"note of dag_run {run.run_id!r}"] if line is not None else []
    by = line[len(REPLACED_NOTE) :].split(" ", 1)[0] if line is not None else ""
    for log_id, _, _, _, extra in entries:
        records.insert(0, f"audit log #{log_id} ({REPLACED_EVENT})")
        try:
            data = json.loads(extra or "{}")
        except ValueError:
            data = {}
        if isinstance(data, dict) and isinstance(data.get("replaced_by"), str):
            by = data["replaced_by"]
    return Replaced(by, line or "", tuple(records))
