"""The fleet the page benchmarks measure: a deployment's mix of schedules, with a run history of its own.

Every block of 20 DAGs holds (``KINDS``):

* 8 ``Every`` (40%): 5m with a 30 s delay, 10m, 15m, 30m phased, 1h, 1h with a 2 h window, 6h, 1d;
* 4 calendar cadences (20%): daily, weekly, month-end and every 2 hours, each at a wall-clock
  time in one of 8 zones (the zone turns with the block);
* 4 ``Cron`` (20%): ``*/10 * * * *``, ``0 6 * * 1-5``, ``30 2 * * *`` and ``0 */4 * * *`` in a zone;
* 2 declared schedules (10%): a parent (``INTERVAL_SECONDS 3600``) and an AFTER fan-in behind this
  block's parent and the previous block's, with a 2-hour freshness bound;
* 2 DAGs on Airflow's own cron (10%): ``0 * * * *`` and ``*/15 * * * *``; not on the page, but in
  Airflow's list.

The DAGs are parsed by Airflow's ``DagBag`` and stored by its ``sync_bag_to_db``, 100 to a file,
and unpaused.
Each DAG then gets the runs its own timetable made over the last ``days`` (at most ``cap`` of
them, the newest): a tessera DAG's from its public plan (its lane over those days, run ids from
its ``generate_run_id``, so they carry the run record), an AFTER DAG an hourly asset-triggered
run, an Airflow cron DAG its cron's; the newest run of some is still running, one in ten of the
rest failed. Every other AFTER parent completed a fire a minute ago (an asset event); the others
last did 6 hours ago, so their children show stale parents.
"""

from __future__ import annotations

import datetime
import hashlib
import textwrap
import time
from pathlib import Path
from typing import Any

PER_FILE = 100
BLOCK = 20
ZONES = (
    "Europe/Amsterdam",
    "Europe/London",
    "America/New_York",
    "America/Los_Angeles",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Asia/Kolkata",
    "America/Sao_Paulo",
)
KINDS = (
    'Every("5m", delay="30s")',
    'Every("10m")',
    'Every("15m")',
    'Every("30m", phase=Fixed("2m"))',
    'Every("1h")',
    'Every("1h", window="2h")',
    'Every("6h")',
    'Every("1d")',
    'Every.day(at="07:00", timezone=ZONE)',
    'Every.week(on="monday", at="06:30", timezone=ZONE)',
    'Every.month(on=31, at="06:00", timezone=ZONE)',
    'Every.hour(2, at="00:15", timezone=ZONE)',
    'Cron("*/10 * * * *", timezone=ZONE)',
    'Cron("0 6 * * 1-5", timezone=ZONE)',
    'Cron("30 2 * * *", timezone=ZONE)',
    'Cron("0 */4 * * *", timezone=ZONE)',
    "parent",
    "after",
    '"0 * * * *"',
    '"*/15 * * * *"',
)
DAG_FILE = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.timetables import Cron, Every, Fixed

FIRST, COUNT, BLOCK = {first}, {count}, {block}
KINDS = {kinds!r}
ZONES = {zones!r}
def name(n):
    return f"fleet_{{n:05d}}"
def parents(n):  # this block's parent and the previous block's
    return [name(p) for p in (n - 1, n - 1 - BLOCK) if p >= 0]
