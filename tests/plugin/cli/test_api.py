"""Every ``--api`` command against Airflow's real API app served over HTTP on 127.0.0.1: the answers pass.

The CLI checks each answer against its route's response model (:class:`~tessera.plugin.cli.inputs.RemoteApi`);
here the real routes answer, through uvicorn as ``airflow api-server`` serves them, so a model the
CLI checks with that no longer matches what its route sends fails here, not at an operator's terminal.
The hostile servers are in ``test_cli_hostile_api.py``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tessera.plugin.cli import EXIT_CONTRADICTION, EXIT_OK, EXIT_USAGE, main

from ..api.test_api_app import Api, airflow_api, store_dags

DAG_ID = "cli_api_probe"
DAG_FILE = """
import datetime
from airflow.sdk import DAG, task
from tessera.timetables import Every, Fixed

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=Every("5m", delay="30s", phase=Fixed("2m10s")),
             start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)):
        @task
        def work():
            pass
        work()
"""


@pytest.fixture(scope="module")
def served(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Api]]:
    """The API app on a real port (uvicorn in a thread), and its users' tokens."""
    import uvicorn

    folder = tmp_path_factory.mktemp("tessera-cli-api")
    store_dags(folder, DAG_FILE, (DAG_ID,))
    with airflow_api(folder) as api, socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        # The TestClient already ran the app's lifespan; uvicorn only serves its requests.
        server = uvicorn.Server(
            uvicorn.Config(
                api.client.app, host="127.0.0.1", port=port, lifespan="off", access_log=False, log_level="warning"
            )
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
            time.sleep(0.05)
        try:
            yield f"http://127.0.0.1:{port}", api
        finally:
            server.should_exit = True
            thread.join(timeout=30)


DATES = ["--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T00:29:59Z"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        pytest.param(["why", DAG_ID, "--at", "2026-01-01T00:06:00Z"], f"{DAG_ID} at 2026-01-01T00:06:00Z", id="why"),
        pytest.param(["plan", "--count", "1"], f"{DAG_ID}: every 5m · delay 30s · phase 2m10s", id="plan"),
        pytest.param(["plan", "--dag-id", DAG_ID], f"{DAG_ID}: every 5m · delay 30s · phase 2m10s", id="plan-dag"),
        pytest.param(["plan", "--load"], "Run starts over the next 24 h", id="load"),
        pytest.param(["plan", DAG_ID, *DATES], f"{DAG_ID}: airflow backfill create --from-date", id="backfill-preview"),
    ],
)
def test_each_command_reads_the_real_route(served, argv, said, capsys):
    base, api = served
    expected = EXIT_OK
    if argv[:2] == ["plan", "--count"]:
        # The fleet plan exits 1 while any stored DAG contradicts another: the test database is shared
        # with other modules on this worker, whose DAGs may. The route's own answer says which to expect.
        fleet = api.call("GET", "/tessera/api/v1/plan?count=1", user="viewer").json()
        expected = EXIT_CONTRADICTION if any(c["severity"] == "error" for c in fleet["contradictions"]) else EXIT_OK
    assert main([*argv, "--api", base, "--token", api.tokens["viewer"]]) == expected, capsys.readouterr().err
    assert said in capsys.readouterr().out


def test_the_json_printed_is_the_routes_answer_as_sent(served, capsys):
    base, api = served
    assert main(["why", DAG_ID, "--api", base, "--token", api.tokens["viewer"], "--json"]) == EXIT_OK
    out = capsys.readouterr().out
    printed = json.loads(out[out.index("{\n") :])  # after the served app's access log line, in this process
    route = api.call("GET", f"/tessera/api/v1/dags/{DAG_ID}/why", user="viewer").json()
    assert set(printed) == set(route) and printed["dag_id"] == DAG_ID


def test_a_refusal_of_the_route_is_one_line_with_its_status(served, capsys):
    base, _ = served
    assert main(["why", DAG_ID, "--api", base, "--token", "not-a-token"]) == EXIT_USAGE
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("tessera ")]
    assert len(lines) == 1 and lines[0].startswith(f"tessera why: `--api`: {base} answered 403: "), lines
