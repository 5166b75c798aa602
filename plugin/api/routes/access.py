"""Who may call a route, and what every route shares: Airflow's own authorization and the app's DAG bag.

Every route depends on Airflow's authentication and authorization (whatever auth manager
the deployment runs): a bearer token or the UI's session cookie; no credential is a 401,
a token that is not valid a 403 (as Airflow's own API answers). A route about one DAG is
authorized for that DAG by its dependency; a list shows only the DAGs the caller may read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
from airflow.api_fastapi.core_api.security import requires_access_dag, requires_authenticated
from airflow.models.dagbag import DBDagBag
from fastapi import Depends, Request

read_dag = Depends(requires_access_dag(method="GET"))
"""Read the DAG (its plan)."""
read_runs = Depends(requires_access_dag(method="GET", access_entity=DagAccessEntity.RUN))
"""Read the DAG's runs (its status, its refresh state)."""
trigger_runs = Depends(requires_access_dag(method="POST", access_entity=DagAccessEntity.RUN))
"""Create the DAG's runs (a refresh), the right Airflow's own trigger route asks for."""
pause_dags = Depends(requires_access_dag(method="PUT"))
"""Pause or unpause the DAG: the right Airflow's own ``PATCH /api/v2/dags/{dag_id}`` asks for (a viewer has not)."""
authenticated = Depends(requires_authenticated())
"""Any signed-in user (the lists filter their rows by what the caller may read)."""


def readable(user: Any) -> set[str]:
    """The DAG ids ``user`` may read."""
    return get_auth_manager().get_authorized_dag_ids(user=user, method="GET")


ACTIONS = {
    "pause": ("PUT", None),
    "backfill": ("POST", DagAccessEntity.RUN),
}
"""What the Schedules page offers on a row, and the right each needs: the one Airflow's own route asks for
(``PATCH /api/v2/dags/{dag_id}`` and tessera's pause; ``POST /api/v2/backfills``, which authorizes the run)."""


def allowed_actions(user: Any, dag_ids: Iterable[str]) -> dict[str, dict[str, bool]]:
    """Per DAG of ``dag_ids``, which :data:`ACTIONS` ``user`` may take: the page hides the others' buttons.

    Only a hint for the page: each action's route still authorizes it (a caller who sends it anyway is refused).
    The auth manager answers from the user's roles, which it holds, for the rows listed (at most a page).
    """
    manager = get_auth_manager()
    return {
        dag_id: {
            name: manager.is_authorized_dag(
                method=method, access_entity=entity, details=DagDetails(id=dag_id), user=user
            )
            for name, (method, entity) in ACTIONS.items()
        }
        for dag_id in dag_ids
    }


def _dag_bag(request: Request) -> DBDagBag:
    return request.app.state.dag_bag


DagBagDep = Annotated[DBDagBag, Depends(_dag_bag)]
"""The app's DAG bag (built once per app, as Airflow's own API builds its own)."""
