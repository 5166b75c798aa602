"""Coverage on a real scheduler: the windows the runs evaluated plus the owed ones tile time, under every policy.

One deployment on SQLite (API server, dag-processor, scheduler, LocalExecutor workers) runs
the DAGs of ``dags_coverage/coverage_policies.py`` side by side: ``Every("10s")``, each run
25 s, so ``skip`` and ``buffer_one`` drop a tick or two at every run, ``cancel_other``
replaces the run in flight, ``buffer_all`` and ``allow_all`` (``max_active_runs=2``) queue.
The issue's check is a 1-minute schedule over 20 minutes; a 10 s one tells the same story
(several dropped fires per policy) in about two minutes.

- ``dropped="cover"`` (the default): nothing is owed; the scheduled runs' windows alone tile
  the span from the first run's window start to the last one's end, and a run after dropped
  ticks evaluates their windows too.
- ``dropped="owe"``: each run keeps its own 10 s window; the plan's owed windows, read back
  from the runs, fill every gap exactly; and ``airflow backfill create`` over their range
  (with Airflow's default ``--reprocess-behavior none``) creates exactly the owed runs.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import one_deployment
from .dags_coverage.coverage_policies import POLICIES, timetable_of  # the DAG file the deployment parses
from .harness import AirflowHome, _utc

# About 4 minutes on an idle machine: make test starts the longest deployments first (tests/conftest.py).
pytestmark = [pytest.mark.e2e, pytest.mark.minutes(4)]

DAGS = Path(__file__).resolve().parent / "dags_coverage"

PERIOD = datetime.timedelta(seconds=10)
WAIT = 420
FINISHED = 5
"""Finished runs each DAG is observed for: four decisions after its first run, several dropped ticks."""
DROPPING = ("e2e_cover_skip", "e2e_cover_buffer_one", "e2e_owe_skip", "e2e_owe_buffer_one")
Window = tuple[datetime.datetime, datetime.datetime]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowHome]:
    """Its own deployment: ten worker slots, as the DAGs together hold up to ten sleeping tasks at once."""
    home = AirflowHome(tmp_path_factory.mktemp("airflow-coverage"), dags_source=DAGS)
    yield from one_deployment(
        home,
        request,
        AIRFLOW__CORE__PARALLELISM="10",
    )


def _windows(home: AirflowHome, dag_id: str, run_type: str) -> list[tuple[Window, datetime.datetime | None]]:
    """(window, end) of each ``run_type`` run of ``dag_id``, by window end."""
    rows = home.query(
        "SELECT data_interval_start, data_interval_end, end_date FROM dag_run WHERE dag_id = ? AND run_type = ?"
        " ORDER BY data_interval_end",
        dag_id,
        run_type,
    )
    return [((_utc(start), _utc(end)), _utc(ended)) for start, end, ended in rows]


@pytest.fixture(scope="module")
def observed(stack: AirflowHome) -> dict[str, list[Window]]:
    """Every DAG's scheduled runs' windows once each has :data:`FINISHED` finished runs, read together."""
    for dag_id in POLICIES:
        stack.wait_for(f"{dag_id} to be parsed", lambda dag_id=dag_id: stack.is_parsed(dag_id), timeout=WAIT)

    def enough() -> dict[str, list[Window]] | None:
        runs = {dag_id: _windows(stack, dag_id, "scheduled") for dag_id in POLICIES}
        if any(sum(end is not None for _, end in found) < FINISHED for found in runs.values()):
            return None
        return {dag_id: [window for window, _ in found] for dag_id, found in runs.items()}

    return stack.wait_for(f"{FINISHED} finished runs of every DAG", enough, timeout=WAIT)


def _tiles(windows: list[Window]) -> None:
    ordered = sorted(windows)
    for (start, end), (next_start, _) in itertools.pairwise(ordered):
        assert start < end
        assert end == next_start, f"{'gap' if end < next_start else 'overlap'} from {end} to {next_start}: {ordered}"


@pytest.mark.parametrize("dag_id", [dag_id for dag_id in POLICIES if "_cover_" in dag_id])
def test_under_cover_the_runs_windows_alone_tile_time(observed: dict[str, list[Window]], dag_id: str) -> None:
    windows = observed[dag_id]
    owed, truncated = timetable_of(dag_id).plan.owed_windows(windows, limit=1000)
    assert (owed, truncated) == ([], False), "nothing is owed: the next run covers a dropped window"
    _tiles(windows)
    covered = sum((end - start) // PERIOD - 1 for start, end in windows)
    if dag_id in DROPPING:
        assert covered >= 3, f"several dropped ticks' windows evaluated by the next run: {windows}"
    else:
        assert covered == 0, f"no tick is dropped: every window is its own period: {windows}"


@pytest.mark.parametrize("dag_id", [dag_id for dag_id in POLICIES if "_owe_" in dag_id])
def test_under_owe_the_owed_windows_fill_the_gaps_and_a_backfill_runs_exactly_them(
    stack: AirflowHome, observed: dict[str, list[Window]], dag_id: str
) -> None:
    windows = observed[dag_id]
    assert all(end - start == PERIOD for start, end in windows), "each run keeps its own window"
    plan = timetable_of(dag_id).plan
    owed, truncated = plan.owed_windows(windows, limit=1000)
    assert not truncated and len(owed) >= 3, f"several dropped ticks: {windows}"
    owed_windows = [(run.window_start, run.window_end) for run in owed]
    _tiles([*windows, *owed_windows])

    # The range a person backfills: from the first owed period's start to the last one's.
    first, last = plan.previous(owed[0]).occurrence, plan.previous(owed[-1]).occurrence
    args = ["--dag-id", dag_id, "--from-date", first.isoformat(), "--to-date", last.isoformat()]
    created = stack.cli("backfill", "create", *args, "--reprocess-behavior", "none", timeout=180)
    assert created.returncode == 0, created.stderr[-3000:]
    backfilled = [window for window, _ in _windows(stack, dag_id, "backfill")]
    assert backfilled == owed_windows, "the backfill creates exactly the owed runs"
    scheduled = [window for window, _ in _windows(stack, dag_id, "scheduled")]
    still = plan.owed_windows(scheduled, ran=backfilled, limit=1000)[0]
    assert not set(owed_windows) & {(run.window_start, run.window_end) for run in still}, "a backfilled window is paid"
