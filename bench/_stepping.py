"""Side-by-side stepping of timetables: the measurement the stepping benchmarks share."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

from airflow.timetables.base import DagRunInfo, TimeRestriction, Timetable

REPEATS = 7


def runs(timetable: Timetable, restriction: TimeRestriction) -> list[DagRunInfo]:
    """Every run the timetable plans within ``restriction`` (what a backfill enumerates)."""
    infos, info = [], None
    while info := timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction):
        infos.append(info)
    return infos


def timed_pass(timetable: Timetable, restriction: TimeRestriction) -> tuple[float, int]:
    """Seconds per call of one pass, with the collector off as ``timeit`` does; and the calls made."""
    step, info, calls = timetable.next_dagrun_info_v2, None, 0
    gc.collect()
    gc.disable()
    try:
        begin = time.perf_counter()
        while True:
            calls += 1
            info = step(last_dagrun_info=info, restriction=restriction)
            if info is None:
                break
        return (time.perf_counter() - begin) / calls, calls
    finally:
        gc.enable()


def compare(
    bench: str,
    case: str,
    contenders: dict[str, Callable[[], Timetable]],
    restriction: TimeRestriction,
    baseline: str,
) -> list[dict[str, object]]:
    """Rows of best and median cost per call, each contender against ``baseline``.

    The contenders must plan the same runs (checked first), and they alternate order
    between repeats so neither always runs on a warmer machine.
    """
    # Airflow's trigger timetables bound the occurrence and tessera's the period that ends at
    # it, so the two ranges are one occurrence apart: compare where both plan runs.
    planned = [[info.run_after for info in runs(make(), restriction)] for make in contenders.values()]
    low, high = max(answer[0] for answer in planned), min(answer[-1] for answer in planned)
    shared = [[at for at in answer if low <= at <= high] for answer in planned]
    if len(shared[0]) < 2 or any(answer != shared[0] for answer in shared):
        raise AssertionError(f"{case}: {' and '.join(contenders)} fire at different times")
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    calls: dict[str, int] = {}
    for repeat in range(REPEATS):
        for name in names if repeat % 2 else names[::-1]:
            per_call, calls[name] = timed_pass(contenders[name](), restriction)
            samples[name].append(per_call)
    best = {name: min(values) for name, values in samples.items()}
    return [
        {
            "bench": bench,
            "case": f"{case}: {name}",
            "calls": calls[name],
            "best us/call": round(best[name] * 1e6, 2),
            "median us/call": round(statistics.median(samples[name]) * 1e6, 2),
            f"vs {baseline}": round(best[name] / best[baseline], 3),
        }
        for name in names
    ]
