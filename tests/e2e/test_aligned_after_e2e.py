"""Window-aligned AFTER under a real ``airflow dag-processor`` and ``airflow scheduler`` on SQLite.

Two parents on different cadences feed one ``ALIGN WINDOW`` child (seconds stand in for the
hour and the half hour, so a few windows pass in minutes):

- ``e2e_al_fast`` every 10 s, whose runs succeed;
- ``e2e_al_slow`` every 20 s, whose runs always FAIL (a task waiting for a pool that does not
  exist, failed by the run's 4 s ``dagrun_timeout``: the scheduler's own path, no worker);
- ``e2e_al_fact`` AFTER both, ``ALIGN WINDOW``.

The child must run once per 20 s window that both parents completed, never for a window only
the fast parent has (every other 10 s), each run naming that window and the failed slow run.
"""

from __future__ import annotations

import datetime
import re
import textwrap
from collections.abc import Iterator

import pytest

from .conftest import keep_artifacts_if_failed
from .harness import AirflowHome

CHILD = "e2e_al_fact_step"
RUNS_WANTED = 3
WAIT = 420

DAGS = '''
"""Aligned AFTER end-to-end DAGs (written by tests/e2e/test_aligned_after_e2e.py)."""
import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, BaseOperator
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.operators.schedules.statement import parse_schedules

S = ScheduleSet(parse_schedules("""
SCHEDULE e2e_al_fast INTERVAL_SECONDS 10;
SCHEDULE e2e_al_slow INTERVAL_SECONDS 20;
SCHEDULE e2e_al_fact AFTER 'e2e_al_fast', 'e2e_al_slow' ALIGN WINDOW;
"""))


class NeverRuns(BaseOperator):
    def execute(self, context):
        raise RuntimeError("never scheduled")


with DAG("e2e_al_fast_load", start_date=None, **S.dag_kwargs("e2e_al_fast")):
    EmptyOperator(task_id="load")
with DAG("e2e_al_slow_load", start_date=None, dagrun_timeout=datetime.timedelta(seconds=4),
         **S.dag_kwargs("e2e_al_slow")):
    NeverRuns(task_id="load", pool="e2e_pool_that_does_not_exist")
with DAG("e2e_al_fact_step", start_date=None, **S.dag_kwargs("e2e_al_fact")):
    EmptyOperator(task_id="rebuild")
'''
_WINDOW = re.compile(r"^Aligned window ending (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC", re.MULTILINE)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowHome]:
    failed_before = request.session.testsfailed
    home = AirflowHome(tmp_path_factory.mktemp("airflow-aligned"))
    for copied in home.dags.glob("*.py"):
        copied.unlink()
    (home.dags / "aligned_e2e_dags.py").write_text(textwrap.dedent(DAGS))
    try:
        migrated = home.cli("db", "migrate")
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("dag-processor", "dag-processor")
        home.start("scheduler", "scheduler")
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


def _finished(home: AirflowHome) -> list[tuple] | None:
    rows = home.query(
        "SELECT r.run_type, r.state, n.content FROM dag_run r LEFT JOIN dag_run_note n ON n.dag_run_id = r.id"
        " WHERE r.dag_id = ? AND r.state IN ('success', 'failed') ORDER BY r.run_after",
        CHILD,
    )
    return rows if len(rows) >= RUNS_WANTED else None


@pytest.mark.e2e
def test_the_child_runs_once_per_window_both_parents_completed(stack: AirflowHome) -> None:
    runs = stack.wait_for(f"{RUNS_WANTED} finished runs of {CHILD}", lambda: _finished(stack), timeout=WAIT)
    windows = []
    for run_type, _, note in runs:
        assert run_type == "asset_triggered"
        found = _WINDOW.search(note or "")
        assert found, note
        end = datetime.datetime.fromisoformat(found.group(1))
        windows.append(end)
        assert end.second % 20 == 0, f"released for a window only the 10 s parent has: {note}"
        stamp = end.strftime("%Y-%m-%dT%H:%M:%S")
        # The run id ends with tessera's run record (~phase:…~delay:…~interval:…).
        run_id = rf"scheduled__{re.escape(stamp)}\+00:00(~[^ ]*)?"
        assert re.search(rf"e2e_al_slow_load/{run_id} \(failed\)", note), note
        assert re.search(rf"e2e_al_fast_load/{run_id} \(success\)", note), note
    assert len(set(windows)) == len(windows), "one window released the child twice"
    slow_failed = stack.query("SELECT count(*) FROM dag_run WHERE dag_id = 'e2e_al_slow_load' AND state = 'failed'")
    assert slow_failed[0][0] >= len(runs)
