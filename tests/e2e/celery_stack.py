"""The Celery tier's deployment: PostgreSQL, Redis as the broker, and Airflow with the CeleryExecutor.

One deployment serves every ``test_celery_*.py`` module (session scope): two
schedulers, one API server, a triggerer, a dag-processor and two Celery workers,
each worker a separate process group with its own working directory, hostname
and log-server port, as on two machines. Worker ``worker-a`` serves the queues
``default`` and ``node-a``, ``worker-b`` ``default`` and ``node-b``: a task pinned
to ``node-a`` can only run on the first.

A cluster policy in the deployment's ``airflow_local_settings.py`` (Airflow's own
``task_instance_mutation_hook``, applied by the scheduler to every task instance it
creates) routes the fires of the DAGs in :data:`ROUTED` to ``node-a`` or ``node-b``
by their occurrence, so consecutive fires run on different workers by construction.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from .conftest import PostgresServer, _free_port, api_server_healthy, keep_artifacts_if_failed
from .cursor_state import cursor_state
from .harness import AIRFLOW, AirflowHome

CELERY_DAGS = Path(__file__).resolve().parent / "dags_celery"
REDIS_SERVER = Path("/usr/bin/redis-server")
SCHEDULERS = ("scheduler-a", "scheduler-b")
WORKERS = {"worker-a": "node-a", "worker-b": "node-b"}
"""Each worker's name (its hostname in ``task_instance.hostname``) and the node queue only it serves."""
CAP = 2
"""``[tessera] max_concurrent_dispatches`` in this deployment."""

FIRST_DAGS = (
    "celery_alternate",
    "celery_forbid",
    "celery_fan_a",
    "celery_fan_b",
    "celery_fan_child",
    "celery_wave_1",
    "celery_wave_2",
    "celery_listed_nodes",
    "celery_all_nodes",
)
"""Unpaused as soon as the deployment is up, so the tests of several modules gather their runs side by side."""

ROUTED = {"celery_alternate": (10, 2), "celery_forbid": (5, 0)}
"""DAG id -> (its cadence in seconds, cycle): occurrence k goes to ``node-a`` when ``k % cycle < cycle / 2``.

Cycle 0 picks the node from a stable hash of k instead. ``celery_forbid``'s fires that run are a
few ticks apart, and how many depends on how late each starts: any fixed cycle can match that gap
(CI saw every fire land on one worker while starts ran 11 to 27 s late), a hash mixes the nodes
whatever the gap.
"""

_LOCAL_SETTINGS = f"""
import datetime
import hashlib

ROUTED = {ROUTED!r}


def task_instance_mutation_hook(task_instance, dag_run=None):
    # From the run id, not dag_run: Airflow also re-applies this hook where it has no run at hand.
    routed = ROUTED.get(task_instance.dag_id)
    run_id = task_instance.run_id or ""
    if routed is None or not run_id.startswith("scheduled__"):
        return
    cadence, cycle = routed
    # tessera records the run's phase, delay and interval after a "~" at the end of the id.
    occurrence = datetime.datetime.fromisoformat(run_id.split("__", 1)[1].split("~", 1)[0])
    k = int(occurrence.timestamp()) // cadence
    first = hashlib.sha256(str(k).encode()).digest()[0] % 2 == 0 if cycle == 0 else k % cycle < cycle // 2
    task_instance.queue = "node-a" if first else "node-b"
"""


class RedisServer:
    """Debian's ``redis-server`` on a free loopback port, in its own directory, persisting every write.

    Append-only with fsync on every write: a restart of the broker must keep the task
    messages it had accepted, as a production broker does.
    """

    def __init__(self, root: Path) -> None:
        self.dir = root
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = (self.dir / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [str(REDIS_SERVER), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "yes"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + 30
        while not self.ping():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start; see {self.dir / 'redis.log'}")
            time.sleep(0.2)

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_timeout=2).ping())
        except redis.RedisError:
            return False

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)
        self.process = None


