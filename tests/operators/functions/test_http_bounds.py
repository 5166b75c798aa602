"""HttpFunction against real local servers that misbehave: an endless body, a slow drip, credentials in the host.

An endless body is read up to ``max_response_bytes`` and no further; ``timeout`` is one
deadline for the whole exchange, so a server that sends a byte at a time cannot hold
the fire; a connection host written with ``user:pass@`` keeps its port; and no message
shows the credentials or a query value of the URL.
"""

from __future__ import annotations

import base64
import datetime
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from airflow.sdk import Connection

from tessera.operators.functions.fire import OutputInvalid
from tessera.operators.functions.http import DEFAULT_RESPONSE_BYTES, HttpFunction, HttpFunctionError

CHUNK = b"[" + b"1," * 32_767 + b"1"  # 64 KiB of the start of a JSON array that never ends
SERVER_SENDS_AT_MOST = 64 * 1024 * 1024
"""The endless body stops by itself after this much, so a broken client cannot make the test run forever."""


class Misbehaving(ThreadingHTTPServer):
    daemon_threads = True
    stop: threading.Event
    seen: list[dict[str, Any]]
    sent: int


class Handler(BaseHTTPRequestHandler):
    server: Misbehaving

    def do_POST(self) -> None:  # noqa: N802 (the http.server API)
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append({"path": self.path, "authorization": self.headers.get("Authorization")})
        if self.path.startswith("/endless"):
            self._endless(declare_length=self.path == "/endless-declared")
        elif self.path == "/drip":
            self._drip(self._body_drip())
        elif self.path == "/drip-headers":
            self._drip(b"HTTP/1.1 200 OK\r\nX-Pad: " + b"x" * 60 + b"\r\nContent-Length: 0\r\n\r\n")
        elif self.path == "/deep":
            self._answer(200, b"[" * 100_000 + b"]" * 100_000)
        else:
            self._answer(200, b'{"cursor": 1}')

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _endless(self, *, declare_length: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if declare_length:
            self.send_header("Content-Length", str(SERVER_SENDS_AT_MOST))
        self.end_headers()
        try:
            while self.server.sent < SERVER_SENDS_AT_MOST and not self.server.stop.is_set():
                self.wfile.write(CHUNK)
                self.server.sent += len(CHUNK)
        except OSError:  # the client hung up: what a bounded reader does
            pass

    def _body_drip(self) -> bytes:
        body = b'{"cursor": 1, "pad": "' + b"x" * 40 + b'"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        return body

    def _drip(self, data: bytes) -> None:
        try:
            for byte in data:  # one byte every half second: each read is quick, the whole is not
                if self.server.stop.wait(0.5):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Misbehaving]:
    monkeypatch.setenv("AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND", "True")
    httpd = Misbehaving(("127.0.0.1", 0), Handler)
    httpd.stop, httpd.seen, httpd.sent = threading.Event(), [], 0
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.stop.set()
    httpd.shutdown()
    httpd.server_close()


def _connection(server: Misbehaving, host: str = "127.0.0.1", **extra: Any) -> Connection:
    return Connection(conn_id="svc", conn_type="http", host=host, port=server.server_address[1], **extra)


def test_an_endless_body_is_read_up_to_the_cap_and_no_further(server: Misbehaving) -> None:
    function = HttpFunction("svc", "/endless", max_response_bytes=1024 * 1024, timeout=60)
    with pytest.raises(OutputInvalid) as refused:
        function.call(_connection(server), {"cursor": 0})
    port = server.server_address[1]
    assert str(refused.value) == (
        f"POST http://127.0.0.1:{port}/endless answered 200 with a body over max_response_bytes (1048576 bytes); "
        "it was not read further (raise max_response_bytes, at most 268435456, if the answer is really this large)"
    )
    assert server.sent < SERVER_SENDS_AT_MOST  # the client hung up; the server did not run out


def test_a_declared_length_over_the_cap_is_refused_before_reading(server: Misbehaving) -> None:
    with pytest.raises(OutputInvalid, match=r"with a body over max_response_bytes \(16777216 bytes\)"):
        HttpFunction("svc", "/endless-declared", timeout=60).call(_connection(server), {"cursor": 0})
    assert HttpFunction("svc").max_response_bytes == DEFAULT_RESPONSE_BYTES == 16 * 1024 * 1024


def test_timeout_is_one_deadline_for_the_whole_answer_not_per_read(server: Misbehaving) -> None:
    # The drip takes about 30 s; each byte arrives well within the 2 s, as a per-read timeout sees it.
    with pytest.raises(HttpFunctionError) as refused:
        HttpFunction("svc", "/drip", timeout=2).call(_connection(server), {"cursor": 0})
    port = server.server_address[1]
    assert str(refused.value) == (
        f"POST http://127.0.0.1:{port}/drip did not finish within its timeout of 2 s (connecting, sending, "
        "the answer and its whole body together)"
    )


