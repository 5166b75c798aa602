"""The tessera REST API against a real ``airflow api-server`` (two workers) on a real SQLite metadata DB.

No scheduler runs: the tests prepare the run history by editing ``dag_run`` rows
(the API server is another process, so its clock cannot be frozen), and every
assertion reads what the API server answered or wrote.
"""

from __future__ import annotations

import datetime
import json
import shutil
import sqlite3
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.e2e.harness import AirflowHome, _free_port

pytestmark = pytest.mark.e2e

PASSWORDS = {"admin": "admin-pw", "operator": "operator-pw", "viewer": "viewer-pw"}
USERS = "admin:admin,operator:user,viewer:viewer"

DAG_FILE = """
from airflow.sdk import DAG, task
from tessera.timetables import Every, Fixed

for dag_id, interval, delay, phase in {dags!r}:
    with DAG(dag_id=dag_id, schedule=Every(interval, delay=delay, phase=Fixed(phase)), start_date=None):
        @task
        def work():
            pass
        work()
"""
DAGS = [
    ("api_seed_example", "5m", "30s", "2m10s"),
    ("api_two_refreshes", "1h", "0s", "0s"),
    ("api_burst_1", "1h", "0s", "0s"),
    ("api_burst_2", "1h", "0s", "0s"),
    ("api_burst_3", "1h", "0s", "0s"),
    ("api_join_scheduled", "1h", "0s", "0s"),
    ("api_after_success", "1h", "0s", "0s"),
    ("api_after_failure", "1h", "0s", "0s"),
    ("api_window_expired", "1h", "0s", "0s"),
    ("api_viewer_denied", "1h", "0s", "0s"),
]
DECLARED_FILE = """
from airflow.sdk import DAG, task
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

SCHEDULES = ScheduleSet([Schedule("orphan_child", after=["renamed_parent"])])
with DAG(dag_id="api_orphan_child", start_date=None, **SCHEDULES.dag_kwargs("orphan_child")):
    @task
    def work():
        pass
    work()
"""
INVALID_FILE = """
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG(dag_id="api_invalid_spec", schedule=Every("7m"), start_date=None):
    pass
"""


