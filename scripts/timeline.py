"""Where a test run's time went: each worker's span, and the files that took the most wall time and CPU.

Reads ``test-artifacts/timeline/*.tsv``: one line per test (start, end, CPU seconds, test id), written by
``tests/conftest.py`` when ``TESSERA_TIMELINE`` names that folder, as ``make test`` does. Prints, per worker,
when it started and stopped and how long it was busy, then the files by wall time with their CPU. Run after
``make test``: ``python scripts/timeline.py [--top N]``.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

TIMELINE = Path(__file__).resolve().parent.parent / "test-artifacts" / "timeline"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=25, help="how many files to list (default 25)")
    top = parser.parse_args().top
    lines = [
        (worker.stem, *line.split("\t", 3))
        for worker in sorted(TIMELINE.glob("*.tsv"))
        for line in worker.read_text().splitlines()
    ]
    if not lines:
        print(f"no timeline in {TIMELINE}")
        return
    first = min(float(started) for _, started, *_ in lines)
    spans: dict[str, list[float]] = collections.defaultdict(lambda: [float("inf"), 0.0, 0.0, 0.0])
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for worker, started, ended, cpu, nodeid in lines:
        start, end = float(started) - first, float(ended) - first
        span = spans[worker]
        span[0], span[1] = min(span[0], start), max(span[1], end)
        span[2] += end - start
        span[3] += float(cpu)
        file = files[nodeid.split("::")[0]]
        file[0] += end - start
        file[1] += float(cpu)
        file[2] = max(file[2], end)
    print("worker   first s   last s   busy s   CPU s")
    for worker, (start, end, busy, cpu) in sorted(spans.items(), key=lambda item: item[1][1]):
        print(f"{worker:<8} {start:7.0f} {end:8.0f} {busy:8.0f} {cpu:7.0f}")
    print(f"\nfiles by wall time (top {top}): wall s, CPU s, ended at s")
    for name, (wall, cpu, end) in sorted(files.items(), key=lambda item: -item[1][0])[:top]:
        print(f"{wall:7.0f} {cpu:7.0f} {end:7.0f}  {name}")
    total_cpu = sum(cpu for _, cpu, _ in files.values())
    print(f"\nall files: {len(files)}, CPU {total_cpu:.0f} s")


if __name__ == "__main__":
    main()
