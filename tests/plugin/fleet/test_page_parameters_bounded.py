"""Every parameter the Schedules page's data call takes is bounded: a value out of bounds is a 422 naming it.

The parameters are read from the app's own OpenAPI document (what ``/tessera/openapi.json`` serves),
so a parameter added to ``GET /api/v1/page`` without a bound fails here until it is given one and
its out-of-bounds value below; each is then sent through Airflow's API app, and must be refused
(422, never a 500), the refusal naming the parameter.
"""

from __future__ import annotations

import pytest

from tessera.plugin.api.app import create_app

from ..api.test_api_app import api  # noqa: F401 - the fixture

OUT_OF_BOUNDS = {
    "offset": ["-1", "1000001"],
    "limit": ["0", "1001"],
    "search": ["s" * 251],
    "tag": ["t" * 101, "", *(["a"] * 11)],
    "filter": ["late-ish"],
    "sort": ["random"],
}
"""Per parameter, values it must refuse (a list under ``tag`` with 11 items: one request of 11 tags)."""


def _page_parameters() -> set[str]:
    operation = create_app().openapi()["paths"]["/api/v1/page"]["get"]
    return {parameter["name"] for parameter in operation.get("parameters", []) if parameter["in"] == "query"}


def test_every_parameter_of_the_page_has_a_bound_given_here():
    unbounded = _page_parameters() - set(OUT_OF_BOUNDS)
    assert not unbounded, f"GET /api/v1/page takes {sorted(unbounded)} with no out-of-bounds value in OUT_OF_BOUNDS"


def _requests() -> list[tuple[str, str]]:
    cases = []
    for name, values in OUT_OF_BOUNDS.items():
        if name == "tag":
            cases += [(name, f"tag={values[0]}"), (name, "tag="), (name, "&".join(f"tag={v}" for v in values[2:]))]
        else:
            cases += [(name, f"{name}={value}") for value in values]
    return cases


@pytest.mark.parametrize(("name", "query"), _requests(), ids=[q[:30] for _, q in _requests()])
def test_a_value_out_of_bounds_is_a_422_naming_the_parameter(api, name, query):  # noqa: F811
    answer = api.call("GET", f"/tessera/api/v1/page?{query}", user="viewer")
    assert answer.status_code == 422, (query, answer.status_code, answer.text[:300])
    assert f"`{name}`" in answer.text or f'"{name}"' in answer.text, answer.text[:300]