class CeleryHome(AirflowHome):
    """An :class:`AirflowHome` whose processes may each run in a working directory of their own."""

    def start(self, name: str, *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> None:
        if cwd is None:
            super().start(name, *args, env=env)
            return
        cwd.mkdir(parents=True, exist_ok=True)
        log = (self.process_logs / f"{name}.log").open("ab")
        self._processes[name] = subprocess.Popen(
            [str(AIRFLOW), *args],
            env={**self.env, **(env or {})},
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def start_worker(self, name: str) -> int:
        """``airflow celery worker`` named ``name``, serving ``default`` and its node queue, in its own dir.

        Returns the size its process log had before the start, for :meth:`wait_until_ready`.
        """
        since = self.log_size(name)
        own = {
            "TESSERA_E2E_HOSTNAME": name,
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(_free_port()),
        }
        queues = f"default,{WORKERS[name]}"
        self.start(
            name, "celery", "worker", "--queues", queues, "--concurrency", "2",
            "--celery-hostname", f"{name}@tessera-e2e", env=own, cwd=self.root / name,
        )  # fmt: skip
        return since

    def wait_until_ready(self, name: str, since: int) -> None:
        """Until worker ``name`` has logged Celery's "ready" after ``since``: it consumes its queues and answers.

        A node's worker that is still starting is down to the node selector, which asks the live workers
        for their queues: a run fired before then skips that node's copy, and the other copies wait in vain
        for it to arrive (CI: both node DAGs failed, their runs made while worker-b was starting).
        """
        marker = f"{name}@tessera-e2e ready.".encode()

        def ready() -> bool:
            return marker in self.logged_since(name, since)

        self.wait_for(f"Celery worker {name} to be ready", ready, timeout=300, interval=1)

    def worker_pids(self, name: str) -> int:
        return self._processes[name].pid


def start_celery_stack(home: CeleryHome) -> None:
    port = home.env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].split(":")[2].split("/")[0]
    home.start("dag-processor", "dag-processor")
    home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", port, "--workers", "1")
    home.start("triggerer", "triggerer")
    home.wait_for("the API server", lambda: api_server_healthy(home), timeout=300)
    started = {name: home.start_worker(name) for name in WORKERS}
    for name in SCHEDULERS:
        own = {"TESSERA_E2E_HOSTNAME": name, "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(_free_port())}
        home.start(name, "scheduler", env=own)
    # Before any DAG is unpaused: a fire must find every node's worker live (see wait_until_ready).
    for name, since in started.items():
        home.wait_until_ready(name, since)


@pytest.fixture(scope="session")
def celery_stack(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[CeleryHome]:
    """The Celery deployment (see the module docstring), DAGs from ``tests/e2e/dags_celery``.

    :data:`FIRST_DAGS` are unpaused once it is up; the others stay paused until a test needs them.
    """
    if not REDIS_SERVER.exists():
        reason = f"{REDIS_SERVER} not installed; apt-get install redis-server"
        if __import__("os").environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI: {reason}")
        pytest.skip(reason)
    home = CeleryHome(
        tmp_path_factory.mktemp("airflow-celery"),
        database_url=postgres_server.create_database("tessera_celery"),
        dags_source=CELERY_DAGS,
    )
    (home.root / "pythonpath" / "airflow_local_settings.py").write_text(_LOCAL_SETTINGS)
    # The calls log every worker appends to, and the files a test steers the functions with.
    (home.root / "cursor-control").mkdir()
    redis = RedisServer(home.root / "redis")
    redis.start()
    home.env.update(
        AIRFLOW__CORE__EXECUTOR="CeleryExecutor",
        AIRFLOW__CORE__PARALLELISM="8",
        AIRFLOW__CELERY__BROKER_URL=f"{redis.url}/0",
        # Task states in the metadata database, Airflow's default and what production uses: with
        # them in Redis too, a broker outage fails the schedulers' state sync and stops them.
        AIRFLOW__CELERY__RESULT_BACKEND="db+" + home.database_url.replace("+psycopg2", ""),
        AIRFLOW__OPERATORS__DEFAULT_QUEUE="default",
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{_free_port()}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "s" * 64,
        AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT="20",
        AIRFLOW__WORKERS__EXECUTION_API_RETRY_WAIT_MIN="0.2",
        AIRFLOW__WORKERS__EXECUTION_API_RETRY_WAIT_MAX="1",
        # A message a lost worker took but never acknowledged goes back to a queue after 20 s
        # (default a day), so the tier sees the redelivery Celery makes after a crash.
        AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__VISIBILITY_TIMEOUT="20",
        AIRFLOW__TESSERA__MAX_CONCURRENT_DISPATCHES=str(CAP),
        AIRFLOW__TESSERA__NODES=",".join([*WORKERS.values(), "node-c"]),
    )
    home.redis = redis  # type: ignore[attr-defined]
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate", timeout=600)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        start_celery_stack(home)
        set_paused(home, FIRST_DAGS, False)
        yield home
    finally:
        home.stop()
        redis.stop()
        keep_artifacts_if_failed(home, request, failed_before)


# -- what the tests read -------------------------------------------------------------------------


def fire_state(home: AirflowHome, dag_id: str) -> dict:
    """The stored cursor of ``dag_id``; by run id, each finished fire's ``[outcome, reason]`` and each skip's reason."""
    return cursor_state(home, dag_id, "fire")


def calls(home: AirflowHome, dag_id: str | None = None, event: str | None = None) -> list[dict]:
    """The lines the functions appended to ``calls.jsonl``, in order, optionally of one DAG and event."""
    import json

    path = home.root / "cursor-control" / "calls.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [c for c in lines if dag_id in (None, c["dag_id"]) and event in (None, c["event"])]


def set_paused(home: AirflowHome, dag_ids: tuple[str, ...], paused: bool) -> None:
    """Pause or unpause DAGs as the UI's toggle does, once they are parsed."""
    for dag_id in dag_ids:
        home.wait_for(f"{dag_id} to be parsed", lambda d=dag_id: home.is_parsed(d), timeout=300)
        home.execute(f"UPDATE dag SET is_paused = {str(paused).lower()} WHERE dag_id = '{dag_id}'")


def task_instances(home: AirflowHome, dag_id: str) -> dict[str, tuple[str | None, str | None, str | None]]:
    """By run id: the state, queue and hostname (the worker's name) of the DAG's ``fire`` task instance."""
    rows = home.query("SELECT run_id, state, queue, hostname FROM task_instance WHERE dag_id = ?", dag_id)
    return {run_id: (state, queue, hostname) for run_id, state, queue, hostname in rows}
