"""Hostile ``--api`` servers against every command that calls one: one line, exit 2, bounded time and memory.

Real HTTP servers on 127.0.0.1 (threads of this process) answer each request of ``tessera why``,
``tessera plan`` (the fleet and one DAG), ``tessera plan --load`` and the backfill preview as a
broken or malicious server would: a redirect to another port, an endless body, one byte a second,
text that is not JSON, JSON without the fields the command prints, an error with a huge body. The
commands run in-process through ``main`` (the console script's entry point), with ``--timeout 1``:
the documented option that bounds the whole exchange, small here so a drip ends in a second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tessera.plugin.cli import EXIT_USAGE, main
from tessera.plugin.cli.inputs import MAX_DAG_RESPONSE_BYTES, MAX_RESPONSE_BYTES

TOKEN = "secret-token-of-the-operator"
CHUNK = b" " * (1 << 20)
WHY_WITHOUT_DAG_ID = {
    "at": "2026-01-01T00:00:00Z",
    "cause": "ran",
    "verdict": "Ran.",
    "occurrence": None,
    "run": None,
    "schedule_in_force": "every 5m",
    "schedule_now": "every 5m",
    "evidence": [],
}


class Hostile(ThreadingHTTPServer):
    mode: str
    seen: list[tuple[str, str | None]]
    """(path, Authorization header) of every request."""
    sent: int
    """Body bytes written before the client hung up (the endless and drip modes)."""
    other: str
    """The base URL of the other server (the redirect's target)."""


class Answers(BaseHTTPRequestHandler):
    server: Hostile

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        self.server.seen.append((self.path, self.headers.get("Authorization")))
        mode = self.server.mode
        if mode == "redirect":
            self._head(302, Location=f"{self.server.other}{self.path}")
        elif mode == "endless":
            self._head(200)
            self._stream(CHUNK, pause=0)
        elif mode == "drip":
            self._head(200, **{"Content-Length": "100000"})
            self._stream(b" ", pause=1)
        elif mode == "not-json":
            self._body(200, b"<html>hello, not JSON</html>")
        elif mode == "json-without-fields":
            self._body(200, json.dumps(WHY_WITHOUT_DAG_ID).encode())
        elif mode == "error":
            self._body(500, b"Internal\n\x1b[31merror\x1b[0m " + b"x" * 100_000)
        else:  # the redirect's target: a plain answer that must never be asked
            self._body(200, b"{}")

    def _head(self, status: int, **headers: str) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _body(self, status: int, body: bytes) -> None:
        self._head(status, **{"Content-Type": "application/json", "Content-Length": str(len(body))})
        self.wfile.write(body)

    def _stream(self, chunk: bytes, *, pause: float) -> None:
        deadline = time.monotonic() + 60  # a test that forgot to hang up cannot leave this thread forever
        try:
            while time.monotonic() < deadline:
                self.wfile.write(chunk)
                self.wfile.flush()
                self.server.sent += len(chunk)
                time.sleep(pause)
        except OSError:  # the client hung up: what it was sent is counted
            pass

    def log_message(self, *args: object) -> None:
        pass


def _serve(mode: str) -> Hostile:
    server = Hostile(("127.0.0.1", 0), Answers)
    server.mode, server.seen, server.sent, server.other = mode, [], 0, ""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def servers() -> Iterator[tuple[Hostile, Hostile]]:
    """The hostile server, and another on a second port that a redirect points at."""
    hostile, other = _serve("redirect"), _serve("target")
    hostile.other = f"http://127.0.0.1:{other.server_address[1]}"
    try:
        yield hostile, other
    finally:
        for server in (hostile, other):
            server.shutdown()
            server.server_close()


def _base(server: Hostile) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


DATES = ["--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T01:00:00Z"]
CALLERS = {
    # caller: (argv before the --api options, the answer it expects, its body cap)
    "why": (["why", "some_dag"], "why answer", MAX_DAG_RESPONSE_BYTES),
    "plan": (["plan"], "plan", MAX_RESPONSE_BYTES),
    "plan-dag": (["plan", "--dag-id", "some_dag"], "DAG plan", MAX_DAG_RESPONSE_BYTES),
    "load": (["plan", "--load"], "fleet load", MAX_RESPONSE_BYTES),
    "backfill-preview": (["plan", "some_dag", *DATES], "backfill preview", MAX_DAG_RESPONSE_BYTES),
}


def _run(caller: str, base: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, float]:
    """The command's exit status, its one line on stderr, and how long it took."""
    argv = [*CALLERS[caller][0], "--api", base, "--token", TOKEN, "--timeout", "1"]
    began = time.monotonic()
    code = main(argv)
    took = time.monotonic() - began
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    lines = _said(err)
    assert len(lines) == 1, err
    assert TOKEN not in err
    return code, lines[0], took


def _said(err: str) -> list[str]:
    """The command's own lines (Airflow may log a line of its own the first time it is imported)."""
    return [line for line in err.splitlines() if line.startswith("tessera ")]


def _prefix(caller: str) -> str:
    return "tessera why: " if caller == "why" else "tessera plan: "


@pytest.mark.parametrize("caller", CALLERS)
def test_a_redirect_to_another_port_is_refused_and_the_token_goes_nowhere(servers, caller, capsys):
    hostile, other = servers
    code, line, _ = _run(caller, _base(hostile), capsys)
    assert code == EXIT_USAGE
    assert line.startswith(f"{_prefix(caller)}`--api`: {_base(hostile)} answered 302, a redirect to {_base(other)};")
    assert "tessera follows no redirects" in line
    assert other.seen == [], "the redirect was followed"
    assert [auth for _, auth in hostile.seen] == [f"Bearer {TOKEN}"], "the token goes where --api points, once"


@pytest.mark.parametrize(
    ("location", "origin"),
    [
        pytest.param("http://169.254.169.254/latest/meta-data/iam/", "http://169.254.169.254", id="cloud-metadata"),
        pytest.param("https://u:p@evil.example:8443/?t=1", "https://evil.example:8443", id="credentials-in-it"),
        pytest.param("file:///etc/passwd", "file://", id="a-local-file"),
        pytest.param("/login?next=/tessera", "http://127.0.0.1:{port}", id="same-origin"),
    ],
)
def test_any_redirect_is_refused_naming_only_its_origin(servers, location, origin, capsys):
    """Not even to the same origin: the operator gives the address the API server answers on, once."""
    hostile, _ = servers
    hostile.other = location  # the handler redirects to `other` + the path asked
    code, line, _ = _run("why", _base(hostile), capsys)
    assert code == EXIT_USAGE
    shown = origin.format(port=hostile.server_address[1])
    assert f"answered 302, a redirect to {shown}; tessera follows no redirects" in line
    assert "meta-data" not in line and "u:p" not in line and "passwd" not in line
    assert len(hostile.seen) == 1


@pytest.mark.parametrize("caller", CALLERS)
def test_an_endless_body_is_read_up_to_the_cap_and_no_further(servers, caller, capsys):
    hostile, _ = servers
    hostile.mode = "endless"
    cap = CALLERS[caller][2]
    # A fleet's cap (256 MiB) takes a few seconds to stream on a loaded machine: this one has time for it.
    argv = [*CALLERS[caller][0], "--api", _base(hostile), "--token", TOKEN, "--timeout", "60"]
    assert main(argv) == EXIT_USAGE
    (line,) = _said(capsys.readouterr().err)
    assert line == (
        f"{_prefix(caller)}`--api`: {_base(hostile)} answered 200 with more than {cap} bytes, not read further; "
        "ask for less (--count, --dag-id)"
    )
    # The client hung up at the cap: what the server got out is the cap plus what the sockets' buffers hold.
    deadline = time.monotonic() + 10
    while hostile.sent <= cap and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the server notices the hang-up at its next write
    assert cap < hostile.sent < cap + 64 * (1 << 20), hostile.sent


@pytest.mark.parametrize("caller", CALLERS)
def test_a_byte_a_second_ends_at_the_timeout(servers, caller, capsys):
    hostile, _ = servers
    hostile.mode = "drip"
    code, line, took = _run(caller, _base(hostile), capsys)
    assert code == EXIT_USAGE
    assert line == (
        f"{_prefix(caller)}`--api`: {_base(hostile)} did not finish answering within 1 s; check that it is the API "
        "server and that it is up, or give a longer --timeout"
    )
    assert took < 10, f"{took:.1f} s for a 1 s deadline"  # generous: a loaded CI machine, Airflow's first import


@pytest.mark.parametrize("caller", CALLERS)
def test_text_that_is_not_json_is_refused(servers, caller, capsys):
    hostile, _ = servers
    hostile.mode = "not-json"
    code, line, _ = _run(caller, _base(hostile), capsys)
    assert code == EXIT_USAGE
    assert line == (
        f"{_prefix(caller)}`--api`: {_base(hostile)} did not answer JSON ('<html>hello, not JSON</html>'); give the "
        "address of an Airflow API server with tessera installed"
    )


@pytest.mark.parametrize("caller", CALLERS)
def test_json_without_the_fields_the_command_prints_is_refused_naming_the_first(servers, caller, capsys):
    hostile, _ = servers
    hostile.mode = "json-without-fields"
    code, line, _ = _run(caller, _base(hostile), capsys)
    assert code == EXIT_USAGE
    assert line.startswith(
        f"{_prefix(caller)}`--api`: {_base(hostile)} did not answer a tessera {CALLERS[caller][1]} ("
    )
    assert ": Field required); give the address of an Airflow API server with this tessera version" in line
    if caller == "why":  # every field of a why answer but its DAG id
        assert "(dag_id: Field required)" in line


@pytest.mark.parametrize("caller", CALLERS)
def test_an_http_error_quotes_a_bounded_printable_excerpt(servers, caller, capsys):
    hostile, _ = servers
    hostile.mode = "error"
    code, line, _ = _run(caller, _base(hostile), capsys)
    assert code == EXIT_USAGE
    assert line.startswith(f"{_prefix(caller)}`--api`: {_base(hostile)} answered 500: 'Internal ?[31merror?[0m xxx")
    assert line.endswith("x...'") and len(line) < 300, line


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize(
    ("api", "shown"),
    [
        pytest.param("file:///etc/hostname#", "'file:///etc/hostname'", id="a-local-file"),
        pytest.param("ftp://127.0.0.1/", "'ftp://127.0.0.1/'", id="ftp"),
        pytest.param("localhost:8080", "'localhost:8080'", id="no-scheme"),
        pytest.param("http://", "'http://'", id="no-host"),
        pytest.param("http://127.0.0.1:99999", "'http://127.0.0.1:99999'", id="port-out-of-range"),
    ],
)
def test_only_http_urls_are_asked(caller, api, shown, capsys):
    argv = [*CALLERS[caller][0], "--api", api]
    assert main(argv) == EXIT_USAGE
    assert capsys.readouterr().err == (
        f"{_prefix(caller)}`--api`: {shown}; tessera sends requests only to http:// or https:// URLs with a host, "
        "e.g. http://localhost:8080\n"
    )


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("seconds", ["0", "-1", "nan", "3601"])
def test_the_timeout_is_bounded(caller, seconds, capsys):
    assert main([*CALLERS[caller][0], "--api", "http://127.0.0.1:9", "--timeout", seconds]) == EXIT_USAGE
    assert f"`--timeout`: {float(seconds):g}; give the seconds the whole --api exchange may take" in (
        capsys.readouterr().err
    )


def test_the_console_script_holds_no_more_than_the_cap_of_an_endless_body(servers):
    """The real ``tessera`` process: its peak memory stays within the fleet cap and a start-up's worth."""
    hostile, _ = servers
    hostile.mode = "endless"
    tessera = str(Path(sys.executable).parent / "tessera")
    process = subprocess.Popen(
        [tessera, "plan", "--api", _base(hostile), "--timeout", "120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TESSERA_API_TOKEN": TOKEN},
    )
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        if process.returncode is None and process.poll() is None:
            process.kill()
    err = process.stderr.read().decode() if process.stderr else ""
    assert os.waitstatus_to_exitcode(status) == EXIT_USAGE, err
    assert f"answered 200 with more than {MAX_RESPONSE_BYTES} bytes" in err and "Traceback" not in err
    peak = usage.ru_maxrss * 1024  # kB on Linux
    # The body read up to the cap lives in one buffer (growing it may hold a copy for a moment); Airflow's
    # imports are a few hundred MB more. An unbounded read grows past any such figure within seconds.
    assert peak < 2 * MAX_RESPONSE_BYTES + 600 * (1 << 20), f"peak {peak >> 20} MiB"
