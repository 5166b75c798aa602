"""``why`` as one DAG's history grows: the same questions at 2,000, 100,000 and 400,000 runs of one DAG.

A real Airflow metadata DB (``airflow db migrate``; SQLite, or PostgreSQL from ``scripts/postgres.sh``)
holds a deployment's neighbours (19 DAGs on ``Every("10m")``, 500 runs each) and the DAG asked
about, ``history_1m`` on ``Every("1m")``, parsed by Airflow's ``DagBag`` and stored by its
``sync_bag_to_db``. Its history, inserted in bulk (the runs by ``executemany`` in batches of 5,000,
their task instances and audit entries made from them by ``INSERT … SELECT``): one scheduled run a
minute up to now (ids in creation order, run ids from its timetable's ``generate_run_id``), one
task instance each, two audit-log entries each (the task's ``running`` and its end, as Airflow's
execution API logs them), a manual run every 1,000 minutes, one failure in 50,
the newest run running; a pause of 90 minutes 20 hours back (``patch_dag`` entries, no runs in it)
and a scheduler gap of an hour 6 hours back (no heartbeats, no runs, then the catch-up run).

The largest history is built once; each smaller one deletes the oldest runs (their task instances
and audit entries) so the newest history, and the ids, stay as they were; on PostgreSQL the tables
are then analyzed, as autovacuum would have (its planner chooses by those statistics). At each size
``explain`` (the domain call the REST route and ``tessera why`` make) answers at five instants,
``--rounds`` times each in a fresh session: best and median milliseconds, the ratio of the best
to the smallest history's best at that instant (the goal: within 2x), SQL statements, the
slowest statement of the slowest answer, and the cause (the answer must not change with size,
except "a week back", which precedes the smallest history).

Not in ``make bench`` (a minute to build, and a PostgreSQL server): ``.venv/bin/python
bench/why_history.py`` (``--sqlite``; ``--sizes 500000,100000,2000`` for PostgreSQL's figure;
``--code <checkout>`` measures another checkout's tessera, e.g. the code before a change).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
UTC = datetime.timezone.utc
NOW = datetime.datetime.now(UTC).replace(second=0, microsecond=0)
MINUTE = datetime.timedelta(minutes=1)
SUBJECT = "history_1m"
NEIGHBOURS = 19
PAUSE = (NOW - datetime.timedelta(hours=20), NOW - datetime.timedelta(hours=18, minutes=30))
GAP = (NOW - datetime.timedelta(hours=6), NOW - datetime.timedelta(hours=5))
INSTANTS = {
    "now": None,
    "newest run": NOW - MINUTE,
    "in the pause": PAUSE[0] + datetime.timedelta(minutes=40, seconds=30),
    "in the scheduler gap": GAP[0] + datetime.timedelta(minutes=30, seconds=30),
    "a week back": NOW - datetime.timedelta(days=7, seconds=30),
}
DAG_FILE = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG({subject!r}, start_date=None, schedule=Every("1m")):
    EmptyOperator(task_id="work")
for n in range({neighbours}):
    with DAG(f"neighbour_{{n:02d}}", start_date=None, schedule=Every("10m")):
        EmptyOperator(task_id="work")
"""


def _store(folder: Path) -> dict[str, Any]:
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db

    path = folder / "history.py"
    path.write_text(textwrap.dedent(DAG_FILE.format(subject=SUBJECT, neighbours=NEIGHBOURS)))
    DagBundlesManager().sync_bundles_to_db()
    bag = DagBag(str(path))
    if bag.import_errors:
        raise RuntimeError(f"the DAG file does not parse: {bag.import_errors}")
    sync_bag_to_db(bag, "dags-folder", None)
    return dict(bag.dags)


def _quiet(moment: datetime.datetime) -> bool:
    """No run in the pause nor in the scheduler gap (the run after the gap is its catch-up)."""
    return PAUSE[0] <= moment < PAUSE[1] or GAP[0] <= moment < GAP[1]


