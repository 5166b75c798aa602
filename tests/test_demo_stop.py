"""How the demo's supervisor stops its components, with real processes standing in for Airflow's.

A component that ends on SIGTERM stops quietly. One that outlives its grace is named in the
terminal with where its threads wait (``/proc/<pid>/task/*/wchan``), then stopped harder: the
line a person (or CI's log) reads when a scheduler hangs in ``LocalExecutor.end()``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")

sys.path.insert(0, str(REPO / "scripts"))
import demo_processes  # noqa: E402
import demo_supervisor  # noqa: E402

SLEEPER = "import time; print('ready', flush=True); time.sleep(60)"
DEAF = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"


def _stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: str) -> str:
    """Start one component running ``code``, stop the demo with 1 s graces, and return what the terminal showed."""
    for grace in ("SERVICES_GRACE_SECONDS", "API_GRACE_SECONDS", "KILL_WAIT_SECONDS"):
        monkeypatch.setattr(demo_supervisor, grace, 1.0)
    demo = demo_supervisor.Demo(REPO, Path(sys.executable).parent, tmp_path, 0)
    demo.logs.mkdir(parents=True)
    process = demo.component("scheduler", [sys.executable, "-c", code])
    deadline = time.monotonic() + 30
    while "ready" not in (demo.logs / "scheduler.log").read_text():
        assert time.monotonic() < deadline, "the stand-in never started"
        time.sleep(0.05)
    demo.stop()
    assert process.poll() is not None, "stop() returned with the component running"
    return capsys.readouterr().out


def test_a_component_that_stops_on_sigterm_is_not_reported(tmp_path, monkeypatch, capsys) -> None:
    shown = _stop(tmp_path, monkeypatch, capsys, SLEEPER)
    assert "still running" not in shown and "SIGKILL" not in shown, shown


def test_a_component_that_outlives_its_grace_is_named_with_where_it_waits(tmp_path, monkeypatch, capsys) -> None:
    shown = _stop(tmp_path, monkeypatch, capsys, DEAF)
    assert re.search(r"  still running: -c import signal.* \(pid \d+; waiting: 1 \w*nanosleep\)", shown), shown
    assert "SIGKILL to" in shown, shown


def test_where_each_thread_waits_is_counted_by_the_kernels_name_for_it() -> None:
    """Here one thread asleep in a timer, one blocked reading a pipe; a process that is gone says so."""
    straggler = subprocess.Popen(
        [sys.executable, "-c", "import os, threading, time; r, w = os.pipe(); "
         "threading.Thread(target=os.read, args=(r, 1), daemon=True).start(); print('ready', flush=True); "
         "time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert straggler.stdout is not None and straggler.stdout.readline().strip() == "ready"
        # The kernel's own function names, which vary by version (pipe_read, anon_pipe_read), in their order.
        wanted = r"(1 \w*pipe_read, 1 \w*nanosleep|1 \w*nanosleep, 1 \w*pipe_read)"
        deadline = time.monotonic() + 10
        while not re.fullmatch(wanted, seen := demo_processes.waiting_in(straggler.pid)):
            assert time.monotonic() < deadline, seen
            time.sleep(0.05)
    finally:
        straggler.kill()
        straggler.wait()
    assert demo_processes.waiting_in(straggler.pid) == "gone"
