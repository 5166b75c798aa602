"""DAGs whose file no longer parses (or is gone): why, since when, and whether Airflow still schedules them.

One reading, used by the status and plan lists (a broken tessera DAG keeps its row, with the
specific reason and the time it broke, until the DAG is deleted) and by "why did it not run
at T?" (was the DAG broken or missing then?). It combines what Airflow holds now, the DAG row
(``is_stale``, ``has_import_errors``, ``last_parsed_time``: the last successful parse) and the
file's import error, with the history the dag-processor records
(:mod:`tessera.plugin.parse_watch`): when the problem started and when it ended.

An import error's text is shown only to a caller who may read every DAG of its file, as
Airflow's own import-error API does; others get the reason (``CronInvalid``...) without it.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from airflow.models.dag import DagModel, DagTag
from airflow.models.errors import ParseImportError
from sqlalchemy import or_, select

from tessera.operators.functions.spec_reasons import SPEC_INVALID
from tessera.plugin.parse_watch import EVENT, FILE_MISSING, error_head, last_line, parse_instant

from .._airflow import tessera_timetable
from ..scoped_reads import HIDDEN, Scope, audit_entries, import_errors, parse_problems, parse_records
from .schedules import SCHEDULE_TAG_PREFIX

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Invalid|Warning): ")
"""An error line's exception class (``ValueError: ``): the reason already says what kind it is."""


@dataclass(frozen=True)
class Broken:
    """One DAG whose file fails to import or that Airflow marked stale, as of now."""

    dag_id: str
    reason: str
    """``CronInvalid``, ``InputInvalid``, ... (see spec_reasons), ``SpecInvalid``, or ``FileMissing``."""
    message: str
    stale: bool
    """True once Airflow marked the DAG stale (its file gone, or not parsed for its stale threshold)."""
    since: datetime.datetime | None
    """When it broke: the first failing parse recorded (None: not recorded, see ``last_parsed``)."""
    last_parsed: datetime.datetime | None
    """The last successful parse of the DAG: it broke after this."""
    record: str
    file: str | None = None
    """The DAG's file, relative to its bundle."""
    error_class: str | None = None
    """The exception the import ended with (``SyntaxError``); None for a missing file, or a text naming none."""
    line: int | None = None
    """The line of the DAG file the error points at, when its traceback says (shown with the error's text)."""

    @property
    def error_words(self) -> str:
        """``SyntaxError: '(' was never closed (line 5)``: the class, the error's first line, where in the file.

        The class is named even where the text is hidden (a file that defines DAGs the caller may not read).
        """
        if self.reason == FILE_MISSING:
            return f"{FILE_MISSING}: {self.message}"
        kind = error_kind(self.reason, self.error_class)
        if self.message == HIDDEN:
            return f"{kind} ({self.message})"
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{kind}: {self.message}{where}"

    @property
    def blocks(self) -> bool:
        """Whether Airflow creates no new run of it: its file fails to import, or it is stale."""
        return self.reason != "FileMissing" or self.stale

    @property
    def text(self) -> str:
        when = (
            f"since {_iso(self.since)}" if self.since else f"after its last successful parse {_iso(self.last_parsed)}"
        )
        scheduled = "Airflow creates no new run of it" if self.blocks else "Airflow still schedules it"
        return f"{self.error_words} ({when}; {scheduled})"


def error_kind(reason: str | None, error_class: str | None) -> str:
    """A specific reason (``CronInvalid``) as it is; the generic ``SpecInvalid`` as the exception's class."""
    return (error_class or SPEC_INVALID) if reason in (None, SPEC_INVALID) else reason


def _iso(moment: datetime.datetime | None) -> str:
    return (
        "an unknown time"
        if moment is None
        else moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    )


def _tessera_ids(session: Session, dag_ids: Collection[str]) -> set[str]:
    """Which of ``dag_ids`` the tessera surfaces show (a tessera timetable, or a declared schedule's tag)."""
    tagged = select(DagTag.dag_id).where(DagTag.name.startswith(SCHEDULE_TAG_PREFIX))
    query = select(DagModel.dag_id).where(
        DagModel.dag_id.in_(list(dag_ids)),
        or_(tessera_timetable(), DagModel.dag_id.in_(tagged)),
    )
    return set(session.scalars(query))


