"""A function behind HTTP: a real server on 127.0.0.1 answers; only a 200 with valid JSON moves the cursor.

127.0.0.1 is the deployment's own network, which tessera refuses to call by
default: the fixture sets ``[tessera] allow_private_outbound`` explicitly, and one
test checks the refusal without it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tessera.operators.functions.status import function_status

from ..conftest import fire_record, stored_cursor


class FunctionServer(ThreadingHTTPServer):
    """Answers POST /digest as the test says: "ok", "error" (HTTP 500) or "text" (200, not JSON).

    Its error and text answers echo the payload, cursor included, as a careless service's would.
    """

    mode = "ok"
    received: list[Any]


class Handler(BaseHTTPRequestHandler):
    server: FunctionServer

    def do_POST(self) -> None:  # noqa: N802 (the http.server API)
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.received.append({"path": self.path, "payload": payload})
        status, body = 200, json.dumps({"count": 3, "cursor": {"n": payload["cursor"]["n"] + 1}})
        if self.server.mode == "error":
            status, body = 500, f"the function is down; it was sent {json.dumps(payload)}"
        if self.server.mode == "text":
            body = f"done with {json.dumps(payload)}!"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def function_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FunctionServer]:
    """The server, the Airflow connection ``cursor_http`` (an environment variable) pointing at it, and
    ``[tessera] allow_private_outbound = True`` so a fire may call it."""
    monkeypatch.setenv("AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND", "True")
    server = FunctionServer(("127.0.0.1", 0), Handler)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    connection = {"conn_type": "http", "host": "127.0.0.1", "port": server.server_address[1]}
    monkeypatch.setenv("AIRFLOW_CONN_CURSOR_HTTP", json.dumps(connection))
    yield server
    server.shutdown()
    server.server_close()


HTTP = "from tessera.operators.functions.http import HttpFunction"


def test_http_function_advances_the_cursor_only_on_a_200_with_valid_json(cursor_dags, function_server):
    dag_id = "cursor_t_http"
    dag = cursor_dags.add(dag_id, prelude=HTTP, function='HttpFunction("cursor_http", "/digest")')
    key = f"{dag_id}-state"

    assert cursor_dags.fire(dag).state == "success"
    assert function_server.received[-1] == {
        "path": "/digest",
        "payload": {"region": "emea", "cursor": {"n": 0}},
    }
    assert stored_cursor(key) == {"n": 1}

    for mode, reason, fragment in [
        ("error", "FunctionError", "answered 500"),
        ("text", "OutputInvalid", "not JSON"),
    ]:
        function_server.mode = mode
        ti = cursor_dags.fire(dag)
        assert ti.state == "failed", mode
        record = fire_record(dag_id, ti.run_id)
        assert record["reason"] == reason and fragment in record["message"], record
        # The body echoed the payload: the record gives its size, never its text.
        assert "bytes, not recorded" in record["message"] and '"cursor"' not in record["message"], record
        assert '"cursor"' not in json.dumps(function_status(dag_id).to_dict())
        assert function_server.received[-1]["payload"]["cursor"] == {"n": 1}
        assert stored_cursor(key) == {"n": 1}

    function_server.mode = "ok"
    assert cursor_dags.fire(dag).state == "success"
    assert stored_cursor(key) == {"n": 2}
    status = function_status(dag_id)
    assert (status.last_outcome, status.consecutive_failures) == ("Succeeded", 0)


def test_unreachable_endpoint_fails_the_fire_and_keeps_the_cursor(cursor_dags, function_server):
    dag_id = "cursor_t_http_down"
    dag = cursor_dags.add(dag_id, prelude=HTTP, function='HttpFunction("cursor_http", "/digest", timeout=5)')
    function_server.shutdown()
    function_server.server_close()
    ti = cursor_dags.fire(dag)
    assert ti.state == "failed"
    assert fire_record(dag_id, ti.run_id)["reason"] == "FunctionError"
    assert stored_cursor(f"{dag_id}-state") is None
    assert function_status(dag_id).consecutive_failures == 1


def test_a_connection_to_a_private_host_is_refused_unless_the_deployment_allows_it(
    cursor_dags, function_server, monkeypatch
):
    dag_id = "cursor_t_http_private"
    dag = cursor_dags.add(dag_id, prelude=HTTP, function='HttpFunction("cursor_http", "/digest")')
    monkeypatch.delenv("AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND")
    ti = cursor_dags.fire(dag)
    assert ti.state == "failed"
    record = fire_record(dag_id, ti.run_id)
    assert record["reason"] == "FunctionError"
    assert record["message"].startswith("connection 'cursor_http': host '127.0.0.1' is a loopback address")
    assert function_server.received == []
    assert stored_cursor(f"{dag_id}-state") is None
