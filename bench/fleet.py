"""A fleet of DAGs: what tessera's timetables cost the dag-processor and the scheduler as the fleet grows.

Two fleets of each size (1,000 and 10,000 DAGs) are built in process, the way the
dag-processor handles each DAG file but without files or a DagBag: construct the
DAG (one ``EmptyOperator``), apply the dag policies (tessera's binds the timetable
to the DAG id), serialize with ``DagSerialization.to_dict``. One fleet uses tessera
timetables, a mix of intervals, calendar cadences and cron; the other the
equivalent Airflow built-ins (``DeltaTriggerTimetable``, ``CronTriggerTimetable``),
DAG for DAG. The scheduler's side is then replayed on the timetables decoded from
the serialized DAGs: for every DAG, the first run and five more runs, each one
``next_dagrun_info_v2`` call with the DAG's own restriction (``catchup=False``),
which is what the scheduler pays per created run. The two contenders alternate in
chunks of DAGs so a change in machine load hits both alike.

Load evenness: 1,000 DAGs on ``Every("5m")``, the start (``run_after``) of each one's
run for the same occurrence, counted per 10 s bucket over the interval: the
peak-to-mean ratio with the default phase (a stable hash of the DAG id) against
``phase=Fixed("0s")`` and the built-ins, which start every run at the occurrence.

Fan-in latency (``--fan-in``, 3 more minutes, not in ``make bench``): a real scheduler
(SQLite, the e2e harness) runs two parents and an AFTER child for 150 s; per child run,
the time from the parent fire completing its set (its asset event) to the run being
queued, and the child's task instances holding a worker slot, sampled every second.

Run with ``python bench/fleet.py`` (a few minutes) or, with every other benchmark, ``make bench``.
"""

from __future__ import annotations

import datetime
import gc
import itertools
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pendulum
from airflow import settings
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from airflow.serialization.decoders import decode_timetable
from airflow.serialization.serialized_objects import DagSerialization
from airflow.timetables.base import TimeRestriction, Timetable
from airflow.timetables.trigger import CronTriggerTimetable, DeltaTriggerTimetable
from tabulate import tabulate

from tessera.timetables import Cron, Every, Fixed

REPO = Path(__file__).resolve().parent.parent

SIZES = (1_000, 10_000)
CHUNK = 500
RUNS_PER_DAG = 6
"""The first run and five more: each one ``next_dagrun_info_v2`` call."""
EVEN_DAGS = 1_000
BUCKET = datetime.timedelta(seconds=10)
OCCURRENCE = pendulum.datetime(2026, 1, 5, 9, 0, tz="UTC")
AMS, NY, LONDON = "Europe/Amsterdam", "America/New_York", "Europe/London"


def _delta(minutes: int) -> Callable[[], Timetable]:
    return lambda: DeltaTriggerTimetable(datetime.timedelta(minutes=minutes))


def _cron(expression: str, timezone: str) -> Callable[[], Timetable]:
    return lambda: CronTriggerTimetable(expression, timezone=timezone)


# One row per kind of schedule: the tessera timetable and the built-in that does the same job.
MIX: list[tuple[str, Callable[[], Timetable], Callable[[], Timetable]]] = [
    ("every 1m", lambda: Every("1m"), _delta(1)),
    ("every 5m", lambda: Every("5m", delay="30s"), _delta(5)),
    ("every 15m", lambda: Every("15m"), _delta(15)),
    ("every 1h", lambda: Every("1h", delay="5m"), _delta(60)),
    ("every 6h", lambda: Every("6h"), _delta(360)),
    ("day 07:00", lambda: Every.day(at="07:00", timezone=AMS), _cron("0 7 * * *", AMS)),
    ("week mon 07:00", lambda: Every.week(on="monday", at="07:00", timezone=AMS), _cron("0 7 * * 1", AMS)),
    ("month 1st 06:00", lambda: Every.month(on=1, at="06:00", timezone="UTC"), _cron("0 6 1 * *", "UTC")),
    ("cron */10", lambda: Cron("*/10 * * * *", timezone=LONDON), _cron("*/10 * * * *", LONDON)),
    ("cron weekdays 06:30", lambda: Cron("30 6 * * 1-5", timezone=NY), _cron("30 6 * * 1-5", NY)),
]
TESSERA, BUILTIN = "tessera", "built-in"


def _timetable(side: str, index: int) -> Timetable:
    _, tessera, builtin = MIX[index % len(MIX)]
    return tessera() if side == TESSERA else builtin()


def _build(side: str, indices: range) -> tuple[float, float, list[dict[str, Any]]]:
    """Build, police and serialize the DAGs ``indices``; seconds spent building, serializing, the timetables."""
    built = serialized = 0.0
    encoded = []
    for index in indices:
        begin = time.perf_counter()
        with DAG(dag_id=f"fleet_{side}_{index:05d}", schedule=_timetable(side, index), start_date=None) as dag:
            EmptyOperator(task_id="noop")
        settings.dag_policy(dag)  # what the dag-processor runs before serializing
        middle = time.perf_counter()
        data = DagSerialization.to_dict(dag)
        end = time.perf_counter()
        built += middle - begin
        serialized += end - middle
        encoded.append(data["dag"]["timetable"])
    return built, serialized, encoded