def broken_dags(session: Session, scope: Scope, dag_ids: Collection[str] | None = None) -> dict[str, Broken]:
    """The tessera DAGs (of ``dag_ids``, or all the caller may read) whose file fails or is gone, by id.

    At most five queries whatever the number of DAGs: the problems, the tessera filter, the
    recorded history, the errors' text, the files' DAGs (for what the caller may see).
    """
    problems = parse_problems(session, scope, dag_ids)
    if not problems:
        return {}
    tessera = _tessera_ids(session, problems)  # once: a comprehension's condition is asked per DAG
    problems = {dag_id: p for dag_id, p in problems.items() if dag_id in tessera}
    entries = parse_records(session, scope, problems)
    error_ids = [p["import_error_id"] for p in problems.values() if p["import_error_id"] is not None]
    found_errors = import_errors(session, scope, ParseImportError.id.in_(error_ids)) if error_ids else []
    errors = {error.id: error for error in found_errors}
    found = {}
    for dag_id, problem in sorted(problems.items()):
        entry = entries.get(dag_id)
        recorded = entry is not None and entry[2].get("state") == problem["state"]
        since = parse_instant(entry[2].get("since")) if recorded else None
        error = errors.get(problem["import_error_id"])
        head = None if error is None or error.stacktrace is None else error_head(error.stacktrace, problem["file"])
        if error is None:
            message = "the DAG file is gone, or no longer defines this DAG"
        elif head is None:
            message = HIDDEN
        elif head.kind is not None and problem["reason"] == SPEC_INVALID:
            message = head.first_line  # an error of the file itself: its own first line, not the message's last
        else:
            message = _EXCEPTION.sub("", last_line(error.stacktrace))
        proof = [f"import error #{problem['import_error_id']}" if error is not None else "dag row (is_stale)"]
        if recorded:
            proof.append(f"audit log #{entry[0]} ({EVENT})")
        found[dag_id] = Broken(
            dag_id=dag_id,
            reason=problem["reason"] if error is not None else FILE_MISSING,
            message=message,
            stale=problem["stale"],
            since=since,
            last_parsed=parse_instant(problem["last_parsed"]),
            record=", ".join(proof),
            file=problem["file"],
            error_class=problem.get("error_class"),
            line=None if head is None else head.line,
        )
    return found


@dataclass(frozen=True)
class ParseEntry:
    """One recorded parse-state change of a DAG."""

    log_id: int
    written: datetime.datetime
    state: str
    """broken, missing or restored."""
    stale: bool
    reason: str | None
    since: datetime.datetime | None
    file: str | None = None
    error_class: str | None = None
    file_gone: bool | None = None
    """For ``missing``: whether the dag-processor found the file deleted (None: not recorded)."""

    @property
    def blocks(self) -> bool:
        """Whether Airflow created no new run of the DAG: its file failed to import, or it was stale."""
        return self.state == "broken" or (self.state == "missing" and self.stale)


def parse_entries(
    session: Session, scope: Scope, dag_id: str, *, at: datetime.datetime, until: datetime.datetime
) -> tuple[ParseEntry | None, list[ParseEntry]]:
    """The newest recorded parse state at or before ``at``, and the changes after it up to ``until`` (at most 10)."""
    before, after = audit_entries(session, scope, dag_id, EVENT, at=at, until=until)

    def entry(log_id: int, written: datetime.datetime, extra: str | None) -> ParseEntry:
        import json

        try:
            data = json.loads(extra or "{}")
        except ValueError:
            data = {}
        data = data if isinstance(data, dict) else {}
        return ParseEntry(
            log_id,
            written,
            str(data.get("state")),
            bool(data.get("stale")),
            data.get("reason"),
            parse_instant(data.get("since")),
            data.get("file") if isinstance(data.get("file"), str) else None,
            data.get("error_class") if isinstance(data.get("error_class"), str) else None,
            data.get("file_gone") if isinstance(data.get("file_gone"), bool) else None,
        )

    newest = [entry(*row) for row in before]
    return (newest[0] if newest else None), [entry(*row) for row in after]
