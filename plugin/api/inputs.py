"""What the tessera API accepts: instants within tessera's supported range, bounded counts, and JSON bodies.

Instants (``after``, ``until``, ``from_date``, ``to_date``) must carry a timezone and lie in
the range every tessera date is held to (:mod:`tessera.timetables.limits`,
``1900-01-01T00:00:00Z <= t < 3000-01-01T00:00:00Z``); anything else is a 422 naming the
parameter, before a plan is stepped (a year-1 or year-9999 instant would overflow Python's
datetime mid-plan). ``tessera plan`` checks its own options with the same functions, so it
refuses what the API refuses, in the same words.

A route that takes a body reads it with :func:`json_object_body`: a JSON object sent as
``Content-Type: application/json``, bounded as :mod:`tessera.plugin.api.json_body` says.
The media type is the API's CSRF defence: the Airflow UI's session cookie is sent with any
request to this origin's host, even one a page on another port or site makes, but a
cross-site HTML form can only send urlencoded, multipart or text/plain bodies, and a
cross-site script that sets ``application/json`` needs a CORS preflight the API server does
not grant. So a request without it is refused (415) before it is authorized to change anything.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, BeforeValidator, ValidationError
from starlette.requests import ClientDisconnect

from tessera.timetables.limits import SUPPORTED_FROM, SUPPORTED_UNTIL, check_supported_instant

from ..cancellation import Abandoned
from ..errors import Unprocessable, UnsupportedMediaType
from .json_body import MAX_BODY_BYTES, parse_json, read_capped

SUPPORTED_RANGE = f"{SUPPORTED_FROM:%Y-%m-%dT%H:%M:%SZ} <= t < {SUPPORTED_UNTIL:%Y-%m-%dT%H:%M:%SZ}"
JSON_MEDIA_TYPE = "application/json"
MAX_COUNT = 1000
"""The most runs per DAG a plan lists (``count``, ``tessera plan --count``)."""
MAX_FLEET_RUNS = 50_000
"""The most runs the fleet-wide plan lists in one answer (``count`` times the DAGs listed): about two seconds
of the API server's CPU, and the default count (10) for up to 5,000 DAGs. 1,000 runs of each of 1,000 DAGs
took 42 s, and any reader may ask."""
MAX_LANE_RUNS = 3_000_000
"""The most run starts of tessera's timetables one fleet load counts: each is counted from its DAG's lane (a few
periodic segments) by integer arithmetic, about a microsecond a run, where each run of another timetable costs a
question to it (:data:`MAX_FLEET_RUNS` of those). 2,000 DAGs running every minute fit."""
MAX_FLEET_DAGS = 10_000
"""The most DAGs a fleet-wide list (``status``, ``triggers``, ``plan``, ``load``, and the Schedules page, whose
search, filters and counts judge every DAG) reads for one caller: a larger fleet is read one DAG at a time."""
PAGE_ROWS = 1000
"""The most rows one answer of ``GET /api/v1/page`` holds, and how many unless the caller asks for fewer: only
their next runs and lanes are computed (the status of every matching DAG is judged for the filters and counts)."""
MAX_PAGE_OFFSET = 1_000_000
"""Where a page may start at most (past the last row the answer is empty)."""

Model = TypeVar("Model", bound=BaseModel)


def supported_instant(name: str, moment: datetime.datetime) -> datetime.datetime:
    """``moment`` if it has a timezone and lies in the supported range, else a ``ValueError`` naming ``name``."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(
            f"`{name}`: {moment.isoformat()} has no timezone; give one, e.g. 'Z' or '+01:00' "
            f"(supported: {SUPPORTED_RANGE})"
        )
    check_supported_instant(f"`{name}`", moment)
    return moment


_ISO_DATE_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ]")


def _iso(name: str) -> BeforeValidator:
    """Only ISO 8601 text: pydantic would also read ``12345`` as seconds since 1970, which the document does not say."""

    def check(value: Any) -> Any:
        if isinstance(value, str) and not _ISO_DATE_TIME.match(value):
            shown = ascii(value if len(value) <= 40 else value[:40] + "...")
            raise ValueError(f"`{name}`: {shown} is not an ISO 8601 instant; give one such as 2026-03-02T12:00:00Z")
        return value

    return BeforeValidator(check)


def _supported(name: str) -> AfterValidator:
    def check(moment: datetime.datetime | None) -> datetime.datetime | None:
        return None if moment is None else supported_instant(name, moment)

    return AfterValidator(check)


