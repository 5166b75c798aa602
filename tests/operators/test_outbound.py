"""Outbound requests go to public hosts only: webhooks and HTTP functions refuse the deployment's own network.

Real servers on 127.0.0.1 stand in for the services a webhook or a connection
could point at; each test either leaves ``[tessera] allow_private_outbound`` at
its default (False) and checks that nothing reaches them, or sets it explicitly.
"""

from __future__ import annotations

import ipaddress
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from airflow.sdk import DAG, Connection

from tessera.operators import outbound
from tessera.operators.functions.fire import FireFailed
from tessera.operators.functions.http import HttpFunction
from tessera.operators.schedules import notify as schedule_notify
from tessera.operators.schedules.checks import ScheduleError
from tessera.operators.schedules.notify import WebhookNotifier
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.statement import ScheduleSyntaxError, parse_schedules

ALLOW = "AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND"
METADATA = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"


@pytest.fixture(autouse=True)
def policy_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts from the shipped default, whatever the environment running the suite says."""
    monkeypatch.delenv(ALLOW, raising=False)


class Recorder(ThreadingHTTPServer):
    hits: list[str]
    release: threading.Event
    """Set when the test is done: only then does ``/slow`` answer."""


class Handler(BaseHTTPRequestHandler):
    """``/redirect`` answers 302 to ``/target``; ``/slow`` once the test is done; everything else 200 with JSON."""

    server: Recorder

    def do_POST(self) -> None:  # noqa: N802 (the http.server API)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.hits.append(self.path)
        if self.path == "/slow":
            self.server.release.wait(timeout=60)
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/target")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"count": 1, "cursor": {"n": 1}}')

    def do_GET(self) -> None:  # noqa: N802 - a followed 302 turns a POST into a GET
        self.server.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def local() -> Iterator[tuple[str, Recorder]]:
    """A server on 127.0.0.1: what a private target looks like; returns its base URL and the paths it was sent."""
    server = Recorder(("127.0.0.1", 0), Handler)
    server.hits, server.release = [], threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", server
    server.release.set()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        pytest.param("169.254.169.254", "link-local", id="aws-gcp-azure-metadata"),
        pytest.param("fd00:ec2::254", "private", id="aws-metadata-ipv6"),
        pytest.param("2852039166", "link-local", id="metadata-as-decimal"),
        pytest.param("0xa9fea9fe", "link-local", id="metadata-as-hex"),
        pytest.param("169.254.43518", "link-local", id="metadata-three-parts"),
        pytest.param("169.254.169.254.", "link-local", id="metadata-root-dot"),
        pytest.param("[::ffff:169.254.169.254]", "link-local", id="metadata-ipv4-mapped"),
        pytest.param("64:ff9b::a9fe:a9fe", "link-local", id="metadata-through-nat64"),
        pytest.param("2002:a9fe:a9fe::1", "link-local", id="metadata-through-6to4"),
        pytest.param("127.0.0.1", "loopback", id="loopback"),
        pytest.param("127.1", "loopback", id="loopback-short"),
        pytest.param("[::1]", "loopback", id="loopback-ipv6"),
        pytest.param("localhost", "loopback", id="localhost-name"),
        pytest.param("api.localhost", "loopback", id="localhost-subdomain"),
        pytest.param("10.1.2.3", "private", id="private-10"),
        pytest.param("172.16.0.1", "private", id="private-172"),
        pytest.param("192.168.1.1", "private", id="private-192"),
        pytest.param("fc00::1", "private", id="unique-local-ipv6"),
        pytest.param("fe80::1%eth0", "link-local", id="link-local-ipv6-zone"),
        pytest.param("100.64.0.1", "not publicly routable", id="carrier-grade-nat"),
        pytest.param("224.0.0.1", "multicast", id="multicast"),
        pytest.param("ff02::1", "multicast", id="multicast-ipv6"),
        pytest.param("0.0.0.0", "unspecified", id="unspecified"),
        pytest.param("::", "unspecified", id="unspecified-ipv6"),
        pytest.param("240.0.0.1", "reserved", id="reserved"),
    ],
)
def test_a_non_public_target_is_refused_by_kind_without_dns(host: str, kind: str) -> None:
    problem = outbound.host_problem(host)
    assert problem is not None and kind in problem, problem


@pytest.mark.parametrize("host", ["8.8.8.8", "2606:4700:4700::1111", "hooks.example.com", "1.1.1.1."])
def test_a_public_address_or_an_unresolved_name_passes_the_parse_time_check(host: str) -> None:
    assert outbound.host_problem(host) is None


def test_every_ipv4_block_the_stdlib_calls_non_global_is_refused() -> None:
    # A property over the address space's edges: the first and last address of each special block.
    for block in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "224.0.0.0/4",
        "240.0.0.0/4",
    ):
        network = ipaddress.ip_network(block)
        for address in (network.network_address, network.broadcast_address):
            assert outbound.address_problem(address), address


def test_the_metadata_webhook_is_refused_when_the_schedule_is_declared() -> None:
    with pytest.raises(ScheduleError) as caught:
        Schedule("daily_etl", interval_seconds=60, webhook=[METADATA])
    assert caught.value.field == "webhook"
    message = str(caught.value)
    assert message.startswith("webhook: host '169.254.169.254' is a link-local address")
    assert "allow_private_outbound = True" in message
    assert "security-credentials" not in message  # a webhook's path often holds its token: only the host is named


def test_the_metadata_webhook_is_refused_at_its_clause_in_a_schedule_statement() -> None:
    text = f"SCHEDULE a INTERVAL_SECONDS 5\n  NOTIFY 'ops@example.com'\n  WEBHOOK '{METADATA}';"
    with pytest.raises(ScheduleSyntaxError) as caught:
        parse_schedules(text)
    assert (caught.value.line, caught.value.column) == (3, 3)
    assert "webhook: host '169.254.169.254' is a link-local address" in str(caught.value)


def test_the_setting_lets_a_deployment_call_its_own_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW, "True")
    assert Schedule("a", interval_seconds=60, webhook=["http://10.0.0.5/hook"]).webhook == ("http://10.0.0.5/hook",)
    monkeypatch.setenv(ALLOW, "perhaps")
    with pytest.raises(ValueError, match=r"\[tessera\] allow_private_outbound: 'perhaps'; give True or False"):
        outbound.private_allowed()


CONTEXT = {"dag": DAG("orders_load", schedule=None), "run_id": "r1", "reason": "task_failure"}


def test_a_webhook_name_resolving_to_loopback_is_refused_at_send_time(local: tuple[str, Recorder]) -> None:
    base, server = local
    port = base.rsplit(":", 1)[1]
    # Built directly, as a rendered template could produce it: only the send-time check stands in the way.
    notifier = WebhookNotifier([f"http://localhost:{port}/a"], schedule="s")
    with pytest.raises(RuntimeError, match="did not accept"):
        notifier.notify(dict(CONTEXT))
    assert server.hits == []


def test_a_webhook_redirect_is_not_followed(local: tuple[str, Recorder], monkeypatch: pytest.MonkeyPatch) -> None:
    base, server = local
    monkeypatch.setenv(ALLOW, "True")
    with pytest.raises(RuntimeError, match="/redirect"):
        WebhookNotifier([f"{base}/redirect"], schedule="s").notify(dict(CONTEXT))
    assert server.hits == ["/redirect"]


def test_a_webhook_that_does_not_answer_in_time_fails(local: tuple[str, Recorder], monkeypatch) -> None:
    base, server = local
    monkeypatch.setenv(ALLOW, "True")
    monkeypatch.setattr(schedule_notify, "WEBHOOK_TIMEOUT_SECONDS", 0.5)
    with pytest.raises(RuntimeError, match="/slow"):
        WebhookNotifier([f"{base}/slow", f"{base}/ok"], schedule="s").notify(dict(CONTEXT))
    assert server.hits == ["/slow", "/ok"]


def connection(base: str) -> Connection:
    host, port = base.removeprefix("http://").split(":")
    return Connection(conn_id="fn", conn_type="http", host=host, port=int(port))


def test_an_http_function_on_a_private_host_is_refused_before_any_request(local: tuple[str, Recorder]) -> None:
    base, server = local
    with pytest.raises(FireFailed) as caught:
        HttpFunction("fn", "/digest").call(connection(base), {"cursor": {"n": 0}})
    assert caught.value.reason == "FunctionError"
    assert str(caught.value).startswith("connection 'fn': host '127.0.0.1' is a loopback address")
    assert server.hits == []


def test_an_http_function_follows_no_redirect(local: tuple[str, Recorder], monkeypatch) -> None:
    base, server = local
    monkeypatch.setenv(ALLOW, "True")
    with pytest.raises(FireFailed, match="answered 302 .*redirects are not followed"):
        HttpFunction("fn", "/redirect").call(connection(base), {"cursor": {"n": 0}})
    assert server.hits == ["/redirect"]
    assert HttpFunction("fn", "/ok").call(connection(base), {}) == json.loads('{"count": 1, "cursor": {"n": 1}}')


@pytest.mark.parametrize("timeout", [0, -1, 3600.5, 86400, float("nan"), float("inf"), True, "61m"])
def test_an_http_function_timeout_is_bounded(timeout: Any) -> None:
    with pytest.raises(ValueError, match=r"^timeout: .*above 0 and at most 3600"):
        HttpFunction("fn", "/x", timeout=timeout)


def test_an_http_function_timeout_string_is_a_duration_with_its_unit() -> None:
    with pytest.raises(ValueError, match=r"^timeout: '30' is not a duration; write a number and a lowercase unit"):
        HttpFunction("fn", "/x", timeout="30")


def test_an_http_function_timeout_at_the_bound_is_accepted() -> None:
    assert HttpFunction("fn", "/x", timeout=3600).timeout == 3600.0
    assert HttpFunction("fn", "/x", timeout=0.5).timeout == 0.5


@pytest.mark.parametrize(
    "url, shown",
    [
        pytest.param(
            "https://u:p@hooks.example.com/x?token=abc&v#frag", "https://***@hooks.example.com/x?token=***&v#***"
        ),
        pytest.param("http://hooks.example.com/services/T00", "http://hooks.example.com/services/T00", id="plain"),
        pytest.param("http://u@h.example.com:8/?a=1&b=2", "http://***@h.example.com:8/?a=***&b=***", id="user-only"),
        pytest.param("http://[x", "<a URL that cannot be parsed>", id="unparseable"),
    ],
)
def test_urls_are_shown_with_credentials_and_query_values_redacted(url: str, shown: str) -> None:
    from tessera.operators.outbound import redact_url

    assert redact_url(url) == shown


def test_a_url_that_cannot_be_parsed_is_refused_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND", raising=False)
    from tessera.operators.outbound import OutboundRefused, check_url

    with pytest.raises(OutboundRefused, match=r"^connection 'x': <a URL that cannot be parsed>; give an http\(s\) URL"):
        check_url("connection 'x'", "http://[x", resolve=True)


# -- send(): the one client, for a DAG file's URL (private_ok=False) and the operator's own (True) -----------


@pytest.mark.parametrize("private_ok", [False, True])
@pytest.mark.parametrize("url", ["file:///etc/hostname", "ftp://127.0.0.1/x", "gopher://127.0.0.1/", "http://"])
def test_send_takes_only_http_urls_whoever_gave_them(url: str, private_ok: bool) -> None:
    with pytest.raises(outbound.OutboundRefused) as caught:
        outbound.send("GET", url, field="`--api`", private_ok=private_ok, deadline=1, max_body_bytes=10)
    assert str(caught.value).startswith(f"`--api`: {url!r}; tessera sends requests only to http:// or https:// URLs")


def test_send_for_the_operator_reaches_loopback_and_still_follows_no_redirect(local: tuple[str, Recorder]) -> None:
    base, server = local
    answer = outbound.send(
        "POST", f"{base}/redirect", field="`--api`", private_ok=True, deadline=5, max_body_bytes=1000, content=b"{}"
    )
    assert (answer.status, answer.redirect, answer.location) == (302, True, "/target")
    assert server.hits == ["/redirect"]


def test_send_for_a_dag_files_url_refuses_loopback_before_sending(local: tuple[str, Recorder]) -> None:
    base, server = local
    with pytest.raises(outbound.OutboundRefused, match="^webhook: host '127.0.0.1' is a loopback address"):
        outbound.send("POST", f"{base}/a", field="webhook", private_ok=False, deadline=5, max_body_bytes=0)
    assert server.hits == []


def test_send_tells_a_failure_by_its_kind_and_the_systems_reason() -> None:
    with pytest.raises(outbound.SendFailed, match="^ConnectError: .*refused"):
        outbound.send("GET", "http://127.0.0.1:9/x", field="`--api`", private_ok=True, deadline=5, max_body_bytes=10)


@pytest.mark.parametrize("deadline", [0, -1, float("nan"), float("inf")])
def test_send_needs_a_finite_deadline(deadline: float) -> None:
    with pytest.raises(ValueError, match="^deadline: "):
        outbound.send("GET", "http://127.0.0.1:9/", field="x", private_ok=True, deadline=deadline, max_body_bytes=1)


def test_an_http_function_on_a_connection_that_is_not_http_is_refused_naming_it(monkeypatch) -> None:
    monkeypatch.setenv(ALLOW, "True")
    file_connection = Connection(conn_id="fn", conn_type="http", host="file:///etc/hostname")
    with pytest.raises(FireFailed) as caught:
        HttpFunction("fn").call(file_connection, {})
    assert str(caught.value).startswith("connection 'fn': 'file:///etc/hostname'; tessera sends requests only to http")


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        pytest.param("https://u:p@Hooks.example.com:8443/x?t=1", "https://hooks.example.com:8443", id="credentials"),
        pytest.param("http://[::1]:8080/a", "http://[::1]:8080", id="ipv6"),
        pytest.param("http://169.254.169.254/latest", "http://169.254.169.254", id="no-port"),
    ],
)
def test_an_origin_is_the_scheme_host_and_port_only(url: str, origin: str) -> None:
    assert outbound.origin(url) == origin
