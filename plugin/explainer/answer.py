"""``why``: did a DAG run at or around an instant T, and why (or why not)? One answer for the API, CLI and page.

:func:`explain` reads the records (:mod:`~tessera.plugin.explainer.facts`), decides
(:mod:`~tessera.plugin.explainer.verdict`) and shapes the answer
(:class:`~tessera.plugin.explainer.models.WhyAnswer`). It works for every DAG: a tessera
timetable is read through its public plan, Airflow's own through ``next_dagrun_info_v2``.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from airflow.models.dag import DagModel

from .._airflow import utcnow
from ..fleet.schedules import unknown_dag
from ..scoped_reads import Scope
from .facts import Facts, gather
from .models import OccurrenceModel, RunModel, WhyAnswer
from .verdict import decide

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def _occurrence(facts: Facts) -> OccurrenceModel | None:
    focus = facts.view.focus
    if focus is None:
        return None
    return OccurrenceModel(
        nominal=focus.nominal,
        nominal_local=focus.nominal.astimezone(ZoneInfo(facts.view.timezone)).isoformat(),
        run_after=focus.run_after,
        window_start=focus.window_start,
        window_end=focus.window_end,
    )


def _run(facts: Facts) -> RunModel | None:
    run = facts.subject
    if run is None:
        return None
    return RunModel(
        run_id=run.run_id,
        run_type=run.run_type,
        state=run.state,
        run_after=run.run_after,
        queued_at=run.queued_at,
        start_date=run.start_date,
        end_date=run.end_date,
        triggered_by=run.triggered_by,
        triggering_user=run.triggering_user,
    )


def explain(
    session: Session,
    dag_id: str,
    *,
    at: datetime.datetime | None = None,
    scope: Scope,
    now: datetime.datetime | None = None,
) -> WhyAnswer:
    """Why ``dag_id`` did or did not run at ``at`` (default now).

    ``scope``: the DAGs the caller may read. The answer quotes no record of another DAG (a pool
    slot's holder is counted, not named) and an import error's text only if the caller may read
    every DAG of its file, as Airflow's own API shows it.
    :raises NotFound: no such DAG.
    """
    now = now or utcnow()
    at = (at or now).astimezone(datetime.timezone.utc)
    model = session.get(DagModel, dag_id)
    if model is None:
        raise unknown_dag(dag_id)
    facts = gather(session, model, at, now, scope)
    decision = decide(facts)
    then, latest = facts.dag.then, facts.dag.now
    return WhyAnswer(
        dag_id=dag_id,
        at=at,
        cause=decision.cause,
        verdict=decision.verdict,
        occurrence=_occurrence(facts),
        run=_run(facts),
        schedule_in_force=(then or latest).summary if (then or latest) else "(never stored)",
        schedule_now=latest.summary if latest else "(never stored)",
        evidence=decision.evidence,
        missing=decision.missing,
    )
