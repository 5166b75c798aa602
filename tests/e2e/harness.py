"""A throwaway Airflow deployment for end-to-end tests: its own AIRFLOW_HOME, metadata DB and processes.

Everything runs as real subprocesses of this virtualenv's ``airflow`` (the same
binaries a user runs), in an environment stripped of the test session's own
Airflow settings. The metadata DB is SQLite by default, or a PostgreSQL database
(``conftest.PostgresServer``); the tests read it directly (``sqlite3`` or
``psycopg2``), so what they assert on is exactly what the schedulers wrote.
"""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from tessera.plugin.sqlite_settings import BUSY_TIMEOUT_SECONDS
from tessera.plugin.sqlite_settings import ENVIRONMENT as SQLITE_ENVIRONMENT

from .reader import Reader

# The venv's bin directory, unresolved: resolving would follow the python symlink out of the venv.
BIN = Path(sys.executable).parent
AIRFLOW = BIN / "airflow"
DAGS_SOURCE = Path(__file__).resolve().parent / "dags"

# On every process's PYTHONPATH: a process started with TESSERA_E2E_HOSTNAME reports it as its
# hostname, so the job table tells which of two schedulers created a run; others keep the real one.
_HOSTNAME_MODULE = """
import os


def hostname():
    from airflow.utils.net import getfqdn  # Airflow's default hostname_callable

    return os.environ.get("TESSERA_E2E_HOSTNAME") or getfqdn()
"""

