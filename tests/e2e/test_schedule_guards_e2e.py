"""Fail-fast waves and refresh single flight under a real scheduler, triggerer, workers and API server (SQLite).

Two things the scheduler must hold, observed in the rows it writes:

- ``e2e_ff``, a schedule with two waves (``max_wave_concurrent=1``): wave 1's pipeline
  fails every fire (after its one retry); wave 2's pipeline must never start its work,
  and both runs' notes name the failed member and the cancelled wave;
- ``e2e_refresh_flight``, a DAG with a ``RefreshSQLOperator`` whose scheduled run stays in
  flight for a while: a run triggered through Airflow's own REST API meanwhile waits
  queued, is not dropped, and no two runs of the DAG are ever running at once.
"""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Iterator

import pytest

from .conftest import admin_api, api_server_healthy, keep_artifacts_if_failed
from .harness import AirflowHome, _free_port, _utc

WAIT = 420
REFRESH_DAG = "e2e_refresh_flight"
SLOW_SECONDS = 40

# About 2 minutes on an idle machine: make test starts the longest deployments first (tests/conftest.py).
pytestmark = pytest.mark.minutes(2)

DAGS = f'''
"""Schedule-guard end-to-end DAGs (written by tests/e2e/test_schedule_guards_e2e.py)."""
import time

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG
from tessera.operators.refresh_sql import RefreshSQLOperator
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.timetables import Every, Fixed

S = ScheduleSet([Schedule("e2e_ff", interval_seconds=60, max_wave_concurrent=1, retries=1, retry_delay=1)])


def bad_upstream_data():
    raise RuntimeError("bad upstream data")


with DAG("e2e_ff_1_load", start_date=None, **S.dag_kwargs("e2e_ff")) as dag:
    PythonOperator(task_id="load", python_callable=bad_upstream_data)
S.apply(dag)
with DAG("e2e_ff_2_report", start_date=None, **S.dag_kwargs("e2e_ff")) as dag:
    EmptyOperator(task_id="report")
S.apply(dag)

# No max_active_runs: the dag policy gives a refresh DAG one active run.
with DAG({REFRESH_DAG!r}, schedule=Every("1m", phase=Fixed("0s")), start_date=None, is_paused_upon_creation=False):
    PythonOperator(task_id="slow", python_callable=lambda: time.sleep({SLOW_SECONDS})) >> RefreshSQLOperator(
        task_id="totals",
        conn_id="e2e_refresh_db",
        sql="SELECT 1 AS n",
        target_table="totals",
        target_ddl="CREATE TABLE IF NOT EXISTS totals (n INTEGER)",
    )
'''


@pytest.fixture(scope="module")
def guard_stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowHome]:
    """Its own deployment with a triggerer (the wave gates defer) and an API server (workers, REST)."""
    home = AirflowHome(tmp_path_factory.mktemp("airflow-guards"))
    for copied in home.dags.glob("*.py"):
        copied.unlink()
    (home.dags / "guards_e2e_dags.py").write_text(textwrap.dedent(DAGS))
    port = _free_port()
    home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "s" * 64,
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="True",
        AIRFLOW__CORE__PARALLELISM="3",
        # The triggerer serves its logs on a port too; a fixed one would clash with another deployment.
        AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT=str(_free_port()),
        AIRFLOW_CONN_E2E_REFRESH_DB=json.dumps({"conn_type": "sqlite", "host": str(home.root / "refresh.db")}),
    )
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate")
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1")
        home.start("dag-processor", "dag-processor")
        home.start("triggerer", "triggerer")
        home.wait_for("the API server", lambda: api_server_healthy(home), timeout=300)
        home.start("scheduler", "scheduler")
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


def _first_fire(home: AirflowHome) -> tuple[tuple, tuple] | None:
    """The first fire's two runs, once the wave-2 run is finished: (run_id, state, note) each."""
    runs = {}
    for dag_id in ("e2e_ff_1_load", "e2e_ff_2_report"):
        rows = home.query(
            "SELECT r.run_id, r.state, n.content, r.data_interval_end FROM dag_run r"
            " LEFT JOIN dag_run_note n ON n.dag_run_id = r.id"
            " WHERE r.dag_id = ? AND r.run_type = 'scheduled' ORDER BY r.data_interval_end LIMIT 1",
            dag_id,
        )
        if not rows:
            return None
        runs[dag_id] = rows[0]
    load, report = runs["e2e_ff_1_load"], runs["e2e_ff_2_report"]
    assert load[3] == report[3], "the two first runs belong to one fire"
    return (load, report) if report[1] in ("success", "failed") and load[1] in ("success", "failed") else None


