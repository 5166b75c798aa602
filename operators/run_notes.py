"""Run notes: the one writer of a dag run's note, which every tessera feature appends its lines to.

A run's note is one column of Airflow's (``dag_run_note.content``, shown on the run in the UI) and
several features write to the same run: a retry, a replacement, a release, a wave, a queued fire,
a pause. Together they can outgrow the column, and on PostgreSQL a note one character too long
fails the flush of the scheduler's whole transaction. So the whole note is kept within
:data:`NOTE_LIMIT` (read from Airflow's model) here, once: the newest lines are kept and the first
line says how many earlier ones were dropped (:func:`dropped_line`, a count carried on by later
appends); a single line that alone outgrows the column keeps its start, cut with ``…``.

Instants are written one way (:func:`at`), and the audit-log entries that go with a note
(Browse > Audit Log, :class:`Audit`) are added in the same session, so they commit with it.
A test (``tests/operators/test_run_note_writers.py``) fails when another module writes a note.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.dagrun import DagRunNote
from airflow.models.log import Log

from .tessera_names import AUDIT_OWNER

if TYPE_CHECKING:
    from airflow.models.dagrun import DagRun
    from sqlalchemy.orm import Session

NOTE_LIMIT: int = DagRunNote.__table__.c.content.type.length
"""Characters a run's note may hold: the length of Airflow's ``dag_run_note.content`` column."""
CUT = "…"
_DROPPED = re.compile(r"… (\d+) earlier lines? dropped")


def dropped_line(count: int) -> str:
    """The first line of a note whose ``count`` oldest lines were dropped to fit the column."""
    return f"… {count} earlier line{'' if count == 1 else 's'} dropped"


def at(moment: datetime.datetime) -> str:
    """An instant as every note shows it: ``2026-03-08 12:00:00 UTC``."""
    return moment.astimezone(datetime.timezone.utc).strftime(AT_FORMAT)


AT_FORMAT = "%Y-%m-%d %H:%M:%S UTC"


def read_at(text: str) -> datetime.datetime:
    """The instant :func:`at` wrote (to the second): how a reader of notes reads one back.

    :raises ValueError: ``text`` is not in :func:`at`'s form.
    """
    return datetime.datetime.strptime(text, AT_FORMAT).replace(tzinfo=datetime.timezone.utc)


@dataclass(frozen=True, slots=True)
class Audit:
    """An audit-log entry that goes with a note: its event and its ``extra`` (JSON text, or a mapping to dump)."""

    event: str
    extra: Mapping[str, Any] | str


def capped(lines: list[str], *, limit: int = NOTE_LIMIT) -> str:
    """``lines`` as one note of at most ``limit`` characters: the newest lines, after a :func:`dropped_line`.

    A first line that is already a :func:`dropped_line` is counted on, not kept as a line.
    """
    earlier = 0
    if lines and (found := _DROPPED.fullmatch(lines[0])):
        earlier, lines = int(found.group(1)), lines[1:]
    size = sum(map(len, lines)) + max(len(lines) - 1, 0)  # the lines and the newlines between them
    start = 0
    # Drop the oldest line until the rest and the line counting the drops fit (once per line: bounded).
    while start < len(lines) and len(_counted(earlier + start)) + size > limit:
        size -= len(lines[start]) + (start < len(lines) - 1)
        start += 1
    if start < len(lines):
        return _counted(earlier + start) + "\n".join(lines[start:])
    if not lines:
        return dropped_line(earlier) if earlier else ""
    # Even the newest line alone does not fit beside the count: keep its start.
    header = _counted(earlier + len(lines) - 1)
    return header + lines[-1][: max(limit - len(header) - len(CUT), 0)] + CUT


def _counted(dropped: int) -> str:
    """The line counting ``dropped`` lines and its newline, or nothing when none was dropped."""
    return f"{dropped_line(dropped)}\n" if dropped else ""


def append(dag_run: DagRun, *lines: str, session: Session, audit: Iterable[Audit] = ()) -> str | None:
    """Add ``lines`` (empty ones skipped; one may hold several) to ``dag_run``'s note, and ``audit``'s entries.

    Returns the note as it now stands (``None``: the run has none and nothing was added).
    """
    for entry in audit:
        extra = entry.extra if isinstance(entry.extra, str) else json.dumps(entry.extra)
        session.add(Log(entry.event, owner=AUDIT_OWNER, dag_id=dag_run.dag_id, run_id=dag_run.run_id, extra=extra))
    added = [part for line in lines if line for part in line.split("\n")]
    if not added:
        return dag_run.note
    existing = dag_run.note
    dag_run.note = capped([*(existing.split("\n") if existing else []), *added])
    return dag_run.note
