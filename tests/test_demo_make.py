"""The demo notices a stop signal sent to the ``make`` it runs under (``kill -INT <pid of make>``).

GNU make passes SIGTERM on to its recipe but keeps SIGINT, SIGHUP and SIGQUIT to itself
and waits. :class:`demo_processes.ParentMake` reads make's signal dispositions from
``/proc``; here a real ``make`` runs a recipe that watches with it, and gets each signal.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")

WATCHER = f"""
import sys, time
sys.path.insert(0, {str(REPO / "scripts")!r})
import demo_processes

watcher = demo_processes.ParentMake()
print("watching" if watcher.caught is not None else "not under make", flush=True)
if watcher.caught is None:
    sys.exit()
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    found = watcher.stop_signal()
    if found is not None:
        print("stop", found, flush=True)
        break
    time.sleep(0.05)
"""


def _under_make(tmp_path: Path) -> subprocess.Popen[str]:
    (tmp_path / "watch.py").write_text(WATCHER)
    (tmp_path / "Makefile").write_text(f"watch:\n\t{sys.executable} watch.py\n")
    process = subprocess.Popen(
        ["make", "--no-print-directory", "-s", "watch"], cwd=tmp_path, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "watching"
    return process


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP], ids=["sigint", "sighup"])
def test_the_demo_sees_the_signal_make_keeps_to_itself(tmp_path: Path, sig: signal.Signals) -> None:
    make = _under_make(tmp_path)
    make.send_signal(sig)
    out, _ = make.communicate(timeout=60)
    assert out.strip() == f"stop {int(sig)}"
    assert make.returncode == -sig  # make ends as the signal says once its recipe has


def test_a_recipe_not_run_by_make_watches_nothing(tmp_path: Path) -> None:
    (tmp_path / "watch.py").write_text(WATCHER)
    done = subprocess.run([sys.executable, "watch.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[0] == "not under make"
