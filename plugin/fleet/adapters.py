"""Adapters to the optional parts of tessera: the cursor-function status and the declared-schedule check.

Both live in ``tessera.operators`` and are imported only when a request needs
them, so the API keeps working (and says "not available: ...") in a deployment
where they are absent or fail. Each adapter returns ``(result, availability)``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError

from ..scoped_reads import Scope, function_statuses
from .models import Contradiction, CursorStatus

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

OK = "ok"
NOT_A_CURSOR_FUNCTION = "not a cursor function"


def _not_available(what: str, error: BaseException) -> str:
    log.warning("tessera: %s is not available", what, exc_info=error)
    return f"not available: {type(error).__name__}: {error}"


CursorStatuses = dict[str, tuple[list[CursorStatus], str]]
"""By DAG id: the status of each of its cursor functions, and whether that could be read (:data:`OK`)."""


def cursor_function_statuses(dags: Mapping[str, Sequence[str]], session: Session, scope: Scope) -> CursorStatuses:
    """The status of each cursor function of ``dags`` (DAG id: its cursor tasks), from ``function_statuses``.

    Connects to :func:`tessera.operators.functions.status.function_statuses` (the three
    timestamps, last outcome and skip reason, consecutive failures, SpecValid/Ready), which
    reads the history of every function at once. A DAG without cursor tasks is left out and
    costs nothing; a DAG whose status cannot be derived says so in its own entry.
    """
    wanted = [(dag_id, task_id) for dag_id, task_ids in dags.items() for task_id in task_ids]
    if not wanted:
        return {}
    try:
        statuses = function_statuses(session, scope, wanted)
    except SQLAlchemyError:
        raise
    except Exception as error:  # a bug there must not take the whole status page down
        return {dag_id: ([], _not_available("the cursor-function status", error)) for dag_id in dags}
    answers: CursorStatuses = {}
    for dag_id, task_ids in dags.items():
        if not task_ids:
            continue
        try:
            answers[dag_id] = ([_cursor_status(statuses[dag_id, task_id]) for task_id in task_ids], OK)
        except Exception as error:
            answers[dag_id] = ([], _not_available("the cursor-function status", error))
    return answers


def _cursor_status(status: Any) -> CursorStatus:
    if isinstance(status, Exception):
        raise status
    return CursorStatus.model_validate(status)


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
