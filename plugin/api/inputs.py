"""What the tessera API accepts: instants within tessera's supported range, and JSON bodies on writes.

Instants (``after``, ``until``) must carry a timezone and lie in
``1900-01-01T00:00:00Z <= t < 3000-01-01T00:00:00Z``, the range every tessera date
is held to; anything else is a 422 naming the parameter, before a plan is stepped
(a year-1 or year-9999 instant would overflow Python's datetime mid-plan).

A state-changing route takes a JSON object body (``{}``) sent as
``Content-Type: application/json``. That is the API's CSRF defence: the Airflow UI's
session cookie is sent with any request to this origin's host, even one a page on
another port or site makes, but a cross-site HTML form can only send urlencoded,
multipart or text/plain bodies, and a cross-site script that sets
``application/json`` needs a CORS preflight the API server does not grant. So a
request without it is refused (415) before it is authorized to change anything.
"""

from __future__ import annotations

import datetime
import json
from typing import Annotated

from fastapi import Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, ValidationError

from .errors import Unprocessable, UnsupportedMediaType
from .models import RefreshRequest

SUPPORTED_FROM = datetime.datetime(1900, 1, 1, tzinfo=datetime.timezone.utc)
SUPPORTED_UNTIL = datetime.datetime(3000, 1, 1, tzinfo=datetime.timezone.utc)
SUPPORTED_RANGE = "1900-01-01T00:00:00Z <= t < 3000-01-01T00:00:00Z"
JSON_MEDIA_TYPE = "application/json"


def _supported(name: str) -> AfterValidator:
    def check(moment: datetime.datetime | None) -> datetime.datetime | None:
        if moment is None:
            return None
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError(
                f"`{name}`: {moment.isoformat()} has no timezone; give one, e.g. 'Z' or '+01:00' "
                f"(supported: {SUPPORTED_RANGE})"
            )
        # Comparing aware instants subtracts their offsets as timedeltas: no overflow near year 1.
        if not SUPPORTED_FROM <= moment < SUPPORTED_UNTIL:
            raise ValueError(f"`{name}`: {moment.isoformat()} is outside the supported range {SUPPORTED_RANGE}")
        return moment

    return AfterValidator(check)


After = Annotated[
    datetime.datetime | None,
    Query(description=f"List runs that start after this instant (default now); {SUPPORTED_RANGE}, with a timezone."),
    _supported("after"),
]
Until = Annotated[
    datetime.datetime | None,
    Query(description=f"Stop at runs that start after this instant; {SUPPORTED_RANGE}, with a timezone."),
    _supported("until"),
]
Count = Annotated[int, Query(ge=1, le=1000, description="How many upcoming runs per DAG.")]


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def refresh_body(request: Request) -> RefreshRequest:
    """The JSON object body of a refresh; see the module docstring for why it is required.

    A dependency rather than a body parameter, so it runs after authentication and
    authorization (a caller without a token learns nothing about bodies) and before
    Airflow's action logging, which would fail with a 500 on a body that is not JSON.
    """
    given = _media_type(request) or "none"
    if given != JSON_MEDIA_TYPE:
        raise UnsupportedMediaType(
            f"request body: Content-Type {given!r}; send {JSON_MEDIA_TYPE} with a JSON object such as {{}} "
            "(a browser form cannot, which keeps other sites from acting with your session)"
        )
    raw = await request.body()
    try:
        body = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise Unprocessable("request body: not UTF-8; send UTF-8 JSON such as {}") from None
    except ValueError as error:
        what = "empty" if not raw.strip() else f"not valid JSON ({error})"
        raise Unprocessable(f"request body: {what}; send a JSON object such as {{}}") from None
    if not isinstance(body, dict):
        raise Unprocessable(f"request body: a JSON {type(body).__name__}; send a JSON object such as {{}}")
    try:
        return RefreshRequest.model_validate(body)
    except ValidationError as error:
        raise RequestValidationError(
            [{**item, "loc": ("body", *item["loc"])} for item in error.errors(include_url=False)]
        ) from None


REFRESH_BODY_OPENAPI = {
    "requestBody": {
        "required": True,
        "content": {JSON_MEDIA_TYPE: {"schema": RefreshRequest.model_json_schema()}},
    }
}
"""The body :func:`refresh_body` requires, for the OpenAPI document (it is not a body parameter)."""
