"""Why a cursor function's spec is invalid, as a condition reason: ``CronInvalid``, ``InputInvalid``...

Every parse-time refusal in tessera is a ``ValueError`` (or ``TypeError``) whose text
starts with the field it is about ("cursor_into: 'cursor' is not a JSON Pointer...").
The dag-processor keeps only that text, in the DAG file's import error; this module
reads the last line of the traceback back into the reason a status page shows, and
the message stays the full text. A refusal it does not recognise stays ``SpecInvalid``.

The reasons (the SpecValid and Ready conditions carry the same one):

=====================  =============================================================
``CronInvalid``        the cron expression (or ``@every``) is refused
``ScheduleInvalid``    another timetable field: interval, timezone, phase, deadline...
``InputInvalid``       the frozen input is not JSON within bounds, or fails input_schema
``InputSchemaInvalid`` / ``OutputSchemaInvalid``  a schema that does not compile
``CursorPointerInvalid``  cursor_from / cursor_into is not a usable JSON Pointer
``InitialInvalid``     the initial cursor is not JSON within bounds
``StoreInvalid``       the cursor store (e.g. shared with another function)
``FunctionInvalid``    the function, or its HTTP endpoint's conn_id, path, method, timeout
``ConcurrencyInvalid`` concurrency or max_active_tis_per_dag
``ConnectionMissing``  the HTTP function's Airflow connection is not defined (found by
                       the status and the admission, not in the DAG file)
=====================  =============================================================
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

SPEC_INVALID = "SpecInvalid"
CONNECTION_MISSING = "ConnectionMissing"

# "tessera.timetables._time.cron_fields.CronInvalid: expression: '61 * * * *' has..." -> class, first word.
_LAST_LINE = re.compile(r"^(?:[\w.]+\.)?(?P<kind>\w+): (?P<field>[A-Za-z_]\w*)")

_BY_CLASS = {"CronInvalid": "CronInvalid"}
_BY_FIELD = {
    "input": "InputInvalid",
    "input_schema": "InputSchemaInvalid",
    "output_schema": "OutputSchemaInvalid",
    "cursor_from": "CursorPointerInvalid",
    "cursor_into": "CursorPointerInvalid",
    "initial": "InitialInvalid",
    "store": "StoreInvalid",
    "function": "FunctionInvalid",
    "conn_id": "FunctionInvalid",
    "path": "FunctionInvalid",
    "method": "FunctionInvalid",
    "timeout": "FunctionInvalid",
    "max_response_bytes": "FunctionInvalid",
    "concurrency": "ConcurrencyInvalid",
    "max_active_tis_per_dag": "ConcurrencyInvalid",
    "expression": "CronInvalid",
    "cron": "CronInvalid",
    **{
        field: "ScheduleInvalid"
        for field in (
            "every",
            "interval",
            "delay",
            "window",
            "phase",
            "spread",
            "max",
            "step",
            "timezone",
            "at",
            "on",
            "starting_deadline",
            "catch_up",
            "limit",
            "key",
            "start_date",
            "end_date",
        )
    },
}


def spec_reason(error_text: str) -> str:
    """The condition reason for an import error's last line (the refusal's own text)."""
    found = _LAST_LINE.match(error_text.strip())
    if found is None:
        return SPEC_INVALID
    return _BY_CLASS.get(found.group("kind")) or _BY_FIELD.get(found.group("field"), SPEC_INVALID)


def connection_missing(conn_id: object, session: Session) -> str | None:
    """Why the HTTP function's connection ``conn_id`` cannot be used, or None (None for no connection).

    Looked up as a fire would (environment, secrets backends, metadata DB), in the process
    that asks: the scheduler's admission and the status, never the DAG file's parse. The
    metadata DB is read through ``session``, the caller's: Airflow's own lookup opens a
    session of its own, which in the scheduler is the loop's scoped session, and closing it
    would detach every run the loop is starting.
    """
    if not isinstance(conn_id, str) or not conn_id:
        return None
    return connections_missing([conn_id], session)[conn_id]


def connections_missing(conn_ids: Collection[str], session: Session) -> dict[str, str | None]:
    """:func:`connection_missing` of each of ``conn_ids``, the metadata DB read once for all of them."""
    from airflow.configuration import ensure_secrets_loaded
    from airflow.models.connection import Connection
    from airflow.secrets.metastore import MetastoreBackend
    from sqlalchemy import select

    pending = set(conn_ids)
    for backend in ensure_secrets_loaded():
        if not pending:
            break
        if isinstance(backend, MetastoreBackend):
            query = select(Connection.conn_id).where(Connection.conn_id.in_(sorted(pending)))
            pending.difference_update(session.scalars(query))
        else:
            pending.difference_update([conn_id for conn_id in sorted(pending) if _found_in(backend, conn_id)])
    return {conn_id: _missing(conn_id) if conn_id in pending else None for conn_id in conn_ids}


def _found_in(backend: object, conn_id: str) -> bool:
    try:
        return backend.get_connection(conn_id=conn_id) is not None  # type: ignore[attr-defined]
    except Exception:  # an unreachable backend: the fire will tell; admission must not fail on it
        log.warning("tessera: secrets backend %s failed looking up %r", type(backend).__name__, conn_id)
        return True


def _missing(conn_id: str) -> str:
    return (
        f"conn_id: {conn_id!r} is not a defined Airflow connection; add it (Admin > Connections, or an "
        "AIRFLOW_CONN_<ID> environment variable), or fix the HttpFunction's conn_id"
    )
