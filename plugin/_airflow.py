"""The plugin layer's one door to Airflow's private names (DESIGN.md, "One door to Airflow per layer").

Every private or version-sensitive Airflow name the plugin uses is named here and nowhere else,
each with a contract test in ``tests/test_airflow_doors.py``: an Airflow upgrade that moves or
renames one fails that test and is ported in this file. The backfill and serialization helpers
are imported on call, as their callers did: the plugin loads in every Airflow process and most
never need them. Tessera runs on Airflow 3.1, 3.2 and 3.3: a name that moved between them is
taken from where the running release keeps it (tried newest first), and one a release lacks is
built here from the public models as that release would.
"""

from __future__ import annotations

import datetime
from typing import Any

# Airflow core's "now" (no public home): the API server's clock, which time_machine freezes in tests.
# coerce_datetime: a datetime (or None) as the pendulum DateTime the scheduler compares with.
# from_timestamp: a POSIX timestamp as that DateTime (stored next-run instants).
from airflow._shared.timezones.timezone import coerce_datetime, from_timestamp, utcnow


def decode_timetable(data: dict[str, Any]) -> Any:
    """A stored DAG's timetable from its serialized form (``airflow.serialization.decoders`` since
    Airflow 3.2, ``airflow.serialization.serialized_objects`` on 3.1)."""
    try:
        from airflow.serialization.decoders import decode_timetable as decode
    except ImportError:  # Airflow 3.1
        from airflow.serialization.serialized_objects import decode_timetable as decode  # type: ignore[no-redef]
    return decode(data)


def dag_bag_class() -> Any:
    """Airflow's ``DagBag``, which parses DAG files as the dag-processor does (``airflow.dag_processing.dagbag``
    since Airflow 3.2, ``airflow.models.dagbag`` on 3.1)."""
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 3.1
        from airflow.models.dagbag import DagBag  # type: ignore[no-redef,attr-defined]
    return DagBag


def stored_dag(dag: Any) -> Any:
    """``dag`` as the dag-processor stores it and the scheduler reads it back: serialized, then deserialized
    (``DagSerialization`` since Airflow 3.2, ``SerializedDAG`` on 3.1)."""
    try:
        from airflow.serialization.serialized_objects import DagSerialization
    except ImportError:  # Airflow 3.1
        from airflow.serialization.serialized_objects import SerializedDAG as DagSerialization
    return DagSerialization.from_dict(DagSerialization.to_dict(dag))


def allowed_run_types(dag: Any) -> Any:
    """The run types a DAG (or its model) allows, None for all (``allowed_run_types`` arrived in Airflow 3.2;
    before it every DAG allows every run type)."""
    return getattr(dag, "allowed_run_types", None)


def run_column(name: str) -> Any:
    """``DagRun``'s column ``name``, or a NULL labelled so where this Airflow has no such column
    (``created_at``, ``partition_key`` and ``partition_date`` arrived in Airflow 3.2)."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import null

    found = getattr(DagRun, name, None)
    return null().label(name) if found is None else found


def run_created() -> Any:
    """When a run was made, as SQL: ``created_at`` where Airflow has it, else ``queued_at``, else ``run_after``."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func

    return func.coalesce(run_column("created_at"), DagRun.queued_at, DagRun.run_after)


