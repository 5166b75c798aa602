"""``tessera migrate`` on 200 generated DAGs (every schedule kind it reads, 12 zones): wall and CPU seconds.

The folder is ``tests/plugin/migrate/generated.py``'s (the acceptance test's own). The console
script runs as a user runs it, on the next 365 days, with ``--json --patch``; reported: wall
seconds, the process's CPU seconds (user + system, children included) and its peak memory, the
verdicts, and the machine's load average before and after (on a shared machine wall time is CPU
time times the contention: compare CPU seconds between runs). The issue's bound is 60 s on 2 cores.

Not in ``make bench``: ``.venv/bin/python bench/migrate.py`` (``--dags N``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.plugin.migrate.generated import write_generated  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dags", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "dags"
        write_generated(folder, args.dags)
        command = [str(Path(sys.executable).parent / "tessera"), "migrate", str(folder), "--json"]
        command += ["--patch", str(Path(temporary) / "migrate.diff")]
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads(done.stdout)
    verdicts = collections.Counter(dag["verdict"] or dag["kind"] for dag in report["dags"])
    print(
        f"{args.dags} DAGs: {wall:.1f} s wall, {usage.ru_utime + usage.ru_stime:.1f} s CPU, "
        f"peak {usage.ru_maxrss / 1024:.0f} MiB; exit {done.returncode}; verdicts {dict(sorted(verdicts.items()))}; "
        f"patch rewrites {len(report['patch']['files'])} files; load average {load_before:.1f} -> "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
