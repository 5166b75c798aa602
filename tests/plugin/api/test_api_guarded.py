"""Every route of the tessera app is declared through the one mechanism: DAG scope, work budget, cancellation.

The routes are derived from the app itself, as ``test_api_authz.py`` derives them: every operation
of its OpenAPI document (what ``/tessera/openapi.json`` serves) plus the Schedules page's routes,
which the document leaves out. A route added any other way than
:func:`tessera.plugin.api.routes.guarded.route` fails here, naming the route and what it lacks.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import APIRouter
from fastapi.routing import APIRoute

from tessera.plugin.api.app import create_app
from tessera.plugin.api.routes import access
from tessera.plugin.api.routes.guarded import (
    BUDGET,
    CANCEL,
    CANCELLATION,
    NO_DAG_DATA,
    SCOPE,
    Budget,
    GuardedRoute,
    guarded_router,
    route,
)
from tessera.plugin.api.routes.why import read_audit_log

AUTHORIZATIONS = {
    depends.dependency
    for depends in (
        access.read_dag,
        access.read_runs,
        access.trigger_runs,
        access.pause_dags,
        access.authenticated,
        read_audit_log,
    )
}
"""The calls that authorize a caller: Airflow's own ``requires_access_dag`` and ``requires_authenticated``."""


def _operations() -> list[tuple[str, str, APIRoute | Any, dict[str, Any]]]:
    """Every (method, path) of the document and the page, with its route and its operation's facts."""
    app = create_app()
    paths = app.openapi()["paths"]
    found = []
    for candidate in app.routes:
        if not isinstance(candidate, APIRoute):
            continue
        for method in sorted(candidate.methods):
            documented = paths.get(candidate.path, {}).get(method.lower())
            facts = documented if documented is not None else (candidate.openapi_extra or {})
            found.append((method, candidate.path, candidate, facts))
    documented = {(method.upper(), path) for path, operations in paths.items() for method in operations}
    assert documented <= {(method, path) for method, path, _, _ in found}
    return found


OPERATIONS = _operations()


def _calls(dependant: Any) -> list[Any]:
    """Every dependency's call of a route, depth first, in the order FastAPI runs them."""
    found = []
    for dependency in dependant.dependencies:
        found.extend(_calls(dependency))
        found.append(dependency.call)
    return found


def lacks(method: str, path: str, candidate: Any, facts: dict[str, Any]) -> list[str]:
    """What the operation lacks of the three guards (empty when it has them all)."""
    missing = []
    if not isinstance(candidate, GuardedRoute):
        missing.append(f"cancellation ({type(candidate).__name__}, not a GuardedRoute)")
    if facts.get(CANCEL) != CANCELLATION:
        missing.append(f"the {CANCEL} declaration")
    scope = facts.get(SCOPE) or {}
    calls = _calls(candidate.dependant)
    authorizations = [call for call in calls if call in AUTHORIZATIONS]
    if scope.get("kind") not in ("dag", "readable", "none"):
        missing.append(f"a DAG scope ({SCOPE})")
    elif not authorizations:
        missing.append("a dependency authorizing the caller")
    elif scope["kind"] == "dag" and "{dag_id}" not in path:
        missing.append("the path's dag_id its scope authorizes")
    budget = facts.get(BUDGET) or {}
    if not (isinstance(budget.get("most"), int) and budget["most"] > 0 and budget.get("unit")):
        missing.append(f"a work budget ({BUDGET}: unit and most)")
    else:
        checked = budget.get("checked")
        if checked == "parameter":  # FastAPI refuses the parameter above `most`, naming it and its maximum
            name = budget.get("parameter")
            schemas = [p["schema"] for p in facts.get("parameters", []) if p["name"] == name]
            if [schema.get("maximum") for schema in schemas] != [budget["most"]]:
                missing.append(f"the budget's parameter `{name}` bounded by {budget['most']}")
        elif checked == "estimate":  # a check dependency, run after authorization
            checks = [call for call in calls if getattr(call, "__module__", "").endswith(".routes.costs")]
            if not checks:
                missing.append("the budget's check among the route's dependencies")
            elif authorizations and calls.index(checks[0]) < calls.index(authorizations[0]):
                missing.append("the budget's check after authorization")
        elif checked not in ("fixed", "while working") or not budget.get("how"):
            missing.append(f"how the budget is checked ({checked!r})")
    return missing


@pytest.mark.parametrize(
    ("method", "path", "candidate", "facts"), OPERATIONS, ids=[f"{m} {p}" for m, p, _, _ in OPERATIONS]
)
def test_every_operation_has_its_scope_budget_and_cancellation(method, path, candidate, facts):
    missing = lacks(method, path, candidate, facts)
    assert not missing, f"{method} {path} lacks {'; '.join(missing)}: declare it with routes.guarded.route"


def test_the_walk_sees_every_route_of_the_document_and_the_page():
    routes = {(method, path) for method, path, _, _ in OPERATIONS}
    assert {("GET", "/openapi.json"), ("GET", "/ui/{name}"), ("GET", "/api/v1/load")} <= routes
    assert len(routes) == 17


def test_a_route_declared_with_a_bare_decorator_lacks_all_three():
    """What the test above says of a route added without the mechanism (on a plain FastAPI router)."""
    bare = APIRouter()

    @bare.get("/api/v1/dags/{dag_id}/planted")
    def planted(dag_id: str) -> dict[str, str]:
        return {"dag_id": dag_id}

    (candidate,) = bare.routes
    assert lacks("GET", candidate.path, candidate, {}) == [
        "cancellation (APIRoute, not a GuardedRoute)",
        f"the {CANCEL} declaration",
        f"a DAG scope ({SCOPE})",
        f"a work budget ({BUDGET}: unit and most)",
    ]


def test_a_guarded_router_refuses_a_route_declared_without_the_mechanism():
    router = guarded_router()
    with pytest.raises(TypeError, match="declared without x-tessera-scope, x-tessera-budget, x-tessera-cancel"):

        @router.get("/planted")
        def planted() -> None:
            return None

    @route(router, "GET", "/declared", scope=NO_DAG_DATA, budget=Budget.fixed("files", 1, "one file"))
    def declared() -> None:
        return None

    assert isinstance(router.routes[-1], GuardedRoute)


def test_the_document_names_the_prefix_the_api_server_adds():
    """A client generated from the document must call /tessera/api/v1/..., not /api/v1/...."""
    from tessera.plugin.api.app import create_app
    from tessera.plugin.api.mount import URL_PREFIX

    assert [server["url"] for server in create_app().openapi()["servers"]] == [URL_PREFIX] == ["/tessera"]