def _schedule(timetables: list[tuple[int, Timetable]], spent: dict[str, list[float]]) -> None:
    """Create ``RUNS_PER_DAG`` runs of every DAG as the scheduler does; seconds and calls added per kind."""
    restriction = TimeRestriction(earliest=None, latest=None, catchup=False)
    clock = time.perf_counter
    for index, timetable in timetables:
        step, info = timetable.next_dagrun_info_v2, None
        begin = clock()
        for _ in range(RUNS_PER_DAG):
            info = step(last_dagrun_info=info, restriction=restriction)
        totals = spent[MIX[index % len(MIX)][0]]
        totals[0] += clock() - begin
        totals[1] += RUNS_PER_DAG


def _fleet(size: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, list[float]]]]:
    """Build and schedule a fleet of ``size`` DAGs per side; seconds per phase, and per kind for scheduling."""
    totals = {side: {"build": 0.0, "serialize": 0.0} for side in (TESSERA, BUILTIN)}
    by_kind = {side: {kind: [0.0, 0] for kind, _, _ in MIX} for side in (TESSERA, BUILTIN)}
    for number, start in enumerate(range(0, size, CHUNK)):
        sides = (TESSERA, BUILTIN) if number % 2 == 0 else (BUILTIN, TESSERA)
        for side in sides:
            indices = range(start, min(start + CHUNK, size))
            # The collector runs between chunks only: DAGs and tasks reference each other.
            gc.collect()
            gc.disable()
            try:
                built, serialized, encoded = _build(side, indices)
                # The scheduler holds the timetables deserialized from the stored DAGs.
                _schedule([(i, decode_timetable(data)) for i, data in zip(indices, encoded)], by_kind[side])
            finally:
                gc.enable()
            totals[side]["build"] += built
            totals[side]["serialize"] += serialized
    return totals, by_kind


def _fleet_rows(size: int) -> list[dict[str, object]]:
    totals, by_kind = _fleet(size)
    rows = []
    for side, total in totals.items():
        seconds = sum(spent for spent, _ in by_kind[side].values())
        calls = sum(count for _, count in by_kind[side].values())
        rows.append(
            {
                "bench": "fleet",
                "case": f"{size:,} DAGs, {side}",
                "calls": int(calls),
                "build us/DAG": round(total["build"] / size * 1e6, 1),
                "serialize us/DAG": round(total["serialize"] / size * 1e6, 1),
                "us/created run": round(seconds / calls * 1e6, 2),
            }
        )
    tessera, builtin = rows
    for key in ("build us/DAG", "serialize us/DAG", "us/created run"):
        tessera[f"{key} vs built-in"] = round(tessera[key] / builtin[key], 3)
    for kind, _, _ in MIX:
        (mine, calls), (theirs, _) = by_kind[TESSERA][kind], by_kind[BUILTIN][kind]
        rows.append(
            {
                "bench": f"fleet {size:,}: per created run, by kind",
                "case": kind,
                "calls": int(calls),
                "us/created run": round(mine / calls * 1e6, 2),
                "built-in us/created run": round(theirs / calls * 1e6, 2),
                "us/created run vs built-in": round(mine / theirs, 3),
            }
        )
    return rows


