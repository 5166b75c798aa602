"""NOTIFY and WEBHOOK: the notifiers a schedule adds, delivering to real local servers on 127.0.0.1.

A webhook to 127.0.0.1 is refused by default (tessera calls only public hosts), so
the webhook tests allow the deployment's own network explicitly, as a deployment
whose hooks live inside it would.
"""

from __future__ import annotations

import json
import os
import socketserver
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from airflow.sdk import DAG

from tessera.operators.schedules.policy import dag_kwargs
from tessera.operators.schedules.schedule import Schedule

CONTEXT = {
    "dag": DAG("orders_load", schedule=None),
    "run_id": "scheduled__2026-03-08T06:00:00+00:00",
    "reason": "task_failure",
}


@pytest.fixture
def http_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[dict]]]:
    """A local HTTP server that records each POSTed JSON body; ``/broken`` answers 500.

    ``[tessera] allow_private_outbound`` is set: without it a webhook to 127.0.0.1 is refused.
    """
    monkeypatch.setenv("AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND", "True")
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"path": self.path, "type": self.headers["Content-Type"], **json.loads(body)})
            self.send_response(500 if self.path.startswith("/broken") else 204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()
    server.server_close()


def test_a_failed_run_is_posted_to_every_webhook(http_server: tuple[str, list[dict]]) -> None:
    base, received = http_server
    schedule = Schedule("daily_etl", interval_seconds=60, webhook=[f"{base}/a", f"{base}/b"])
    (notifier,) = dag_kwargs(schedule)["on_failure_callback"]
    notifier(dict(CONTEXT))
    assert received == [
        {
            "path": path,
            "type": "application/json",
            "schedule": "daily_etl",
            "event": "failure",
            "dag_id": "orders_load",
            "run_id": CONTEXT["run_id"],
            "logical_date": None,
            "reason": "task_failure",
        }
        for path in ("/a", "/b")
    ]


def test_a_webhook_that_fails_does_not_stop_the_others_and_is_raised(http_server: tuple[str, list[dict]]) -> None:
    base, received = http_server
    schedule = Schedule("s", interval_seconds=60, webhook=[f"{base}/broken", f"{base}/ok"], notify_on_success=True)
    (notifier,) = dag_kwargs(schedule)["on_success_callback"]
    with pytest.raises(RuntimeError, match="/broken"):
        notifier(dict(CONTEXT))
    assert [(r["path"], r["event"]) for r in received] == [("/broken", "success"), ("/ok", "success")]


class _SmtpHandler(socketserver.StreamRequestHandler):
    """Just enough SMTP to accept one message: what Airflow's SMTP hook sends is what gets recorded."""

    def handle(self) -> None:
        self.wfile.write(b"220 localhost ready\r\n")
        while line := self.rfile.readline():
            verb = line.split(b" ")[0].strip().upper()
            if verb == b"DATA":
                self.wfile.write(b"354 go ahead\r\n")
                data = []
                while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                    data.append(chunk)
                self.server.messages.append(b"".join(data).decode())  # type: ignore[attr-defined]
                self.wfile.write(b"250 queued\r\n")
            elif verb == b"QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:
                self.wfile.write(b"250 ok\r\n")


def test_a_failed_run_is_emailed_through_the_smtp_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SmtpHandler)
    server.messages = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    connection = {
        "conn_type": "smtp",
        "host": "127.0.0.1",
        "port": server.server_address[1],
        "extra": {"from_email": "tessera@example.com", "disable_tls": True, "disable_ssl": True},
    }
    monkeypatch.setitem(os.environ, "AIRFLOW_CONN_SMTP_DEFAULT", json.dumps(connection))
    try:
        schedule = Schedule("hourly_sync", interval_seconds=60, notify=["ops-team@example.com", "data@example.com"])
        (notifier,) = dag_kwargs(schedule)["on_failure_callback"]
        notifier(dict(CONTEXT))
    finally:
        server.shutdown()
        server.server_close()
    (message,) = server.messages  # type: ignore[attr-defined]
    assert "To: ops-team@example.com, data@example.com" in message
    assert f"Subject: [hourly_sync] orders_load run {CONTEXT['run_id']}: failure" in message


def test_a_failing_webhook_is_logged_and_raised_with_its_credentials_and_token_redacted(
    http_server: tuple[str, list[dict]], capfd: pytest.CaptureFixture[str]
) -> None:
    base, received = http_server
    host = base.removeprefix("http://")
    secret = f"http://hook-user:s3cr3t@{host}/broken?token=t0k3n&channel=ops"
    schedule = Schedule("daily_etl", interval_seconds=60, webhook=[secret, f"{base}/ok"])
    (notifier,) = dag_kwargs(schedule)["on_failure_callback"]
    with pytest.raises(RuntimeError) as raised:
        notifier(dict(CONTEXT))
    shown = f"http://***@{host}/broken?token=***&channel=***"
    assert str(raised.value) == f"webhook: ['{shown}'] did not accept the failure notice of 'daily_etl'"
    # Airflow's structlog writes the line to the process's output, where the dag-processor's log collects it.
    written = "".join(capfd.readouterr())
    assert f"Webhook {shown} for schedule daily_etl failed: answered 500" in written
    assert "s3cr3t" not in written and "t0k3n" not in written
    assert [r["path"] for r in received] == ["/broken?token=t0k3n&channel=ops", "/ok"]  # the hook still got it all


def test_a_webhook_that_cannot_connect_says_why_without_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND", "True")
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    schedule = Schedule("s", interval_seconds=60, webhook=[f"http://127.0.0.1:{port}/x?token=t0k3n"])
    (notifier,) = dag_kwargs(schedule)["on_failure_callback"]
    with pytest.raises(RuntimeError) as raised:
        notifier(dict(CONTEXT))
    assert "t0k3n" not in str(raised.value) and f"127.0.0.1:{port}/x?token=***" in str(raised.value)


def test_a_refused_webhook_url_is_shown_redacted_in_the_import_error() -> None:
    from tessera.operators.schedules.checks import ScheduleError

    with pytest.raises(ScheduleError) as refused:
        Schedule("s", interval_seconds=60, webhook=["ftp://hook-user:s3cr3t@hooks.example.com/x?token=t0k3n"])
    assert str(refused.value).startswith("webhook: 'ftp://***@hooks.example.com/x?token=***' is not an http(s) URL")


def test_a_webhook_url_python_cannot_split_is_refused_naming_the_field() -> None:
    from tessera.operators.schedules.checks import ScheduleError

    with pytest.raises(ScheduleError, match=r"^webhook: '<a URL that cannot be parsed>' is not an http\(s\) URL"):
        Schedule("s", interval_seconds=60, webhook=["http://[x"])
