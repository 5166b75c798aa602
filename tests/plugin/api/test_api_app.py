"""The tessera app in-process, mounted in Airflow's own API app, on the real SQLite metadata DB.

Airflow's ``create_app`` mounts every plugin app exactly as the API server does, with
the simple auth manager and the users below; tokens come from Airflow's own
``POST /auth/token``. This tier is where requests that once answered 500 are pinned:
out-of-range instants, malformed bodies, and a DAG whose plan cannot be computed.
``test_api_authz.py`` reuses the same app for its route × role matrix.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import json
import textwrap
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROLES = ("viewer", "user", "op", "admin")
"""Airflow's simple auth manager roles; each test user is named after its role."""
PASSWORDS = {role: f"{role}-pw" for role in ROLES}
HEALTHY = ("app_healthy_a", "app_healthy_b")
UNREADABLE = "app_timetable_unreadable"
"""Its stored timetable no longer deserializes (a 7-minute interval, refused since it was stored)."""
UNPLANNABLE = "app_plan_overflows"
"""Its stored start date is minutes before the year 10000: asking for its next runs overflows."""
DAG_FILE = """
from airflow.sdk import DAG, task
from tessera.timetables import Every, Fixed

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=Every("5m", delay="30s", phase=Fixed("2m10s")), start_date=None):
        @task
        def work():
            pass
        work()
"""
UNREADABLE_PIPELINE = "app_pipeline_unreadable"
"""A declared schedule's pipeline whose stored timetable is of a class no plugin registers."""
DECLARED_FILE = """
from airflow.sdk import DAG, task
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

SCHEDULES = ScheduleSet([Schedule("app_pipeline", interval_seconds=3600)])
with DAG({dag_ids[0]!r}, start_date=None, **SCHEDULES.dag_kwargs("app_pipeline")):
    @task
    def work():
        pass
    work()
"""


@dataclass
class Api:
    """A client of Airflow's API app with the tessera app mounted at ``/tessera``.

    ``client`` is the app's ``TestClient`` (its event loop, in a thread of its own, runs the app's
    lifespan); a request goes through ``requests``, an ``httpx.AsyncClient`` calling the same app on
    that loop, when there is one. Starlette's client passes each ASGI message of a request between the
    test's thread and the loop's (about ten hand-overs), which cost some 3 ms of CPU a request: more
    than an answer of a refusal costs the app. The app sees the same request either way.
    """

    client: Any
    tokens: dict[str, str] = field(default_factory=dict)
    requests: Any = None

    def call(
        self,
        method: str,
        path: str,
        *,
        user: str | None = "admin",
        token: str | None = None,
        json_body: Any = None,
        **kwargs: Any,
    ) -> Any:
        headers = dict(kwargs.pop("headers", {}))
        if token is None and user is not None:
            token = self.tokens[user]
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if json_body is not None:
            kwargs["json"] = json_body
        if self.requests is None:
            return self.client.request(method, path, headers=headers, **kwargs)
        content = kwargs.get("content")
        if content is not None and not isinstance(content, (bytes, str)):
            kwargs["content"] = _chunks(content)  # an async client streams only an async iterable
        send = functools.partial(self.requests.request, method, path, headers=headers, **kwargs)
        return self.client.portal.call(send)


async def _chunks(content: Iterable[bytes]) -> AsyncIterator[bytes]:
    for chunk in content:
        yield chunk


