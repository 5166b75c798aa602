"""One Python process in a deployment's environment that answers a script's ``read(*args)``, call after call.

A test that reads what the deployment stored through the product's own code (``load_history``, as the
status page does) used to start ``python -c <script>`` for each read: each imported Airflow and tessera
anew, about 3.7 s of CPU, and the Celery and PostgreSQL fault tests read some 40 times a run while they
wait (150 CPU-s of a suite that keeps both cores busy). The process imports once; each read still opens
its own session, so it sees what was committed before it was asked.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_SERVE = """
import json, sys, traceback
scope = {"__name__": "reader"}
exec(compile(sys.argv[1], "<read script>", "exec"), scope)
for line in sys.stdin:
    try:
        answer = {"value": scope["read"](*json.loads(line))}
    except Exception:
        answer = {"error": traceback.format_exc()}
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()
"""


class Reader:
    """``script`` defines ``read(*args)`` returning JSON; ``reader(*args)`` runs it in the process and returns that.

    Its stderr goes to ``log``. A read unanswered within ``timeout`` seconds stops the process and fails, so a
    late answer is never taken for the next read's.
    """

    def __init__(self, python: Path, script: str, *, env: Mapping[str, str], cwd: Path, log: Path) -> None:
        self.log = log
        with log.open("ab") as errors:
            self._process = subprocess.Popen(
                [str(python), "-c", _SERVE, script],
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                start_new_session=True,
            )
        self._answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._answers.put(line)
        self._answers.put(None)  # the process is gone

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def __call__(self, *args: Any, timeout: float = 120) -> Any:
        if not self.alive:
            raise AssertionError(f"the reader exited with {self._process.returncode}; see {self.log}")
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(args) + "\n")
        self._process.stdin.flush()
        try:
            line = self._answers.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise AssertionError(f"the reader gave no answer in {timeout} s; see {self.log}") from None
        if line is None:
            raise AssertionError(f"the reader exited with {self._process.wait()}; see {self.log}")
        answer = json.loads(line)
        assert "error" not in answer, answer["error"][-3000:]
        return answer["value"]

    def stop(self) -> None:
        try:
            self._process.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._process.wait()
