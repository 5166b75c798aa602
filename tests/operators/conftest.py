"""Fixtures for cursor-function tests: real DAG files in a temporary folder, real fires on the metadata DB.

Each test DAG file is written to disk, parsed by Airflow's ``DagBag`` (so the dag
policy and the operator's parse-time checks run as in the dag-processor), stored in
the metadata DB, and fired with ``dag.test()``, which runs the task through the Task
SDK against an in-process Execution API: Variables and XComs go through the same
API a worker uses. The function's behaviour for the next fire is set in a JSON
control file the DAG file reads, so a test flips it between fires.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.compat.airflow_names import TaskNoStatsLogger, initialize_stats, settle_task_stats, task_stats

DAG_TEMPLATE = '''
"""A test cursor function; what it does on the next fire is read from control.json."""
from __future__ import annotations

import json, os, time
from pathlib import Path

from airflow.sdk import DAG
from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Cron, Every

HERE = Path(__file__).parent
{prelude}


def call(payload):
    control = json.loads((HERE / "control.json").read_text()).get({dag_id!r}, {{}})
    with (HERE / "calls-{dag_id}.jsonl").open("a") as calls:
        calls.write(json.dumps(payload) + "\\n")
    mode = control.get("mode", "ok")
    if mode in ("sleep", "wait"):
        (HERE / "started-{dag_id}").write_text(str(os.getpid()))
        deadline = time.monotonic() + control.get("seconds", 120)
        while time.monotonic() < deadline and not (mode == "wait" and (HERE / "release-{dag_id}").exists()):
            time.sleep(0.2)
    if mode == "raise":
        raise RuntimeError("the function fell over")
    if mode == "invalid":
        return {{"count": "many", "cursor": {{"n": payload["cursor"]["n"] + 1}}}}
    if mode == "huge":
        return {{"count": 1, "cursor": {{"n": 0, "blob": "x" * (70 * 1024)}}}}
    return {{"count": 1, "cursor": {{"n": payload["cursor"]["n"] + 1}}}}


with DAG(dag_id={dag_id!r}, schedule={schedule}, start_date=None, catchup=False):
    CursorFunctionOperator(
        task_id="fn",
        function={function},
        input={{"region": "emea"}},
        input_schema={{"type": "object", "required": ["region", "cursor"]}},
        output_schema={{
            "type": "object",
            "required": ["count", "cursor"],
            "properties": {{"count": {{"type": "integer", "minimum": 0}}}},
        }},
        cursor_from="/cursor",
        cursor_into="/cursor",
        initial={{"n": 0}},
        {extra}
    )
'''


BUNDLE_CONFIG = "AIRFLOW__DAG_PROCESSOR__DAG_BUNDLE_CONFIG_LIST"


def dags_folder_bundle(folder: Path) -> str:
    """``[dag_processor] dag_bundle_config_list`` for a ``dag.test()``: the dags-folder bundle, in ``folder``.

    ``dag.test()`` first parses and stores every DAG file of the bundle that owns the DAG, for its
    siblings (apache/airflow#64884). The test DAGs are stored under "dags-folder", whose folder is the
    examples folder: every fire parsed and stored all the example DAGs, most of its CPU, though none of
    them is fired. Pointed at the test's own folder (or an empty one: a test DAG has no siblings), the
    version fired is still the one the test stored beforehand: dag.test() finds it after syncing.
    """
    folder.mkdir(exist_ok=True)
    bundle = {
        "name": "dags-folder",
        "classpath": "airflow.dag_processing.bundles.local.LocalDagBundle",
        "kwargs": {"path": str(folder)},
    }
    return json.dumps([bundle])


class CursorDags:
    """A folder of generated test DAG files, registered in the metadata DB under the dags-folder bundle."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.control = folder / "control.json"
        self.control.write_text("{}")
        # The dags-folder bundle a fire sees (dags_folder_bundle): a folder with no DAG files, no siblings.
        self.no_siblings = folder / "no-siblings"

    def add(
        self, dag_id: str, *, extra: str = "", prelude: str = "", function: str = "call", schedule: str = 'Every("1h")'
    ) -> Any:
        """Write, parse and store a test DAG; return the parsed DAG object.

        ``extra`` is added to the operator's keyword arguments, ``prelude`` to the module;
        ``function`` and ``schedule`` are the expressions given as the function and the schedule.
        """
        source = DAG_TEMPLATE.format(
            dag_id=dag_id,
            extra=textwrap.dedent(extra).strip(),
            prelude=textwrap.dedent(prelude).strip(),
            function=function,
            schedule=schedule,
        )
        path = self.folder / f"{dag_id}.py"
        path.write_text(source)
        return self.load(path).dags[dag_id]

    def load(self, path: Path) -> Any:
        from airflow.dag_processing.bundles.manager import DagBundlesManager

        from tests.compat.airflow_names import DagBag, sync_bag_to_db

        DagBundlesManager().sync_bundles_to_db()
        bag = DagBag(str(path))
        sync_bag_to_db(bag, "dags-folder", None)
        return bag

    def behave(self, dag_id: str, **control: Any) -> None:
        data = json.loads(self.control.read_text())
        data[dag_id] = control
        self.control.write_text(json.dumps(data))

    def calls(self, dag_id: str) -> list[Any]:
        path = self.folder / f"calls-{dag_id}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def fire(self, dag: Any, conf: dict[str, Any] | None = None) -> Any:
        """One real fire through ``dag.test()``; returns the cursor task instance."""
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(BUNDLE_CONFIG, dags_folder_bundle(self.no_siblings))
            run = dag.test(run_conf=conf)
        return task_instance(dag.dag_id, run.run_id)

    def start_fire(self, dag_id: str) -> subprocess.Popen[bytes]:
        """A fire in its own process (``dag.test()`` of the DAG file), like a worker; the caller ends it."""
        script = (
            "from airflow.dag_processing.dagbag import DagBag\n"
            f"DagBag({str(self.folder / (dag_id + '.py'))!r}).dags[{dag_id!r}].test()\n"
        )
        from airflow.configuration import conf

        # Unit-test mode draws a fresh Fernet key per process: share ours, or each side
        # would read the other's Variables as undecryptable.
        env = {
            **os.environ,
            "AIRFLOW__CORE__FERNET_KEY": conf.get("core", "fernet_key"),
            BUNDLE_CONFIG: dags_folder_bundle(self.no_siblings),  # as in ``fire``
        }
        log = (self.folder / f"process-{dag_id}.log").open("ab")
        return subprocess.Popen([sys.executable, "-c", script], env=env, stdout=log, stderr=subprocess.STDOUT)

    def release(self, dag_id: str) -> None:
        """Let a fire in mode "wait" return."""
        (self.folder / f"release-{dag_id}").touch()

    def wait_started(self, dag_id: str, process: subprocess.Popen[bytes], timeout: float = 600) -> None:
        """Wait until the function of the fire in ``process`` is running (modes "sleep" and "wait").

        It waits for what it needs, the marker or the process's end; ``timeout`` only bounds a hang. On a busy
        machine (parallel workers beside other work) the start of a fire's process took more than two minutes.
        """
        marker = self.folder / f"started-{dag_id}"
        deadline = time.monotonic() + timeout
        while not marker.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                log = (self.folder / f"process-{dag_id}.log").read_text()[-3000:]
                raise AssertionError(f"the fire of {dag_id} never started:\n{log}")
            time.sleep(0.2)


def task_instance(dag_id: str, run_id: str, task_id: str = "fn") -> Any:
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        ti = session.scalar(
            select(TaskInstance).where(
                TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id, TaskInstance.task_id == task_id
            )
        )
        session.expunge(ti)
        return ti


def stored_cursor(key: str) -> Any:
    """The cursor as stored (read with the metadata-DB model, as an admin would), or None."""
    from airflow.models.variable import Variable

    value = Variable.get(key, default_var=None)
    return None if value is None else json.loads(value)


def fire_record(dag_id: str, run_id: str, task_id: str = "fn") -> dict[str, Any] | None:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tessera.operators.functions.record import RECORD_KEY

    with create_session() as session:
        row = session.scalar(
            select(XComModel).where(
                XComModel.dag_id == dag_id,
                XComModel.run_id == run_id,
                XComModel.task_id == task_id,
                XComModel.key == RECORD_KEY,
            )
        )
        return None if row is None else XComModel.deserialize_value(row)


@pytest.fixture(scope="session")
def cursor_dags(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CursorDags]:
    yield CursorDags(tmp_path_factory.mktemp("cursor-dags"))


class RecordingStats(TaskNoStatsLogger):
    """Airflow's no-op stats logger, keeping what it was asked to emit (installed by ``Stats.initialize``)."""

    emitted: ClassVar[list[tuple[str, str, Any, dict[str, str]]]] = []

    @classmethod
    def incr(cls, stat: str, count: int = 1, rate: int = 1, *, tags: dict[str, str] | None = None) -> None:
        cls.emitted.append(("incr", stat, count, tags or {}))

    @classmethod
    def gauge(cls, stat: str, value: float, rate: int = 1, delta: bool = False, *, tags: Any = None) -> None:
        cls.emitted.append(("gauge", stat, value, tags or {}))

    @classmethod
    def timing(cls, stat: str, dt: Any, *, tags: dict[str, str] | None = None) -> None:
        cls.emitted.append(("timing", stat, dt, tags or {}))

    @classmethod
    def of(cls, stat: str, dag_id: str) -> list[tuple[str, Any, dict[str, str]]]:
        return [
            (kind, value, tags) for kind, name, value, tags in cls.emitted if name == stat and tags["dag_id"] == dag_id
        ]


@pytest.fixture
def recorded_stats() -> Iterator[type[RecordingStats]]:
    """Route the Task SDK's Stats to :class:`RecordingStats` for one test."""
    settle_task_stats()  # Airflow's own initialisation of the Task SDK's Stats first; ours after it

    stats = task_stats()
    RecordingStats.emitted.clear()
    initialize_stats(stats, RecordingStats)
    yield RecordingStats
    initialize_stats(stats, TaskNoStatsLogger)


def missing(reason: str) -> None:
    """Skip for ``reason`` on a laptop; fail in CI (``CI`` set), where ``.ci/run`` installs what is missing."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[Any]:
    """A throwaway PostgreSQL cluster (``scripts/postgres.sh``), deleted after the module that asked for it."""
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        missing("PostgreSQL server binaries not installed (/usr/lib/postgresql/*/bin); run scripts/postgres.sh install")
    from tests.e2e.conftest import PostgresServer

    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()
