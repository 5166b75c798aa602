"""What an asset-driven DAG waits for, in words: "after apc_daily and norled_daily".

Airflow stores each DAG's asset condition on its row (``dag.asset_expression``, nested
``all``/``any`` of assets), so every asset-driven DAG is described with one query and no
stored DAG read. A declared schedule's asset (``x-tessera-schedule://<name>``) is named by
its schedule; any other asset by its name.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from airflow.models.dag import DagModel
from pydantic import BaseModel, Field
from sqlalchemy import select

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

SCHEDULE_URI = "x-tessera-schedule://"
"""Mirrors ``tessera.operators.schedules.identity.ASSET_SCHEME`` (operators are optional here)."""
MAX_DEPTH = 32


class DagTrigger(BaseModel):
    dag_id: str
    text: str = Field(description='e.g. "after apc_daily and norled_daily", "after s3://raw/x or apc_daily".')
    parents: list[str] = Field(description="Every schedule or asset named, in order.")


class TriggersResponse(BaseModel):
    dags: list[DagTrigger]


def _leaf(node: dict[str, Any]) -> str | None:
    for kind in ("asset", "asset_ref", "alias", "asset_alias"):
        if isinstance(body := node.get(kind), dict):
            uri = str(body.get("uri") or "")
            if uri.startswith(SCHEDULE_URI):
                return uri[len(SCHEDULE_URI) :]
            return str(body.get("name") or uri or "an asset")
    return None


def _words(node: Any, parents: list[str], depth: int = 0) -> str:
    if depth > MAX_DEPTH or not isinstance(node, dict):
        return "an asset condition"
    if (name := _leaf(node)) is not None:
        parents.append(name)
        return name
    for key, joiner in (("all", " and "), ("any", " or ")):
        if isinstance(items := node.get(key), list):
            parts = [_words(item, parents, depth + 1) for item in items]
            inner = [f"({p})" if (" and " in p or " or " in p) else p for p in parts]
            return joiner.join(inner) if inner else "nothing"
    return "an asset condition"


def describe(expression: Any) -> DagTrigger | None:
    """The words for one stored asset condition (``None`` when the DAG is not asset-driven)."""
    if not expression:
        return None
    parents: list[str] = []
    text = _words(expression, parents)
    return DagTrigger(dag_id="", text=f"after {text}", parents=parents)


def triggers(session: Session, *, readable: Collection[str]) -> TriggersResponse:
    """Every asset-driven DAG among ``readable``, described in words; one query."""
    rows = session.execute(
        select(DagModel.dag_id, DagModel.asset_expression)
        .where(~DagModel.is_stale)
        .where(DagModel.asset_expression.is_not(None))
        .where(DagModel.dag_id.in_(readable))
        .order_by(DagModel.dag_id)
    ).all()
    found = []
    for dag_id, expression in rows:
        if (trigger := describe(expression)) is not None:
            found.append(trigger.model_copy(update={"dag_id": dag_id}))
    return TriggersResponse(dags=found)
