"""An auth manager that hides DAGs: Airflow's simple one, except that its ``viewer`` reads only some DAGs.

Airflow's simple auth manager lets every role read every DAG, so a test that asks "does an answer
name a DAG its caller may not read?" needs a manager that hides one. This one is configured as
``[core] auth_manager``; the simple manager's users stay (tokens from ``POST /auth/token``), and
the user named :data:`LIMITED` may read, trigger or edit only the DAGs whose id starts with
:data:`ALLOWED_PREFIX`: Airflow's own routes answer it 403 for the others, as a deployment's
per-DAG roles would.
"""

from __future__ import annotations

from typing import Any

from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager

LIMITED = "viewer"
ALLOWED_PREFIX = "sec_allowed_"
PATH = f"{__name__}.PrefixAuthManager"
"""What ``[core] auth_manager`` names."""


def _hidden(user: Any, dag_id: str | None) -> bool:
    return getattr(user, "username", None) == LIMITED and dag_id is not None and not dag_id.startswith(ALLOWED_PREFIX)


class PrefixAuthManager(SimpleAuthManager):
    def is_authorized_dag(self, *, method: Any, user: Any, access_entity: Any = None, details: Any = None) -> bool:
        if _hidden(user, getattr(details, "id", None)):
            return False
        return super().is_authorized_dag(method=method, user=user, access_entity=access_entity, details=details)

    def get_authorized_dag_ids(self, *, user: Any, method: Any = "GET", **kwargs: Any) -> set[str]:
        found = super().get_authorized_dag_ids(user=user, method=method, **kwargs)
        return {dag_id for dag_id in found if not _hidden(user, dag_id)}

    def filter_authorized_dag_ids(self, *, dag_ids: set[str], user: Any, **kwargs: Any) -> set[str]:
        found = super().filter_authorized_dag_ids(dag_ids=dag_ids, user=user, **kwargs)
        return {dag_id for dag_id in found if not _hidden(user, dag_id)}
