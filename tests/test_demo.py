"""The demo as a new user meets it: ``scripts/demo.sh`` (what ``make demo`` runs) in a fresh home on a free port.

The README's recipes run against it as written (``scripts/demo-airflow ...``, and plain
``AIRFLOW_HOME=<home> airflow ...`` with no other setting), every example file parses
without an import error and no Airflow example DAG is registered, the HTTP example's run
goes green through the scheduler and a worker on that port, and a SIGTERM to the demo's
pid leaves none of its processes running. The processes are found here independently of
the demo's own bookkeeping: by the AIRFLOW_HOME in their environment or command line, and
by the process tree seen while the demo ran (Airflow retitles its workers and API server,
which hides their environment).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import EXAMPLES, REPO

pytestmark = pytest.mark.e2e

VENV = Path(sys.executable).parent.parent  # unresolved: resolving would follow the symlink out of the venv
Process = tuple[int, int]  # (pid, start time): a pid alone can be reused


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, state) of a process, or None once it is gone."""
    try:
        line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = line[line.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[19]), fields[0]


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _tree(root: int) -> set[Process]:
    """The processes below ``root`` right now."""
    stats = {pid: stat for pid in _all_pids() if (stat := _stat(pid)) is not None}
    found, todo = set(), [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, start, _) in stats.items():
            if ppid == parent:
                found.add((pid, start))
                todo.append(pid)
    return found


def _carrying(home: Path) -> set[Process]:
    """Live processes whose environment or command line names ``home``."""
    needle = str(home).encode()
    found = set()
    for pid in _all_pids():
        try:
            seen = Path(f"/proc/{pid}/environ").read_bytes() + Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        stat = _stat(pid)
        if needle in seen and stat is not None and stat[2] != "Z":
            found.add((pid, stat[1]))
    return found


def _running(processes: set[Process]) -> set[Process]:
    return {(pid, start) for pid, start in processes if (stat := _stat(pid)) and stat[1] == start and stat[2] != "Z"}


def _describe(processes: set[Process]) -> str:
    names = []
    for pid, _ in sorted(processes):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            command = "(gone)"
        names.append(f"{pid}: {command[:100]}")
    return "\n".join(names)


def _json(stdout: str) -> object:
    """The JSON an ``airflow ... -o json`` printed, after any warning lines before it."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(("[", "{")) and not line.startswith("[warn"))
    return json.loads("\n".join(lines[start:]))


@dataclass
class Demo:
    process: subprocess.Popen[bytes]
    home: Path
    port: int
    env: dict[str, str]
    log: Path
    seen: set[Process] = field(default_factory=set)
    """Every process of the demo's tree seen so far."""

    def look(self) -> None:
        self.seen |= _tree(self.process.pid)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]

    def wait_for(self, what: str, condition: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.process.poll() is None, f"the demo exited ({self.process.returncode}):\n{self.output()}"
            assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s\n{self.output()}"
            self.look()
            time.sleep(1)

    def run(self, *argv: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a command to success. A write that SQLite refuses because the scheduler committed since
        the command's transaction began ("database is locked" at once: no busy wait applies) is rolled
        back whole and tried again, at most three times; any other failure fails the test."""
        for _ in range(3):
            self.look()  # a task may be running now: its processes belong to the demo too
            done = subprocess.run(
                list(argv), env={**self.env, **(extra_env or {})}, capture_output=True, text=True, timeout=180
            )
            if done.returncode == 0 or "database is locked" not in done.stdout + done.stderr:
                break
        assert done.returncode == 0, f"{argv} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    def query(self, sql: str, *params: object) -> list[tuple]:
        with sqlite3.connect(f"file:{self.home / 'airflow.db'}?mode=ro", uri=True, timeout=60) as db:
            return db.execute(sql, params).fetchall()


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/monitor/health", timeout=5) as answer:
            return answer.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """The demo started as a user would, in a fresh home; killed with all it left if a test did not stop it."""
    root = tmp_path_factory.mktemp("demo")
    home, port = root / "home", _free_port()
    # Nothing of the test session's own Airflow settings: the demo must stand on its airflow.cfg alone.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "_AIRFLOW"))}
    env.update(TESSERA_DEMO_HOME=str(home), TESSERA_DEMO_PORT=str(port), TESSERA_DEMO_VENV=str(VENV))
    log = root / "demo.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", str(REPO / "scripts" / "demo.sh")], env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root
        )
    started = Demo(process, home, port, env, log)
    try:
        started.wait_for("the API server's health endpoint", lambda: _healthy(port), timeout=180)
        yield started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid, _ in _running(started.seen) | _carrying(home):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_the_cli_recipe_tries_a_fire_against_the_demo(demo: Demo):
    demo.run(
        str(REPO / "scripts" / "demo-airflow"), "dags", "test", "tessera_cursor_digest", "-c", '{"dry_run": true}'
    )
    latest = demo.query(
        "SELECT state FROM dag_run WHERE dag_id = 'tessera_cursor_digest' AND run_type = 'manual' ORDER BY id DESC"
    )[:1]
    assert latest == [("success",)]


def test_every_example_parses_and_no_airflow_example_is_registered(demo: Demo):
    files = {path.name for path in EXAMPLES.glob("*.py")}

    def every_file_parsed() -> bool:
        parsed = demo.query("SELECT relative_fileloc FROM dag WHERE is_stale = 0")
        failed = demo.query("SELECT filename FROM import_error")
        return files <= {Path(name).name for (name,) in parsed + failed}

    demo.wait_for("every example file parsed", every_file_parsed, timeout=120)
    # Plain Airflow against the home, as the README also allows: the settings are in its airflow.cfg.
    plain = {"AIRFLOW_HOME": str(demo.home)}
    airflow = str(VENV / "bin" / "airflow")
    assert _json(demo.run(airflow, "dags", "list-import-errors", "-o", "json", extra_env=plain).stdout) == []
    listed = _json(demo.run(airflow, "dags", "list", "-o", "json", extra_env=plain).stdout)
    assert listed and all(dag["dag_id"].startswith("tessera_") for dag in listed)  # type: ignore[union-attr]


def test_the_http_example_goes_green_through_the_scheduler(demo: Demo):
    """The demo's own sync service, its connection and the port override, on a worker via the Execution API."""
    demo.run(str(REPO / "scripts" / "demo-airflow"), "dags", "trigger", "tessera_cursor_http", "--run-id", "front-door")

    def finished() -> bool:
        return demo.query("SELECT state FROM dag_run WHERE run_id = 'front-door'") in ([("success",)], [("failed",)])

    demo.wait_for("the triggered run finished", finished, timeout=150)
    states = demo.query("SELECT task_id, state FROM task_instance WHERE run_id = 'front-door'")
    assert states == [("sync", "success")], demo.output()


def test_sigterm_to_the_demo_stops_every_process_it_started(demo: Demo):
    demo.look()
    assert len(_running(demo.seen)) >= 5  # the sync service, the four Airflow components, their workers...
    demo.process.send_signal(signal.SIGTERM)
    code = demo.process.wait(timeout=90)
    assert code == 128 + signal.SIGTERM, demo.output()
    left = _running(demo.seen) | _carrying(demo.home)
    assert not left, f"still running after the demo exited:\n{_describe(left)}"