def store_dags(folder: Path, source: str, dag_ids: tuple[str, ...]) -> None:
    """Parse ``source`` (formatted with ``dag_ids``) and store its DAGs unpaused, as the dag-processor would."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    from tests.compat.airflow_names import DagBag, sync_bag_to_db

    path = folder / f"{dag_ids[0]}.py"
    path.write_text(textwrap.dedent(source.format(dag_ids=list(dag_ids))))
    DagBundlesManager().sync_bundles_to_db()
    sync_bag_to_db(DagBag(str(path)), "dags-folder", None)
    with create_session() as session:
        for dag_id in dag_ids:
            session.get(DagModel, dag_id).is_paused = False


def forget_dags(prefix: str) -> None:
    """Delete every row of the DAGs whose id starts with ``prefix``, as ``airflow dags delete`` would, log kept.

    For a module that stored many DAGs in the worker's database: the page, plan and load calls of the
    tests that run after it on that worker would otherwise read them all.
    """
    from airflow.models import DagRun, TaskInstance
    from airflow.models.dag import DagModel
    from airflow.utils.db import get_sqla_model_classes
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    # Task instances and runs first: DagVersion and Backfill rows are referred to from them.
    rest = [model for model in get_sqla_model_classes() if model.__name__ not in ("TaskInstance", "DagRun")]
    models = [TaskInstance, DagRun, *rest]
    with create_session() as session:
        for model in models:
            if hasattr(model, "dag_id") and model.__name__ != "Log" and model is not DagModel:
                session.execute(delete(model).where(model.dag_id.startswith(prefix, autoescape=True)))
        session.execute(delete(DagModel).where(DagModel.dag_id.startswith(prefix, autoescape=True)))


def rewrite_serialized(dag_id: str, change: Any) -> None:
    """Edit a stored serialized DAG in place, as an older tessera or a hand-edited row would have left it."""
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        row = session.scalar(select(SerializedDagModel).where(SerializedDagModel.dag_id == dag_id))
        data = json.loads(json.dumps(row.data))
        change(data["dag"])
        row._data = data


def _seven_minutes(dag: dict[str, Any]) -> None:
    dag["timetable"]["__var"]["interval_us"] = 7 * 60 * 1_000_000


def _unregistered_timetable(dag: dict[str, Any]) -> None:
    dag["timetable"]["__type"] = "tessera.timetables.gone.Gone"


def _start_before_year_10000(dag: dict[str, Any]) -> None:
    end_of_9999 = datetime.datetime(9999, 12, 31, 23, 50, tzinfo=datetime.timezone.utc)
    dag["start_date"] = end_of_9999.timestamp()


@contextlib.contextmanager
def airflow_api(folder: Path) -> Iterator[Api]:
    """Airflow's API app (core) with the users viewer, user, op and admin, and a token for each."""
    import httpx
    from airflow.api_fastapi.app import create_app, purge_cached_app
    from fastapi.testclient import TestClient

    passwords = folder / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS", ",".join(f"{role}:{role}" for role in ROLES))
        env.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE", str(passwords))
        env.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS", "False")
        env.setenv("AIRFLOW__API_AUTH__JWT_SECRET", "tessera-app-test-" + "s" * 64)
        purge_cached_app()
        try:
            app = create_app(apps="core")
            with TestClient(app, raise_server_exceptions=False) as client:
                # As the TestClient calls the app: its client address, user agent and redirects followed.
                transport = httpx.ASGITransport(app=app, raise_app_exceptions=False, client=("testclient", 50000))
                requests = httpx.AsyncClient(
                    transport=transport,
                    base_url="http://testserver",
                    headers={"user-agent": "testclient"},
                    follow_redirects=True,
                )
                api = Api(client, requests=requests)
                try:
                    for role in ROLES:
                        body = {"username": role, "password": PASSWORDS[role]}
                        answer = api.call("POST", "/auth/token", user=None, json_body=body)
                        assert answer.status_code == 201, answer.text
                        api.tokens[role] = answer.json()["access_token"]
                    yield api
                finally:
                    client.portal.call(requests.aclose)
        finally:
            purge_cached_app()


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-app")
    store_dags(folder, DAG_FILE, (*HEALTHY, UNREADABLE, UNPLANNABLE))
    store_dags(folder, DECLARED_FILE, (UNREADABLE_PIPELINE,))
    rewrite_serialized(UNREADABLE, _seven_minutes)
    rewrite_serialized(UNPLANNABLE, _start_before_year_10000)
    rewrite_serialized(UNREADABLE_PIPELINE, _unregistered_timetable)
    with airflow_api(folder) as api:
        yield api


def _detail(answer: Any) -> str:
    return json.dumps(answer.json()["detail"])


# -- after / until: only instants tessera supports ------------------------------------------------

