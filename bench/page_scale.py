"""The Schedules page's data at fleet scale, side by side with Airflow's own DAG list on the same DB.

1,000 DAGs (``--dags``) of mixed cadences are parsed by Airflow's ``DagBag`` and stored
by Airflow's own ``sync_bag_to_db`` in a real metadata DB: PostgreSQL (a throwaway
cluster from ``scripts/postgres.sh``) unless ``--sqlite``. The mix cycles through ten
kinds: ``Every`` 5m (delay 30s) / 15m / 1h, ``Every.day`` / ``.week`` / ``.month``,
``Cron`` in London and ``@every 10m``, a declared schedule's pipeline, and a DAG on
Airflow's built-in cron (not on the page, but in Airflow's list). No run history.

Airflow's API app (``create_app(apps="core")``, with tessera's app mounted by the plugin
exactly as the API server mounts it) answers in process through a real HTTP client
(Starlette's ``TestClient``, one worker, one request at a time). Each round times, in an
order that rotates: Airflow's ``GET /api/v2/dags?limit=1000``; the same list as 10 pages of
100; and the page's data calls, which are what ``plugin/ui/schedules.js`` fetches on each
load (``PAGE_CALLS``), timed one by one and summed as one page load. Reported: p50 and p95
over the rounds, the ratio of the page load to each Airflow contender, the SQL statements
each call ran (a ``before_cursor_execute`` listener on Airflow's engine) and its bytes.

Not in ``make bench`` (a few minutes, and a PostgreSQL server): run
``.venv/bin/python bench/page_scale.py`` (``--sqlite``, ``--dags N``, ``--rounds N``).
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
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PER_FILE = 100
AHEAD = datetime.timedelta(hours=24)
LANES_AHEAD = datetime.timedelta(days=70)


def page_calls(now: datetime.datetime) -> dict[str, str]:
    """What the page fetches on each load (mirrors ``plugin/ui/schedules.js``; update both together).

    The lanes ask 49 runs a DAG (``PLAN_COUNT``) up to the end of the range after the one shown; a
    fleet with monthly DAGs makes Auto pick 35 days, so the lanes ask up to 70 days ahead: the widest.
    """
    until = (now + LANES_AHEAD).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "page: plan?count=1": "/tessera/api/v1/plan?count=1",
        "page: status": "/tessera/api/v1/status",
        "page: triggers": "/tessera/api/v1/triggers",
        "page: plan?count=49&until=+70d": f"/tessera/api/v1/plan?count=49&until={until}",
    }


def what_if(now: datetime.datetime) -> dict[str, str]:
    """Calls the page does not make (not in its load), for what a smaller day view would cost."""
    until = (now + AHEAD).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"what-if: plan?count=24&until=+24h": f"/tessera/api/v1/plan?count=24&until={until}"}


AIRFLOW_LIST = {"airflow: dags?limit=1000": ["/api/v2/dags?limit=1000"]}
AIRFLOW_PAGES = {"airflow: 10 pages of 100": [f"/api/v2/dags?limit=100&offset={k * 100}" for k in range(10)]}

KINDS = (
    'Every("5m", delay="30s")',
    'Every("15m")',
    'Every("1h")',
    'Every.day(at="07:00", timezone="Europe/Amsterdam")',
    'Every.week(on="monday", at="07:00", timezone="Europe/Amsterdam")',
    'Every.month(on=31, at="06:00", timezone="UTC")',
    'Cron("0 6 * * *", timezone="Europe/London")',
    'Cron("@every 10m")',
    "declared",
    '"0 * * * *"',
)
DAG_FILE = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.timetables import Cron, Every

FIRST = {first}
KINDS = {kinds!r}
DECLARED = [n for n in range(FIRST, FIRST + {count}) if KINDS[n % len(KINDS)] == "declared"]
SCHEDULES = ScheduleSet([Schedule(f"fleet_{{n:05d}}", interval_seconds=3600) for n in DECLARED])
for n in range(FIRST, FIRST + {count}):
    kind = KINDS[n % len(KINDS)]
    if kind == "declared":
        kwargs = SCHEDULES.dag_kwargs(f"fleet_{{n:05d}}")
    else:
        kwargs = {{"schedule": eval(kind)}}
    with DAG(f"fleet_{{n:05d}}", start_date=None, **kwargs) as dag:
        EmptyOperator(task_id="work")
    if kind == "declared":
        SCHEDULES.apply(dag)
"""


# -- the measuring process (an AIRFLOW_HOME and a DB of its own) ------------------------------


def _store(folder: Path, dags: int) -> float:
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db

    begin = time.perf_counter()
    for first in range(0, dags, PER_FILE):
        source = DAG_FILE.format(first=first, count=min(PER_FILE, dags - first), kinds=KINDS)
        (folder / f"fleet_{first:05d}.py").write_text(textwrap.dedent(source))
    DagBundlesManager().sync_bundles_to_db()
    bag = DagBag(str(folder))
    if bag.import_errors:
        raise RuntimeError(f"the fleet does not parse: {bag.import_errors}")
    sync_bag_to_db(bag, "dags-folder", None)
    return time.perf_counter() - begin


