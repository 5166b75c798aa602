"""The Schedules page's data at fleet scale, side by side with Airflow's own DAG list on the same DB.

The fleet is a deployment's mix (``_page_fleet.py``: 40% ``Every``, 20% calendar cadences in 8
zones, 20% ``Cron``, 10% declared schedules with AFTER fan-in, 10% Airflow's own cron), stored by
Airflow's ``sync_bag_to_db`` in a real metadata DB (PostgreSQL from ``scripts/postgres.sh``
unless ``--sqlite``), each DAG with the runs its own timetable made over the last 3 days. The
fleet grows through ``--sizes`` (100, 1,000 and 3,000 DAGs) in one DB, measured at each size.

Airflow's API app (``create_app(apps="core")``, with tessera's app mounted by the plugin
exactly as the API server mounts it) answers in process through Starlette's test client (one
worker, one request at a time). Each round times, in an order that rotates, Airflow's
``GET /api/v2/dags?limit=1000`` (the anchor), the page's one load (``GET /api/v1/page``, what
``plugin/ui/schedules.js`` fetches), and the REST reads ``status``, ``plan?count=1`` and
``triggers``; with ``--before``, also the four calls the page made before (the three reads and
``plan?count=49&until=+70d`` for the lanes), summed. Reported per call: p50 and p95 wall time,
p50 CPU time of this process (the server's Python, the client's too; PostgreSQL is another
process), both as ratios to Airflow's list, the SQL statements it ran (cold: the first call
after the fleet grew; warm: a reload) and its bytes; and the load average around the rounds.

Not in ``make bench`` (minutes, and a PostgreSQL server): run
``.venv/bin/python bench/page_scale.py`` (``--sqlite``, ``--sizes 100,1000``, ``--rounds N``,
``--before``, ``--code DIR``).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LANES_AHEAD = datetime.timedelta(days=70)
LIST = "airflow: dags?limit=1000"
LOAD = "page: one load (GET /api/v1/page)"
BEFORE = "before: the 4 calls the page made"


FILTERED = {
    # the page searched, filtered or sorted on the server, and Airflow's list asked the same where it can be
    "page: search=fleet_001": (
        "/tessera/api/v1/page?search=fleet_001",
        "/api/v2/dags?limit=1000&dag_id_pattern=fleet_001",
    ),
    "page: filter=failed_last": (
        "/tessera/api/v1/page?filter=failed_last",
        "/api/v2/dags?limit=1000&last_dag_run_state=failed",
    ),
    "page: filter=paused": ("/tessera/api/v1/page?filter=paused", "/api/v2/dags?limit=1000&paused=true"),
    "page: sort=next_run": ("/tessera/api/v1/page?sort=next_run", "/api/v2/dags?limit=1000&order_by=next_dagrun"),
    "page: filter=late&sort=lateness": ("/tessera/api/v1/page?filter=late&sort=lateness", "/api/v2/dags?limit=1000"),
}
"""Each filtered load and its twin in Airflow's list (lateness has none: the plain list stands in)."""
TWIN = "airflow twin: "


def contenders(now: datetime.datetime, before: bool) -> dict[str, list[str]]:
    """Each contender's requests (one, or several timed as one)."""
    calls = {
        LIST: ["/api/v2/dags?limit=1000"],
        LOAD: ["/tessera/api/v1/page"],
        **{name: [page] for name, (page, _) in FILTERED.items()},
        **{TWIN + name[len("page: ") :]: [twin] for name, (_, twin) in FILTERED.items()},
        "rest: status": ["/tessera/api/v1/status"],
        "rest: plan?count=1": ["/tessera/api/v1/plan?count=1"],
        "rest: triggers": ["/tessera/api/v1/triggers"],
    }
    if before:
        until = (now + LANES_AHEAD).strftime("%Y-%m-%dT%H:%M:%SZ")
        calls[BEFORE] = [
            "/tessera/api/v1/plan?count=1",
            "/tessera/api/v1/status",
            "/tessera/api/v1/triggers",
            f"/tessera/api/v1/plan?count=49&until={until}",
        ]
    return calls


