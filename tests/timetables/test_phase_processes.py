"""The default phase is the same in every Python process, whatever its hash seed.

Two interpreters with different ``PYTHONHASHSEED`` build the same DAGs, let the
dag policy bind each timetable to its DAG id (as the dag-processor does) and
print the phases. Both must equal the pinned values below: a scheduler
restarted after an upgrade must keep every DAG's phase, so these numbers must
never change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

_SCRIPT = """
import json
from airflow.sdk import DAG
from tessera.plugin.policy import dag_policy
from tessera.timetables import Every, Spread, anti_herd

schedules = {
    "every-5m": ("tessera_every_5m_delay", Every("5m", delay="30s")),
    "every-1h": ("billing_hourly", Every("1h")),
    "every-1d-spread-5m": ("nightly_rollup", Every("1d", phase=Spread(max="5m"))),
    "every-1d-anti-herd": ("nightly_rollup", Every("1d", phase=anti_herd())),
    "explicit-key": ("any_dag_id", Every("5m", key="shared-key")),
}
phases = {}
for case, (dag_id, schedule) in schedules.items():
    dag = DAG(dag_id=dag_id, schedule=schedule, start_date=None)
    dag_policy(dag)
    phases[case] = dag.timetable.phase_ms
print(json.dumps({"phases": phases, "builtin_hash": hash("tessera")}))
"""

# First 8 bytes of SHA-256 of the DAG id (or key), big-endian, modulo the number of steps below the bound.
PINNED_MS = {
    "every-5m": 12_000,  # below 5m, 1 s steps
    "every-1h": 480_000,  # below 15m, 1 s steps
    "every-1d-spread-5m": 194_000,  # below 5m, 1 s steps
    "every-1d-anti-herd": 840_000,  # 14 whole minutes, of 0..14
    "explicit-key": 180_000,  # hashed from "shared-key", not the DAG id
}


def _run_with_hash_seed(seeds: list[str]) -> list[dict]:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _SCRIPT],
            env={**os.environ, "PYTHONHASHSEED": seed},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in seeds
    ]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def test_default_phase_is_identical_across_processes_and_pinned() -> None:
    first, second = _run_with_hash_seed(["1", "2"])
    # The seeds really differ: the built-in hash() would have given two different phases.
    assert first["builtin_hash"] != second["builtin_hash"]
    assert first["phases"] == second["phases"] == PINNED_MS
