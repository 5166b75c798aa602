"""Exclusions and unions under a real dag-processor and scheduler (SQLite): the runs Airflow creates.

One deployment of its own (no API server or workers: the DAGs' tasks are ``EmptyOperator``s,
which the scheduler completes itself), two DAGs written by this test, both with
``catchup=True`` from the minute the test began, so every occurrence since then gets a run
however slowly a busy machine schedules:

- ``e2e_cal_union``: ``Cron("@every 20s") | Cron("@every 30s") | Cron("@every 15s",
  exclude=[today, tomorrow])``. Its runs are at exactly the merged 20 s and 30 s instants
  (:00 :20 :30 :40 of each minute): the 15 s member's :15 and :45 fall on excluded dates and
  get no run, while its :00 and :30, which another member shares, run once. Each run's window
  starts where the previous run's ended (20, 10, 10 and 20 s long).
- ``e2e_cal_excluded``: ``Cron("@every 10s", exclude=[today, tomorrow])``: no run at all, and
  the next run Airflow stores evaluates the day after tomorrow from 00:00:00 to 00:00:10 UTC.

Today and tomorrow (UTC) are both excluded so that a test crossing midnight holds.
"""

from __future__ import annotations

import datetime
import textwrap
from collections.abc import Iterator

import pytest

from .conftest import keep_artifacts_if_failed
from .harness import AirflowHome, StoredRun, _utc

UNION = "e2e_cal_union"
EXCLUDED = "e2e_cal_excluded"
RUNS = 6  # more than a minute of the union's instants: :00 :20 :30 :40 and on
WAIT = 150
UTC = datetime.timezone.utc

DAGS = '''
"""Exclusion and union end-to-end DAGs (written by tests/e2e/test_calendars_e2e.py)."""
import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.timetables import Cron

START = datetime.datetime.fromisoformat({start!r})
SKIPPED = [{today!r}, {tomorrow!r}]

with DAG(
    {union!r},
    schedule=Cron("@every 20s") | Cron("@every 30s") | Cron("@every 15s", exclude=SKIPPED),
    start_date=START,
    catchup=True,
    is_paused_upon_creation=False,
):
    EmptyOperator(task_id="work")

with DAG(
    {excluded!r},
    schedule=Cron("@every 10s", exclude=SKIPPED),
    start_date=START,
    catchup=True,
    is_paused_upon_creation=False,
):
    EmptyOperator(task_id="work")
'''


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[AirflowHome, datetime.datetime]]:
    """The deployment, and the DAGs' start date (the minute the test began)."""
    now = datetime.datetime.now(UTC)
    start = now.replace(second=0, microsecond=0)
    home = AirflowHome(tmp_path_factory.mktemp("airflow-calendars"))
    for copied in home.dags.glob("*.py"):
        copied.unlink()
    source = DAGS.format(
        start=start.isoformat(),
        today=now.date().isoformat(),
        tomorrow=(now.date() + datetime.timedelta(days=1)).isoformat(),
        union=UNION,
        excluded=EXCLUDED,
    )
    (home.dags / "calendars_e2e_dags.py").write_text(textwrap.dedent(source))
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate")
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("dag-processor", "dag-processor")
        home.start("scheduler", "scheduler")
        yield home, start
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


def _scheduled(home: AirflowHome, dag_id: str) -> list[StoredRun]:
    return [run for run in home.runs(dag_id) if run.run_type == "scheduled"]


def _union_instants(first: datetime.datetime, last: datetime.datetime) -> list[datetime.datetime]:
    """Every multiple of 20 s or 30 s since the epoch in [first, last]: the runs the union owes."""
    low, high = int(first.timestamp()), int(last.timestamp())
    return [
        datetime.datetime.fromtimestamp(second, UTC)
        for second in range(low, high + 1)
        if second % 20 == 0 or second % 30 == 0
    ]


@pytest.mark.e2e
def test_excluded_occurrences_get_no_run_and_the_unions_windows_tile(
    stack: tuple[AirflowHome, datetime.datetime],
) -> None:
    home, start = stack
    for dag_id in (UNION, EXCLUDED):
        home.wait_for(f"{dag_id} to be parsed", lambda d=dag_id: home.is_parsed(d), timeout=WAIT)

    def enough() -> list[StoredRun] | None:
        found = _scheduled(home, UNION)
        return found if len(found) >= RUNS else None

    runs = home.wait_for(f"{RUNS} scheduled runs of {UNION}", enough, timeout=WAIT)
    ends = [run.data_interval_end for run in runs]
    # Exactly the merged 20 s and 30 s instants from the first one after the start date: no :15, no :45,
    # none missing, none twice.
    assert runs[0].data_interval_start == start
    assert ends == _union_instants(start + datetime.timedelta(seconds=1), ends[-1]), ends
    assert {end.second for end in ends} <= {0, 20, 30, 40}
    for before, after in zip(runs, runs[1:]):
        assert after.data_interval_start == before.data_interval_end, (before, after)  # windows tile
    assert all(run.run_after == run.data_interval_end for run in runs)  # a union starts at the occurrence

    # Meanwhile the fully excluded schedule, due every 10 s, got no run. The next run Airflow stores is the
    # first whose window starts after the excluded dates: the start date bounds a window's start, and the
    # 00:00:00 occurrence's window would start at the last occurrence before them, before the start date.
    assert home.runs(EXCLUDED) == []
    ((window_start, window_end, create_after),) = home.query(
        "SELECT next_dagrun_data_interval_start, next_dagrun_data_interval_end, next_dagrun_create_after"
        " FROM dag WHERE dag_id = ?",
        EXCLUDED,
    )
    after_excluded = datetime.datetime.combine(start.date() + datetime.timedelta(days=2), datetime.time(), UTC)
    ten = datetime.timedelta(seconds=10)
    assert [_utc(window_start), _utc(window_end), _utc(create_after)] == [
        after_excluded,
        after_excluded + ten,
        after_excluded + ten,
    ]