@pytest.mark.parametrize("timeout", ["90s", datetime.timedelta(minutes=1, seconds=30), 90])
def test_timeout_takes_a_duration_or_seconds(timeout: object) -> None:
    assert HttpFunction("svc", timeout=timeout).timeout == 90.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        pytest.param(
            {"max_response_bytes": 0}, "max_response_bytes: 0; give a whole number of bytes from 1 to", id="0"
        ),
        pytest.param({"max_response_bytes": 2**28 + 1}, "max_response_bytes: 268435457; give", id="over"),
        pytest.param({"max_response_bytes": 1.5}, "max_response_bytes: 1.5; give", id="float"),
        pytest.param({"max_response_bytes": True}, "max_response_bytes: True; give", id="bool"),
        pytest.param({"timeout": "2h"}, "timeout: '2h'; give a number of seconds above 0 and at most 3600", id="2h"),
        pytest.param({"timeout": "soon"}, "timeout: 'soon' is not a duration", id="not-a-duration"),
        pytest.param({"timeout": 0}, "timeout: 0; give a number of seconds above 0", id="zero"),
        pytest.param({"method": []}, "method: []; the input travels as a JSON body", id="unhashable-method"),
        pytest.param(
            {"path": "/x\ud800"}, "path: '/x\\ud800' holds a lone surrogate (U+D800 at character 2)", id="path"
        ),
    ],
)
def test_bounds_are_refused_naming_the_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        HttpFunction("svc", **kwargs)
    assert str(refused.value).startswith(message), str(refused.value)


def test_a_host_with_credentials_keeps_its_port_and_no_message_shows_them(server: Misbehaving) -> None:
    connection = _connection(server, host="http://fn-user:s3cr3t@127.0.0.1")
    function = HttpFunction("svc", "/ok?token=t0k3n")
    assert function.call(connection, {"cursor": 0}) == {"cursor": 1}
    basic = base64.b64encode(b"fn-user:s3cr3t").decode()
    assert server.seen[-1] == {"path": "/ok?token=t0k3n", "authorization": f"Basic {basic}"}
    with pytest.raises(OutputInvalid) as refused:
        HttpFunction("svc", "/endless?token=t0k3n", max_response_bytes=10).call(connection, {"cursor": 0})
    port = server.server_address[1]
    assert str(refused.value).startswith(f"POST http://***@127.0.0.1:{port}/endless?token=*** answered 200")
    assert "s3cr3t" not in str(refused.value) and "t0k3n" not in str(refused.value)


@pytest.mark.parametrize(
    "host, schema, port, url",
    [
        pytest.param("user:pass@fn.example.com", None, 8080, "http://user:pass@fn.example.com:8080/x", id="userinfo"),
        pytest.param("https://u:p@fn.example.com:9", None, 8080, "https://u:p@fn.example.com:9/x", id="own-port-wins"),
        pytest.param("fn.example.com/api/", "https", 8443, "https://fn.example.com:8443/api/x", id="path-in-host"),
        pytest.param("2001:db8::1", None, 8080, "http://[2001:db8::1]:8080/x", id="bare-ipv6"),
        pytest.param("[2001:db8::1]:9", None, 8080, "http://[2001:db8::1]:9/x", id="bracketed-ipv6-port"),
        pytest.param("fn.example.com", None, None, "http://fn.example.com/x", id="no-port"),
    ],
)
def test_the_endpoint_url_keeps_every_part_of_the_connection(host: str, schema: Any, port: Any, url: str) -> None:
    connection = Connection(conn_id="svc", conn_type="http", host=host, schema=schema, port=port)
    assert HttpFunction("svc", "/x").url(connection) == url


def test_a_200_that_nests_too_deeply_is_an_invalid_output_not_a_crash(server: Misbehaving) -> None:
    with pytest.raises(OutputInvalid) as refused:
        HttpFunction("svc", "/deep").call(_connection(server), {"cursor": 0})
    port = server.server_address[1]
    assert str(refused.value) == (
        f"POST http://127.0.0.1:{port}/deep answered 200 with a body that is not JSON (200000 bytes, not recorded: "
        "it nests too deeply)"
    )


def test_a_webhook_reads_no_answer_body_and_a_drip_cannot_hold_it(
    server: Misbehaving, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.sdk import DAG

    from tessera.operators.schedules import notify

    monkeypatch.setattr(notify, "WEBHOOK_TIMEOUT_SECONDS", 2)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    context = {"dag": DAG("orders_load", schedule=None), "run_id": "manual__1", "reason": "task_failure"}
    notify.WebhookNotifier([f"{base}/endless"], schedule="s").notify(dict(context))  # a 200: delivered
    assert server.sent < SERVER_SENDS_AT_MOST
    notify.WebhookNotifier([f"{base}/drip"], schedule="s").notify(dict(context))  # its status came at once
    with pytest.raises(RuntimeError, match=r"/drip-headers'\] did not accept the failure notice"):
        notify.WebhookNotifier([f"{base}/drip-headers"], schedule="s").notify(dict(context))