def _runs(dag: Any, count: int, step: datetime.timedelta, version: Any) -> list[dict]:
    """The runs of the newest ``count`` occurrences of ``dag`` up to now, and a manual run every 1,000."""
    from airflow._shared.timezones.timezone import coerce_datetime
    from airflow.timetables.base import DataInterval
    from airflow.utils.types import DagRunType

    phase = dag.timetable.plan.phase
    # The timetable's own run id (it carries the run record), made once: the record is the same for every run.
    first = coerce_datetime(NOW + phase)
    made = dag.timetable.generate_run_id(
        run_type=DagRunType.SCHEDULED, run_after=first, data_interval=DataInterval(first - step, first)
    )
    template = made.replace(first.isoformat(), "{}")
    runs = []
    for k in range(count, 0, -1):  # oldest first: ids in creation order, as the scheduler makes them
        end = NOW - step * k
        if _quiet(end):
            continue
        run_after = end + phase
        state = "running" if k == 1 else "failed" if k % 50 == 7 else "success"
        runs.append(
            {
                "dag_id": dag.dag_id, "run_id": template.format(run_after.isoformat()), "run_type": "scheduled",
                "state": state, "logical_date": end - step, "data_interval_start": end - step,
                "data_interval_end": end, "run_after": run_after, "queued_at": run_after, "start_date": run_after,
                "created_at": run_after, "end_date": None if k == 1 else run_after + datetime.timedelta(seconds=20),
                "triggered_by": "TIMETABLE", "clear_number": 0, "span_status": "ended",
                "created_dag_version_id": version,
            }
        )  # fmt: skip
        if k % 1000 == 500:  # a person's manual run, now and then (no logical date: Airflow 3's default)
            manual = run_after + datetime.timedelta(seconds=5)
            runs.append(
                {
                    **runs[-1], "run_id": f"manual__{manual.isoformat()}", "run_type": "manual", "state": "success",
                    "logical_date": None, "data_interval_start": None, "data_interval_end": None,
                    "run_after": manual, "queued_at": manual, "start_date": manual, "created_at": manual,
                    "end_date": manual + datetime.timedelta(seconds=20), "triggered_by": "REST_API",
                }
            )  # fmt: skip
    return runs


def _history(dags: dict[str, Any], size: int) -> float:
    """The subject's ``size`` minutes of history and the neighbours' 500 runs each, the pause and the jobs.

    The runs are inserted in batches (``executemany``); each run's task instance and its two audit
    entries are made from the runs by the database (``INSERT … SELECT``), the entries in time order.
    """
    from airflow.jobs.job import Job
    from airflow.models.dag_version import DagVersion
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import func, insert, literal, literal_column, select, union_all, update

    begin = time.perf_counter()
    oldest = NOW - MINUTE * (size + 10)
    with create_session() as session:
        versions = dict(session.execute(select(DagVersion.dag_id, DagVersion.id)).all())
        session.execute(update(DagVersion).values(created_at=oldest))
        session.execute(update(SerializedDagModel).values(created_at=oldest, last_updated=oldest))
        runs = []
        for dag_id, dag in sorted(dags.items()):
            count, step = (size, MINUTE) if dag_id == SUBJECT else (500, MINUTE * 10)
            runs += _runs(dag, count, step, versions[dag_id])
        runs.sort(key=lambda run: run["created_at"])  # the ids of a deployment: creation order across DAGs
        for first in range(0, len(runs), 5000):
            session.execute(insert(DagRun.__table__), runs[first : first + 5000])
        run = DagRun.__table__
        sqlite = session.get_bind().dialect.name == "sqlite"
        new_id = func.lower(func.hex(func.randomblob(16))) if sqlite else func.gen_random_uuid()
        ti = {
            "id": new_id, "dag_id": run.c.dag_id, "run_id": run.c.run_id, "task_id": literal("work"),
            "map_index": literal(-1), "try_number": literal(1), "state": run.c.state, "pool": literal("default_pool"),
            "pool_slots": literal(1), "queue": literal("default"), "priority_weight": literal(1),
            "operator": literal("EmptyOperator"), "start_date": run.c.start_date, "end_date": run.c.end_date,
            "max_tries": literal(0), "hostname": literal(""), "unixname": literal(""),
            "custom_operator_name": literal(""), "span_status": literal("ended"),
            "dag_version_id": run.c.created_dag_version_id, "scheduled_dttm": run.c.start_date,
            "queued_dttm": run.c.start_date,
        }  # fmt: skip
        session.execute(insert(TaskInstance.__table__).from_select(list(ti), select(*ti.values())))
        entry = (run.c.dag_id, literal("work"), run.c.run_id, literal(-1), literal(1), literal("airflow"))
        started = select(run.c.start_date.label("dttm"), *entry, literal("running").label("event"))
        ended = select(run.c.end_date, *entry, run.c.state).where(run.c.end_date.is_not(None))
        events = union_all(started, ended).subquery()
        columns = ["dttm", "dag_id", "task_id", "run_id", "map_index", "try_number", "owner", "event"]
        in_order = select(*events.c).order_by(literal_column("1"))
        session.execute(insert(Log.__table__).from_select(columns, in_order))
        for moment, paused in ((PAUSE[0], "true"), (PAUSE[1], "false")):
            change = {"dag_id": SUBJECT, "event": "patch_dag", "owner": "admin", "extra": f'{{"is_paused": {paused}}}'}
            session.execute(insert(Log.__table__).values(**change, dttm=moment))
        for start, last in ((oldest, GAP[0]), (GAP[1], NOW)):
            row = {"job_type": "SchedulerJob", "state": "running", "hostname": "bench", "start_date": start}
            session.execute(insert(Job.__table__).values(**row, latest_heartbeat=last))
    return time.perf_counter() - begin


