"""Run every benchmark in ``bench/`` and print their results as one table (``make bench``).

Each ``bench/<name>.py`` module (other than this one) provides ``main()``, which
measures and returns its rows: a list of dicts with at least ``case`` and the
per-call cost, plus its ratios against the Airflow built-in it is measured
beside. Columns are the union of every row's keys.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path

from tabulate import tabulate

HERE = Path(__file__).resolve().parent


def _modules() -> list[str]:
    names = (path.stem for path in HERE.glob("*.py"))
    return sorted(name for name in names if name != "run" and not name.startswith("_"))


def main() -> int:
    sys.path.insert(0, str(HERE))
    rows: list[dict[str, object]] = []
    failed = []
    for name in _modules():
        print(f"running bench/{name}.py ...", file=sys.stderr, flush=True)
        begin = time.perf_counter()
        try:
            found = importlib.import_module(name).main() or []
        except Exception:
            # One broken benchmark must not hide the others' numbers.
            traceback.print_exc()
            failed.append(name)
            continue
        rows.extend({"module": name, **row} for row in found)
        print(f"  done in {time.perf_counter() - begin:.0f}s", file=sys.stderr, flush=True)
    print(tabulate(rows, headers="keys", tablefmt="github", missingval=""))
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