def _tasks(home: AirflowHome, dag_id: str, run_id: str) -> dict[str, tuple]:
    rows = home.query(
        "SELECT task_id, state, start_date, try_number FROM task_instance WHERE dag_id = ? AND run_id = ?",
        dag_id,
        run_id,
    )
    return {task_id: (state, start, tries) for task_id, state, start, tries in rows}


@pytest.mark.e2e
def test_a_failed_wave_cancels_the_next_wave_and_the_notes_say_why(guard_stack: AirflowHome) -> None:
    home = guard_stack
    load, report = home.wait_for("the first fire of e2e_ff to finish", lambda: _first_fire(home), timeout=WAIT)

    load_tasks = _tasks(home, "e2e_ff_1_load", load[0])
    assert load[1] == "failed"
    assert load_tasks["load"][0] == "failed" and load_tasks["load"][2] == 2, "failed after its one retry"

    report_tasks = _tasks(home, "e2e_ff_2_report", report[0])
    assert report[1] == "failed"
    assert report_tasks["tessera_wave_gate"][0] == "failed"
    # Never queued nor tried (Airflow stamps a start date on an upstream_failed task all the same).
    assert report_tasks["report"][0] == "upstream_failed" and report_tasks["report"][2] == 0, (
        "wave 2's work never started"
    )

    expected = f"Fail-fast: e2e_ff_1_load/{load[0]} failed in wave 1 of schedule e2e_ff's fire "
    for run in (load, report):
        assert expected in (run[2] or ""), run
        assert "cancelled wave 2 (e2e_ff_2_report): their pipelines do not run this fire." in run[2]


def _runs(home: AirflowHome) -> list[dict]:
    rows = home.query(
        "SELECT run_id, run_type, state, start_date, end_date FROM dag_run WHERE dag_id = ? ORDER BY id", REFRESH_DAG
    )
    return [
        {"run_id": r, "run_type": t, "state": s, "start": _utc(start), "end": _utc(end)} for r, t, s, start, end in rows
    ]


def _slow_task_running(home: AirflowHome, *, besides: set[str]) -> str | None:
    rows = home.query(
        "SELECT r.run_id FROM task_instance t JOIN dag_run r ON r.dag_id = t.dag_id AND r.run_id = t.run_id"
        " WHERE t.dag_id = ? AND t.task_id = 'slow' AND t.state = 'running' AND r.run_type = 'scheduled'",
        REFRESH_DAG,
    )
    return next((run_id for (run_id,) in rows if run_id not in besides), None)


TRIGGER_ATTEMPTS = 3
"""Scheduled runs to trigger beside: a trigger whose answer came after the scheduled run had ended
(the API server waits up to a minute for SQLite's write lock, the slow task lasts 40 s) tested nothing."""


def _queued_beside(home: AirflowHome, scheduled: str, triggered: str) -> list[str]:
    """The triggered run's states, polled while the scheduled run is running (never two running)."""
    states = []
    for _ in range(10):
        by_id = {run["run_id"]: run for run in _runs(home)}
        if by_id[scheduled]["state"] != "running":
            break
        states.append(by_id[triggered]["state"])
        assert sum(run["state"] == "running" for run in by_id.values()) == 1
        time.sleep(1)
    return states


@pytest.mark.e2e
def test_a_trigger_beside_a_scheduled_refresh_waits_queued_and_is_not_dropped(guard_stack: AirflowHome) -> None:
    home = guard_stack
    tried: set[str] = set()
    for _ in range(TRIGGER_ATTEMPTS):
        scheduled = home.wait_for(
            "a scheduled refresh in flight", lambda: _slow_task_running(home, besides=tried), timeout=WAIT
        )
        tried.add(scheduled)
        triggered = admin_api(home, "POST", f"/api/v2/dags/{REFRESH_DAG}/dagRuns", {"logical_date": None})["dag_run_id"]
        # While the scheduled run is in flight the triggered one is held queued, polled for a while.
        states = _queued_beside(home, scheduled, triggered)
        if states:
            break
    assert states and set(states) == {"queued"}, states

    def triggered_finished() -> dict | None:
        run = next(run for run in _runs(home) if run["run_id"] == triggered)
        return run if run["state"] in ("success", "failed") else None

    done = home.wait_for("the triggered run to finish", triggered_finished, timeout=WAIT)
    assert done["state"] == "success", "the triggered run was not dropped: it ran after the scheduled one"
    # Never two at once: the runs' [start, end] intervals, as the scheduler recorded them, do not overlap.
    ran = sorted((run for run in _runs(home) if run["start"] is not None), key=lambda run: run["start"])
    for before, after in zip(ran, ran[1:], strict=False):
        assert before["end"] is not None and before["end"] <= after["start"], (before, after)