@dataclass
class Deployment:
    home: AirflowHome
    base: str

    def call(self, method: str, path: str, *, user: str | None = "admin", body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if user is not None:
            headers["Authorization"] = f"Bearer {self.token(user)}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    _tokens: dict[str, str] | None = None

    def token(self, user: str) -> str:
        self._tokens = self._tokens or {}
        if user not in self._tokens:
            status, body = self.call(
                "POST", "/auth/token", user=None, body={"username": user, "password": PASSWORDS[user]}
            )
            assert status == 201, body
            self._tokens[user] = body["access_token"]
        return self._tokens[user]

    def execute(self, sql: str, *params: object) -> None:
        with sqlite3.connect(self.home.db, timeout=60) as conn:
            conn.execute(sql, params)

    def next_create_after(self, dag_id: str) -> str | None:
        return self.home.query("SELECT next_dagrun_create_after FROM dag WHERE dag_id = ?", dag_id)[0][0]

    def run_ids(self, dag_id: str) -> list[str]:
        return [run.run_id for run in self.home.runs(dag_id)]


def _stamp(seconds_ago: float) -> str:
    """A UTC instant as Airflow stores it in SQLite."""
    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return moment.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/api/v2/monitor/health", timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    home = AirflowHome(tmp_path_factory.mktemp("airflow-api"))
    shutil.rmtree(home.dags)
    home.dags.mkdir()
    (home.dags / "api_dags.py").write_text(textwrap.dedent(DAG_FILE.format(dags=DAGS)))
    (home.dags / "api_declared.py").write_text(DECLARED_FILE)
    (home.dags / "api_invalid.py").write_text(INVALID_FILE)
    shutil.copy(EXAMPLES / "cursor_digest.py", home.dags)  # a cursor function, for its status
    passwords = home.root / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    port = _free_port()
    home.env.update(
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS=USERS,
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=str(passwords),
        AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION="False",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-api-test-" + "s" * 64,
        AIRFLOW__API__SECRET_KEY="tessera-api-test-key",
    )
    try:
        for step in (("db", "migrate"), ("dags", "reserialize")):
            done = home.cli(*step, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "2")
        base = f"http://127.0.0.1:{port}"
        home.wait_for("the API server", lambda: _healthy(base), timeout=300, interval=2)
        yield Deployment(home, base)
    finally:
        home.stop()


# -- authentication and authorization ---------------------------------------------------------

ROUTES = [
    ("GET", "/tessera/api/v1/plan"),
    ("GET", "/tessera/api/v1/status"),
    ("GET", "/tessera/api/v1/dags/api_seed_example/plan"),
    ("GET", "/tessera/api/v1/dags/api_seed_example/status"),
    ("GET", "/tessera/api/v1/dags/api_seed_example/refresh"),
    ("POST", "/tessera/api/v1/dags/api_seed_example/refresh"),
    ("GET", "/tessera/openapi.json"),
    ("GET", "/tessera/ui/"),
    ("GET", "/tessera/ui/schedules.js"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_every_route_refuses_a_caller_without_a_token(deployment, method, path):
    status, _ = deployment.call(method, path, user=None)
    assert status == 401


def test_a_viewer_reads_plans_and_status_but_may_not_refresh(deployment):
    dag = "/tessera/api/v1/dags/api_viewer_denied"
    assert deployment.call("GET", f"{dag}/plan", user="viewer")[0] == 200
    assert deployment.call("GET", f"{dag}/status", user="viewer")[0] == 200
    assert deployment.call("GET", f"{dag}/refresh", user="viewer")[0] == 200
    status, body = deployment.call("POST", f"{dag}/refresh", user="viewer", body={})
    assert status == 403, body
    assert deployment.run_ids("api_viewer_denied") == []
    status, body = deployment.call("POST", f"{dag}/refresh", user="operator", body={})
    assert (status, body["outcome"]) == (201, "started")
    assert body["run"]["triggering_user"] == "operator"


def test_the_openapi_schema_lists_the_routes(deployment):
    status, spec = deployment.call("GET", "/tessera/openapi.json")
    assert status == 200
    assert {"/api/v1/plan", "/api/v1/dags/{dag_id}/refresh", "/api/v1/dags/{dag_id}/status"} <= set(spec["paths"])


# -- plan -----------------------------------------------------------------------------------


def test_plan_reproduces_the_seed_example(deployment):
    status, plan = deployment.call(
        "GET", "/tessera/api/v1/dags/api_seed_example/plan?count=2&after=2026-03-02T12:03:00Z"
    )
    assert status == 200, plan
    first, second = plan["occurrences"]
    assert (first["occurrence"], first["run_after"]) == ("2026-03-02T12:05:00Z", "2026-03-02T12:07:10Z")
    assert (first["window_start"], first["window_end"]) == ("2026-03-02T11:59:30Z", "2026-03-02T12:04:30Z")
    assert (second["window_start"], second["window_end"]) == ("2026-03-02T12:04:30Z", "2026-03-02T12:09:30Z")
    assert (plan["phase"], plan["phase_ms"], plan["delay"], plan["timezone"]) == (
        "2m10s",
        130_000,
        "30s",
        "UTC",
    )
    assert plan["cadence_kind"] == "interval"
    assert "every 5m" in plan["summary"]


def test_plan_lists_every_tessera_dag_and_the_contradictions(deployment):
    status, plan = deployment.call("GET", "/tessera/api/v1/plan?count=3", user="viewer")
    assert status == 200, plan
    listed = {dag["dag_id"] for dag in plan["dags"]}
    assert {dag_id for dag_id, *_ in DAGS} | {"api_orphan_child"} <= listed
    kinds = {(c["kind"], c["source"]) for c in plan["contradictions"]}
    assert ("invalid_spec", "import_error") in kinds
    assert ("unknown_parent", "declared_schedule") in kinds
    assert plan["plan_check"] == "ok"
    orphan = next(dag for dag in plan["dags"] if dag["dag_id"] == "api_orphan_child")
    assert orphan["cadence_kind"] == "after"
    assert [c["kind"] for c in orphan["contradictions"]] == ["unknown_parent"]
    invalid = next(c for c in plan["contradictions"] if c["kind"] == "invalid_spec")
    assert "api_invalid.py" in invalid["message"] and "7m" in invalid["message"]


# -- refresh --------------------------------------------------------------------------------


def _refresh(deployment: Deployment, dag_id: str) -> dict[str, Any]:
    status, body = deployment.call("POST", f"/tessera/api/v1/dags/{dag_id}/refresh", body={})
    assert status in (200, 201), body
    assert (status == 201) == (body["outcome"] == "started")
    return body


def test_two_refreshes_five_seconds_apart_create_one_run(deployment):
    before = deployment.next_create_after("api_two_refreshes")
    first = _refresh(deployment, "api_two_refreshes")
    time.sleep(5)
    second = _refresh(deployment, "api_two_refreshes")
    assert (first["outcome"], second["outcome"]) == ("started", "joined")
    assert second["run"]["run_id"] == first["run"]["run_id"]
    assert deployment.run_ids("api_two_refreshes") == [first["run"]["run_id"]]
    assert deployment.next_create_after("api_two_refreshes") == before
    assert first["run"]["run_type"] == "manual" and first["run"]["triggered_by"] == "rest_api"


@pytest.mark.parametrize("dag_id", ["api_burst_1", "api_burst_2", "api_burst_3"])
def test_simultaneous_refreshes_on_two_workers_create_one_run(deployment, dag_id):
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: _refresh(deployment, dag_id), range(8)))
    outcomes = sorted(answer["outcome"] for answer in answers)
    assert outcomes == ["joined"] * 7 + ["started"]
    assert len({answer["run"]["run_id"] for answer in answers}) == 1
    assert len(deployment.run_ids(dag_id)) == 1


def test_a_refresh_during_a_scheduled_run_joins_it(deployment):
    before = deployment.next_create_after("api_join_scheduled")
    created = _refresh(deployment, "api_join_scheduled")["run"]["run_id"]
    deployment.execute(
        "UPDATE dag_run SET run_type = 'scheduled', triggered_by = 'TIMETABLE', state = 'running',"
        " start_date = ? WHERE dag_id = ? AND run_id = ?",
        _stamp(10),
        "api_join_scheduled",
        created,
    )
    answer = _refresh(deployment, "api_join_scheduled")
    assert answer["outcome"] == "joined"
    assert (answer["run"]["run_id"], answer["run"]["run_type"]) == (created, "scheduled")
    assert deployment.run_ids("api_join_scheduled") == [created]
    assert deployment.next_create_after("api_join_scheduled") == before
    status, live = deployment.call("GET", "/tessera/api/v1/dags/api_join_scheduled/refresh", user="viewer")
    assert status == 200
    assert (live["live_run"]["run_id"], live["live_run"]["run_type"]) == (created, "scheduled")
    assert live["live_run"]["runs_current_version"] is True


def _finish(deployment: Deployment, dag_id: str, run_id: str, state: str, seconds_ago: float) -> None:
    deployment.execute(
        "UPDATE dag_run SET state = ?, start_date = ?, end_date = ? WHERE dag_id = ? AND run_id = ?",
        state,
        _stamp(seconds_ago + 20),
        _stamp(seconds_ago),
        dag_id,
        run_id,
    )


def test_a_refresh_30_seconds_after_a_success_returns_that_success(deployment):
    before = deployment.next_create_after("api_after_success")
    done = _refresh(deployment, "api_after_success")["run"]["run_id"]
    _finish(deployment, "api_after_success", done, "success", seconds_ago=30)
    answer = _refresh(deployment, "api_after_success")
    assert (answer["outcome"], answer["run"]["run_id"], answer["run"]["state"]) == (
        "coalesced",
        done,
        "success",
    )
    assert deployment.run_ids("api_after_success") == [done]
    assert deployment.next_create_after("api_after_success") == before


def test_a_refresh_30_seconds_after_a_failure_starts_a_new_run(deployment):
    before = deployment.next_create_after("api_after_failure")
    failed = _refresh(deployment, "api_after_failure")["run"]["run_id"]
    _finish(deployment, "api_after_failure", failed, "failed", seconds_ago=30)
    answer = _refresh(deployment, "api_after_failure")
    assert answer["outcome"] == "started" and answer["run"]["run_id"] != failed
    assert sorted(deployment.run_ids("api_after_failure")) == sorted([failed, answer["run"]["run_id"]])
    assert deployment.next_create_after("api_after_failure") == before
    assert answer["next_scheduled_run_after"] is not None


def test_a_success_older_than_the_window_does_not_coalesce(deployment):
    done = _refresh(deployment, "api_window_expired")["run"]["run_id"]
    _finish(deployment, "api_window_expired", done, "success", seconds_ago=90)
    answer = _refresh(deployment, "api_window_expired")
    assert answer["outcome"] == "started" and answer["run"]["run_id"] != done


# -- status ---------------------------------------------------------------------------------


def test_status_reports_the_last_run_and_the_conditions(deployment):
    asked = datetime.datetime.now(datetime.timezone.utc)
    status, body = deployment.call("GET", "/tessera/api/v1/dags/api_after_failure/status", user="viewer")
    answered = datetime.datetime.now(datetime.timezone.utc)
    assert status == 200, body
    assert body["last_run"]["run_type"] == "manual"
    assert body["cursors"] == [] and body["cursor_status"] == "not a cursor function"
    assert {c["type"] for c in body["conditions"]} == {"SpecValid", "Ready"}
    # No scheduler runs here: the hourly occurrence is late exactly once its late_after has passed.
    lateness = body["lateness"]
    assert lateness["state"] in ("on_time", "late") and lateness["late"] == (lateness["state"] == "late"), lateness
    late_after = datetime.datetime.fromisoformat(lateness["late_after"])
    if late_after <= asked:
        assert lateness["state"] == "late" and lateness["late_by_seconds"] > 0, lateness
    elif late_after > answered:
        assert lateness["state"] == "on_time" and lateness["late_by_seconds"] is None, lateness
    assert body["next_fire"]["run_after"] is not None
    status, every = deployment.call("GET", "/tessera/api/v1/status", user="viewer")
    assert status == 200 and "api_seed_example" in {dag["dag_id"] for dag in every["dags"]}


def test_a_cursor_functions_status_has_the_three_timestamps_and_two_conditions(deployment):
    status, body = deployment.call("GET", "/tessera/api/v1/dags/tessera_cursor_digest/status", user="viewer")
    assert status == 200, body
    assert body["cursor_status"] == "ok"
    (cursor,) = body["cursors"]
    assert {"last_schedule_time", "last_fire_time", "last_skip_time", "last_skip_reason"} <= set(cursor)
    assert {"last_outcome", "consecutive_failures"} <= set(cursor)
    assert [c["type"] for c in cursor["conditions"]] == ["SpecValid", "Ready"]
    assert body["conditions"] == cursor["conditions"]


# -- the CLI against this deployment ----------------------------------------------------------


def test_the_cli_prints_a_running_deployments_plan(deployment, capsys):
    from tessera.plugin.cli import EXIT_OK, main

    argv = [
        "plan",
        "--api",
        deployment.base,
        "--token",
        deployment.token("viewer"),
        "--dag-id",
        "api_seed_example",
    ]
    assert main([*argv, "--count", "1", "--after", "2026-03-02T12:03:00Z"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "api_seed_example: every 5m · delay 30s · phase 2m10s" in out
    assert "2026-03-02 12:05:00  2026-03-02 12:07:10  2026-03-02 11:59:30 -> 2026-03-02 12:04:30" in out
    assert main(["plan", "--api", deployment.base, "--dag-id", "api_seed_example"]) == 2, "no token: refused"


def test_the_cli_prints_a_running_deployments_load_and_backfill_preview(deployment, capsys):
    from tessera.plugin.cli import EXIT_OK, main

    remote = ["--api", deployment.base, "--token", deployment.token("viewer")]
    assert main(["plan", "--load", *remote, "--json"]) == EXIT_OK
    runs = {dag["dag_id"]: dag["runs"] for dag in json.loads(capsys.readouterr().out)["dags"]}
    assert runs["api_seed_example"] == 288
    dates = ["--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T00:29:59Z"]
    assert main(["plan", "api_seed_example", *remote, *dates]) == EXIT_OK
    out = capsys.readouterr().out
    assert "api_seed_example: airflow backfill create --from-date 2026-01-01 00:00:00Z" in out and "6 runs" in out
    assert "2025-12-31 23:59:30Z  2025-12-31 23:59:30Z -> 2026-01-01 00:04:30Z  2026-01-01 00:07:10Z" in out
