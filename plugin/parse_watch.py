"""When a DAG's file broke, went missing, or came back: recorded in Airflow's audit log by the dag-processor.

Airflow keeps only the present: ``import_error`` holds a file's current error (its timestamp is
the *last* failing parse, rewritten at every parse, and the row is deleted once the file parses
again) and ``dag.is_stale`` says whether the DAG's file is gone or failing now. Nothing says
when that started, or that it ever happened once it is fixed. So "why did it not run at T?"
could not tell a broken file at T from an unexplained gap, and a status could not say when a
DAG broke.

Each dag-processor therefore runs :class:`ParseWatch`, a daemon thread that every
:data:`PERIOD` seconds reads, in three grouped queries whatever the number of DAGs, the DAGs
whose file fails to import or that Airflow marked stale, their import errors and the newest
:data:`EVENT` entry of each, and writes an entry when a DAG's state changed:

* ``broken``: the file fails to import (``reason`` is the condition reason, e.g. ``CronInvalid``,
  from :mod:`~tessera.operators.functions.spec_reasons`; ``import_error_id`` the error's row;
  ``last_parsed`` the last successful parse);
* ``missing``: Airflow marked the DAG stale and its file has no import error (removed, or no
  longer defines the DAG);
* ``restored``: a DAG recorded broken or missing parses again.

``stale`` says whether Airflow had stopped scheduling the DAG (a DAG whose file fails keeps being
scheduled from its last stored version until then), and ``since`` when the problem started: the
first failing parse seen, or the first observation; an entry that only records a change of
``stale`` carries the ``since`` of the one before it. The error's text is not copied here: the
audit log is readable with the DAG, while Airflow shows an import error only to whoever may read
every DAG of its file. Writes happen only on a change,
through a short session of its own. Two dag-processors may both record one change; readers take
the first entry of a run of equal states. A processor that is down records nothing: the reader
then falls back on what Airflow still holds (``last_parsed_time``, the current import error).
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from airflow.models.errors import ParseImportError
from airflow.models.log import Log
from sqlalchemy import and_, func, or_, select

from tessera.operators.functions.spec_reasons import spec_reason
from tessera.operators.tessera_names import AUDIT_OWNER

from ._airflow import utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

EVENT = "tessera.parse"
PERIOD = 5.0
DAG_PROCESSOR_JOB = "DagProcessorJob"
FILE_MISSING = "FileMissing"
MESSAGE_LIMIT = 500
"""The longest error line kept: a traceback's last line names the field, value and rule."""


def last_line(stacktrace: str | None) -> str:
    lines = (stacktrace or "").strip().splitlines()
    return (lines[-1] if lines else "the DAG file has an import error")[:MESSAGE_LIMIT]


_RAISED = re.compile(r"(?P<kind>[A-Za-z_][\w.]*): ?(?P<text>.*)")
_FRAME_LINE = re.compile(r'\s+File "(?P<path>[^"]*)", line (?P<line>\d+)')


@dataclass(frozen=True)
class ErrorHead:
    """What a person reads first of an import error: the exception's class, its first line, the file's line."""

    kind: str | None
    """The exception's class (``SyntaxError``, ``RuntimeError``); None: the text names none."""
    first_line: str
    line: int | None
    """The line of the DAG file's innermost frame (for a syntax error, the offending line); None: not in it."""


def error_head(stacktrace: str | None, file: str | None = None) -> ErrorHead:
    """The exception a traceback ends with: the first unindented line after its frames, not the message's last line.

    A message over several lines (``RuntimeError("a\nb")``) is shown by its first line; a text with
    no traceback (``dagbag_import_error_tracebacks = False``) by its first line.
    """
    lines = (stacktrace or "").strip().splitlines()
    frames = [index for index, text in enumerate(lines) if text[:1].isspace()]
    raised = lines[frames[-1] + 1 :] if frames else lines
    head = next((text for text in raised if text.strip()), "")
    line = None
    for text in reversed(lines):
        frame = _FRAME_LINE.match(text)
        if frame is not None and file and frame.group("path").endswith(file):
            line = int(frame.group("line"))
            break
    found = _RAISED.fullmatch(head)
    if found is None or " " in found.group("kind"):
        return ErrorHead(None, head[:MESSAGE_LIMIT] or "the DAG file has an import error", line)
    return ErrorHead(found.group("kind").rsplit(".", 1)[-1], found.group("text")[:MESSAGE_LIMIT], line)


def newest_entries(session: Session, dag_ids: list[str] | None = None) -> dict[str, tuple[int, Any, dict]]:
    """``{dag_id: (log id, written at, extra)}`` of each DAG's newest :data:`EVENT` entry (two queries)."""
    newest = select(func.max(Log.id)).where(Log.event == EVENT)
    if dag_ids is not None:
        newest = newest.where(Log.dag_id.in_(dag_ids))
    rows = session.execute(
        select(Log.id, Log.dag_id, Log.dttm, Log.extra).where(Log.id.in_(newest.group_by(Log.dag_id)))
    )
    found = {}
    for log_id, dag_id, written, extra in rows:
        try:
            data = json.loads(extra or "{}")
        except ValueError:
            data = {}
        found[dag_id] = (log_id, written, data if isinstance(data, dict) else {})
    return found