class Statements:
    """Every SQL statement Airflow's engine runs while counting, and the tables they read."""

    TABLES = ("serialized_dag", "dag_tag", "dag_run", "asset_event")

    def __init__(self) -> None:
        self.total = 0
        self.tables: Counter[str] = Counter()

    def __call__(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        self.total += 1
        self.tables.update(
            table for table in self.TABLES if f"FROM {table}" in statement or f"JOIN {table}" in statement
        )


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _twin_ratio(name: str, wall: dict[str, list[float]]) -> float | str:
    """A filtered page load's p50 over its Airflow twin's (the same filter asked of Airflow's list)."""
    twin = TWIN + name[len("page: ") :]
    if name not in FILTERED or twin not in wall:
        return ""
    return round(statistics.median(wall[name]) / statistics.median(wall[twin]), 2)


def _rounds(client: Any, headers: dict, calls: dict[str, list[str]], rounds: int) -> list[dict[str, Any]]:
    """Time every contender ``rounds`` times, interleaved; count its statements cold and warm."""
    from airflow.settings import engine
    from sqlalchemy import event

    wall: dict[str, list[float]] = {name: [] for name in calls}
    cpu: dict[str, list[float]] = {name: [] for name in calls}
    sizes: dict[str, int] = {}
    counted: dict[str, list[Statements]] = {name: [] for name in calls}

    def call(name: str, counter: Statements | None) -> tuple[float, float]:
        if counter is not None:
            event.listen(engine, "before_cursor_execute", counter)
        try:
            begin, begin_cpu = time.perf_counter(), time.process_time()
            answers = [client.get(path, headers=headers) for path in calls[name]]
            spent, spent_cpu = time.perf_counter() - begin, time.process_time() - begin_cpu
        finally:
            if counter is not None:
                event.remove(engine, "before_cursor_execute", counter)
        for answer in answers:
            if answer.status_code != 200:
                raise RuntimeError(f"{name}: {answer.status_code} {answer.text[:500]}")
        sizes[name] = sum(len(answer.content) for answer in answers)
        return spent, spent_cpu

    names = list(calls)
    for name in names:  # cold (the first call since the fleet grew), then warm; neither is timed
        for _ in range(2):
            counted[name].append(Statements())
            call(name, counted[name][-1])
    load = os.getloadavg()[0]
    for round_ in range(rounds):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            spent, spent_cpu = call(name, None)
            wall[name].append(spent)
            cpu[name].append(spent_cpu)
    load = max(load, os.getloadavg()[0])
    base, base_cpu = statistics.median(wall[LIST]), statistics.median(cpu[LIST])
    found = []
    for name in names:
        cold, warm = counted[name]
        found.append(
            {
                "case": name,
                "p50 s": round(statistics.median(wall[name]), 3),
                "p95 s": round(_p(wall[name], 0.95), 3),
                "CPU p50 s": round(statistics.median(cpu[name]), 3),
                "x list (wall)": round(statistics.median(wall[name]) / base, 2),
                "x list (CPU)": round(statistics.median(cpu[name]) / base_cpu, 2),
                "x its airflow twin (wall)": _twin_ratio(name, wall),
                "SQL cold / warm": f"{cold.total} / {warm.total}",
                "serialized_dag / dag_tag / dag_run / asset_event": "/".join(
                    str(warm.tables[t]) for t in Statements.TABLES
                ),
                "KB": round(sizes[name] / 1024),
                "load avg (1 min)": round(load, 1),
            }
        )
    return found


PROFILE_COLD = os.environ.get("TESSERA_PROFILE_COLD")
"""A file each restart appends the profile of its first page load to (unset: no profile)."""
COLD = {"airflow list": "/api/v2/dags?limit=1000", "page": "/tessera/api/v1/page"}
"""What a restarted API server answers first: Airflow's list and the page's load."""


def _cold_probe() -> dict[str, list[float]]:
    """In a fresh process, as an API server worker just started: each call of :data:`COLD`, first then twice more.

    The app is built as the API server builds it (the tessera app on its first request, by the plugin's
    lazy mount); the seconds are wall time of each call.
    """
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    from tessera.plugin.fleet.warm import WARMED

    started = time.perf_counter()
    with TestClient(create_app(apps="core")) as client:  # the lifespan runs, as at the server's start
        # A restarted worker warms the page in the background (tessera.plugin.fleet.warm); the first
        # visitor comes after that (WARM_FIRST=0: at once, racing it).
        if os.environ.get("WARM_FIRST", "1") == "1":
            WARMED.wait(timeout=120)
        warm_up = time.perf_counter() - started
        token = client.post("/auth/token", json={"username": "admin", "password": "admin-pw"}).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        found: dict[str, list[float]] = {}
        for name, path in COLD.items():
            found[name] = []
            for attempt in range(3):
                profile = cProfile.Profile() if attempt == 0 and name == "page" and PROFILE_COLD else None
                begin = time.perf_counter()
                if profile is not None:
                    profile.enable()
                answer = client.get(path, headers=headers)
                found[name].append(time.perf_counter() - begin)
                if profile is not None:
                    profile.disable()
                    with open(PROFILE_COLD, "a") as out:
                        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(45)
                if answer.status_code != 200:
                    raise RuntimeError(f"{path}: {answer.status_code} {answer.text[:300]}")
    found["warm-up"] = [warm_up]
    return found


def _cold(size: int, restarts: int) -> list[dict[str, Any]]:
    """Cold (the first call after a restart) against warm (the third), over ``restarts`` fresh processes."""
    firsts: dict[str, list[float]] = {name: [] for name in COLD}
    warms: dict[str, list[float]] = {name: [] for name in COLD}
    warm_ups = []
    for _ in range(restarts):
        done = subprocess.run([sys.executable, __file__, "--cold-probe"], capture_output=True, text=True, check=True)
        probe = json.loads(done.stdout.strip().splitlines()[-1])
        warm_ups.append(probe.pop("warm-up")[0])
        for name, seconds in probe.items():
            firsts[name].append(seconds[0])
            warms[name].append(seconds[-1])
    rows = []
    for name in COLD:
        cold, warm = statistics.median(firsts[name]), statistics.median(warms[name])
        rows.append(
            {
                "case": f"restart: {name}",
                "p50 s": round(cold, 3),
                "warm p50 s": round(warm, 3),
                "cold / warm": round(cold / warm, 2),
                "restarts": restarts,
                "worker start to first call s": round(statistics.median(warm_ups), 1),
                "DAGs": size,
            }
        )
    return rows


def _measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    sys.path.insert(0, str(HERE))
    from _page_fleet import history, on_page, store
    from airflow.api_fastapi.app import create_app, purge_cached_app
    from airflow.utils import db
    from fastapi.testclient import TestClient

    begin = time.perf_counter()
    db.initdb()
    print(f"  migrated the DB in {time.perf_counter() - begin:.0f}s", file=sys.stderr, flush=True)
    folder = Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    purge_cached_app()
    client = TestClient(create_app(apps="core"))
    token = client.post("/auth/token", json={"username": "admin", "password": "admin-pw"}).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    rows: list[dict[str, Any]] = []
    stored = 0
    for size in args.sizes:
        dags, spent = store(folder, stored, size - stored)
        now = datetime.datetime.now(datetime.timezone.utc)
        runs = history(dags, now=now, days=args.days, cap=args.cap)
        print(f"  stored DAGs {stored}-{size - 1} in {spent:.0f}s, {runs} runs", file=sys.stderr, flush=True)
        stored = size
        calls = contenders(now, args.before)
        if args.only:
            wanted = args.only.split(",")
            calls = {name: paths for name, paths in calls.items() if name == LIST or any(w in name for w in wanted)}
        found = _rounds(client, headers, calls, args.rounds)
        for row in found:
            rows.append({"bench": "page_scale", "db": args.db_kind, "DAGs": size, "on the page": on_page(size), **row})
        if args.cold:
            for row in _cold(size, args.cold):
                rows.append({"bench": "page_scale", "db": args.db_kind, "on the page": on_page(size), **row})
        print(f"  measured {size} DAGs", file=sys.stderr, flush=True)
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
    parser.add_argument("--sizes", default="100,1000,3000", help="fleet sizes, measured in this order")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--days", type=float, default=3.0, help="days of run history per DAG")
    parser.add_argument("--cap", type=int, default=100, help="runs of history per DAG at most")
    parser.add_argument("--before", action="store_true", help="also time the four calls the page made before")
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of a throwaway PostgreSQL")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL even if it must be installed first")
    parser.add_argument("--code", help="measure the tessera code of this checkout (e.g. main's, for a before/after)")
    parser.add_argument("--cold", type=int, default=0, help="also restart the server N times per size: cold vs warm")
    parser.add_argument(
        "--only", help="time only the contenders whose name holds this text, or one of these (a,b), and Airflow's list"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: the measuring process writes here
    parser.add_argument("--cold-probe", action="store_true", help=argparse.SUPPRESS)  # internal: one restart
    args = parser.parse_args(argv if argv is not None else [])
    args.sizes = [int(size) for size in str(args.sizes).split(",")]
    # From bench/run.py: PostgreSQL when its server is installed, otherwise SQLite (no install).
    args.sqlite = args.sqlite or (not args.postgres and not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")))
    args.db_kind = "sqlite" if args.sqlite else "postgresql"
    if args.cold_probe:
        print(json.dumps(_cold_probe()))
        return []
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
        command = [sys.executable, __file__, "--measure", str(out), "--sizes", ",".join(map(str, args.sizes))]
        command += ["--rounds", str(args.rounds), "--days", str(args.days), "--cap", str(args.cap)]
        command += (["--sqlite"] if args.sqlite else []) + (["--before"] if args.before else [])
        command += ["--code", str(Path(args.code).resolve())] if args.code else []
        command += ["--cold", str(args.cold)] + (["--only", args.only] if args.only else [])
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
    if "--measure" not in sys.argv and "--cold-probe" not in sys.argv:
        print(tabulate(found, headers="keys", tablefmt="github"))
