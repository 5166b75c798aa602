"""One DAG whose plan or status cannot be computed answers its own row with the error, never a 500.

A stored DAG can fail on the API server alone: its serialized timetable no longer
loads (a newer tessera refuses what an older one stored), its plan overflows (a start
date near the year 10000), or a bug. The lists must still show every other DAG, and
the broken one must say why; its row then holds only what the DAG row and its runs
say, computed as for a DAG without a tessera timetable, plus the error.

Database errors are not the DAG's: they propagate (the session is unusable after one).
"""

from __future__ import annotations

import dataclasses
import datetime

from sqlalchemy.exc import SQLAlchemyError

from .failures import failure
from .models import ConditionModel, Contradiction, DagPlan, DagStatus, Lateness
from .plans import dag_plan
from .runs import RunHistory
from .schedules import ScheduledDag
from .status import GroupedReads, dag_status


def _bare(item: ScheduledDag) -> ScheduledDag:
    return dataclasses.replace(item, stored=None, timetable=None)


def plan_row(
    item: ScheduledDag,
    *,
    after: datetime.datetime,
    count: int,
    until: datetime.datetime | None,
    contradictions: list[Contradiction],
    lane_until: datetime.datetime | None = None,
) -> DagPlan:
    """:func:`~tessera.plugin.fleet.plans.dag_plan`, or the DAG row's own fields and the error."""
    error = item.error
    if error is None:
        try:
            return dag_plan(
                item, after=after, count=count, until=until, contradictions=contradictions, lane_until=lane_until
            )
        except SQLAlchemyError:
            raise
        except Exception as raised:
            error = failure("computing the plan", item.dag_id, raised)
    row = dag_plan(_bare(item), after=after, count=count, until=until, contradictions=contradictions)
    return row.model_copy(update={"error": error})


UNKNOWN_LATENESS = Lateness(
    state="unknown",
    late=False,
    occurrence=None,
    late_after=None,
    late_by_seconds=None,
    reason="the plan could not be computed",
    rule="",
)
"""The lateness of a DAG whose status cannot be computed: not judged, so never late."""


def unavailable(error: str) -> list[ConditionModel]:
    """The conditions of a DAG whose status cannot be computed: both False, saying why."""
    return [
        ConditionModel(type=kind, status="False", reason="PlanUnavailable", message=error)
        for kind in ("SpecValid", "Ready")
    ]


def status_row(
    item: ScheduledDag, contradictions: list[Contradiction], history: RunHistory, reads: GroupedReads
) -> DagStatus:
    """:func:`~tessera.plugin.fleet.status.dag_status`, or its runs without a plan, and the error."""
    error = item.error
    if error is None:
        try:
            return dag_status(item, contradictions, history, reads)
        except SQLAlchemyError:
            raise
        except Exception as raised:
            error = failure("computing the status", item.dag_id, raised)
    row = dag_status(_bare(item), contradictions, history, reads)
    return row.model_copy(
        update={
            "error": error,
            "lateness": UNKNOWN_LATENESS,
            "conditions": unavailable(error),
            "cursor_status": "not available: see the row's error",
        }
    )
