"""The refusals each route may answer, for the OpenAPI document: the status codes and the ``{"detail": ...}`` body.

Every refusal has the body FastAPI gives its own errors: ``{"detail": "<what and how to fix it>"}``,
or, for a request that does not match the route's parameters, ``{"detail": [<one item per
problem>]}``. Documenting each route's codes is what lets a client (and the schema fuzz in
``tests/plugin/api/test_api_schema_fuzz.py``) tell a refusal the API means from a bug.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ParameterProblem(BaseModel):
    loc: list[str | int] = Field(description="Where: the parameter's place and name, e.g. ['query', 'count'].")
    msg: str
    type: str
    input: Any = None
    ctx: dict[str, Any] | None = None


class Refusal(BaseModel):
    detail: str | list[ParameterProblem] = Field(description="What was refused and how to fix it.")


_MEANING = {
    400: "The DAG cannot do what was asked as it is stored, or the range asks for more than a preview lists.",
    401: "No credential: sign in to Airflow or send a bearer token.",
    403: "The token is not valid, or the user may not do this to this DAG.",
    404: "No such tessera-scheduled DAG (or file of the page).",
    409: "The DAG's state forbids it (paused).",
    413: "The body is larger than any route reads.",
    415: "The body is not application/json (e.g. a form posted from another site).",
    422: "A parameter or the body is not what the route takes, or asks for more work than the route's budget; "
    "the detail names it (and the largest value that fits).",
    503: "The database stayed busy; retry.",
}


def refusals(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` entries of ``codes``."""
    return {code: {"model": Refusal, "description": _MEANING[code]} for code in codes}


SIGNED_IN = refusals(401, 403, 422)
"""What any route may refuse: no credential, a bad one or no permission, parameters it does not take."""
