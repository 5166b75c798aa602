"""Metrics the API server emits for on-demand refreshes, through Airflow's own ``Stats``.

They reach whatever backend ``[metrics]`` configures (StatsD, OpenTelemetry, ...),
prefixed like every Airflow metric (``airflow.`` by default), and carry the DAG id as
a ``dag_id`` tag where the backend supports tags; like Airflow's own per-DAG metrics,
each is also sent as ``<name>.<dag_id>`` (while ``[metrics] legacy_names_on`` is on)
for plain StatsD, which drops tags. The outcome is in the name, as in Airflow's
``dagrun.duration.success``.

=============================  ======================================================
``tessera.refresh.requested``  every refresh request that passed authorization
``tessera.refresh.started``    a new run was started for it
``tessera.refresh.joined``     a run of the DAG was already queued or running: joined it
``tessera.refresh.coalesced``  a run had succeeded within the coalescing window: returned it
``tessera.refresh.retried``    the request lost a race with a concurrent refresh and re-decided
=============================  ======================================================
"""

from __future__ import annotations

from typing import Literal

from tessera.operators.stats import Metric, emit

Outcome = Literal["started", "joined", "coalesced"]

REQUESTED = "tessera.refresh.requested"
RETRIED = "tessera.refresh.retried"
OUTCOMES: dict[Outcome, str] = {
    "started": "tessera.refresh.started",
    "joined": "tessera.refresh.joined",
    "coalesced": "tessera.refresh.coalesced",
}
ALL = (REQUESTED, *OUTCOMES.values(), RETRIED)


def count(metric: str, dag_id: str) -> None:
    """Add one to ``metric`` for ``dag_id``; a metrics backend failure never fails the request."""
    emit(Metric(metric, "counter"), {"dag_id": dag_id}, where="core")