PLAN_ROUTES = ("/tessera/api/v1/plan", f"/tessera/api/v1/dags/{HEALTHY[0]}/plan")
OUT_OF_RANGE = [
    pytest.param("after", "0001-01-01T00:00:00Z", id="after-year-1"),
    pytest.param("after", "9999-12-31T23:59:59Z", id="after-year-9999"),
    pytest.param("after", "1899-12-31T23:59:59Z", id="after-just-before-1900"),
    pytest.param("after", "3000-01-01T00:00:00Z", id="after-exactly-3000"),
    pytest.param("until", "0001-01-01T00:00:00Z", id="until-year-1"),
    pytest.param("until", "9999-12-31T23:59:59Z", id="until-year-9999"),
    pytest.param("after", "2026-03-02T12:00:00", id="after-naive"),
    pytest.param("until", "2026-03-02T12:00:00", id="until-naive"),
]


@pytest.mark.parametrize("route", PLAN_ROUTES, ids=["all", "one"])
@pytest.mark.parametrize(("name", "value"), OUT_OF_RANGE)
def test_an_instant_tessera_does_not_support_is_a_422_naming_the_parameter_and_the_range(api, route, name, value):
    answer = api.call("GET", route, user="viewer", params={name: value})
    assert answer.status_code == 422, answer.text
    detail = _detail(answer)
    assert f"`{name}`" in detail
    assert "1900-01-01T00:00:00" in detail and "3000-01-01T00:00:00" in detail


@pytest.mark.parametrize(("name", "value"), [("after", "1700000000"), ("until", "-171300594584"), ("after", "now")])
def test_an_instant_that_is_not_iso_8601_text_is_a_422_even_if_pydantic_could_read_it(api, name, value):
    """The document says date-time; pydantic alone would take a number as seconds since 1970."""
    answer = api.call("GET", PLAN_ROUTES[0], user="viewer", params={name: value})
    assert answer.status_code == 422, answer.text
    assert f"`{name}`: '{value}' is not an ISO 8601 instant; give one such as 2026-03-02T12:00:00Z" in _detail(answer)


@pytest.mark.parametrize(
    ("after", "until"),
    [
        pytest.param("1900-01-01T00:00:00Z", None, id="the-first-supported-instant"),
        pytest.param("2999-12-31T23:00:00Z", "2999-12-31T23:59:59.999999Z", id="the-last-hour"),
        pytest.param("2026-03-02T13:03:00+01:00", None, id="any-offset"),
    ],
)
def test_the_supported_range_is_served(api, after, until):
    params = {"after": after, "count": 2} | ({} if until is None else {"until": until})
    answer = api.call("GET", f"/tessera/api/v1/dags/{HEALTHY[0]}/plan", user="viewer", params=params)
    assert answer.status_code == 200, answer.text
    assert answer.json()["error"] is None
    assert answer.json()["occurrences"], "a 5-minute schedule has runs in any hour"


# -- refresh: a JSON object body, never a form ----------------------------------------------------


def run_ids(dag_id: str) -> list[str]:
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return list(session.scalars(select(DagRun.run_id).where(DagRun.dag_id == dag_id)))