After = Annotated[
    datetime.datetime | None,
    Query(description=f"List runs that start after this instant (default now); {SUPPORTED_RANGE}, with a timezone."),
    _iso("after"),
    _supported("after"),
]
Until = Annotated[
    datetime.datetime | None,
    Query(description=f"Stop at runs that start after this instant; {SUPPORTED_RANGE}, with a timezone."),
    _iso("until"),
    _supported("until"),
]
At = Annotated[
    datetime.datetime | None,
    Query(description=f"The instant asked about (default now); {SUPPORTED_RANGE}, with a timezone."),
    _iso("at"),
    _supported("at"),
]
PageLimit = Annotated[int, Query(ge=1, le=PAGE_ROWS, description=f"How many rows at most (1 to {PAGE_ROWS}).")]
PageOffset = Annotated[
    int, Query(ge=0, le=MAX_PAGE_OFFSET, description=f"Skip this many rows first (0 to {MAX_PAGE_OFFSET:,}).")
]
Count = Annotated[int, Query(ge=1, le=MAX_COUNT, description=f"How many upcoming runs per DAG (1 to {MAX_COUNT}).")]
FromDate = Annotated[
    datetime.datetime,
    Query(description=f"As `--from-date`; {SUPPORTED_RANGE}, with a timezone."),
    _iso("from_date"),
    _supported("from_date"),
]
ToDate = Annotated[
    datetime.datetime,
    Query(description=f"As `--to-date`; {SUPPORTED_RANGE}, with a timezone."),
    _iso("to_date"),
    _supported("to_date"),
]
ReprocessBehavior = Annotated[
    Literal["none", "failed", "completed"],
    Query(description="As `--reprocess-behavior`: which runs that already exist a backfill runs again."),
]


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def json_object_body(model: type[Model]) -> Callable[[Request], Awaitable[Model]]:
    """A dependency reading the route's body as ``model``: a JSON object, bounded (see the module docstring).

    A dependency rather than a body parameter, so it runs after authentication and
    authorization (a caller without a token learns nothing about bodies) and before
    Airflow's action logging, which would fail with a 500 on a body that is not JSON.
    """

    async def read(request: Request) -> Model:
        given = _media_type(request) or "none"
        if given != JSON_MEDIA_TYPE:
            raise UnsupportedMediaType(
                f"request body: Content-Type {ascii(given[:60])}; send {JSON_MEDIA_TYPE} with a JSON object such "
                "as {} (a browser form cannot, which keeps other sites from acting with your session)"
            )
        try:
            raw = await read_capped(request.stream(), request.headers.get("content-length"))
        except ClientDisconnect:  # the sender left mid-body: nothing to answer, nothing went wrong here
            raise Abandoned("the caller left while sending the body") from None
        request._body = raw  # what Starlette's request.body() returns from now on (Airflow's action log reads it)
        body = parse_json(raw)
        if not isinstance(body, dict):
            raise Unprocessable(f"request body: a JSON {_json_type(body)}; send a JSON object such as {{}}")
        try:
            return model.model_validate(body)
        except ValidationError as error:
            raise RequestValidationError(
                [{**item, "loc": ("body", *item["loc"])} for item in error.errors(include_url=False)]
            ) from None

    return read


def _json_type(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def body_openapi(model: type[BaseModel]) -> dict[str, Any]:
    """The body :func:`json_object_body` requires, for the OpenAPI document (it is not a body parameter)."""
    schema = model.model_json_schema()
    return {
        "requestBody": {
            "required": True,
            "content": {JSON_MEDIA_TYPE: {"schema": schema}},
            "description": f"A JSON object of at most {MAX_BODY_BYTES} bytes.",
        }
    }


def fleet_count(count: int, dags: int) -> int:
    """``count`` if ``count`` runs of each of ``dags`` DAGs stay within :data:`MAX_FLEET_RUNS`, else a refusal."""
    if count * dags > MAX_FLEET_RUNS:
        most = max(1, MAX_FLEET_RUNS // max(dags, 1))
        raise Unprocessable(
            f"count: {count} runs of each of {dags} DAGs is {count * dags:,} runs; the plan of every DAG lists at "
            f"most {MAX_FLEET_RUNS:,}: ask for count={most} or less, or for one DAG's plan "
            f"(/api/v1/dags/{{dag_id}}/plan takes count up to {MAX_COUNT})"
        )
    return count
