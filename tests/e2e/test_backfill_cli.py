"""``airflow backfill create --dry-run`` over one day of ``Every("1h", delay="5m")``.

The DAG is parsed into the metadata DB by the real dag-processor (through the
dag policy), then the CLI runs as its own process. Backfilling a day must list
the 24 hourly windows that tile that day shifted back by the 5 minute delay,
23:55 -> 00:55 up to 22:55 -> 23:55, and the command must terminate.
"""

from __future__ import annotations

import datetime
import json
import re

import pytest

from .harness import BIN, AirflowHome

DAG_ID = "e2e_every_1h_delay_5m"
FROM, TO = "2026-01-01T00:00:00", "2026-01-01T23:59:59"
HOUR = datetime.timedelta(hours=1)
FIRST_START = datetime.datetime(2025, 12, 31, 23, 55, tzinfo=datetime.timezone.utc)
EXPECTED_STARTS = [FIRST_START + k * HOUR for k in range(24)]

# The dry run prints one table row per run, with its logical date (the window start).
_ROW = re.compile(r"^\|\s*(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00:00)\s*\|", re.MULTILINE)

# What the backfill enumerates, read through Airflow's Python API from the same DB.
_WINDOWS_SCRIPT = """
import json, sys
from airflow._shared.timezones.timezone import parse
from airflow.models.serialized_dag import SerializedDagModel
from airflow.utils.session import create_session

dag_id, earliest, latest = sys.argv[1:]
with create_session() as session:
    dag = session.scalar(SerializedDagModel.latest_item_select_object(dag_id)).dag
infos = dag.iter_dagrun_infos_between(parse(earliest), parse(latest))
print(json.dumps([[i.data_interval.start.isoformat(), i.data_interval.end.isoformat()] for i in infos]))
"""


@pytest.fixture(scope="module")
def parsed(airflow_stack: AirflowHome) -> AirflowHome:
    airflow_stack.wait_for(f"{DAG_ID} to be parsed", lambda: airflow_stack.is_parsed(DAG_ID), timeout=120)
    return airflow_stack


@pytest.mark.e2e
def test_backfill_dry_run_lists_the_day_shifted_by_the_delay(parsed: AirflowHome) -> None:
    args = ["--dag-id", DAG_ID, "--from-date", FROM, "--to-date", TO, "--dry-run"]
    result = parsed.cli("backfill", "create", *args, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    listed = [datetime.datetime.fromisoformat(text) for text in _ROW.findall(result.stdout)]
    assert listed == EXPECTED_STARTS, result.stdout


@pytest.mark.e2e
def test_backfill_windows_tile_the_day(parsed: AirflowHome) -> None:
    result = parsed.run([str(BIN / "python"), "-c", _WINDOWS_SCRIPT, DAG_ID, FROM, TO], timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    windows = [
        (datetime.datetime.fromisoformat(start), datetime.datetime.fromisoformat(end))
        for start, end in json.loads(result.stdout.strip().splitlines()[-1])
    ]
    assert [start for start, _ in windows] == EXPECTED_STARTS
    assert all(end - start == HOUR for start, end in windows)
    assert all(nxt[0] == prev[1] for prev, nxt in zip(windows, windows[1:], strict=False))
    assert windows[-1][1] == FIRST_START + 24 * HOUR