REFRESH = f"/tessera/api/v1/dags/{HEALTHY[1]}/refresh"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{", id="truncated-object"),
        pytest.param(b"not json", id="not-json"),
        pytest.param(b'{"a": 1', id="unterminated"),
        pytest.param(b"\xff\xfe{}", id="not-utf8"),
    ],
)
def test_a_malformed_json_body_is_a_422_that_says_so(api, body):
    before = run_ids(HEALTHY[1])  # another test's refresh may have left a run
    answer = api.call("POST", REFRESH, user="user", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert "JSON" in _detail(answer)
    assert run_ids(HEALTHY[1]) == before, "a refused refresh starts no run"


@pytest.mark.parametrize(
    ("body", "word"),
    [
        pytest.param(b"[]", "object", id="a-list"),
        pytest.param(b'"{}"', "object", id="a-string"),
        pytest.param(b'{"dag_run_id": "mine"}', "dag_run_id", id="an-unknown-field"),
    ],
)
def test_a_refresh_body_other_than_an_empty_object_is_a_422(api, body, word):
    before = run_ids(HEALTHY[1])  # another test's refresh may have left a run
    answer = api.call("POST", REFRESH, user="user", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert word in _detail(answer)
    assert run_ids(HEALTHY[1]) == before, "a refused refresh starts no run"


HOSTILE_BODIES = [
    pytest.param(b'{"a": NaN}', 422, "NaN is not a JSON number", id="nan"),
    pytest.param(b'{"a": Infinity}', 422, "Infinity is not a JSON number", id="infinity"),
    pytest.param(b'{"a": -Infinity}', 422, "-Infinity is not a JSON number", id="minus-infinity"),
    pytest.param(b'{"a": 1e400}', 422, "'1e400' is too large for a number", id="overflowing-float"),
    pytest.param(b"[" * 100_000, 413, "100000 bytes; send at most 65536 bytes", id="100k-open-brackets"),
    pytest.param(b"[" * 60_000, 422, "nested more than 32 arrays or objects deep", id="60k-open-brackets"),
    pytest.param(b'{"a":' * 10_000, 422, "nested more than 32 arrays or objects deep", id="10k-nested-objects"),
    pytest.param(b'{"\\ud800": 1}', 422, "a key of the object at `/` is '\\ud800'", id="lone-surrogate-key"),
    pytest.param(b'{"a": ["\\udfff"]}', 422, "the string at `/a/0` is '\\udfff'", id="lone-surrogate-value"),
    pytest.param(b" " * 70_000 + b"{}", 413, "70002 bytes; send at most 65536 bytes", id="70-kb-of-spaces"),
]


@pytest.mark.parametrize(("body", "code", "says"), HOSTILE_BODIES)
def test_a_hostile_json_body_is_refused_with_its_reason_not_a_500(api, body, code, says):
    before = run_ids(HEALTHY[1])  # another test's refresh may have left a run
    answer = api.call("POST", REFRESH, user="user", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == code, answer.text[:500]
    assert says in answer.json()["detail"]
    assert run_ids(HEALTHY[1]) == before, "a refused refresh starts no run"


def test_a_body_without_a_length_is_read_only_up_to_the_cap(api):
    """Sent in chunks with no Content-Length: refused as the chunks pass 64 KiB, not after buffering them all."""

    def long_spaces():
        for _ in range(1_000):  # 8 MB
            yield b" " * 8192

    headers = {"Content-Type": "application/json"}
    before = run_ids(HEALTHY[1])  # another test's refresh may have left a run
    answer = api.call("POST", REFRESH, user="user", content=long_spaces(), headers=headers)
    assert answer.status_code == 413, answer.text[:500]
    assert answer.json()["detail"] == (
        "request body: more than 65536 bytes; send at most 65536 bytes of JSON, such as {}"
    )
    assert run_ids(HEALTHY[1]) == before, "a refused refresh starts no run"


FORMS = [
    pytest.param("application/x-www-form-urlencoded", b"a=b", id="urlencoded-form"),
    pytest.param(
        "multipart/form-data; boundary=x",
        b"--x\r\nContent-Disposition: form-data; name=a\r\n\r\nb\r\n--x--\r\n",
        id="multipart-form",
    ),
    pytest.param("text/plain", b'{"a": "=b"}', id="text-plain-form-carrying-json"),
    pytest.param(None, b"", id="no-body"),
]


@pytest.mark.parametrize(("content_type", "body"), FORMS)
def test_what_a_cross_site_form_can_send_is_refused_even_with_the_session_cookie(api, content_type, body):
    headers = {"Cookie": f"_token={api.tokens['admin']}"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    before = run_ids(HEALTHY[1])  # another test's refresh may have left a run
    answer = api.call("POST", REFRESH, user=None, content=body, headers=headers)
    assert answer.status_code == 415, answer.text
    assert "application/json" in _detail(answer)
    assert run_ids(HEALTHY[1]) == before, "a refused refresh starts no run"


def test_an_empty_json_object_with_the_session_cookie_refreshes(api):
    """What the Schedules page sends; the refusals above are not a refusal of the cookie itself."""
    headers = {"Cookie": f"_token={api.tokens['user']}"}
    answer = api.call("POST", REFRESH, user=None, json_body={}, headers=headers)
    assert answer.status_code == 201, answer.text
    assert answer.json()["run"]["triggering_user"] == "user"
    assert run_ids(HEALTHY[1]) == [answer.json()["run"]["run_id"]]


# -- one DAG that cannot be planned does not take the others down ---------------------------------


def _rows(answer: Any) -> dict[str, dict[str, Any]]:
    assert answer.status_code == 200, answer.text
    return {row["dag_id"]: row for row in answer.json()["dags"]}


def test_the_plan_lists_every_dag_and_carries_each_failure_in_its_own_row(api):
    answer = api.call("GET", "/tessera/api/v1/plan", user="viewer", params={"count": 3})
    rows = _rows(answer)
    assert answer.json()["plan_check"] == f"incomplete: could not read {UNREADABLE_PIPELINE}"
    assert {*HEALTHY, UNREADABLE, UNPLANNABLE, UNREADABLE_PIPELINE} <= set(rows)
    for dag_id in HEALTHY:
        assert rows[dag_id]["error"] is None
        assert len(rows[dag_id]["occurrences"]) == 3
    assert "does not divide a day evenly" in rows[UNREADABLE]["error"], "the timetable's own error, named"
    assert "Overflow" in rows[UNPLANNABLE]["error"] or "out of range" in rows[UNPLANNABLE]["error"]
    for broken in (UNREADABLE, UNPLANNABLE):
        assert rows[broken]["occurrences"] == []
        assert rows[broken]["summary"], "what the DAG row stores is still shown"
    assert "Gone" in rows[UNREADABLE_PIPELINE]["error"]
    assert rows[UNREADABLE_PIPELINE]["declared_schedule"] == "app_pipeline"


def test_the_status_lists_every_dag_and_carries_each_failure_in_its_own_row(api):
    rows = _rows(api.call("GET", "/tessera/api/v1/status", user="viewer"))
    assert {*HEALTHY, UNREADABLE, UNPLANNABLE, UNREADABLE_PIPELINE} <= set(rows)
    assert all(rows[dag_id]["error"] is None for dag_id in HEALTHY)
    broken = rows[UNREADABLE]
    assert "does not divide a day evenly" in broken["error"]
    assert broken["lateness"]["state"] == "unknown"
    assert [(c["type"], c["status"]) for c in broken["conditions"]] == [("SpecValid", "False"), ("Ready", "False")]


@pytest.mark.parametrize("what", ["plan", "status"])
@pytest.mark.parametrize("dag_id", [UNREADABLE, UNPLANNABLE])
def test_one_broken_dags_own_routes_answer_its_row_with_the_error(api, what, dag_id):
    answer = api.call("GET", f"/tessera/api/v1/dags/{dag_id}/{what}", user="viewer")
    assert answer.status_code == 200, answer.text
    assert answer.json()["dag_id"] == dag_id
    if dag_id == UNREADABLE or what == "plan":
        assert answer.json()["error"]


def test_refreshing_a_dag_whose_stored_version_cannot_be_read_is_a_400_that_says_why(api):
    answer = api.call("POST", f"/tessera/api/v1/dags/{UNREADABLE}/refresh", user="user", json_body={})
    assert answer.status_code == 400, answer.text
    assert "does not divide a day evenly" in _detail(answer)
    assert run_ids(UNREADABLE) == []
    status = api.call("GET", f"/tessera/api/v1/dags/{UNREADABLE}/refresh", user="viewer")
    assert status.status_code == 200, status.text
    assert status.json()["live_run"] is None


# -- framing: only Airflow's own UI (the same origin) may frame the page or the API ----------------

FRAMED = [
    pytest.param("/tessera/ui/", "admin", 200, id="the-page"),
    pytest.param("/tessera/ui/schedules.js", "admin", 200, id="a-page-asset"),
    pytest.param(f"/tessera/api/v1/dags/{HEALTHY[0]}/plan", "viewer", 200, id="an-api-answer"),
    pytest.param("/tessera/api/v1/plan", None, 401, id="a-401"),
    pytest.param("/tessera/ui/passwords.json", "admin", 404, id="a-404"),
    pytest.param("/tessera/api/v1/plan?count=0", "viewer", 422, id="a-422"),
]


@pytest.mark.parametrize(("path", "user", "code"), FRAMED)
def test_every_answer_may_be_framed_only_by_the_same_origin(api, path, user, code):
    answer = api.call("GET", path, user=user)
    assert answer.status_code == code, answer.text[:300]
    assert answer.headers["content-security-policy"] == "frame-ancestors 'self'"
    assert answer.headers["x-frame-options"] == "SAMEORIGIN"