ours = range(FIRST, FIRST + COUNT)
SCHEDULES = ScheduleSet(
    [Schedule(name(n), interval_seconds=3600) for n in ours if KINDS[n % BLOCK] == "parent"]
    + [Schedule(name(n), after=parents(n), parent_freshness=2) for n in ours if KINDS[n % BLOCK] == "after"]
)
for n in ours:
    kind, ZONE = KINDS[n % BLOCK], ZONES[(n // BLOCK) % len(ZONES)]
    declared = kind in ("parent", "after")
    kwargs = SCHEDULES.dag_kwargs(name(n)) if declared else {{"schedule": eval(kind)}}
    with DAG(name(n), start_date=None, **kwargs) as dag:
        EmptyOperator(task_id="work")
    if declared:
        SCHEDULES.apply(dag)
"""


def kind_of(dag_id: str) -> str:
    return KINDS[int(dag_id.rsplit("_", 1)[1]) % BLOCK]


def on_page(dags: int) -> int:
    """How many of the first ``dags`` DAGs the page shows (all but Airflow's own crons)."""
    return sum(1 for n in range(dags) if not KINDS[n % BLOCK].startswith('"'))


def store(folder: Path, first: int, count: int) -> tuple[Any, float]:
    """Write and store DAGs ``first`` to ``first + count - 1``; the parsed bag, and the seconds it took."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db

    begin = time.perf_counter()
    paths = []
    for start in range(first, first + count, PER_FILE):
        source = DAG_FILE.format(
            first=start, count=min(PER_FILE, first + count - start), block=BLOCK, kinds=KINDS, zones=ZONES
        )
        path = folder / f"fleet_{start:05d}.py"
        path.write_text(textwrap.dedent(source))
        paths.append(path)
    DagBundlesManager().sync_bundles_to_db()
    bags = [DagBag(str(path)) for path in paths]
    for bag in bags:
        if bag.import_errors:
            raise RuntimeError(f"the fleet does not parse: {bag.import_errors}")
        sync_bag_to_db(bag, "dags-folder", None)
    dags = {dag_id: dag for bag in bags for dag_id, dag in bag.dags.items()}
    _unpause(list(dags))  # a deployment's DAGs run: each status judges whether its DAG is late
    return dags, time.perf_counter() - begin


def _unpause(dag_ids: list[str]) -> None:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from sqlalchemy import update

    with create_session() as session:
        session.execute(update(DagModel).where(DagModel.dag_id.in_(dag_ids)).values(is_paused=False))


def _roll(dag_id: str, k: int) -> int:
    return hashlib.sha256(f"{dag_id}/{k}".encode()).digest()[0]


def _tessera_runs(dag: Any, since: datetime.datetime, now: datetime.datetime, cap: int) -> list[tuple]:
    """(run_after, window start, window end) of the newest ``cap`` runs the DAG's plan made in the range."""
    lane = dag.timetable.plan.lane(after=since, until=now)
    occurrences = [segment.at(j) for segment in lane.segments for j in range(segment.count)][-cap - 1 :]
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    at = lambda us: epoch + datetime.timedelta(microseconds=us)  # noqa: E731
    found = []
    for previous, occurrence in zip(occurrences, occurrences[1:]):
        start = occurrence - lane.lookback if lane.lookback is not None else previous
        found.append((at(occurrence + lane.phase), at(start - lane.delay), at(occurrence - lane.delay)))
    return found


def _cron_runs(expression: str, since: datetime.datetime, now: datetime.datetime, cap: int) -> list[tuple]:
    minutes = 60 if expression == '"0 * * * *"' else 15
    step = datetime.timedelta(minutes=minutes)
    end = now.replace(minute=now.minute - now.minute % minutes, second=0, microsecond=0)
    found = []
    while end > since and len(found) < cap:
        found.append((end, end - step, end))
        end -= step
    return found[::-1]


def history(dags: dict[str, Any], *, now: datetime.datetime, days: float, cap: int) -> int:
    """Insert each DAG's runs over the last ``days`` (at most ``cap``); and the AFTER parents' fires."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.types import DagRunTriggeredByType, DagRunType
    from sqlalchemy import insert, select

    since = now - datetime.timedelta(days=days)
    rows = []
    for dag_id, dag in sorted(dags.items()):
        kind = kind_of(dag_id)
        if kind == "after":
            hours = min(cap, int(days * 24))
            runs = [(now - datetime.timedelta(hours=h), None, None) for h in range(hours, 0, -1)]
            run_type = DagRunType.ASSET_TRIGGERED
        elif kind.startswith('"'):
            runs, run_type = _cron_runs(kind, since, now, cap), DagRunType.SCHEDULED
        else:
            runs, run_type = _tessera_runs(dag, since, now, cap), DagRunType.SCHEDULED
        for k, (run_after, start, end) in enumerate(runs):
            newest = k == len(runs) - 1
            state = "running" if newest and _roll(dag_id, k) < 50 else "failed" if _roll(dag_id, k) < 26 else "success"
            if start is None:
                run_id = f"asset_triggered__{run_after.isoformat()}"
            elif kind.startswith('"'):
                run_id = f"scheduled__{end.isoformat()}"
            else:
                interval = _interval(start, end)
                run_id = dag.timetable.generate_run_id(run_type=run_type, run_after=run_after, data_interval=interval)
            rows.append(
                {
                    "dag_id": dag_id, "run_id": run_id, "run_type": run_type.value, "state": state,
                    "logical_date": start, "data_interval_start": start, "data_interval_end": end,
                    "run_after": run_after, "queued_at": run_after, "start_date": run_after,
                    "end_date": None if state == "running" else run_after + datetime.timedelta(minutes=2),
                    "triggered_by": DagRunTriggeredByType.TIMETABLE if start else DagRunTriggeredByType.ASSET,
                }
            )  # fmt: skip
    with create_session() as session:
        for chunk in range(0, len(rows), 5000):
            session.execute(insert(DagRun.__table__), rows[chunk : chunk + 5000])
        parents = sorted(f"x-tessera-schedule://{dag_id}" for dag_id in dags if kind_of(dag_id) == "parent")
        ids = dict(session.execute(select(AssetModel.uri, AssetModel.id).where(AssetModel.uri.in_(parents))).all())
        events = [
            {"asset_id": ids[uri], "timestamp": now - datetime.timedelta(minutes=1 if k % 2 else 360)}
            for k, uri in enumerate(parents)
            if uri in ids
        ]
        if events:
            session.execute(insert(AssetEvent.__table__), events)
    return len(rows)


def _interval(start: datetime.datetime, end: datetime.datetime) -> Any:
    from airflow._shared.timezones.timezone import coerce_datetime
    from airflow.timetables.base import DataInterval

    return DataInterval(coerce_datetime(start), coerce_datetime(end))
