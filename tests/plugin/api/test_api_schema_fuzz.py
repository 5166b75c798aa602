"""The REST API fuzzed from its own OpenAPI document with schemathesis: no 5xx, every answer as documented.

The document is the one the API serves (``GET /tessera/openapi.json``). Schemathesis generates
requests for every operation from it, valid and invalid ones, and each generated request is
sent three times: with no credential, with a viewer's token and with an admin's, so the
refusals of authentication and authorization are fuzzed too. The hostile bodies and ranges the
outside fuzz found are sent as explicit examples through the same checks.

Where the requests go: Airflow's own API app (``create_app(apps="core")``) in-process, with the
tessera app mounted at ``/tessera`` exactly as the API server mounts it, Airflow's simple auth
manager and the real SQLite metadata DB (``test_api_app.airflow_api``); a live ``airflow
api-server`` answers the same app, but would make this tier minutes slower.

Checks on every answer: not a server error, a documented status code, the documented content
type, headers and body schema, invalid input rejected with a 4xx, and an answer within
:data:`ANSWER_SECONDS` of CPU. Example counts are bounded (and derandomized under ``CI=true``, see
``tests/conftest.py``); the counts of the run are printed at the end of the module.
"""

from __future__ import annotations

import collections
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from ...fuzz_depth import cases
from .test_api_app import DAG_FILE, Api, airflow_api, store_dags

BASE = "http://testserver/tessera"
ANSWER_SECONDS = 10.0
"""Every call answers within this much of this process's CPU (a preview gives up after 3 s; the rest answer in
milliseconds). CPU, not the wall clock: the app runs in this process, and on a machine busy with other work (a
parallel test run) a wall-clock bound fails a request that did no more work than usual."""
EXAMPLES_PER_OPERATION = cases(deep=100)
FEWER_EXAMPLES = {"/api/v1/load": cases(deep=25, least=5), "/api/v1/migrate": cases(deep=25, least=5)}
"""Operations with little to vary (``load`` takes one boolean) and a costly answer: it counts the next 24 hours of
runs of every DAG stored in the worker's database, other modules' included (about 0.5 s a call with some 80 DAGs
there, some every second). The draws beyond a few repeat the same requests."""
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
CALLERS = (None, "viewer", "admin")
"""No credential, the least-trusted user that may read, and one that may do everything."""
TESSERA_DAGS = ("fuzz_every_5m", "fuzz_paused")
PARTITIONED = "fuzz_partitioned"
PARTITIONED_FILE = """
from airflow.sdk import DAG
from tessera.timetables import Every

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=Every("1h", delay="5m", partitioned=True), start_date=None):
        pass
"""

RUN: dict[str, collections.Counter] = {"operations": collections.Counter(), "statuses": collections.Counter()}
"""What the run sent and got, printed at the end of the module."""


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    folder = tmp_path_factory.mktemp("tessera-fuzz")
    store_dags(folder, DAG_FILE, TESSERA_DAGS)
    store_dags(folder, PARTITIONED_FILE, (PARTITIONED,))
    with create_session() as session:
        session.get(DagModel, "fuzz_paused").is_paused = True
    with airflow_api(folder) as api:
        yield api
    operations, statuses = RUN["operations"], RUN["statuses"]
    print(
        f"\nschema fuzz: {len(operations)} operations, {sum(operations.values())} requests; "
        f"statuses {dict(sorted(statuses.items()))}; per operation {dict(sorted(operations.items()))}"
    )


@pytest.fixture(scope="module")
def tessera_schema(api: Api) -> Any:
    answer = api.call("GET", "/tessera/openapi.json", user="viewer")
    assert answer.status_code == 200, answer.text
    return schemathesis.openapi.from_dict(answer.json())


OPERATIONS = [
    ("GET", "/api/v1/plan"),
    ("GET", "/api/v1/dags/{dag_id}/plan"),
    ("GET", "/api/v1/status"),
    ("GET", "/api/v1/dags/{dag_id}/status"),
    ("POST", "/api/v1/dags/{dag_id}/refresh"),
    ("GET", "/api/v1/dags/{dag_id}/refresh"),
    ("GET", "/api/v1/load"),
    ("GET", "/api/v1/migrate"),
    ("GET", "/api/v1/dags/{dag_id}/backfill-preview"),
    ("GET", "/api/v1/triggers"),
    ("GET", "/api/v1/page"),
    ("GET", "/api/v1/dags/{dag_id}/why"),
    ("POST", "/api/v1/dags/{dag_id}/pause"),
    ("POST", "/api/v1/dags/{dag_id}/unpause"),
]
"""Every operation of the document (the first test fails when one is added without being listed here)."""