def run_created_by(moment: Any) -> Any:
    """``run_created() <= moment`` written as one indexable comparison per column (no ``coalesce``,
    which no index serves): ``created_at`` where Airflow has it (3.2 on), else ``queued_at``, else
    ``run_after``."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import and_, or_

    created_at = getattr(DagRun, "created_at", None)
    if created_at is None:  # Airflow 3.1
        return or_(DagRun.queued_at <= moment, and_(DagRun.queued_at.is_(None), DagRun.run_after <= moment))
    return or_(
        created_at <= moment,
        and_(created_at.is_(None), DagRun.queued_at <= moment),
        and_(created_at.is_(None), DagRun.queued_at.is_(None), DagRun.run_after <= moment),
    )


TIMETABLE_PREFIX = "tessera.timetables."
"""How the import path of every tessera timetable starts (what Airflow 3.2 on records as ``timetable_type``)."""
TIMETABLE_TAG = "tessera:timetable"
"""The tag the dag policy gives every DAG with a tessera timetable on Airflow 3.1, which records no timetable
type on the DAG row: there the tag is what marks the row. From 3.2 the column does, and a DAG keeps the tags its
file declares (Airflow replaces a DAG's tags on every parse, so an upgrade drops the tag). Not ``tessera-``:
that prefix is the declared schedules' (``tessera-schedule:<name>``)."""


def timetable_needs_tag() -> bool:
    """Whether the DAG rows lack ``timetable_type`` (Airflow 3.1), so the dag policy tags tessera's DAGs."""
    from airflow.models.dag import DagModel

    return not hasattr(DagModel, "timetable_type")


def tessera_timetable() -> Any:
    """SQL true for the DAG rows whose timetable is tessera's: by ``DagModel.timetable_type`` where Airflow
    records it (3.2 on), else by :data:`TIMETABLE_TAG`. One condition (a subquery on 3.1), never one per DAG."""
    from airflow.models.dag import DagModel, DagTag
    from sqlalchemy import select

    if timetable_needs_tag():  # Airflow 3.1
        return DagModel.dag_id.in_(select(DagTag.dag_id).where(DagTag.name == TIMETABLE_TAG))
    return DagModel.timetable_type.startswith(TIMETABLE_PREFIX)


def has_tessera_timetable(model: Any) -> bool:
    """Whether a ``DagModel`` row's timetable is tessera's, by the same rule as :func:`tessera_timetable`."""
    if timetable_needs_tag():  # Airflow 3.1
        return any(tag.name == TIMETABLE_TAG for tag in model.tags)
    return (model.timetable_type or "").startswith(TIMETABLE_PREFIX)


def validate_backfill_params(
    dag: Any,
    reverse: bool,
    from_date: datetime.datetime,
    to_date: datetime.datetime,
    reprocess_behavior: Any,
    dag_run_conf: dict | None,
) -> None:
    """``airflow.models.backfill._validate_backfill_params``: what ``airflow backfill create``
    refuses before it creates anything; the backfill preview refuses the same, in Airflow's words."""
    import inspect

    from airflow.models.backfill import _validate_backfill_params

    if "dag_run_conf" in inspect.signature(_validate_backfill_params).parameters:
        _validate_backfill_params(dag, reverse, from_date, to_date, reprocess_behavior, dag_run_conf)
    else:  # Airflow 3.1 checks no run conf before a backfill
        _validate_backfill_params(dag, reverse, from_date, to_date, reprocess_behavior)


def dag_run_no_create_reason(dr: Any, reprocess_behavior: Any) -> str | None:
    """``airflow.models.backfill._get_dag_run_no_create_reason``: why a backfill skips a run that
    already exists (None: it runs again); the preview applies Airflow's rule to each run it lists."""
    from airflow.models.backfill import _get_dag_run_no_create_reason

    return _get_dag_run_no_create_reason(dr, reprocess_behavior)


def latest_by_version_select(dag_ids: list[str]) -> Any:
    """``SerializedDagModel._latest_by_version_select``: the select of each DAG's newest stored
    version, Airflow's own query (3.3), so the API lists the version the scheduler uses.

    Airflow 3.1 and 3.2 have no such query: the same one is built here from the public models,
    each DAG's row with the highest ``version_number`` (unique per DAG, unlike a timestamp).
    """
    from airflow.models.serialized_dag import SerializedDagModel

    if hasattr(SerializedDagModel, "_latest_by_version_select"):
        return SerializedDagModel._latest_by_version_select(dag_ids)
    from airflow.models.dag_version import DagVersion
    from sqlalchemy import func, select

    newest = (
        select(DagVersion.dag_id, func.max(DagVersion.version_number).label("newest"))
        .join(SerializedDagModel, SerializedDagModel.dag_version_id == DagVersion.id)
        .where(DagVersion.dag_id.in_(dag_ids))
        .group_by(DagVersion.dag_id)
        .subquery()
    )
    return (
        select(SerializedDagModel)
        .join(DagVersion, SerializedDagModel.dag_version_id == DagVersion.id)
        .join(newest, (DagVersion.dag_id == newest.c.dag_id) & (DagVersion.version_number == newest.c.newest))
    )


def commit_guards(session: Any) -> list[Any]:
    """The scheduler's commit guards on ``session`` (``airflow.utils.sqlalchemy.CommitProhibitorGuard``).

    ``prohibit_commit(session)`` listens to the session's ``before_commit`` with the guard's
    private ``_validate_commit``, which refuses any commit but the one announced by setting the
    guard's ``expected_commit``. SQLAlchemy fires ``before_commit`` for a savepoint's release too,
    so a listener step that releases one must announce it; found by that bound method, the one
    trace the guard leaves on the session.
    """
    from airflow.utils.sqlalchemy import CommitProhibitorGuard

    validate = CommitProhibitorGuard._validate_commit
    return [fn.__self__ for fn in session.dispatch.before_commit if getattr(fn, "__func__", None) is validate]


__all__ = [
    "TIMETABLE_PREFIX",
    "TIMETABLE_TAG",
    "timetable_needs_tag",
    "allowed_run_types",
    "coerce_datetime",
    "commit_guards",
    "dag_bag_class",
    "dag_run_no_create_reason",
    "decode_timetable",
    "from_timestamp",
    "has_tessera_timetable",
    "latest_by_version_select",
    "run_column",
    "run_created",
    "stored_dag",
    "tessera_timetable",
    "utcnow",
    "validate_backfill_params",
]