def _growth_rows(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Per-DAG (per-run) cost at the largest fleet over the smallest: 1.0 is linear growth."""
    small, large = SIZES[0], SIZES[-1]
    growth = []
    for side in (TESSERA, BUILTIN):
        at = {size: next(r for r in rows if r["case"] == f"{size:,} DAGs, {side}") for size in (small, large)}
        keys = ("build us/DAG", "serialize us/DAG", "us/created run")
        ratios = {key: round(at[large][key] / at[small][key], 3) for key in keys}  # type: ignore[operator]
        growth.append({"bench": "fleet growth", "case": f"{side}: per-unit cost at {large:,} / at {small:,}", **ratios})
    return growth


def _starts(timetables: list[Timetable], earliest: datetime.datetime) -> Counter[int]:
    """Run starts per 10 s bucket after ``OCCURRENCE``, for each timetable's run of that occurrence."""
    restriction = TimeRestriction(earliest=earliest, latest=None, catchup=True)
    buckets: Counter[int] = Counter()
    for timetable in timetables:
        info = timetable.next_dagrun_info_v2(last_dagrun_info=None, restriction=restriction)
        assert info is not None and info.data_interval is not None and info.data_interval.end == OCCURRENCE
        # Plain timedelta arithmetic: pendulum's Interval does not floor-divide by a timedelta.
        offset = datetime.timedelta(seconds=(info.run_after - OCCURRENCE).total_seconds())
        buckets[offset // BUCKET] += 1
    return buckets


def _evenness_rows() -> list[dict[str, object]]:
    ids = [f"fleet_5m_{index:04d}" for index in range(EVEN_DAGS)]
    # A tessera date bound selects a run by the start of its period, a trigger timetable's by its own time.
    period_start = OCCURRENCE - datetime.timedelta(minutes=5)

    def every(**kwargs: Any) -> Callable[[str], Timetable]:
        return lambda dag_id: Every("5m", **kwargs).bind(dag_id=dag_id, catchup=False, end_date=None)

    contenders: dict[str, tuple[Callable[[str], Timetable], datetime.datetime]] = {
        'Every("5m"), default phase': (every(), period_start),
        'Every("5m", phase=Fixed("0s"))': (every(phase=Fixed("0s")), period_start),
        "DeltaTrigger(5m)": (lambda _: _delta(5)(), OCCURRENCE),
        "CronTrigger(*/5)": (lambda _: _cron("*/5 * * * *", "UTC")(), OCCURRENCE),
    }
    buckets_per_interval = datetime.timedelta(minutes=5) // BUCKET
    mean = EVEN_DAGS / buckets_per_interval
    rows = []
    for name, (make, earliest) in contenders.items():
        buckets = _starts([make(dag_id) for dag_id in ids], earliest)
        assert sum(buckets.values()) == EVEN_DAGS and max(buckets) < buckets_per_interval
        peak = max(buckets.values())
        rows.append(
            {
                "bench": "run starts per 10 s, 1,000 DAGs every 5m",
                "case": name,
                "peak starts": peak,
                "mean starts": round(mean, 1),
                "peak/mean": round(peak / mean, 2),
                "empty buckets": buckets_per_interval - len(buckets),
            }
        )
    return rows


FAN_IN_DAGS = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

S = ScheduleSet([
    Schedule("lat_a", interval_seconds=20),
    Schedule("lat_b", interval_seconds=30),
    Schedule("lat_child", after=["lat_a", "lat_b"]),
])
for name in ("lat_a", "lat_b"):
    with DAG(f"{name}_load", start_date=None, **S.dag_kwargs(name)):
        EmptyOperator(task_id="load")
with DAG("lat_child_build", start_date=None, **S.dag_kwargs("lat_child")):
    EmptyOperator(task_id="build")
"""
FAN_IN_OBSERVED = 150
_RELEASES = """SELECT r.run_id, r.queued_at, max(e.timestamp) FROM dag_run r
JOIN dagrun_asset_event c ON c.dag_run_id = r.id JOIN asset_event e ON e.id = c.event_id
WHERE r.dag_id = 'lat_child_build' GROUP BY r.run_id, r.queued_at"""
_HOLDING = """SELECT count(*) FROM task_instance WHERE dag_id = 'lat_child_build'
AND state IN ('queued', 'running', 'deferred', 'up_for_reschedule')"""


def _fan_in_rows() -> list[dict[str, object]]:
    sys.path.insert(0, str(REPO))
    from tests.e2e.harness import AirflowHome, _utc

    with tempfile.TemporaryDirectory(prefix="tessera-bench-fan-in-") as root:
        home = AirflowHome(Path(root), dags_source=REPO / "tests" / "e2e" / "dags")
        for copied in home.dags.glob("*.py"):
            copied.unlink()
        (home.dags / "fan_in_latency.py").write_text(FAN_IN_DAGS)
        held = []
        try:
            assert home.cli("db", "migrate").returncode == 0
            home.start("dag-processor", "dag-processor")
            home.start("scheduler", "scheduler")
            deadline = time.monotonic() + FAN_IN_OBSERVED
            while time.monotonic() < deadline:
                home.check_alive()
                held.append(home.query(_HOLDING)[0][0] if home.is_parsed("lat_child_build") else 0)
                time.sleep(1)
            releases = home.query(_RELEASES)
        finally:
            home.stop()
    latencies = [(_utc(queued) - _utc(event)).total_seconds() for _, queued, event in releases if queued]
    assert latencies, "the child never ran"
    return [
        {
            "bench": "fan-in latency (SQLite, 1 scheduler)",
            "case": "last parent fire -> child run queued",
            "calls": len(latencies),
            "median s": round(statistics.median(latencies), 2),
            "max s": round(max(latencies), 2),
            "child slots held (sampled max)": max(held),
        }
    ]


def main(fan_in: bool = False) -> list[dict[str, object]]:
    """Measure, and return the rows (``bench/run.py`` prints them in one table)."""
    rows = list(itertools.chain.from_iterable(_fleet_rows(size) for size in SIZES))
    rows += _growth_rows(rows) + _evenness_rows()
    return rows + _fan_in_rows() if fan_in else rows


if __name__ == "__main__":
    print(tabulate(main(fan_in="--fan-in" in sys.argv), headers="keys", tablefmt="github"))