def send(api: Api, case: Any, caller: str | None, *, content: bytes | None = None) -> Any:
    """Send ``case`` as ``caller`` through Airflow's app; check the answer and its time; count it."""
    kwargs = case.as_transport_kwargs(base_url=BASE)
    headers = dict(kwargs.get("headers") or {})
    headers.pop("Authorization", None)
    request: dict[str, Any] = {"params": kwargs.get("params"), "cookies": kwargs.get("cookies")}
    if content is not None:
        request["content"] = content
    elif "json" in kwargs:
        request["json"] = kwargs["json"]
    elif kwargs.get("data") is not None:
        data = kwargs["data"]
        request["content"] = data.encode() if isinstance(data, str) else data
    started = time.process_time()
    response = api.call(kwargs["method"], kwargs["url"].removeprefix("http://testserver"), user=caller,
                        headers=headers, **request)  # fmt: skip
    elapsed = time.process_time() - started
    operation = f"{case.operation.method.upper()} {case.operation.path}"
    RUN["operations"][operation] += 1
    RUN["statuses"][response.status_code] += 1
    try:
        case.validate_response(response, checks=CHECKS, headers=headers)
    except FailureGroup as failures:  # a BaseException: made an assertion, so Hypothesis shrinks and reports it
        found = "\n".join(str(failure) for failure in failures.exceptions)
        raise AssertionError(f"{operation} as {caller or 'no one'}:\n{found}") from None
    assert elapsed < ANSWER_SECONDS, f"{operation} as {caller} took {elapsed:.1f} s of CPU"
    if reaches_tessera(kwargs["url"]):
        assert response.headers["x-frame-options"] == "SAMEORIGIN"
        if caller is None:
            assert response.status_code == 401, response.text[:300]
    return response


def reaches_tessera(url: str) -> bool:
    """Whether Airflow routes a request for ``url`` to the tessera app at all.

    Starlette matches a mount with ``^/tessera/(?P<path>.*)$``, and ``.`` stops at a line break:
    a path holding one (``%0A``) is answered by Airflow's own app (a 404), never by tessera's.
    """
    return "\n" not in urllib.parse.unquote(urllib.parse.urlsplit(url).path)


def test_the_fuzz_covers_every_operation_of_the_document(tessera_schema):
    documented = sorted((method.upper(), path) for path, item in tessera_schema.raw_schema["paths"].items()
                        for method in item)  # fmt: skip
    assert documented == sorted(OPERATIONS)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_every_operation_answers_as_documented_whoever_calls(api, tessera_schema, method, path, mode):
    """Schemathesis's cases for one operation, valid (positive) or invalid (negative), each sent as every caller."""
    strategy = tessera_schema[path][method].as_strategy(generation_mode=mode)

    @settings(
        max_examples=FEWER_EXAMPLES.get(path, EXAMPLES_PER_OPERATION),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(case=strategy)
    def every_caller(case: Any) -> None:
        for caller in CALLERS:
            send(api, case, caller)

    every_caller()


DAG_OPERATIONS = [(method, path) for method, path in OPERATIONS if "{dag_id}" in path]


@pytest.mark.parametrize(("method", "path"), DAG_OPERATIONS, ids=[f"{m} {p}" for m, p in DAG_OPERATIONS])
def test_every_operation_on_a_dag_that_exists_answers_as_documented(api, tessera_schema, method, path):
    """The same, with ``dag_id`` one of the stored DAGs, so the answers past the 404 are fuzzed too."""
    operation = tessera_schema[path][method]
    strategy = st.one_of(
        *(operation.as_strategy(path_parameters={"dag_id": dag_id}) for dag_id in (*TESSERA_DAGS, PARTITIONED))
    )

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(case=strategy)
    def every_caller(case: Any) -> None:
        for caller in CALLERS:
            send(api, case, caller)

    every_caller()


# -- the outside fuzz's findings, as explicit examples -------------------------------------------------

HOSTILE_BODIES = [
    pytest.param(b'{"a": NaN}', id="nan"),
    pytest.param(b'{"a": Infinity}', id="infinity"),
    pytest.param(b"[" * 100_000, id="100k-open-brackets"),
    pytest.param(b'{"a":' * 10_000, id="10k-nested-objects"),
    pytest.param(b'{"\\ud800": 1}', id="lone-surrogate"),
    pytest.param(b"\xed\xa0\x80", id="surrogate-bytes"),
    pytest.param(b"", id="empty"),
]


@pytest.mark.parametrize("body", HOSTILE_BODIES)
@pytest.mark.parametrize("dag_id", [TESSERA_DAGS[0], "fuzz_no_such_dag"])
@pytest.mark.parametrize("write", ["refresh", "pause"])
def test_hostile_write_bodies_are_refused_as_documented(api, tessera_schema, body, dag_id, write):
    operation = tessera_schema[f"/api/v1/dags/{{dag_id}}/{write}"]["POST"]
    case = operation.Case(path_parameters={"dag_id": dag_id}, body={}, media_type="application/json")
    for caller in CALLERS:
        answer = send(api, case, caller, content=body)
        assert 400 <= answer.status_code < 500, answer.text[:300]


HOSTILE_RANGES = [
    pytest.param(PARTITIONED, "0001-01-01T00:00:00Z", "0001-01-01T01:00:00Z", id="partitioned-year-1"),
    pytest.param(TESSERA_DAGS[0], "1970-01-01T00:00:00Z", "2026-01-01T00:00:00Z", id="1970-to-2026"),
    pytest.param(TESSERA_DAGS[0], "1900-01-01T00:00:00Z", "2999-12-31T23:59:59Z", id="1900-to-2999"),
    pytest.param(TESSERA_DAGS[0], "9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z", id="year-9999"),
]


@pytest.mark.parametrize(("dag_id", "from_date", "to_date"), HOSTILE_RANGES)
def test_hostile_backfill_preview_ranges_are_refused_as_documented(api, tessera_schema, dag_id, from_date, to_date):
    operation = tessera_schema["/api/v1/dags/{dag_id}/backfill-preview"]["GET"]
    query = {"from_date": from_date, "to_date": to_date}
    case = operation.Case(path_parameters={"dag_id": dag_id}, query=query)
    for caller in CALLERS:
        answer = send(api, case, caller)
        assert 400 <= answer.status_code < 500, answer.text[:300]
