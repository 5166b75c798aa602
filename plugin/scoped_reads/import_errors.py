"""Import errors as a caller may see them: the text only if the caller may read every DAG of the file."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from airflow.models.errors import ParseImportError
from sqlalchemy import ColumnElement, select, tuple_

from tessera.operators.functions.spec_reasons import CONNECTION_MISSING

from .scope import Scope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from tessera.operators.functions.status_summary import FunctionStatus


@dataclass(frozen=True)
class ImportErrorRow:
    """A file's import error, its text shown only to a caller who may read every DAG of the file."""

    id: int
    bundle_name: str | None
    filename: str
    stacktrace: str | None
    """None: the file defines a DAG the caller may not read (its traceback may quote any of them)."""
    dag_ids: list[str]
    """The file's DAGs the caller may read."""


def _file_dags(session: Session, files: set[tuple[Any, str]]) -> dict[tuple[Any, str], set[str]]:
    """The DAGs of each ``(bundle, file)``, in one query."""
    if not files:
        return {}
    found: dict[tuple[Any, str], set[str]] = {}
    for bundle, file, dag_id in session.execute(
        select(DagModel.bundle_name, DagModel.relative_fileloc, DagModel.dag_id).where(
            tuple_(DagModel.bundle_name, DagModel.relative_fileloc).in_(sorted(files, key=str))
        )
    ):
        found.setdefault((bundle, file), set()).add(dag_id)
    return found


def import_errors(session: Session, scope: Scope, *where: ColumnElement[bool]) -> list[ImportErrorRow]:
    """The import errors matching ``where``, by file; two queries (the errors, their files' DAGs)."""
    rows = session.execute(
        select(
            ParseImportError.id,
            ParseImportError.bundle_name,
            ParseImportError.filename,
            ParseImportError.stacktrace,
        )
        .where(*where)
        .order_by(ParseImportError.filename, ParseImportError.id)
    ).all()
    in_files = _file_dags(session, {(bundle, file) for _, bundle, file, _ in rows})
    found = []
    for error_id, bundle, file, stacktrace in rows:
        dags = in_files.get((bundle, file), set())
        shown = all(scope.allows(dag_id) for dag_id in dags)
        found.append(ImportErrorRow(error_id, bundle, file, stacktrace if shown else None, scope.only(dags)))
    return found


HIDDEN = "the error text is hidden: its file defines DAGs you may not read"
"""What a caller who may not read every DAG of a file in error is told instead of its error's text."""


def function_statuses(
    session: Session, scope: Scope, functions: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], FunctionStatus | Exception]:
    """:func:`~tessera.operators.functions.status.function_statuses` of the ``(dag_id, task_id)`` in scope.

    Its ``SpecValid`` condition (and ``Ready``, which repeats it) quotes the import error of a
    function's file: to a caller who may not read every DAG of that file, :data:`HIDDEN` stands for
    the text, the reason stays. Two more queries, only when a listed function's file is in error.
    """
    from tessera.operators.functions import status

    statuses = status.function_statuses([(d, t) for d, t in functions if scope.allows(d)], session=session)
    broken = sorted({key[0] for key, found in statuses.items() if _import_error_of(found) is not None})
    if not broken:
        return statuses
    files = select(DagModel.bundle_name, DagModel.relative_fileloc).where(DagModel.dag_id.in_(broken))
    errors = import_errors(session, scope, tuple_(ParseImportError.bundle_name, ParseImportError.filename).in_(files))
    hidden = {dag_id for error in errors if error.stacktrace is None for dag_id in error.dag_ids}
    return {key: _without_error_text(found) if key[0] in hidden else found for key, found in statuses.items()}


def _import_error_of(found: FunctionStatus | Exception) -> str | None:
    """The import error's line ``SpecValid`` quotes (None: it is valid, or fails for a missing connection)."""
    if isinstance(found, Exception):
        return None
    for condition in found.conditions:
        if condition.type == "SpecValid" and condition.status == "False" and condition.reason != CONNECTION_MISSING:
            return condition.message
    return None


def _without_error_text(found: FunctionStatus | Exception) -> FunctionStatus | Exception:
    quoted = _import_error_of(found)
    if isinstance(found, Exception) or quoted is None:
        return found
    conditions = [
        dataclasses.replace(condition, message=HIDDEN) if condition.message == quoted else condition
        for condition in found.conditions
    ]
    return dataclasses.replace(found, conditions=conditions)
