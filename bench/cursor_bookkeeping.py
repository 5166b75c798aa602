"""What a cursor-carrying fire spends on its bookkeeping, against the default Variable store.

A clean fire's bookkeeping is *prepare* (read the cursor Variable through the
Task SDK, decode it, splice it into the frozen input, validate the input against
its JSON Schema) plus *conclude* (validate the output, read the new cursor at its
JSON Pointer, size-check it, save the Variable); that sum is the ``total`` row,
target under 50 ms. A clean fire writes nothing else (its task's success is its
record). An unclean fire also pushes one fire record to XCom; the ``unclean:
record`` row is that extra push. The ``in memory`` row is the same bookkeeping
against an in-memory store: tessera's own share, without the Execution API.
The function itself is a no-op.

It runs for real: a fresh AIRFLOW_HOME with a SQLite metadata DB, and a DAG whose
one task loops over many fires inside a genuine task run (``dag.test()``), so every
Variable and XCom call goes through the Execution API, in process. It runs in a
child process so it gets its own Airflow configuration, whatever the benchmark
runner imported before. Two cursors: a watermark (tens of bytes) and one just
under the 64 KiB cap. Every Execution API call costs several milliseconds of API
server and SQLite work, so read the numbers next to the machine's load.

Run with ``python bench/cursor_bookkeeping.py`` or, with every other benchmark, ``make bench``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

FIRES = 300
TARGET_MS = 50.0

BENCH_DAG = textwrap.dedent(
    '''
    """The loop of fires the benchmark times, inside one real task run."""
    import json, os, time

    from airflow.sdk import DAG, task
    from tessera.operators.functions.fire import CursorFire
    from tessera.operators.functions.store import StoreLocation, VariableStore
    from tessera.operators.functions.record import RECORD_KEY
    from tessera.operators.functions.spec import FunctionSpec

    CURSORS = {
        "watermark cursor (~40 B)": {"since": "2026-03-08T06:00:00.000000Z"},
        "cursor near the cap (~60 KiB)": {"since": "2026-03-08T06:00:00.000000Z", "seen": ["x" * 60] * 980},
    }
    SCHEMA = {"type": "object", "required": ["since"], "properties": {"since": {"type": "string"}}}


    class MemoryStore:
        """The same bookkeeping without the Execution API: what tessera's own code costs."""

        location = StoreLocation("memory", "bench")
        document = None

        def read(self):
            return self.document

        def write(self, document, *, written_by):
            self.document = document


    @task
    def loop(ti=None):
        results = {}
        for case, cursor in CURSORS.items():
            spec = FunctionSpec.build(
                input={"region": "emea", "limits": {"rows": 10000}},
                input_schema={"type": "object", "required": ["region", "cursor"],
                              "properties": {"cursor": SCHEMA}},
                output_schema={"type": "object", "required": ["count", "cursor"],
                               "properties": {"count": {"type": "integer"}, "cursor": SCHEMA}},
                cursor_from="/cursor", cursor_into="/cursor", initial=cursor,
            )
            fire = CursorFire(spec, VariableStore("bench-" + str(len(results)) + "-state"))
            memory = CursorFire(spec, MemoryStore())
            timings = {"prepare": [], "conclude": [], "unclean: record": [], "in memory (no API)": []}
            for n in range(int(os.environ["BENCH_FIRES"])):
                t0 = time.perf_counter()
                payload = fire.prepare().payload
                t1 = time.perf_counter()
                fire.conclude({"count": n, "cursor": payload["cursor"]}, save=True, written_by="bench")
                t2 = time.perf_counter()
                ti.xcom_push(RECORD_KEY, {"phase": "finished", "at": "2026-03-08T06:00:00+00:00",
                                          "outcome": "Failed", "reason": "FunctionError"})
                t3 = time.perf_counter()
                payload = memory.prepare().payload
                memory.conclude({"count": n, "cursor": payload["cursor"]}, save=True, written_by="bench")
                t4 = time.perf_counter()
                timings["in memory (no API)"].append(t4 - t3)
                timings["prepare"].append(t1 - t0)
                timings["conclude"].append(t2 - t1)
                timings["unclean: record"].append(t3 - t2)
            results[case] = timings
        with open(os.environ["BENCH_OUT"], "w") as out:
            json.dump(results, out)


    with DAG(dag_id="tessera_bench_cursor_bookkeeping", schedule=None):
        loop()
    '''
)

CHILD = textwrap.dedent(
    """
    from airflow.utils import db
    db.initdb()
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db
    DagBundlesManager().sync_bundles_to_db()
    import os
    bag = DagBag(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    assert not bag.import_errors, bag.import_errors
    sync_bag_to_db(bag, "dags-folder", None)
    run = bag.dags["tessera_bench_cursor_bookkeeping"].test()
    assert run.state == "success", run.state
    """
)


def _measure(fires: int) -> dict[str, dict[str, list[float]]]:
    with tempfile.TemporaryDirectory(prefix="tessera-bench-") as home:
        dags = Path(home) / "dags"
        dags.mkdir()
        (dags / "bench_cursor.py").write_text(BENCH_DAG)
        out = Path(home) / "timings.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "_AIRFLOW"))}
        env.update(
            AIRFLOW_HOME=home,
            AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{home}/airflow.db",
            AIRFLOW__CORE__DAGS_FOLDER=str(dags),
            AIRFLOW__CORE__LOAD_EXAMPLES="False",
            AIRFLOW__LOGGING__LOGGING_LEVEL="WARNING",
            BENCH_FIRES=str(fires),
            BENCH_OUT=str(out),
        )
        result = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
        if result.returncode != 0 or not out.exists():
            raise RuntimeError(f"benchmark run failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return json.loads(out.read_text())


def _ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(v * 1000 for v in values)
    return {
        "best": ordered[0],
        "median": statistics.median(ordered),
        "p95": ordered[int(len(ordered) * 0.95) - 1],
    }


def main() -> list[dict[str, Any]]:
    rows = []
    for case, timings in _measure(FIRES).items():
        total = [a + b for a, b in zip(timings["prepare"], timings["conclude"])]
        parts = [
            ("prepare", timings["prepare"]),
            ("conclude", timings["conclude"]),
            ("total", total),
            ("unclean: record", timings["unclean: record"]),
            ("total, in memory (no API)", timings["in memory (no API)"]),
        ]
        for part, values in parts:
            stats = _ms(values)
            row = {
                "bench": "cursor bookkeeping / fire",
                "case": f"{case}: {part}",
                "best ms": round(stats["best"], 2),
                "median ms": round(stats["median"], 2),
                "p95 ms": round(stats["p95"], 2),
            }
            if part == "total":
                verdict = "met" if stats["median"] < TARGET_MS else "MISSED"
                row["target"] = f"< {TARGET_MS:.0f} ms: {verdict} (median)"
            rows.append(row)
    return rows


if __name__ == "__main__":
    from tabulate import tabulate

    print(f"{FIRES} fires per case; Execution API in process, SQLite metadata DB")
    print(tabulate(main(), headers="keys", tablefmt="github", missingval=""))