def _analyze() -> None:
    """PostgreSQL's statistics, as autovacuum keeps them on a live deployment (SQLite keeps none)."""
    from airflow.utils.session import create_session
    from sqlalchemy import text

    with create_session() as session:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("ANALYZE"))


def _shrink(size: int) -> float:
    """Delete the subject's runs older than ``size`` minutes, their task instances and audit entries."""
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import delete, select

    begin = time.perf_counter()
    cutoff = NOW - MINUTE * size
    with create_session() as session:
        old = select(DagRun.run_id).where(DagRun.dag_id == SUBJECT, DagRun.run_after < cutoff)
        session.execute(delete(TaskInstance).where(TaskInstance.dag_id == SUBJECT, TaskInstance.run_id.in_(old)))
        session.execute(delete(DagRun).where(DagRun.dag_id == SUBJECT, DagRun.run_after < cutoff))
        session.execute(delete(Log).where(Log.dag_id == SUBJECT, Log.dttm < cutoff))
    return time.perf_counter() - begin


class Statements:
    """Each statement's SQL and seconds, through cursor events on Airflow's engine."""

    def __init__(self) -> None:
        self.timed: list[tuple[float, str]] = []
        self._start = 0.0

    def before(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        self._start = time.perf_counter()

    def after(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        self.timed.append((time.perf_counter() - self._start, " ".join(statement.split())))


def _ask(at: datetime.datetime | None) -> tuple[float, str, Statements]:
    from airflow.settings import engine
    from airflow.utils.session import create_session
    from sqlalchemy import event

    from tessera.plugin.explainer import explain
    from tessera.plugin.scoped_reads import Scope

    counted = Statements()
    event.listen(engine, "before_cursor_execute", counted.before)
    event.listen(engine, "after_cursor_execute", counted.after)
    try:
        with create_session() as session:
            start = time.perf_counter()
            answer = explain(session, SUBJECT, at=at, scope=Scope.everything(), now=NOW)
            spent = time.perf_counter() - start
    finally:
        event.remove(engine, "before_cursor_execute", counted.before)
        event.remove(engine, "after_cursor_execute", counted.after)
    return spent, answer.cause, counted


def _measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    from airflow.utils import db

    begin = time.perf_counter()
    db.initdb()
    print(f"  migrated the DB in {time.perf_counter() - begin:.0f}s", file=sys.stderr, flush=True)
    dags = _store(Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"]))
    spent = _history(dags, args.sizes[0])
    print(f"  inserted {args.sizes[0]} minutes of history in {spent:.0f}s", file=sys.stderr, flush=True)
    measured: dict[int, dict[str, tuple[list[float], str, Statements]]] = {}
    for size in args.sizes:
        if size != args.sizes[0]:
            print(f"  shrunk to {size} minutes in {_shrink(size):.0f}s", file=sys.stderr, flush=True)
        _analyze()
        for at in INSTANTS.values():  # warm: the first answer decodes the stored version
            _ask(at)
        measured[size] = {}
        for name, at in INSTANTS.items():
            times, slowest, cause = [], None, ""
            for _ in range(args.rounds):
                spent, cause, statements = _ask(at)
                times.append(spent)
                if slowest is None or spent >= max(times):
                    slowest = statements
            measured[size][name] = (times, cause, slowest)  # type: ignore[assignment]
    smallest = min(args.sizes)
    rows = []
    for size in sorted(args.sizes):
        for name in INSTANTS:
            times, cause, statements = measured[size][name]
            worst = max(statements.timed)
            rows.append(
                {
                    "bench": "why_history",
                    "db": args.db_kind,
                    "runs of the DAG": size,
                    "T": name,
                    "best ms": round(min(times) * 1000, 1),
                    "p50 ms": round(statistics.median(times) * 1000, 1),
                    "vs smallest": round(min(times) / min(measured[smallest][name][0]), 2),
                    "SQL": len(statements.timed),
                    "slowest SQL ms": round(worst[0] * 1000, 1),
                    "slowest SQL": worst[1][:90],
                    "cause": cause,
                }
            )
    return rows


def _use_code(root: Path) -> None:
    """Point the editable install's finder at another checkout's folders, before tessera is imported."""
    import importlib

    finder = importlib.import_module("__editable___airflow_tessera_0_1_0_finder")
    for package in ("timetables", "operators", "plugin"):
        finder.MAPPING[f"tessera.{package}"] = str(root / package)
    if any(name.startswith("tessera.") for name in sys.modules):
        raise RuntimeError("--code: tessera was imported before its folders were remapped")


def _postgres() -> tuple[str, str]:
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "postgres.sh"), "start"], capture_output=True, text=True, check=True
    )
    found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return found["TESSERA_PG_DATA"], found["TESSERA_PG_URL"]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="400000,100000,2000", help="runs of the DAG, largest first")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of a throwaway PostgreSQL")
    parser.add_argument("--code", help="measure the tessera code of this checkout (e.g. the code before a change)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: the measuring process writes here
    args = parser.parse_args(argv if argv is not None else [])
    args.sizes = sorted((int(size) for size in str(args.sizes).split(",")), reverse=True)
    args.db_kind = "sqlite" if args.sqlite else "postgresql"
    if args.measure:
        if args.code:
            _use_code(Path(args.code))
        rows = _measure(args)
        Path(args.measure).write_text(json.dumps(rows))
        return rows
    pg_data = None
    with tempfile.TemporaryDirectory(prefix="tessera-why-history-") as scratch:
        home = Path(scratch)
        (home / "dags").mkdir()
        url = f"sqlite:///{home / 'airflow.db'}" if args.sqlite else None
        if url is None:
            pg_data, url = _postgres()
        env = {
            **os.environ,
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url,
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        }
        out = home / "rows.json"
        command = [sys.executable, __file__, "--measure", str(out), "--sizes", ",".join(map(str, args.sizes))]
        command += ["--rounds", str(args.rounds)] + (["--sqlite"] if args.sqlite else [])
        command += ["--code", args.code] if args.code else []
        try:
            subprocess.run(command, env=env, check=True)
            rows = json.loads(out.read_text())
        finally:
            if pg_data is not None:
                subprocess.run(["bash", str(REPO / "scripts" / "postgres.sh"), "stop", pg_data], check=False)
    return rows


if __name__ == "__main__":
    from tabulate import tabulate

    found = main(sys.argv[1:])
    if "--measure" not in sys.argv:  # the measuring process hands its rows to the driver, which prints them
        print(tabulate(found, headers="keys", tablefmt="github"))
