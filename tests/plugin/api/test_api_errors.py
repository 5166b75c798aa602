"""The domain's refusals reach the caller with their own status code and ``{"detail": ...}``.

The domain layer raises :mod:`tessera.plugin.errors`; the app's one exception handler
maps them. Exercised through the app mounted in Airflow's API app, on real stored DAGs.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest

from tessera.plugin import errors
from tessera.plugin.api.app import STATUS_CODES

from .test_api_app import DAG_FILE, Api, airflow_api, run_ids, store_dags

PAUSED = "errors_paused"
PLAIN = "errors_plain_airflow"
PLAIN_FILE = """
from airflow.sdk import DAG

with DAG({dag_ids[0]!r}, schedule=None, start_date=None):
    pass
"""


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    folder = tmp_path_factory.mktemp("tessera-errors")
    store_dags(folder, DAG_FILE, (PAUSED,))
    store_dags(folder, PLAIN_FILE, (PLAIN,))
    with create_session() as session:
        session.get(DagModel, PAUSED).is_paused = True
    with airflow_api(folder) as api:
        yield api


def test_every_kind_of_refusal_has_its_own_status_code():
    kinds = [
        kind
        for _, kind in inspect.getmembers(errors, inspect.isclass)
        if issubclass(kind, errors.ApiError) and kind is not errors.ApiError
    ]
    assert kinds and all(kind in STATUS_CODES for kind in kinds)


ROUTES = [("GET", "plan"), ("GET", "status"), ("GET", "refresh"), ("POST", "refresh")]


@pytest.mark.parametrize("dag_id", ["errors_no_such_dag", PLAIN], ids=["unknown", "not-tessera"])
@pytest.mark.parametrize(("method", "what"), ROUTES, ids=[f"{m} {w}" for m, w in ROUTES])
def test_a_dag_tessera_does_not_schedule_is_a_404_naming_it(api, dag_id, method, what):
    body = {} if method == "POST" else None
    answer = api.call(method, f"/tessera/api/v1/dags/{dag_id}/{what}", user="admin", json_body=body)
    assert answer.status_code == 404, answer.text
    said = (
        "is not a DAG Airflow knows (never parsed, or deleted)" if dag_id != PLAIN else "is not a tessera-scheduled DAG"
    )
    assert answer.json() == {"detail": f"dag_id: {dag_id!r} {said}"}
    assert run_ids(dag_id) == []


def test_refreshing_a_paused_dag_is_a_409_that_says_how_to_fix_it(api):
    answer = api.call("POST", f"/tessera/api/v1/dags/{PAUSED}/refresh", user="user", json_body={})
    assert answer.status_code == 409, answer.text
    assert "is paused; unpause it to refresh" in answer.json()["detail"]
    assert run_ids(PAUSED) == []


def test_a_file_that_is_not_part_of_the_page_is_a_404(api):
    answer = api.call("GET", "/tessera/ui/passwords.json", user="admin")
    assert answer.status_code == 404, answer.text
    assert answer.json() == {"detail": "'passwords.json' is not part of the Schedules page"}
