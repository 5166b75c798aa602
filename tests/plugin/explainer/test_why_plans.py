"""``why`` reads one DAG's runs and audit log through an index bound, never its whole history.

Airflow keeps no ``(dag_id, run_after)`` index on ``dag_run`` and no ``(dag_id, event, dttm)``
index on ``log``, and tessera does not alter Airflow's tables. A read that filters a DAG's runs or
entries by anything but an indexed bound reads every row the DAG ever had: ``why`` took 1.4 s at
400,000 runs of one DAG on SQLite (``bench/why_history.py``). This test answers a range of
questions (a run that ran, a pause, a scheduler gap, a slot held, a manual run, before any run,
Airflow's own timetable, no schedule) while a cursor listener records every statement, then asks
SQLite for each statement's plan (``EXPLAIN QUERY PLAN``, the same parameters) and fails on any
step that reads ``dag_run`` or ``log`` by a full scan, or by the DAG id alone. The plan is what is
checked, not a timing: it fails on a laptop as on CI.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

import pytest
from sqlalchemy import delete, event, update

from tessera.plugin.explainer import explain
from tessera.plugin.scoped_reads import Scope
from tests.plugin.api.test_api_app import store_dags
from tests.plugin.explainer.test_why import logged, run, scheduler_job

UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
NOW = T0 + datetime.timedelta(hours=1)
STORED = datetime.datetime(2026, 1, 1, tzinfo=UTC)
DAGS = """
import datetime
from airflow.sdk import DAG
from airflow.timetables.trigger import CronTriggerTimetable
from tessera.timetables import Every, Fixed

start = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
for dag_id, schedule, extra in [
    ("plan_every", Every("5m", phase=Fixed("0s")), {{"max_active_runs": 1}}),
    ("plan_builtin", CronTriggerTimetable("*/5 * * * *", timezone="UTC"), {{}}),
    ("plan_manual_only", None, {{}}),
]:
    with DAG(dag_id, schedule=schedule, **{{"start_date": start, **extra}}):
        pass
"""
DAG_IDS = ("plan_every", "plan_builtin", "plan_manual_only")
HISTORY_TABLES = ("dag_run", "log", "task_instance", "xcom")
_STEP = re.compile(r"^(SCAN|SEARCH) (\w+)(?: AS \w+)?\b(.*)$")


def at(minutes: float) -> datetime.datetime:
    return T0 + datetime.timedelta(minutes=minutes)


@pytest.fixture(scope="module")
def history(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The DAGs, and a history with a run of every kind, a pause, a parse record and a scheduler gap."""
    from airflow.jobs.job import Job
    from airflow.models.dag_version import DagVersion
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    store_dags(tmp_path_factory.mktemp("why_plans"), DAGS, DAG_IDS)
    with create_session() as session:
        session.execute(update(DagVersion).where(DagVersion.dag_id.in_(DAG_IDS)).values(created_at=STORED))
        stored = update(SerializedDagModel).where(SerializedDagModel.dag_id.in_(DAG_IDS))
        session.execute(stored.values(created_at=STORED, last_updated=STORED))
        session.execute(delete(TaskInstance).where(TaskInstance.dag_id.in_(DAG_IDS)))
        session.execute(delete(DagRun).where(DagRun.dag_id.in_(DAG_IDS)))
        session.execute(delete(Log))
        session.execute(delete(Job))
        scheduler_job(session, at(-120), at(20), host="sched-a")
        scheduler_job(session, at(32), NOW, host="sched-b")
        for minutes in range(-60, 20, 5):
            run(session, "plan_every", at(minutes), state="failed" if minutes == -30 else "success")
            run(session, "plan_builtin", at(minutes))
        run(session, "plan_every", at(35), created=at(37), state="running")
        run(session, "plan_every", at(12), run_type="manual", user="ada")
        run(session, "plan_manual_only", at(12), run_type="manual", user="ada")
        logged(session, "patch_dag", "plan_every", at(-12), {"is_paused": True})
        logged(session, "patch_dag", "plan_every", at(-7), {"is_paused": False})
        logged(session, "tessera.parse", "plan_every", at(-40), {"state": "ok"})


def planned(questions: list[tuple[str, datetime.datetime]]) -> list[tuple[str, list[str]]]:
    """Every statement the answers to ``questions`` run, with SQLite's plan of it (one line per step)."""
    from airflow.settings import engine
    from airflow.utils.session import create_session

    seen: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            seen.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        for dag_id, moment in questions:
            with create_session() as session:
                explain(session, dag_id, at=moment, now=NOW, scope=Scope.everything())
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert engine.dialect.name == "sqlite", "the plans are SQLite's: run this test on the SQLite metadata DB"
    found = []
    with engine.connect() as conn:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        for statement, parameters in seen:
            steps = cursor.execute(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall()
            found.append((statement, [step[-1] for step in steps]))
    return found


def whole_history(step: str) -> str | None:
    """Why a plan step reads every row one DAG ever had (or every row), or None when it is bounded."""
    match = _STEP.match(step)
    if match is None or match.group(2) not in HISTORY_TABLES:
        return None
    how, table, rest = match.groups()
    if how == "SCAN":
        return f"a full scan of {table}"
    if rest.rstrip().endswith("(dag_id=?)"):
        return f"every {table} row of the DAG (its id is the only bound)"
    return None


QUESTIONS = [
    ("plan_every", at(6)),  # a run that ran
    ("plan_every", at(-10)),  # in the pause
    ("plan_every", at(26)),  # in the scheduler gap
    ("plan_every", at(36)),  # a run created late, max_active_runs
    ("plan_every", at(12.5)),  # a manual run
    ("plan_every", at(-600)),  # before any run
    ("plan_every", NOW),
    ("plan_builtin", at(6)),
    ("plan_builtin", at(26)),
    ("plan_manual_only", at(12.5)),
    ("plan_manual_only", at(-600)),
]


def test_every_read_of_runs_and_audit_entries_is_bounded_by_an_index(history):
    plans = planned(QUESTIONS)
    read = {table for _, steps in plans for step in steps if (m := _STEP.match(step)) and (table := m.group(2))}
    assert {"dag_run", "log"} <= read, f"the listener saw no read of the history tables: {sorted(read)}"
    unbounded = [
        f"{reason}: {step}\n    in: {' '.join(statement.split())}"
        for statement, steps in plans
        for step in steps
        if (reason := whole_history(step)) is not None
    ]
    assert not unbounded, (
        "a read of one DAG's history is not bounded by an index Airflow keeps; seek by (dag_id, logical_date), "
        "(dag_id, state), (dag_id, task_id) or the run_after/dttm indexes with both bounds, never by the DAG id "
        "alone:\n" + "\n".join(dict.fromkeys(unbounded))
    )