T = TypeVar("T")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _utc(value: str | datetime.datetime | None) -> datetime.datetime | None:
    # SQLite hands back naive "YYYY-MM-DD HH:MM:SS.ffffff" UTC strings, PostgreSQL aware datetimes.
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc)
    return datetime.datetime.fromisoformat(value).replace(tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class StoredRun:
    """One ``dag_run`` row as the scheduler wrote it."""

    run_id: str
    run_type: str
    logical_date: datetime.datetime | None
    data_interval_start: datetime.datetime | None
    data_interval_end: datetime.datetime | None
    run_after: datetime.datetime
    queued_at: datetime.datetime | None
    state: str = ""
    created_at: datetime.datetime | None = None
    creator: str | None = None
    """The hostname of the scheduler job that created the run (None: not a scheduler)."""


class AirflowHome:
    """An AIRFLOW_HOME with its own metadata DB and DAGs folder, and the processes running against it.

    :param database_url: a PostgreSQL SQLAlchemy URL (``postgresql+psycopg2://...``);
        default an SQLite file in the home.
    :param dags_source: the folder whose DAG files are copied into the home.
    """

    def __init__(self, root: Path, *, database_url: str | None = None, dags_source: Path = DAGS_SOURCE) -> None:
        self.root = root
        self.dags = root / "dags"
        self.db = root / "airflow.db"
        self.database_url = database_url or f"sqlite:///{self.db}"
        self.process_logs = root / "process-logs"
        self.process_logs.mkdir(parents=True, exist_ok=True)
        shutil.copytree(dags_source, self.dags, ignore=shutil.ignore_patterns("__pycache__"))
        self._processes: dict[str, subprocess.Popen[bytes]] = {}
        self._cli_calls = 0
        self._readers: dict[str, Reader] = {}
        self.started_at: datetime.datetime | None = None
        """When the first long-running process was launched."""
        self.env = self._environment()

    @property
    def is_postgres(self) -> bool:
        return self.database_url.startswith("postgresql")

    def _environment(self) -> dict[str, str]:
        # Drop every Airflow setting of the surrounding test session (its own home, DB,
        # unit-test mode): the processes must see a plain deployment.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "_AIRFLOW"))}
        support = self.root / "pythonpath"
        support.mkdir(exist_ok=True)
        (support / "tessera_e2e_hostname.py").write_text(_HOSTNAME_MODULE)
        env.update(
            AIRFLOW_HOME=str(self.root),
            AIRFLOW__CORE__DAGS_FOLDER=str(self.dags),
            AIRFLOW__CORE__LOAD_EXAMPLES="False",
            AIRFLOW__CORE__EXECUTOR="LocalExecutor",
            AIRFLOW__CORE__PARALLELISM="2",
            AIRFLOW__CORE__HOSTNAME_CALLABLE="tessera_e2e_hostname.hostname",
            # A file a test writes is parsed at once (its mtime is newer than its last parse); an unchanged
            # one every 2 minutes, not Airflow's 30 s: re-parsing unchanged files was a third of an idle
            # deployment's CPU (4 files: 10.3 -> 7.3 CPU-s a 2-minute idle stretch at 600 s), and several
            # deployments run at once on 2 cores. Still bounded, should a parse finish after a write it missed.
            AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL="120",
            AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=self.database_url,
            # The scheduler serves task logs on a port; a fixed one would clash with a demo or
            # another test session on the same machine.
            AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT=str(_free_port()),
            PYTHONPATH=os.pathsep.join(filter(None, [str(support), env.get("PYTHONPATH")])),
            PYTHONUNBUFFERED="1",
        )
        if not self.is_postgres:
            # Every process waits up to a minute for SQLite's write lock, not sqlite3's 5 s default.
            env.update(SQLITE_ENVIRONMENT)
        return env

    # -- processes ------------------------------------------------------------------------------

    def cli(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """Run ``airflow <args>`` to completion; its output is also kept for the failure artifacts."""
        return self.run([str(AIRFLOW), *args], timeout=timeout)

    def run(self, argv: Sequence[str], *, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        self._cli_calls += 1
        result = subprocess.run(
            list(argv), env=self.env, cwd=self.root, capture_output=True, text=True, timeout=timeout
        )
        log = self.process_logs / f"cli-{self._cli_calls:02d}.log"
        log.write_text(
            f"$ {' '.join(argv)}\nexit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
        )
        return result

    def reader(self, script: str) -> Reader:
        """The process answering ``script``'s ``read(*args)`` in this deployment's environment (started once)."""
        found = self._readers.get(script)
        if found is None or not found.alive:
            log = self.process_logs / f"reader-{len(self._readers) + 1}.log"
            found = self._readers[script] = Reader(BIN / "python", script, env=self.env, cwd=self.root, log=log)
        return found

    def start(self, name: str, *args: str, env: Mapping[str, str] | None = None) -> None:
        """Start ``airflow <args>`` in its own process group, so stopping it also stops its children.

        ``env`` is added to the deployment's environment for this process only; with
        ``TESSERA_E2E_HOSTNAME`` in it, the process's jobs report that as their hostname.
        """
        if self.started_at is None:
            self.started_at = datetime.datetime.now(datetime.timezone.utc)
        log = (self.process_logs / f"{name}.log").open("ab")
        self._processes[name] = subprocess.Popen(
            [str(AIRFLOW), *args],
            env={**self.env, **(env or {})},
            cwd=self.root,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    @property
    def running(self) -> dict[str, int]:
        """The processes this home started and has not stopped: their names and process ids."""
        return {name: process.pid for name, process in self._processes.items()}

    def check_alive(self) -> None:
        for name, process in self._processes.items():
            if process.poll() is not None:
                raise AssertionError(f"airflow {name} exited with {process.returncode}; see {name}.log")

    def kill(self, name: str) -> None:
        """``kill -9`` the process group of ``name`` (the process and its workers), as a crash would."""
        process = self._processes.pop(name)
        self._signal(process, signal.SIGKILL)
        process.wait()

    def terminate(self, name: str, *, grace: float = 30) -> None:
        """Stop ``name`` as an operator would (SIGTERM, then SIGKILL after ``grace`` s); its group goes too."""
        process = self._processes.pop(name)
        self._signal(process, signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        self._signal(process, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        """Stop every started process group: SIGTERM, then SIGKILL whatever is left after a grace period."""
        for process in self._processes.values():
            self._signal(process, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in self._processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            # The group leader may be gone while its workers linger: kill the group regardless.
            self._signal(process, signal.SIGKILL)
            process.wait()
        self._processes.clear()
        for reader in self._readers.values():
            reader.stop()
        self._readers.clear()

    @staticmethod
    def _signal(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass

    def log_size(self, name: str) -> int:
        """How many bytes process ``name`` has logged so far: an offset for :meth:`logged_since`."""
        log = self.process_logs / f"{name}.log"
        return log.stat().st_size if log.exists() else 0

    def logged_since(self, name: str, offset: int) -> bytes:
        """What process ``name`` wrote to its log past byte ``offset`` (a size taken before a step)."""
        with (self.process_logs / f"{name}.log").open("rb") as log:
            log.seek(offset)
            return log.read()

    # -- the metadata DB ------------------------------------------------------------------------

    def query(self, sql: str, *params: object) -> list[tuple]:
        """Rows of ``sql`` (``?`` placeholders on either database); JSON columns come back as text."""
        if self.is_postgres:
            return self._query_postgres(sql.replace("?", "%s"), params)
        # Read-only, with a generous busy timeout: the scheduler holds SQLite's single write lock often.
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30) as conn:
            return conn.execute(sql, params).fetchall()

    def execute(self, sql: str, *params: object) -> None:
        """Run one writing statement as the database owner: what a test changes behind Airflow's back."""
        if self.is_postgres:
            self._query_postgres(sql.replace("?", "%s"), params, fetch=False)
            return
        # Waits for the write lock as long as Airflow's own processes do, and then some: a holder on a
        # loaded host can keep it past a 30 s wait (tessera.plugin.sqlite_settings).
        with closing(sqlite3.connect(self.db, timeout=2 * BUSY_TIMEOUT_SECONDS)) as conn, conn:
            conn.execute(sql, params)

    def _query_postgres(self, sql: str, params: Sequence[object], *, fetch: bool = True) -> list[tuple]:
        import psycopg2
        import psycopg2.extras

        conn = psycopg2.connect(self.database_url.replace("+psycopg2", ""))
        try:
            conn.autocommit = True
            # As SQLite returns them, so the same assertions read either database.
            psycopg2.extras.register_default_json(conn, loads=lambda text: text)
            psycopg2.extras.register_default_jsonb(conn, loads=lambda text: text)
            with conn.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall() if fetch else []
        finally:
            conn.close()

    def runs(self, dag_id: str) -> list[StoredRun]:
        rows = self.query(
            "SELECT r.run_id, r.run_type, r.logical_date, r.data_interval_start, r.data_interval_end,"
            " r.run_after, r.queued_at, r.state, r.created_at, j.hostname"
            " FROM dag_run r LEFT JOIN job j ON j.id = r.creating_job_id"
            " WHERE r.dag_id = ? ORDER BY r.run_after, r.run_id",
            dag_id,
        )
        return [
            StoredRun(
                run_id,
                run_type,
                _utc(logical),
                _utc(start),
                _utc(end),
                _utc(after),
                _utc(queued),
                state,
                _utc(created),
                host,
            )
            for run_id, run_type, logical, start, end, after, queued, state, created, host in rows
        ]

    def scheduler_jobs(self) -> dict[str, str]:
        """The state of each scheduler's newest job, by the name it was started under."""
        rows = self.query("SELECT hostname, state FROM job WHERE job_type = 'SchedulerJob' ORDER BY id")
        return {hostname: state for hostname, state in rows}

    def is_parsed(self, dag_id: str) -> bool:
        return bool(self.query("SELECT 1 FROM serialized_dag WHERE dag_id = ?", dag_id))

    def wait_for(self, what: str, probe: Callable[[], T | None], *, timeout: float, interval: float = 2) -> T:
        """Poll ``probe`` until it returns something truthy; fail after ``timeout`` s or if a process died."""
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            found = probe()
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
            time.sleep(interval)

    def wait_for_runs(self, dag_id: str, count: int, *, timeout: float) -> list[StoredRun]:
        """The runs of ``dag_id`` once there are at least ``count`` of them."""

        def enough() -> list[StoredRun] | None:
            runs = self.runs(dag_id)
            return runs if len(runs) >= count else None

        return self.wait_for(f"{count} runs of {dag_id}", enough, timeout=timeout)

    # -- failure artifacts ----------------------------------------------------------------------

    def save_artifacts(self, dest: Path) -> None:
        """Keep what explains a failure: process and CLI output, Airflow's own logs, the dag_run and job tables."""
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.process_logs, dest / "process-logs", dirs_exist_ok=True)
        if (self.root / "logs").exists():
            shutil.copytree(self.root / "logs", dest / "airflow-logs", dirs_exist_ok=True)
        if self.is_postgres or self.db.exists():
            for table, order in (("dag_run", "dag_id, run_after"), ("job", "id")):
                try:
                    rows = self.query(f"SELECT * FROM {table} ORDER BY {order}")
                except Exception as error:  # the DB may be what broke; keep the rest of the artifacts
                    rows = [("unreadable", repr(error))]
                (dest / f"{table}.txt").write_text("\n".join(map(repr, rows)) + "\n")