class Statements:
    """Every SQL statement Airflow's engine runs while counting, and the tables they read."""

    TABLES = ("serialized_dag", "dag_tag", "dag_run", "dag_version")

    def __init__(self) -> None:
        self.total = 0
        self.tables: Counter[str] = Counter()

    def __call__(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        self.total += 1
        self.tables.update(
            table for table in self.TABLES if f"FROM {table}" in statement or f"JOIN {table}" in statement
        )


def _measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    from airflow.api_fastapi.app import create_app, purge_cached_app
    from airflow.settings import engine
    from airflow.utils import db
    from fastapi.testclient import TestClient
    from sqlalchemy import event

    begin = time.perf_counter()
    db.initdb()
    print(f"  migrated the DB in {time.perf_counter() - begin:.0f}s", file=sys.stderr, flush=True)
    folder = Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    print(f"  stored {args.dags} DAGs in {_store(folder, args.dags):.0f}s", file=sys.stderr, flush=True)
    purge_cached_app()
    client = TestClient(create_app(apps="core"))
    token = client.post("/auth/token", json={"username": "admin", "password": "admin-pw"}).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    page = page_calls(datetime.datetime.now(datetime.timezone.utc))
    contenders: dict[str, list[str]] = {
        **AIRFLOW_LIST,
        **AIRFLOW_PAGES,
        **{name: [path] for name, path in page.items()},
        **{name: [path] for name, path in what_if(datetime.datetime.now(datetime.timezone.utc)).items()},
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    sizes: dict[str, int] = {}
    listed: dict[str, int] = {}
    queries: dict[str, Statements] = {}

    def call(name: str, paths: list[str], counter: Statements | None) -> float:
        if counter is not None:
            event.listen(engine, "before_cursor_execute", counter)
        try:
            begin = time.perf_counter()
            answers = [client.get(path, headers=headers) for path in paths]
            spent = time.perf_counter() - begin
        finally:
            if counter is not None:
                event.remove(engine, "before_cursor_execute", counter)
        for answer in answers:
            if answer.status_code != 200:
                raise RuntimeError(f"{name}: {answer.status_code} {answer.text[:500]}")
        sizes[name] = sum(len(answer.content) for answer in answers)
        listed[name] = sum(len(answer.json()["dags"]) for answer in answers)
        return spent

    names = list(contenders)
    # The first (cold) call of each is the one counted; it is not in the timings.
    for name in names:
        queries[name] = Statements()
        call(name, contenders[name], queries[name])
    api = sys.modules["tessera.plugin.api.schedules"].__file__
    print(f"  tessera's API code: {Path(api).parent}", file=sys.stderr, flush=True)
    warm = {name: Statements() for name in names}
    for round_ in range(args.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            times[name].append(call(name, contenders[name], warm[name] if round_ == 0 else None))
        print(f"  round {round_ + 1}/{args.rounds}", file=sys.stderr, flush=True)
    times["page: one load (all its calls)"] = [sum(times[name][i] for name in page) for i in range(args.rounds)]
    sizes["page: one load (all its calls)"] = sum(sizes[name] for name in page)
    listed["page: one load (all its calls)"] = listed[next(iter(page))]
    for counted in (queries, warm):
        load = Statements()
        for name in page:
            load.total += counted[name].total
            load.tables.update(counted[name].tables)
        counted["page: one load (all its calls)"] = load

    def p(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    base_list = statistics.median(times["airflow: dags?limit=1000"])
    base_pages = statistics.median(times["airflow: 10 pages of 100"])
    rows = []
    for name, values in times.items():
        median = statistics.median(values)
        rows.append(
            {
                "bench": "page_scale",
                "case": name,
                "db": args.db_kind,
                "DAGs listed": listed[name],
                "p50 s": round(median, 3),
                "p95 s": round(p(values, 0.95), 3),
                "vs dags?limit=1000": round(median / base_list, 2),
                "vs 10 pages": round(median / base_pages, 2),
                "SQL (first call)": queries[name].total,
                "SQL (warm)": warm[name].total,
                "serialized_dag / dag_tag / dag_run": "/".join(
                    str(queries[name].tables[t]) for t in Statements.TABLES[:3]
                ),
                "KB": round(sizes[name] / 1024),
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


# -- the driver: a database, a fresh AIRFLOW_HOME, the measuring process -------------------------


def _postgres() -> tuple[str, str]:
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "postgres.sh"), "start"], capture_output=True, text=True, check=True
    )
    found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return found["TESSERA_PG_DATA"], found["TESSERA_PG_URL"]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dags", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of a throwaway PostgreSQL")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL even if it must be installed first")
    parser.add_argument("--code", help="measure the tessera code of this checkout (e.g. main's, for a before/after)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: the measuring process writes here
    args = parser.parse_args(argv if argv is not None else [])
    # From bench/run.py: PostgreSQL when its server is installed, otherwise SQLite (no install).
    args.sqlite = args.sqlite or (not args.postgres and not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")))
    args.db_kind = "sqlite" if args.sqlite else "postgresql"
    if args.measure:
        if args.code:
            _use_code(Path(args.code))
        rows = _measure(args)
        Path(args.measure).write_text(json.dumps(rows))
        return rows
    pg_data = None
    with tempfile.TemporaryDirectory(prefix="tessera-page-scale-") as scratch:
        home = Path(scratch)
        (home / "dags").mkdir()
        (home / "passwords.json").write_text(json.dumps({"admin": "admin-pw"}))
        if args.sqlite:
            url = f"sqlite:///{home / 'airflow.db'}"
        else:
            pg_data, url = _postgres()
        env = {
            **os.environ,
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url,
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
            "AIRFLOW__API_AUTH__JWT_SECRET": "tessera-page-scale-" + "s" * 64,
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
            # Airflow caps a page at 100 DAGs by default: let ?limit=1000 list the whole fleet.
            "AIRFLOW__API__MAXIMUM_PAGE_LIMIT": "1000",
        }
        out = home / "rows.json"
        command = [sys.executable, __file__, "--measure", str(out), "--dags", str(args.dags)]
        command += ["--rounds", str(args.rounds)] + (["--sqlite"] if args.sqlite else [])
        command += ["--code", str(Path(args.code).resolve())] if args.code else []
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
    if "--measure" not in sys.argv:
        print(tabulate(found, headers="keys", tablefmt="github"))
