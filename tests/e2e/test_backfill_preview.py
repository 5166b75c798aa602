"""``tessera plan <dag id> --from --to`` lists exactly the runs a real ``airflow backfill create`` creates.

The DAG (``Every("1h", delay="5m")``) is parsed into the SQLite metadata DB by the real
dag-processor; the preview runs first, as its own process against that DB, then the real
backfill creates its runs, and the two are compared field by field: run id, logical date,
window and run_after. Six hours are backfilled, so the first window starts at 23:55 the day
before ``--from-date``, which is what the delay says and what Airflow's own dry run leaves
unexplained.
"""

from __future__ import annotations

import json

import pytest

from .harness import BIN, AirflowHome, _utc

DAG_ID = "e2e_every_1h_delay_5m"
FROM, TO = "2026-01-02T00:00:00Z", "2026-01-02T05:59:59Z"


@pytest.fixture(scope="module")
def parsed(airflow_stack: AirflowHome) -> AirflowHome:
    airflow_stack.wait_for(f"{DAG_ID} to be parsed", lambda: airflow_stack.is_parsed(DAG_ID), timeout=120)
    return airflow_stack


def _created(home: AirflowHome) -> list[tuple]:
    rows = home.query(
        "SELECT run_id, logical_date, data_interval_start, data_interval_end, run_after FROM dag_run "
        "WHERE dag_id = ? AND run_type = 'backfill' ORDER BY logical_date",
        DAG_ID,
    )
    return [(run_id, *map(_utc, instants)) for run_id, *instants in rows]


@pytest.mark.e2e
def test_the_preview_lists_the_runs_the_real_backfill_creates(parsed: AirflowHome) -> None:
    assert _created(parsed) == [], "no backfill of this DAG may exist yet"
    preview = parsed.run([str(BIN / "tessera"), "plan", DAG_ID, "--from", FROM, "--to", TO, "--json"])
    assert preview.returncode == 0, preview.stderr[-3000:]
    (answer,) = json.loads(preview.stdout)
    previewed = [
        (run["run_id"], *(_utc(run[key]) for key in ("logical_date", "window_start", "window_end", "run_after")))
        for run in answer["runs"]
    ]

    backfill = parsed.cli("backfill", "create", "--dag-id", DAG_ID, "--from-date", FROM, "--to-date", TO)
    assert backfill.returncode == 0, backfill.stderr[-3000:]
    created = _created(parsed)

    assert len(created) == 6
    assert previewed == created
    first = previewed[0]
    assert (first[2].isoformat(), first[3].isoformat()) == ("2026-01-01T23:55:00+00:00", "2026-01-02T00:55:00+00:00")
