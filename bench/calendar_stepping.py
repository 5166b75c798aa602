"""What one scheduler step of a calendar cadence costs, next to ``CronTriggerTimetable`` for the same cron.

Each pair (a ``Calendar`` cadence and the cron expression that names the same
times) is stepped through one year with ``next_dagrun_info_v2`` and a
``catchup=True`` restriction, the way ``airflow backfill create`` and a
catching-up scheduler call it. Both run in one process, interleaved, with the
order rotating between repeats; the ratio of the best times is what carries
over between machines. Before timing, each pair must fire at the very same
instants over the year, so both sides do the same work (the New York and
Amsterdam pairs cross both of 2026's clock changes).

Run with ``python bench/calendar_stepping.py`` or, with every other benchmark, ``make bench``.
"""

from __future__ import annotations

import gc
import statistics
import time

import pendulum
from airflow.timetables.base import DagRunInfo, TimeRestriction, Timetable
from airflow.timetables.trigger import CronTriggerTimetable
from tabulate import tabulate

from tessera.timetables import Calendar

YEAR = TimeRestriction(
    pendulum.datetime(2026, 1, 1, tz="UTC"), pendulum.datetime(2026, 12, 31, 23, 59, tz="UTC"), catchup=True
)
REPEATS = 7

# (case, the calendar cadence, the equivalent cron expression and zone)
PAIRS: list[tuple[str, Calendar, tuple[str, str]]] = [
    (
        "daily 09:00 New York",
        Calendar.day("09:00", timezone="America/New_York"),
        ("0 9 * * *", "America/New_York"),
    ),
    (
        "weekly Monday 07:00 Amsterdam",
        Calendar.week("monday", "07:00", timezone="Europe/Amsterdam"),
        ("0 7 * * 1", "Europe/Amsterdam"),
    ),
    ("monthly on the 31st (last day) 06:00", Calendar.month(31, "06:00"), ("0 6 L * *", "UTC")),
    ("every 6 hours", Calendar.hour(6), ("0 */6 * * *", "UTC")),
]


def _bound(timetable: Calendar) -> Calendar:
    # What the dag policy does in the dag-processor before the scheduler ever steps it.
    return timetable.bind(dag_id="bench", catchup=True, end_date=None)


def _run_afters(timetable: Timetable) -> list[DagRunInfo]:
    infos, info = [], None
    while info := timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=YEAR):
        infos.append(info)
    return infos


def _step_through(timetable: Timetable) -> int:
    """Step until the timetable returns None; the number of calls made."""
    step, info, calls = timetable.next_dagrun_info_v2, None, 0
    while True:
        calls += 1
        info = step(last_dagrun_info=info, restriction=YEAR)
        if info is None:
            return calls


def _timed(timetable: Timetable) -> tuple[float, int]:
    """Seconds per call of one pass over the year, with the collector off as ``timeit`` does."""
    gc.collect()
    gc.disable()
    try:
        begin = time.perf_counter()
        calls = _step_through(timetable)
        return (time.perf_counter() - begin) / calls, calls
    finally:
        gc.enable()


def _pair_rows(case: str, calendar: Calendar, cron: CronTriggerTimetable) -> list[dict[str, object]]:
    ours, theirs = [i.run_after for i in _run_afters(calendar)], [i.run_after for i in _run_afters(cron)]
    if ours != theirs:
        raise AssertionError(f"{case}: the calendar cadence and the cron expression fire at different times")
    contenders = {"Calendar": calendar, "CronTrigger": cron}
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    calls: dict[str, int] = {}
    for repeat in range(REPEATS):
        for name in ("Calendar", "CronTrigger") if repeat % 2 else ("CronTrigger", "Calendar"):
            per_call, calls[name] = _timed(contenders[name])
            samples[name].append(per_call)
    best = {name: min(values) for name, values in samples.items()}
    return [
        {
            "bench": "step a year",
            "case": f"{case}: {name}",
            "calls": calls[name],
            "best us/call": round(best[name] * 1e6, 2),
            "median us/call": round(statistics.median(samples[name]) * 1e6, 2),
            "vs CronTrigger": round(best[name] / best["CronTrigger"], 3),
        }
        for name in contenders
    ]


def main() -> list[dict[str, object]]:
    """Measure, and return two rows per pair (``bench/run.py`` prints them in one table)."""
    rows: list[dict[str, object]] = []
    for case, calendar, (expression, zone) in PAIRS:
        rows += _pair_rows(case, _bound(calendar), CronTriggerTimetable(expression, timezone=zone))
    return rows


if __name__ == "__main__":
    print(tabulate(main(), headers="keys", tablefmt="github"))
