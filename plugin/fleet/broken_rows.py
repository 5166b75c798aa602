"""A tessera DAG whose file broke keeps its row in the status and plan lists, with the reason and when it broke.

Airflow marks such a DAG stale (its file fails to import, or is gone), and the lists, which
show live DAGs, dropped it: ``GET .../status`` answered 404 "is not a tessera-scheduled DAG".
These helpers add the row back from one grouped reading of every broken DAG
(:func:`~tessera.plugin.fleet.broken.broken_dags`), built as a row without a plan is built
(:mod:`~tessera.plugin.fleet.row_errors`), with its conditions naming the specific reason
(``CronInvalid``, ``InputInvalid``, ... or ``FileMissing``), ``broken`` saying since when, and
``error`` saying it in one line. A DAG whose file fails but that Airflow still schedules (not
stale yet) keeps its normal row, with ``broken`` and the reason added. Until the DAG is deleted.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import TYPE_CHECKING

from airflow.models.dag import DagModel
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from ..scoped_reads import Scope
from .broken import Broken, broken_dags
from .models import BrokenModel, ConditionModel, DagPlan, DagStatus, Lateness
from .row_errors import plan_row, status_row
from .runs import run_histories
from .schedules import SCHEDULE_TAG_PREFIX, ScheduledDag
from .status import NOTHING_READ

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def _model(broken: Broken) -> BrokenModel:
    return BrokenModel(
        reason=broken.reason,
        message=broken.message,
        since=broken.since,
        last_parsed=broken.last_parsed,
        stale=broken.stale,
        record=broken.record,
    )


def _conditions(broken: Broken) -> list[ConditionModel]:
    return [
        ConditionModel(type=kind, status="False", reason=broken.reason, message=broken.message)
        for kind in ("SpecValid", "Ready")
    ]


def _items(session: Session, dag_ids: Collection[str]) -> list[ScheduledDag]:
    """Rows without a stored DAG for ``dag_ids`` (one query, tags included)."""
    if not dag_ids:
        return []
    models = session.scalars(
        select(DagModel).options(selectinload(DagModel.tags)).where(DagModel.dag_id.in_(sorted(dag_ids)))
    ).all()
    items = []
    for model in models:
        tags = sorted(tag.name for tag in model.tags if tag.name.startswith(SCHEDULE_TAG_PREFIX))
        schedule = tags[0][len(SCHEDULE_TAG_PREFIX) :] if tags else None
        items.append(ScheduledDag(model=model, stored=None, timetable=None, declared_schedule=schedule))
    return items


def page_update(broken: Broken) -> dict:
    """A broken DAG's fields in a row: the reason and since when; if Airflow creates no run of it, that too."""
    update: dict = {"broken": _model(broken), "conditions": _conditions(broken)}
    if broken.blocks:
        why = "its file does not parse" if broken.reason != "FileMissing" else "it is stale (its file is gone)"
        update["lateness"] = Lateness(
            state="not_scheduled",
            late=False,
            occurrence=None,
            late_after=None,
            late_by_seconds=None,
            reason=f"Airflow creates no run of it: {why}",
            rule="",
        )
        update["error"] = broken.text
    return update


def _status(row: DagStatus, broken: Broken) -> DagStatus:
    update = page_update(broken)
    if broken.blocks:
        update["cursor_status"] = "not available: the DAG's file does not parse"
    return row.model_copy(update=update)


def _plan(row: DagPlan, broken: Broken) -> DagPlan:
    update: dict = {"broken": _model(broken)}
    if broken.blocks:
        update["error"] = broken.text
    return row.model_copy(update=update)


def with_broken_statuses(
    session: Session, rows: list[DagStatus], readable: Collection[str], dag_ids: Collection[str] | None = None
) -> list[DagStatus]:
    """``rows`` with every broken tessera DAG the caller may read (of ``dag_ids``): marked if listed, else added."""
    broken = broken_dags(session, Scope.of(readable), dag_ids)
    listed = {row.dag_id for row in rows}
    missing = [dag_id for dag_id in broken if dag_id not in listed]
    histories = run_histories(session, Scope.of(readable), missing)
    # without a stored version there is no schedule, so no parents to read fires of, nor cursor tasks
    added = [status_row(item, [], histories[item.dag_id], NOTHING_READ) for item in _items(session, missing)]
    merged = [_status(row, broken[row.dag_id]) if row.dag_id in broken else row for row in [*rows, *added]]
    return sorted(merged, key=lambda row: row.dag_id)


def with_broken_plans(
    session: Session,
    rows: list[DagPlan],
    readable: Collection[str],
    *,
    after: datetime.datetime,
    dag_ids: Collection[str] | None = None,
) -> list[DagPlan]:
    """``rows`` with every broken tessera DAG the caller may read, of ``dag_ids`` (no runs planned for a stale one)."""
    broken = broken_dags(session, Scope.of(readable), dag_ids)
    listed = {row.dag_id for row in rows}
    added = [
        plan_row(item, after=after, count=1, until=None, contradictions=[])
        for item in _items(session, [dag_id for dag_id in broken if dag_id not in listed])
    ]
    merged = [_plan(row, broken[row.dag_id]) if row.dag_id in broken else row for row in [*rows, *added]]
    return sorted(merged, key=lambda row: row.dag_id)


def broken_page_rows(
    session: Session, scope: Scope, broken: dict[str, Broken], missing: Collection[str], *, after: datetime.datetime
) -> list[tuple[DagPlan, DagStatus]]:
    """The plan and status rows of the ``broken`` DAGs of ``missing`` (not among the live rows the page lists).

    For the Schedules page's one answer, which lists live DAGs as the plan and status do; ``broken``
    is :func:`~.broken.broken_dags`' reading, made once for the page.
    """
    if not missing:
        return []
    histories = run_histories(session, scope, missing)
    added = []
    for item in _items(session, missing):
        found = broken[item.dag_id]
        plan = plan_row(item, after=after, count=1, until=None, contradictions=[])
        status = status_row(item, [], histories[item.dag_id], NOTHING_READ)
        added.append((_plan(plan, found), _status(status, found)))
    return added


def broken_status(session: Session, dag_id: str, readable: Collection[str]) -> DagStatus | None:
    """The status row of one broken tessera DAG the route authorized (None: it is not one)."""
    rows = with_broken_statuses(session, [], readable, [dag_id])
    return rows[0] if rows else None


def broken_plan(
    session: Session, dag_id: str, readable: Collection[str], *, after: datetime.datetime
) -> DagPlan | None:
    """The plan row of one broken tessera DAG the route authorized (None: it is not one)."""
    rows = with_broken_plans(session, [], readable, after=after, dag_ids=[dag_id])
    return rows[0] if rows else None
