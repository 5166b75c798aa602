"""What one scheduler step of ``Every`` costs, next to Airflow's own trigger timetables.

Each timetable is stepped through the same week with ``next_dagrun_info_v2`` and a
``catchup=True`` restriction, the way the scheduler and ``airflow backfill create``
call it. All timetables run in one process, interleaved within each repeat, so the
ratios compare like with like on whatever machine runs them; absolute numbers are
only context. A second measurement enumerates one year of a 1-minute cadence
through Airflow's own ``SerializedDAG.iter_dagrun_infos_between`` (what a backfill
does), after a real DAG serialization round trip.

Run with ``python bench/every_stepping.py`` or, with every other benchmark, ``make bench``.
"""

from __future__ import annotations

import datetime
import gc
import statistics
import time
from collections.abc import Callable

import pendulum
from airflow.sdk import DAG
from airflow.serialization.definitions.dag import SerializedDAG
from airflow.serialization.serialized_objects import DagSerialization
from airflow.timetables.base import DagRunInfo, TimeRestriction, Timetable
from airflow.timetables.trigger import CronTriggerTimetable, DeltaTriggerTimetable
from tabulate import tabulate

from tessera.timetables import Every

WEEK_START = pendulum.datetime(2026, 1, 5, tz="UTC")
WEEK = TimeRestriction(WEEK_START, WEEK_START + datetime.timedelta(days=7), catchup=True)
REPEATS = 9
DELTA, CRON = "DeltaTrigger(5m)", "CronTrigger(*/5)"


def _bound(timetable: Every) -> Every:
    # What the dag policy does in the dag-processor: the default phase is hashed from the DAG id.
    return timetable.bind(dag_id="bench", catchup=True, end_date=None)


def _contenders() -> dict[str, Timetable]:
    return {
        'Every("5m")': _bound(Every("5m")),
        'Every("1h", delay="5m", window="3h")': _bound(Every("1h", delay="5m", window="3h")),
        DELTA: DeltaTriggerTimetable(datetime.timedelta(minutes=5)),
        CRON: CronTriggerTimetable("*/5 * * * *", timezone="UTC"),
    }


def _step_through(timetable: Timetable, restriction: TimeRestriction) -> int:
    """Step until the timetable returns None; the number of calls made."""
    step, info, calls = timetable.next_dagrun_info_v2, None, 0
    while True:
        calls += 1
        info = step(last_dagrun_info=info, restriction=restriction)
        if info is None:
            return calls


def _timed(run: Callable[[], int]) -> tuple[float, int]:
    """Seconds per call of one pass, with the collector off as ``timeit`` does."""
    gc.collect()
    gc.disable()
    try:
        begin = time.perf_counter()
        calls = run()
        return (time.perf_counter() - begin) / calls, calls
    finally:
        gc.enable()


def _week_rows() -> list[dict[str, object]]:
    contenders = _contenders()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    calls: dict[str, int] = {}
    names = list(contenders)
    for repeat in range(REPEATS):
        # Rotate the order so no contender always runs first (cold caches) or last.
        for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
            per_call, calls[name] = _timed(lambda t=contenders[name]: _step_through(t, WEEK))
            samples[name].append(per_call)
    best = {name: min(values) for name, values in samples.items()}
    return [
        {
            "bench": "step a week",
            "case": name,
            "calls": calls[name],
            "best us/call": round(best[name] * 1e6, 2),
            "median us/call": round(statistics.median(samples[name]) * 1e6, 2),
            "vs DeltaTrigger": round(best[name] / best[DELTA], 3),
            "vs CronTrigger": round(best[name] / best[CRON], 3),
        }
        for name in names
    ]


def _serialized_dag(timetable: Timetable) -> SerializedDAG:
    """A DAG scheduled by ``timetable`` after Airflow's serialization round trip (what backfill reads)."""
    if isinstance(timetable, Every):
        timetable = _bound(timetable)
    dag = DAG(dag_id="bench_year", schedule=timetable, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"))
    return DagSerialization.from_dict(DagSerialization.to_dict(dag))


def _months() -> list[tuple[pendulum.DateTime, pendulum.DateTime]]:
    starts = [pendulum.datetime(2025, month, 1, tz="UTC") for month in range(1, 13)]
    ends = [*starts[1:], pendulum.datetime(2026, 1, 1, tz="UTC")]
    return [(start, end - datetime.timedelta(seconds=1)) for start, end in zip(starts, ends, strict=True)]


def _year_rows() -> list[dict[str, object]]:
    contenders = {
        'Every("1m")': _serialized_dag(Every("1m")),
        "DeltaTrigger(1m)": _serialized_dag(DeltaTriggerTimetable(datetime.timedelta(minutes=1))),
    }
    seconds = dict.fromkeys(contenders, 0.0)
    runs = dict.fromkeys(contenders, 0)
    names = list(contenders)
    # Month by month, alternating which goes first, so a change in machine load hits both alike.
    for month, (earliest, latest) in enumerate(_months()):
        for name in names if month % 2 else names[::-1]:
            gc.collect()
            begin = time.perf_counter()
            runs[name] += sum(1 for _ in contenders[name].iter_dagrun_infos_between(earliest, latest))
            seconds[name] += time.perf_counter() - begin
    return [
        {
            "bench": "backfill a year of 1m",
            "case": name,
            "calls": runs[name],
            "total s": round(seconds[name], 2),
            "mean us/call": round(seconds[name] / runs[name] * 1e6, 2),
            "vs DeltaTrigger": round(seconds[name] / seconds["DeltaTrigger(1m)"], 3),
        }
        for name in names
    ]


def _check_same_answers() -> None:
    # A ratio only means something if both sides did the same work: same number of runs per week.
    every, delta = _bound(Every("5m", delay="0s")), DeltaTriggerTimetable(datetime.timedelta(minutes=5))
    assert _step_through(every, WEEK) == _step_through(delta, WEEK)
    first = every.next_dagrun_info_v2(last_dagrun_info=None, restriction=WEEK)
    assert isinstance(first, DagRunInfo) and first.data_interval is not None
    # Date bounds select a run's period: the first run is the one whose window starts the week.
    assert first.data_interval.start == WEEK_START


def main() -> list[dict[str, object]]:
    """Measure, and return one row per contender (``bench/run.py`` prints them in one table)."""
    _check_same_answers()
    return _week_rows() + _year_rows()


if __name__ == "__main__":
    print(tabulate(main(), headers="keys", tablefmt="github"))
