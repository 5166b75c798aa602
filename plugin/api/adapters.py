"""Adapters to the optional parts of tessera: the cursor-function status and the declared-schedule check.

Both live in ``tessera.operators`` and are imported only when a request needs
them, so the API keeps working (and says "not available: ...") in a deployment
where they are absent or fail. Each adapter returns ``(result, availability)``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .models import Contradiction, CursorStatus

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

OK = "ok"
NOT_A_CURSOR_FUNCTION = "not a cursor function"


def _not_available(what: str, error: BaseException) -> str:
    log.warning("tessera: %s is not available", what, exc_info=error)
    return f"not available: {type(error).__name__}: {error}"


def cursor_function_status(dag_id: str, task_ids: Sequence[str], session: Session) -> tuple[list[CursorStatus], str]:
    """The status of each cursor function (``task_ids``, its cursor tasks) of ``dag_id``, from ``function_status``.

    Connects to :func:`tessera.operators.functions.status.function_status` (the three
    timestamps, last outcome and skip reason, consecutive failures, SpecValid/Ready).
    A DAG without cursor tasks costs nothing; one with them reads its own history.
    """
    if not task_ids:
        return [], NOT_A_CURSOR_FUNCTION
    try:
        from tessera.operators.functions.status import function_status
    except ImportError as error:
        return [], _not_available("the cursor-function status", error)
    try:
        statuses = [function_status(dag_id, task_id, session=session) for task_id in task_ids]
        return [CursorStatus.model_validate(status) for status in statuses], OK
    except Exception as error:  # a bug there must not take the whole status page down
        return [], _not_available("the cursor-function status", error)


def declared_schedule_check(dags: Iterable[Any]) -> tuple[list[Contradiction], str]:
    """Contradictions across the declared schedules that ``dags`` (every pipeline DAG) belong to.

    Connects to :func:`tessera.operators.schedules.plan_check.check_plan`. The metadata DB keeps
    only what the pipelines' policy records say (name, AFTER parents), not the full
    declarations, so each schedule is rebuilt from its record: AFTER schedules with
    their parents, clock-driven ones with a stand-in clock (their cron is already
    checked when the DAG file is parsed). That is exactly what the cross-schedule
    checks need: a parent no pipeline in this deployment runs under (the child can
    never fire) and AFTER cycles.
    """
    try:
        from tessera.operators.schedules.identity import record_of
        from tessera.operators.schedules.plan_check import check_plan
        from tessera.operators.schedules.schedule import Schedule
    except ImportError as error:
        return [], _not_available("the declared-schedule plan check", error)
    try:
        records: dict[str, dict[str, Any]] = {}
        pipelines: dict[str, list[str]] = {}
        for dag in dags:
            record = record_of(getattr(dag, "default_args", None))
            if record is not None:
                records[record["name"]] = record
                pipelines.setdefault(record["name"], []).append(dag.dag_id)
        schedules = {
            name: Schedule(name, after=tuple(record["after"]))
            if record.get("after")
            else Schedule(name, interval_seconds=86_400)
            for name, record in records.items()
        }
        report = check_plan(schedules, pipelines=pipelines, count=0)
    except Exception as error:  # a bug there must not take the whole plan page down
        return [], _not_available("the declared-schedule plan check", error)
    return [
        Contradiction(
            kind=c.kind,
            severity=c.severity,
            message=c.message,
            schedule=c.schedule,
            dag_ids=sorted(pipelines.get(c.schedule, [])),
            source="declared_schedule",
        )
        for c in report.contradictions
    ], OK