def current_problems(session: Session, dag_ids: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """``{dag_id: state}`` of every DAG whose file fails to import or that Airflow marked stale (one query)."""
    error = ParseImportError
    query = (
        select(
            DagModel.dag_id,
            DagModel.is_stale,
            DagModel.last_parsed_time,
            DagModel.relative_fileloc,
            error.id,
            error.timestamp,
            error.stacktrace,
        )
        .outerjoin(error, and_(error.bundle_name == DagModel.bundle_name, error.filename == DagModel.relative_fileloc))
        .where(or_(DagModel.is_stale.is_(True), DagModel.has_import_errors.is_(True)))
    )
    if dag_ids is not None:
        query = query.where(DagModel.dag_id.in_(dag_ids))
    found = {}
    for dag_id, stale, last_parsed, file, error_id, seen, stacktrace in session.execute(query):
        found[dag_id] = {
            "state": "broken" if error_id is not None else "missing",
            "stale": bool(stale),
            "reason": spec_reason(last_line(stacktrace)) if error_id is not None else FILE_MISSING,
            # the class only: the error's text is shown to those who may read every DAG of its file
            "error_class": error_head(stacktrace).kind if error_id is not None else None,
            "file": file,
            "import_error_id": error_id,
            "since": None if seen is None else seen.isoformat(),
            "last_parsed": None if last_parsed is None else last_parsed.isoformat(),
        }
    return found


def _key(state: dict[str, Any]) -> tuple[Any, ...]:
    return state.get("state"), state.get("stale"), state.get("reason")


def observe(session: Session) -> int:
    """Record every DAG whose parse state changed since its newest entry; how many entries were written."""
    problems = current_problems(session)
    entries = newest_entries(session)
    written = 0
    now = utcnow().isoformat()
    changed = {
        dag_id: state
        for dag_id, state in problems.items()
        if (entry := entries.get(dag_id)) is None or _key(entry[2]) != _key(state)
    }
    gone = _files_gone(session, [dag_id for dag_id, state in changed.items() if state["state"] == "missing"])
    for dag_id, state in changed.items():
        entry = entries.get(dag_id)
        same_problem = entry is not None and entry[2].get("state") == state["state"]
        state["since"] = entry[2].get("since") if same_problem else (state["since"] or now)
        if state["state"] == "missing":
            state["file_gone"] = gone.get(dag_id)
        session.add(Log(EVENT, owner=AUDIT_OWNER, dag_id=dag_id, extra=json.dumps(state)))
        written += 1
    recovered = [d for d, (_, _, data) in entries.items() if d not in problems and data.get("state") != "restored"]
    if recovered:
        present = session.execute(
            select(DagModel.dag_id, DagModel.last_parsed_time).where(DagModel.dag_id.in_(recovered))
        )
        for dag_id, last_parsed in present:  # a DAG deleted meanwhile has no row: nothing to restore
            state = {"state": "restored", "last_parsed": None if last_parsed is None else last_parsed.isoformat()}
            session.add(Log(EVENT, owner=AUDIT_OWNER, dag_id=dag_id, extra=json.dumps(state)))
            written += 1
    if written:
        session.flush()  # seen by the next observation in this session too
    return written


def _files_gone(session: Session, dag_ids: list[str]) -> dict[str, bool]:
    """Whether each DAG's file is absent from this dag-processor's disk (one query; only where it parses them).

    A DAG marked stale may have lost its file or only its definition in it; the processor that
    lists the files tells which, so the record says "deleted" without hedging.
    """
    if not dag_ids:
        return {}
    rows = session.execute(select(DagModel.dag_id, DagModel.fileloc).where(DagModel.dag_id.in_(dag_ids)))
    return {dag_id: not os.path.exists(fileloc) for dag_id, fileloc in rows if fileloc}


class ParseWatch(threading.Thread):
    """Records parse-state changes every ``period`` seconds while ``job`` is a running dag-processor job."""

    def __init__(self, job: Any, period: float = PERIOD) -> None:
        super().__init__(name="tessera-parse-watch", daemon=True)
        self.job, self.period = job, period
        self.stopped = threading.Event()

    def run(self) -> None:
        from airflow.utils.session import create_session

        # The job's type is set after on_starting: look once, after the first wait. Its other
        # attributes belong to the job's own thread and session (reading its state from here may
        # reload it there), so the watch runs until the job stops it (before_stopping).
        if self.stopped.wait(self.period) or getattr(self.job, "job_type", None) != DAG_PROCESSOR_JOB:
            return
        log.info("tessera: recording DAG parse states every %.0f s", self.period)
        while True:
            try:
                with create_session() as session:
                    if observe(session):
                        log.info("tessera: recorded DAG parse-state changes at %s", utcnow())
            except Exception:  # one missed observation; the next period looks again
                log.warning("tessera: could not record DAG parse states", exc_info=True)
            if self.stopped.wait(self.period):
                return

    def stop(self) -> None:
        self.stopped.set()


_running: list[ParseWatch] = []


def job_starting(component: Any) -> None:
    """``on_starting``: watch parse states for a job (only a running dag-processor's keeps going)."""
    from airflow.jobs.job import Job

    if not isinstance(component, Job):
        return
    for previous in _running:
        previous.stop()
    watch = ParseWatch(component)
    _running[:] = [watch]
    watch.start()


def job_stopping(component: Any) -> None:
    for watch in [w for w in _running if w.job is component]:
        watch.stop()
        _running.remove(watch)


def parse_instant(value: Any) -> datetime.datetime | None:
    """An instant an entry's ``extra`` holds (ISO 8601), or None."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.timezone.utc)
