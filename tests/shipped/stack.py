"""A deployment of the product as shipped: Airflow's four components run from a virtualenv holding the wheel.

Nothing of the checkout is reachable from these processes: they run from the fresh
virtualenv's ``bin``, with their working directory outside the repository and an
environment built from nothing (no PYTHONPATH, no VIRTUAL_ENV, none of the test session's
Airflow settings), so ``import tessera`` can only find the installed wheel. The settings
are the ones the README gives a user: SQLite with tessera's connection settings, the
LocalExecutor, the simple auth manager with one admin.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
ADMIN = ("admin", "admin-password")
QUIET_MARGIN = datetime.timedelta(minutes=2)
"""How far off the next scheduled run must be for a manual run to have its DAG to itself."""


def quiet(query: Callable[..., list[tuple]], dag_id: str, *, margin: datetime.timedelta = QUIET_MARGIN) -> bool:
    """Whether a run of ``dag_id`` started now has the DAG to itself: none in flight and none due within ``margin``.

    A cursor function's ``Forbid`` skips a fire while another is in flight, so a manual run
    that meets the scheduler's own run (the one an unpause creates, or the next tick) is
    skipped with ``ConcurrencyForbidden``. ``query`` runs SQL on the metadata DB (SQLite).
    """
    in_flight = query("SELECT count(*) FROM dag_run WHERE dag_id = ? AND state IN ('queued', 'running')", dag_id)
    found = query("SELECT is_paused, next_dagrun_create_after FROM dag WHERE dag_id = ?", dag_id)
    if in_flight[0][0] or not found:
        return False
    paused, due = found[0]
    if paused or due is None:
        return True
    due_at = datetime.datetime.fromisoformat(due).replace(tzinfo=datetime.timezone.utc)  # SQLite: naive UTC text
    return due_at > datetime.datetime.now(datetime.timezone.utc) + margin


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ShippedAirflow:
    """An AIRFLOW_HOME under ``root`` (outside the checkout) served by the virtualenv in ``bin_dir``."""

    def __init__(self, root: Path, bin_dir: Path, dags: Path) -> None:
        self.root, self.bin, self.dags = root, bin_dir, dags
        self.home = root / "home"
        self.logs = root / "process-logs"
        self.home.mkdir()
        self.logs.mkdir()
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        # Every setting comes from the environment below; the file only keeps Airflow from writing its
        # own (whose provider sections would hide where the [tessera] defaults come from).
        (self.home / "airflow.cfg").write_text("[core]\nload_examples = False\n")
        passwords = self.home / "passwords.json"
        passwords.write_text(json.dumps(dict([ADMIN])))
        self.env = {
            "PATH": f"{bin_dir}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin",
            "HOME": os.environ.get("HOME", str(root)),
            "LANG": "C.UTF-8",
            "TMPDIR": str(root),
            "PYTHONUNBUFFERED": "1",
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "2",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.base}/execution/",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{ADMIN[0]}:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{self.home / 'airflow.db'}",
            # As the README tells a user on SQLite: writes wait for the single write lock.
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS": "tessera.plugin.sqlite_settings.CONNECT_ARGS",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC": "tessera.plugin.sqlite_settings.ASYNC_CONNECT_ARGS",
            "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "90",
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(self.port),
            "AIRFLOW__API__WORKERS": "1",
            # Its graceful shutdown (Airflow's default 120 s) within the 20 s stop() gives it.
            "AIRFLOW__API__WORKER_TIMEOUT": "15",
            "AIRFLOW__API__BASE_URL": self.base,
            "AIRFLOW__API__SECRET_KEY": "tessera-shipped-" + "k" * 32,
            "AIRFLOW__API_AUTH__JWT_SECRET": "tessera-shipped-" + "s" * 64,
            # Fixed by default (8793, 8794): another Airflow on the machine may hold them.
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
        }

    # -- processes ------------------------------------------------------------------------------

    def run(self, *argv: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """A command of the venv (``airflow``, ``tessera``, ``python``) with the deployment's environment."""
        command = [str(self.bin / str(argv[0])), *map(str, argv[1:])]
        done = subprocess.run(command, env=self.env, cwd=self.home, capture_output=True, text=True, timeout=timeout)
        with (self.logs / "commands.log").open("a") as log:
            log.write(f"$ {' '.join(command)}\nexit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}\n")
        return done

    def start(self, name: str, *args: str) -> None:
        with (self.logs / f"{name}.log").open("ab") as log:
            self.processes[name] = subprocess.Popen(
                [str(self.bin / "airflow"), *args],
                env=self.env,
                cwd=self.home,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def check_alive(self) -> None:
        for name, process in self.processes.items():
            assert process.poll() is None, f"airflow {name} exited with {process.returncode}; see {self.logs}"

    def stop(self) -> None:
        for process in self.processes.values():
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _signal_group(process, signal.SIGKILL)  # its workers may linger after the leader
            process.wait()
        self.processes.clear()

    def wait_for(self, what: str, probe: Callable[[], T | None], *, timeout: float, interval: float = 1) -> T:
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            found = probe()
            if found:
                return found
            assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s; logs in {self.logs}"
            time.sleep(interval)

    # -- HTTP and the metadata DB ---------------------------------------------------------------

    def request(self, method: str, path: str, *, token: str = "", body: Any = None) -> tuple[int, str]:
        """Status and body text of one request; connection failures count as status 0."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.base}{path}", data=data, method=method)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as answer:
                return answer.status, answer.read().decode(errors="replace")
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode(errors="replace")
        except OSError:
            return 0, ""

    def healthy(self) -> bool:
        return self.request("GET", "/api/v2/monitor/health")[0] == 200

    def token(self) -> str:
        status, body = self.request("POST", "/auth/token", body=dict(zip(("username", "password"), ADMIN)))
        assert status == 201, f"POST /auth/token answered {status}: {body[:500]}"
        return json.loads(body)["access_token"]

    def query(self, sql: str, *params: object) -> list[tuple]:
        with sqlite3.connect(f"file:{self.home / 'airflow.db'}?mode=ro", uri=True, timeout=60) as db:
            return db.execute(sql, params).fetchall()


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass
