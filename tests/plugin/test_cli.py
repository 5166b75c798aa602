"""``tessera plan`` over DAG files: loaded with Airflow's DagBag (the dag policy runs), no deployment needed.

The ``--api`` form is tested against a real API server in ``test_api.py``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tessera.plugin.cli import EXIT_CONTRADICTION, EXIT_OK, EXIT_USAGE, main

SEED = """
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

with DAG(dag_id="cli_seed", schedule=Every("5m", delay="30s", phase=Fixed("2m10s")), start_date=None):
    pass
"""
AMSTERDAM = """
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG("cli_amsterdam", schedule=Every.day(at="07:00", timezone="Europe/Amsterdam"), start_date=None):
    pass
"""
SPREAD = """
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG(dag_id="cli_spread", schedule=Every("1h"), start_date=None):
    pass
"""
INVALID = """
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG(dag_id="cli_invalid", schedule=Every("7m"), start_date=None):
    pass
"""
ORPHAN = """
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

SCHEDULES = ScheduleSet([Schedule("child", after=["renamed_parent"])])
with DAG(dag_id="cli_orphan", start_date=None, **SCHEDULES.dag_kwargs("child")):
    pass
"""
AFTER = "2026-03-02T12:03:00Z"


def _folder(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    return tmp_path


def test_the_seed_example_plan_is_printed(tmp_path, capsys):
    folder = _folder(tmp_path, seed=SEED)
    assert main(["plan", str(folder), "--count", "2", "--after", AFTER]) == EXIT_OK
    out = capsys.readouterr().out
    assert "cli_seed: every 5m · delay 30s · phase 2m10s" in out
    assert "2026-03-02 12:05:00  2026-03-02 12:07:10  2026-03-02 11:59:30 -> 2026-03-02 12:04:30" in out
    assert "2026-03-02 12:10:00  2026-03-02 12:12:10  2026-03-02 12:04:30 -> 2026-03-02 12:09:30" in out


def test_json_output_has_the_api_shape_and_the_local_time(tmp_path, capsys):
    folder = _folder(tmp_path, amsterdam=AMSTERDAM)
    assert main(["plan", str(folder / "amsterdam.py"), "--count", "1", "--after", AFTER, "--json"]) == EXIT_OK
    plan = json.loads(capsys.readouterr().out)
    (dag,) = plan["dags"]
    (run,) = dag["occurrences"]
    assert (dag["dag_id"], dag["timezone"]) == ("cli_amsterdam", "Europe/Amsterdam")
    assert run["occurrence"] == "2026-03-03T06:00:00Z"
    assert run["occurrence_local"] == "2026-03-03T07:00:00+01:00"
    assert plan["contradictions"] == [] and plan["plan_check"] == "ok"


def test_the_phase_is_hashed_from_the_dag_id_because_the_dag_policy_ran(tmp_path, capsys):
    folder = _folder(tmp_path, spread=SPREAD)
    assert main(["plan", str(folder), "--count", "1", "--after", AFTER, "--json"]) == EXIT_OK
    (dag,) = json.loads(capsys.readouterr().out)["dags"]
    assert "phase spread" not in dag["summary"], "an unbound timetable would not know its phase yet"
    assert dag["phase"] != "0s"


def test_a_dag_id_filter_keeps_one_dag(tmp_path, capsys):
    folder = _folder(tmp_path, seed=SEED, amsterdam=AMSTERDAM)
    assert main(["plan", str(folder), "--dag-id", "cli_amsterdam", "--json"]) == EXIT_OK
    assert [d["dag_id"] for d in json.loads(capsys.readouterr().out)["dags"]] == ["cli_amsterdam"]
    assert main(["plan", str(folder), "--dag-id", "no_such_dag"]) == EXIT_USAGE


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param({"invalid": INVALID}, "ERROR invalid_spec: invalid.py: ", id="invalid-spec"),
        pytest.param({"orphan": ORPHAN}, "ERROR unknown_parent: child: AFTER 'renamed_parent'", id="unknown-parent"),
    ],
)
def test_contradictions_are_printed_and_fail_the_command(tmp_path, capsys, files, expected):
    folder = _folder(tmp_path, seed=SEED, **files)
    assert main(["plan", str(folder), "--count", "1"]) == EXIT_CONTRADICTION
    out = capsys.readouterr().out
    assert expected in out
    assert "cli_seed:" in out, "the valid DAGs are still planned"


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["plan"], id="neither-path-nor-api"),
        pytest.param(["plan", "dags/", "--api", "http://localhost:8080"], id="both-path-and-api"),
        pytest.param(["plan", "/no/such/folder"], id="missing-path"),
        pytest.param(["plan", ".", "--count", "0"], id="zero-count"),
        pytest.param(["plan", "--api", "http://127.0.0.1:9"], id="unreachable-api"),
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == EXIT_USAGE
    assert capsys.readouterr().err.startswith("tessera plan: ")


PARTITIONED = """
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

with DAG("cli_partitioned", schedule=Every("1h", delay="5m", phase=Fixed("0s"), partitioned=True), start_date=None):
    pass
"""


def test_a_partitioned_dag_shows_each_runs_partition_key(tmp_path, capsys):
    folder = _folder(tmp_path, partitioned=PARTITIONED)
    assert main(["plan", str(folder), "--count", "2", "--after", AFTER]) == EXIT_OK
    out = capsys.readouterr().out
    assert "2026-03-02 11:55:00 -> 2026-03-02 12:55:00" in out and "key 2026-03-02T12:00:00" in out
    assert main(["plan", str(folder), "--count", "1", "--after", AFTER, "--json"]) == EXIT_OK
    (run,) = json.loads(capsys.readouterr().out)["dags"][0]["occurrences"]
    assert run["partition_key"] == "2026-03-02T12:00:00"
