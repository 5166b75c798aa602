"""``GET /tessera/api/v1/dags/{dag_id}/why`` at fleet scale: 1,000 DAGs and 100,000 runs in PostgreSQL.

The fleet of ``page_scale.py`` (1,000 DAGs of ten kinds, tessera's and Airflow's own cron, parsed by
``DagBag`` and stored by Airflow's ``sync_bag_to_db``) gets a history: 100 scheduled runs per DAG
(``--runs``), one task instance each, 100,000 audit-log entries spread over the DAGs (pauses,
unpauses, task events), a few scheduler jobs with a gap, all inserted in bulk. Then Airflow's API
app (tessera's app mounted as the API server mounts it, in process through Starlette's
``TestClient``) answers "why" for a sample of DAGs of every kind, at instants across the history
(the newest run, a week back, inside the scheduler gap, now). Reported: p50, p95 and max seconds
per answer, and the SQL statements and rows each answer read (a ``before_cursor_execute`` /
``after_cursor_execute`` listener on Airflow's engine); the bound is 1 s per answer.

Not in ``make bench`` (minutes, and a PostgreSQL server): ``.venv/bin/python bench/why.py``
(``--sqlite``, ``--dags N``, ``--runs N``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from page_scale import KINDS, _postgres, _store  # noqa: E402  (the same fleet as the page benchmark)

REPO = Path(__file__).resolve().parent.parent
UTC = datetime.timezone.utc
NOW = datetime.datetime.now(UTC).replace(microsecond=0)
STEP = datetime.timedelta(minutes=10)
GAP = (NOW - datetime.timedelta(hours=6), NOW - datetime.timedelta(hours=5))
"""No scheduler heartbeats in this hour: "why" must read the job table around it."""


def _history(runs_per_dag: int, log_entries: int) -> float:
    """Runs, task instances, audit-log entries and jobs, inserted in bulk (Core statements, batches of 5,000)."""
    from airflow.jobs.job import Job
    from airflow.models.dag import DagModel
    from airflow.models.dag_version import DagVersion
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import insert, select, update

    begin = time.perf_counter()
    with create_session() as session:
        dag_ids = list(session.scalars(select(DagModel.dag_id).order_by(DagModel.dag_id)))
        versions = {dag_id: version for dag_id, version in session.execute(select(DagVersion.dag_id, DagVersion.id))}
        oldest = NOW - STEP * (runs_per_dag + 10)
        session.execute(update(DagVersion).values(created_at=oldest))
        session.execute(update(SerializedDagModel).values(created_at=oldest, last_updated=oldest))
        runs, tis = [], []
        for dag_id in dag_ids:
            for k in range(runs_per_dag):
                end = NOW - STEP * (runs_per_dag - k)
                run_id = f"scheduled__{end.isoformat()}"
                runs.append(
                    {
                        "dag_id": dag_id, "run_id": run_id, "run_type": "scheduled", "state": "success",
                        "logical_date": end - STEP, "data_interval_start": end - STEP, "data_interval_end": end,
                        "run_after": end, "queued_at": end, "start_date": end, "created_at": end,
                        "end_date": end + datetime.timedelta(seconds=20), "triggered_by": "TIMETABLE",
                        "clear_number": 0, "span_status": "ended", "created_dag_version_id": versions[dag_id],
                    }
                )  # fmt: skip
                tis.append(
                    {
                        "id": uuid.uuid4(), "dag_id": dag_id, "run_id": run_id, "task_id": "work", "map_index": -1,
                        "try_number": 1, "state": "success", "pool": "default_pool", "pool_slots": 1,
                        "queue": "default", "priority_weight": 1, "operator": "EmptyOperator",
                        "start_date": end, "end_date": end + datetime.timedelta(seconds=5), "max_tries": 0,
                        "hostname": "", "unixname": "", "custom_operator_name": "", "span_status": "ended",
                        "dag_version_id": versions[dag_id], "scheduled_dttm": end, "queued_dttm": end,
                    }
                )  # fmt: skip
        for table, rows in ((DagRun.__table__, runs), (TaskInstance.__table__, tis)):
            for first in range(0, len(rows), 5000):
                session.execute(insert(table), rows[first : first + 5000])
        rng = random.Random(7)
        events = ["patch_dag", "cli_dag_pause", "cli_dag_unpause", "running", "success", "trigger_dag_run"]
        entries = []
        for n in range(log_entries):
            event = rng.choice(events)
            extra = json.dumps({"is_paused": rng.random() < 0.5}) if event == "patch_dag" else None
            moment = NOW - datetime.timedelta(seconds=rng.randrange(int((NOW - oldest).total_seconds())))
            entries.append({"dttm": moment, "dag_id": dag_ids[n % len(dag_ids)], "event": event, "extra": extra})
        for first in range(0, len(entries), 5000):
            session.execute(insert(Log.__table__), entries[first : first + 5000])
        jobs = [(oldest, GAP[0]), (GAP[1], NOW)]
        for start, last in jobs:
            row = {"job_type": "SchedulerJob", "state": "running", "hostname": "bench", "start_date": start}
            session.execute(insert(Job.__table__).values(**row, latest_heartbeat=last))
    return time.perf_counter() - begin


class Reads:
    """SQL statements and rows each answer reads (Airflow's engine, through cursor events)."""

    def __init__(self) -> None:
        self.statements = 0
        self.rows = 0

    def before(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        self.statements += 1

    def after(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        self.rows += max(cursor.rowcount, 0) if statement.lstrip().upper().startswith("SELECT") else 0


def _measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    from airflow.api_fastapi.app import create_app, purge_cached_app
    from airflow.settings import engine
    from airflow.utils import db
    from fastapi.testclient import TestClient
    from sqlalchemy import event

    begin = time.perf_counter()
    db.initdb()
    print(f"  migrated the DB in {time.perf_counter() - begin:.0f}s", file=sys.stderr, flush=True)
    print(f"  stored {args.dags} DAGs in {_store(Path(os.environ['AIRFLOW__CORE__DAGS_FOLDER']), args.dags):.0f}s",
          file=sys.stderr, flush=True)  # fmt: skip
    spent = _history(args.runs, args.dags * args.runs)
    print(f"  inserted {args.dags * args.runs} runs, task instances and audit-log entries in {spent:.0f}s",
          file=sys.stderr, flush=True)  # fmt: skip
    purge_cached_app()
    client = TestClient(create_app(apps="core"))
    token = client.post("/auth/token", json={"username": "admin", "password": "admin-pw"}).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    instants = {
        "now": None,
        "newest run": NOW - STEP,
        "a week back": NOW - datetime.timedelta(days=7, minutes=3),
        "in the scheduler gap": GAP[0] + datetime.timedelta(minutes=30),
    }
    sample = [f"fleet_{n:05d}" for n in range(0, args.dags, max(1, args.dags // 50))]
    times: dict[str, list[float]] = {name: [] for name in instants}
    reads: dict[str, list[Reads]] = {name: [] for name in instants}
    causes: dict[str, set[str]] = {name: set() for name in instants}
    slowest: dict[str, tuple[float, str]] = {name: (0.0, "") for name in instants}
    for dag_id in sample:  # warm: the first answer of each DAG decodes its stored versions
        client.get(f"/tessera/api/v1/dags/{dag_id}/why", headers=headers)
    for _ in range(args.rounds):
        for name, at in instants.items():
            for dag_id in sample:
                query = "" if at is None else f"?at={at.isoformat().replace('+00:00', 'Z')}"
                counted = Reads()
                event.listen(engine, "before_cursor_execute", counted.before)
                event.listen(engine, "after_cursor_execute", counted.after)
                try:
                    start = time.perf_counter()
                    answer = client.get(f"/tessera/api/v1/dags/{dag_id}/why{query}", headers=headers)
                    spent = time.perf_counter() - start
                    times[name].append(spent)
                    slowest[name] = max(slowest[name], (spent, dag_id))
                finally:
                    event.remove(engine, "before_cursor_execute", counted.before)
                    event.remove(engine, "after_cursor_execute", counted.after)
                if answer.status_code != 200:
                    raise RuntimeError(f"{dag_id} at {at}: {answer.status_code} {answer.text[:500]}")
                reads[name].append(counted)
                causes[name].add(answer.json()["cause"])

    def p(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return [
        {
            "bench": "why",
            "T": name,
            "db": args.db_kind,
            "DAGs / runs": f"{args.dags} / {args.dags * args.runs}",
            "answers": len(values),
            "p50 s": round(statistics.median(values), 3),
            "p95 s": round(p(values, 0.95), 3),
            "max s": round(max(values), 3),
            "SQL per answer (max)": max(r.statements for r in reads[name]),
            "rows read (max)": max(r.rows for r in reads[name]),
            "slowest": slowest[name][1],
            "causes": ", ".join(sorted(causes[name])),
        }
        for name, values in times.items()
    ]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dags", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100, help="scheduled runs per DAG")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of a throwaway PostgreSQL")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args(argv if argv is not None else [])
    args.db_kind = "sqlite" if args.sqlite else "postgresql"
    if args.measure:
        rows = _measure(args)
        Path(args.measure).write_text(json.dumps(rows))
        return rows
    pg_data = None
    with tempfile.TemporaryDirectory(prefix="tessera-why-bench-") as scratch:
        home = Path(scratch)
        (home / "dags").mkdir()
        (home / "passwords.json").write_text(json.dumps({"admin": "admin-pw"}))
        url = f"sqlite:///{home / 'airflow.db'}" if args.sqlite else None
        if url is None:
            pg_data, url = _postgres()
        env = {
            **os.environ,
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url,
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
            "AIRFLOW__API_AUTH__JWT_SECRET": "tessera-why-bench-" + "s" * 64,
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        }
        out = home / "rows.json"
        command = [sys.executable, __file__, "--measure", str(out), "--dags", str(args.dags), "--runs", str(args.runs)]
        command += ["--rounds", str(args.rounds)] + (["--sqlite"] if args.sqlite else [])
        try:
            subprocess.run(command, env=env, check=True)
            rows = json.loads(out.read_text())
        finally:
            if pg_data is not None:
                subprocess.run(["bash", str(REPO / "scripts" / "postgres.sh"), "stop", pg_data], check=False)
    return rows


if __name__ == "__main__":
    from tabulate import tabulate

    print(tabulate(main(sys.argv[1:]), headers="keys", tablefmt="github"))
    print(f"kinds: {', '.join(KINDS)}")
