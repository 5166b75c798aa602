"""Who may call what: every route of the tessera app × every kind of caller, with the status each gets.

The routes are derived from the app itself: its OpenAPI document (what
``/tessera/openapi.json`` serves) plus the Schedules page's routes, which the document
leaves out. A route added without a line in ``ACCESS`` fails
``test_every_route_has_an_access_rule``, so none can be forgotten.

Callers: no token, a token that is not a valid JWT, and a user of each role of Airflow's
simple auth manager (viewer, user, op, admin), configured through
``[core] simple_auth_manager_users`` with tokens from Airflow's ``POST /auth/token``.
A token that is not valid is a 403, as Airflow's own ``/api/v2`` answers it (parity,
checked below): Airflow's security dependency says "Invalid JWT token" with 403.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.routing import APIRoute

from tessera.plugin.api.app import create_app

from .test_api_app import DAG_FILE, ROLES, Api, airflow_api, run_ids, store_dags

DAG_ID = "authz_every_route"
PATH_VALUES = {"dag_id": DAG_ID, "name": "schedules.js"}
EVERYONE, TRIGGER = ROLES, ("user", "op", "admin")
ACCESS = {
    ("GET", "/openapi.json"): EVERYONE,
    ("GET", "/ui/"): EVERYONE,
    ("GET", "/ui/{name}"): EVERYONE,
    ("GET", "/api/v1/plan"): EVERYONE,  # lists only the DAGs the caller may read
    ("GET", "/api/v1/status"): EVERYONE,
    ("GET", "/api/v1/dags/{dag_id}/plan"): EVERYONE,  # read the DAG
    ("GET", "/api/v1/dags/{dag_id}/status"): EVERYONE,  # read the DAG's runs
    ("GET", "/api/v1/dags/{dag_id}/refresh"): EVERYONE,  # read the DAG's runs
    ("POST", "/api/v1/dags/{dag_id}/refresh"): TRIGGER,  # create the DAG's runs
    ("GET", "/api/v1/load"): EVERYONE,  # counts only the DAGs the caller may read
    ("GET", "/api/v1/migrate"): EVERYONE,  # compares only the DAGs the caller may read
    ("GET", "/api/v1/triggers"): EVERYONE,  # lists only the DAGs the caller may read
    ("GET", "/api/v1/page"): EVERYONE,  # the Schedules page's rows: only the DAGs the caller may read
    ("GET", "/api/v1/dags/{dag_id}/backfill-preview"): EVERYONE,  # read the DAG
    ("GET", "/api/v1/dags/{dag_id}/why"): EVERYONE,  # read the DAG's runs and audit log
    ("POST", "/api/v1/dags/{dag_id}/pause"): TRIGGER,  # edit the DAG, as Airflow's own pause (PATCH) asks
    ("POST", "/api/v1/dags/{dag_id}/unpause"): TRIGGER,
}
"""Each route, and the simple-auth-manager roles allowed to call it (the others get 403)."""
QUERIES = {"/api/v1/dags/{dag_id}/backfill-preview": "?from_date=2026-01-01T00:00:00Z&to_date=2026-01-01T01:00:00Z"}
"""The query a route requires, so only authorization can refuse the call."""
GARBAGE_TOKEN = "not-a-jwt"
CALLERS = ("no token", "bad token", *ROLES)


def _documented_and_page_routes() -> list[tuple[str, str]]:
    app = create_app()
    paths = app.openapi()["paths"]
    documented = {(method.upper(), path) for path, operations in paths.items() for method in operations}
    page = {
        (method, route.path)
        for route in app.routes
        if isinstance(route, APIRoute) and not route.include_in_schema
        for method in route.methods
    }
    return sorted(documented | page)


ROUTES = _documented_and_page_routes()


def expected_status(method: str, path: str, caller: str) -> int:
    if caller == "no token":
        return 401
    if caller == "bad token" or caller not in ACCESS[(method, path)]:
        return 403
    return 201 if (method, path) == ("POST", "/api/v1/dags/{dag_id}/refresh") else 200


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-authz")
    store_dags(folder, DAG_FILE, (DAG_ID,))
    with airflow_api(folder) as api:
        yield api


def _delete_runs() -> None:
    """No runs, the DAG unpaused: whatever ran before, an allowed write succeeds."""
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import delete, update

    with create_session() as session:
        session.execute(delete(DagRun).where(DagRun.dag_id == DAG_ID))
        session.execute(update(DagModel).where(DagModel.dag_id == DAG_ID).values(is_paused=False))


def _paused() -> bool:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return bool(session.scalar(select(DagModel.is_paused).where(DagModel.dag_id == DAG_ID)))


def _call(api: Api, method: str, path: str, caller: str) -> int:
    url = "/tessera" + path.format(**PATH_VALUES) + QUERIES.get(path, "")
    body = {} if method == "POST" else None  # a valid body, so only authorization can refuse it
    if caller == "no token":
        return api.call(method, url, user=None, json_body=body).status_code
    if caller == "bad token":
        return api.call(method, url, token=GARBAGE_TOKEN, json_body=body).status_code
    return api.call(method, url, user=caller, json_body=body).status_code


def test_every_route_has_an_access_rule():
    assert set(ROUTES) == set(ACCESS), "a route was added or removed: state who may call it in ACCESS"


def test_the_served_document_is_the_one_the_matrix_is_derived_from(api):
    served = api.call("GET", "/tessera/openapi.json", user="viewer").json()
    assert served["paths"] == create_app().openapi()["paths"]


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_the_authorization_matrix(api, method, path, caller):
    if method != "GET":
        _delete_runs()  # so an allowed refresh always starts a run (201), whatever ran before
    expected = expected_status(method, path, caller)
    assert _call(api, method, path, caller) == expected
    if method != "GET" and expected >= 400:
        assert run_ids(DAG_ID) == [] and not _paused(), "a refused call changed nothing"


@pytest.mark.parametrize(
    ("caller", "token"),
    [
        pytest.param("no token", None, id="no-token"),
        pytest.param("bad token", GARBAGE_TOKEN, id="garbage-token"),
        pytest.param("bad token", "eyJhbGciOiJIUzUxMiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJl", id="forged-jwt"),
    ],
)
def test_a_caller_without_a_valid_token_gets_what_airflows_own_api_answers(api, caller, token):
    core = api.call("GET", "/api/v2/dags", user=None, token=token).status_code
    ours = api.call("GET", f"/tessera/api/v1/dags/{DAG_ID}/plan", user=None, token=token).status_code
    assert ours == core == expected_status("GET", "/api/v1/plan", caller)


WRITES = [(method, path) for method, path in ROUTES if method not in ("GET", "HEAD", "OPTIONS")]


@pytest.mark.parametrize(("method", "path"), WRITES, ids=[f"{m} {p}" for m, p in WRITES])
def test_every_state_changing_route_refuses_a_form_sent_with_the_admins_session_cookie(api, method, path):
    """A form another site auto-submits carries the UI's cookie; only a JSON body may change anything."""
    _delete_runs()
    answer = api.call(
        method,
        "/tessera" + path.format(**PATH_VALUES),
        user=None,
        content=b"conf=%7B%7D",
        headers={"Cookie": f"_token={api.tokens['admin']}", "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.status_code == 415, answer.text
    assert run_ids(DAG_ID) == []
