"""What stops schedules from firing as written: invalid specs and cross-schedule contradictions.

An invalid spec (a bad duration, an unknown timezone, a schedule with two drivers)
is refused when the DAG file is parsed, so it shows up as Airflow's own import
error; the plan lists those whose traceback comes from tessera. Unknown AFTER
parents and AFTER cycles span DAG files; the declared-schedule plan check finds
them (see :mod:`tessera.plugin.fleet.adapters`).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
from airflow.models.dag import DagModel, DagTag
from airflow.models.errors import ParseImportError
from sqlalchemy import or_, select

import tessera.operators
import tessera.timetables

from .._airflow import tessera_timetable
from ..scoped_reads import Scope, import_errors
from .adapters import OK, declared_schedule_check
from .models import Contradiction
from .schedules import SCHEDULE_TAG_PREFIX
from .stored import latest_stored

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

# A traceback frame in tessera's own code: the installed package path contains "tessera",
# an editable install's does not (the folders are mapped), so match those folders too.
_MARKERS = (
    "tessera",
    *(str(Path(package.__file__).parent) for package in (tessera.timetables, tessera.operators)),
)


def _last_line(stacktrace: str | None) -> str:
    lines = (stacktrace or "").strip().splitlines()
    return lines[-1] if lines else "the DAG file could not be imported"


def import_error_contradictions(session: Session, user: Any, readable: Collection[str]) -> list[Contradiction]:
    """Import errors raised by tessera, shown under the same rule as Airflow's import-error view.

    An error is tessera's when its traceback passes through tessera's code, or when its
    file defined a tessera-scheduled DAG before it broke.

    The caller needs the import-errors view; an error in a file with DAGs is shown only
    if the caller may read every DAG of that file (the traceback may quote any of them).
    """
    if not get_auth_manager().is_authorized_view(access_view=AccessView.IMPORT_ERRORS, user=user):
        return []
    tessera_files = select(DagModel.relative_fileloc).where(tessera_timetable())
    theirs = (ParseImportError.stacktrace.contains(marker) for marker in _MARKERS)
    errors = import_errors(session, Scope.of(readable), or_(ParseImportError.filename.in_(tessera_files), *theirs))
    return [
        Contradiction(
            kind="invalid_spec",
            severity="error",
            message=f"{error.filename}: {_last_line(error.stacktrace)}",
            dag_ids=error.dag_ids,
            source="import_error",
        )
        for error in errors
        if error.stacktrace is not None  # else its file defines a DAG the caller may not read
    ]


def declared_schedule_contradictions(session: Session, readable: Collection[str]) -> tuple[list[Contradiction], str]:
    """The plan check over every pipeline DAG; contradictions shown when the caller reads one of its DAGs.

    The check needs the whole graph (a parent may be a DAG the caller cannot read), so it
    runs over every pipeline, and only what it finds is filtered. A pipeline whose stored
    DAG cannot be read is left out and named in the availability ("incomplete: ...").
    """
    dag_ids = session.scalars(
        select(DagTag.dag_id)
        .join(DagModel, DagModel.dag_id == DagTag.dag_id)
        .where(DagTag.name.startswith(SCHEDULE_TAG_PREFIX), ~DagModel.is_stale)
        .distinct()
    )
    stored = latest_stored(session, list(dag_ids))
    # A pipeline whose stored DAG cannot be read: its own row says why; the check runs on the rest.
    unreadable = sorted(dag_id for dag_id, dag in stored.items() if dag.error is not None)
    found, availability = declared_schedule_check(dag for dag in stored.values() if dag.error is None)
    if unreadable and availability == OK:
        availability = f"incomplete: could not read {', '.join(unreadable)}"
    return [c for c in found if not c.dag_ids or set(c.dag_ids) & set(readable)], availability


def all_contradictions(session: Session, user: Any, readable: Collection[str]) -> tuple[list[Contradiction], str]:
    declared, availability = declared_schedule_contradictions(session, readable)
    return import_error_contradictions(session, user, readable) + declared, availability
