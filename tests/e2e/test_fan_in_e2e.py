"""AFTER fan-in under a real ``airflow dag-processor`` and ``airflow scheduler`` on SQLite.

Three declared parent schedules with different cadences feed one child:

- ``e2e_fast`` every 5 s and ``e2e_slow`` every 30 s, whose runs succeed;
- ``e2e_failing`` every 60 s, whose runs always FAIL: its one task waits for a pool that
  does not exist, and the run's 20 s ``dagrun_timeout`` fails it (the scheduler's own path);
- ``e2e_gold`` AFTER all three, with a parent freshness of 10.8 s.

The other tasks are ``EmptyOperator``s, which the scheduler completes itself, so no
worker or API server is needed. Every minute the failing parent's fire is the last to
finish (20 s after the minute), so it releases the child, while the slow parent's fire
(finished ~20 s earlier) is outside the freshness window: the child must run anyway and
name it. The test then checks the ``dag_run``/``asset_event`` rows the scheduler wrote.
"""

from __future__ import annotations

import datetime
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tessera.operators.schedules.identity import asset_uri

from .harness import AirflowHome, _utc

PARENTS = ("e2e_fast", "e2e_slow", "e2e_failing")
CHILD = "e2e_gold_fact"
WINDOW = datetime.timedelta(hours=0.003)
MARGIN = datetime.timedelta(seconds=2)
"""Ages this close to the window are not judged: the listener's clock and the run's start differ slightly."""
CHILD_RUNS_WANTED = 2
WAIT = 420

DAGS = f'''
"""Fan-in end-to-end DAGs (written by tests/e2e/test_fan_in_e2e.py)."""
import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, BaseOperator
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

S = ScheduleSet([
    Schedule("e2e_fast", interval_seconds=5),
    Schedule("e2e_slow", interval_seconds=30),
    Schedule("e2e_failing", interval_seconds=60),
    Schedule("e2e_gold", after={list(PARENTS)!r}, parent_freshness={WINDOW.total_seconds() / 3600!r}),
])


class NeverRuns(BaseOperator):
    """Waits for a pool that does not exist: the run's dagrun_timeout fails it, no worker involved."""

    def execute(self, context):
        raise RuntimeError("never scheduled")


for name in ("e2e_fast", "e2e_slow"):
    with DAG(f"{{name}}_load", start_date=None, **S.dag_kwargs(name)):
        EmptyOperator(task_id="load")
with DAG(
    "e2e_failing_load",
    start_date=None,
    dagrun_timeout=datetime.timedelta(seconds=20),
    **S.dag_kwargs("e2e_failing"),
):
    NeverRuns(task_id="load", pool="e2e_pool_that_does_not_exist")
with DAG({CHILD!r}, start_date=None, **S.dag_kwargs("e2e_gold")):
    EmptyOperator(task_id="rebuild")
'''


@pytest.fixture(scope="module")
def fan_in_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirflowHome]:
    """Its own deployment (only these DAGs), so the shared stack's DAGs and timing stay untouched."""
    home = AirflowHome(tmp_path_factory.mktemp("airflow-fan-in"))
    for copied in home.dags.glob("*.py"):
        copied.unlink()
    (home.dags / "fan_in_e2e_dags.py").write_text(textwrap.dedent(DAGS))
    try:
        migrated = home.cli("db", "migrate")
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("dag-processor", "dag-processor")
        home.start("scheduler", "scheduler")
        yield home
    finally:
        home.stop()
        _keep_artifacts_on_failure(home)


def _keep_artifacts_on_failure(home: AirflowHome) -> None:
    failed = getattr(home, "failed", False)
    if failed:
        stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
        home.save_artifacts(Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e-fan-in" / stamp)


def _finished_child_runs(home: AirflowHome) -> list[tuple] | None:
    """Enough finished child runs, one of which ran on a stale slow parent (how early that happens varies)."""
    rows = home.query(
        "SELECT r.id, n.content FROM dag_run r LEFT JOIN dag_run_note n ON n.dag_run_id = r.id"
        " WHERE r.dag_id = ? AND r.state IN ('success', 'failed') ORDER BY r.run_after",
        CHILD,
    )
    stale_seen = any("- e2e_slow: " in (note or "").split("Released by parent fires:")[0] for _, note in rows)
    return rows if len(rows) >= CHILD_RUNS_WANTED and stale_seen else None


def _events(home: AirflowHome) -> list[dict]:
    rows = home.query(
        "SELECT e.id, a.uri, e.timestamp, e.extra FROM asset_event e JOIN asset a ON a.id = e.asset_id"
        " ORDER BY e.timestamp, e.id"
    )
    by_uri = {asset_uri(name): name for name in PARENTS}
    return [
        {"id": i, "parent": by_uri[uri], "at": _utc(at), "extra": json.loads(extra)["tessera"]}
        for i, uri, at, extra in rows
        if uri in by_uri
    ]


def _child_runs(home: AirflowHome) -> list[dict]:
    rows = home.query(
        "SELECT r.id, r.run_type, r.state, r.run_after, r.created_at, r.start_date, n.content"
        " FROM dag_run r LEFT JOIN dag_run_note n ON n.dag_run_id = r.id WHERE r.dag_id = ? ORDER BY r.run_after",
        CHILD,
    )
    runs = []
    for run_id, run_type, state, run_after, created, started, note in rows:
        consumed = [e for (e,) in home.query("SELECT event_id FROM dagrun_asset_event WHERE dag_run_id = ?", run_id)]
        runs.append(
            {
                "run_type": run_type,
                "state": state,
                "run_after": _utc(run_after),
                "created": _utc(created),
                "started": _utc(started),
                "note": note or "",
                "consumed": set(consumed),
            }
        )
    return runs


def _completed_after(events: list[dict], cut: datetime.datetime | None) -> dict | None:
    """The event that completes the first set of parent fires after ``cut`` (``None``: of all fires)."""
    waiting = set(PARENTS)
    for event in events:
        if cut is not None and event["at"] <= cut:
            continue
        waiting.discard(event["parent"])
        if not waiting:
            return event
    return None


@pytest.mark.e2e
def test_the_child_runs_once_per_complete_set_of_parent_fires(fan_in_stack: AirflowHome) -> None:
    home = fan_in_stack
    try:
        home.wait_for(f"{CHILD_RUNS_WANTED} finished runs of {CHILD}", lambda: _finished_child_runs(home), timeout=WAIT)
        _check(home)
    except BaseException:
        home.failed = True  # type: ignore[attr-defined]
        raise


def _check(home: AirflowHome) -> None:
    events = _events(home)
    runs = [run for run in _child_runs(home) if run["state"] in ("success", "failed")]
    assert {run["run_type"] for run in runs} == {"asset_triggered"}
    by_id = {event["id"]: event for event in events}

    # Every child run consumed a complete set (at least one fire of each parent), no fire twice.
    seen: set[int] = set()
    for run in runs:
        assert {by_id[e]["parent"] for e in run["consumed"]} == set(PARENTS), run
        assert not run["consumed"] & seen, "a parent fire released the child twice"
        seen |= run["consumed"]

    # Exactly once per complete set. A run cuts the parents' fires where its scheduler read the child's
    # queue rows: fires before the cut released it or were absorbed by it (Airflow keeps one row per
    # parent), fires after it count toward the next run. The cut is not recorded, only bounded: at or
    # after the run's date (the newest row it read) and before its row was written. So the next run
    # comes at the first instant every parent has a fire past the cut: no earlier than that instant
    # for the earliest cut, no later than for the latest (+1 s: a queue row is dated just after its
    # event). No complete set goes without a run, and no run without a complete set.
    releases = []
    cut: tuple[datetime.datetime | None, datetime.datetime | None] = (None, None)  # the first run: every fire
    for run in runs:
        earliest, latest = _completed_after(events, cut[0]), _completed_after(events, cut[1])
        assert earliest is not None, ("a run without a complete set of parent fires", run, cut)
        latest = latest or earliest
        assert earliest["at"] <= run["run_after"] < latest["at"] + datetime.timedelta(seconds=1), (
            run,
            cut,
            earliest,
            latest,
        )
        releases.append(earliest if run["run_after"] - earliest["at"] < datetime.timedelta(seconds=1) else latest)
        cut = (run["run_after"], run["created"])

    # A failed parent still releases the child: the failing schedule's fires all failed.
    failing = [event for event in events if event["parent"] == "e2e_failing"]
    assert failing and all(run.endswith("(failed)") for event in failing for run in event["extra"]["runs"])
    assert any(release["parent"] == "e2e_failing" for release in releases)
    assert {state for (state,) in home.query("SELECT state FROM dag_run WHERE dag_id = 'e2e_failing_load'")} <= {
        "failed",
        "running",
        "queued",
    }

    # Freshness: the note names exactly the parents whose newest completed fire was older than
    # the window when the run started; the run proceeded regardless.
    named_stale = 0
    for run in runs:
        stale_part = run["note"].split("Released by parent fires:")[0]
        for parent in PARENTS:
            newest = max(e["at"] for e in events if e["parent"] == parent and e["at"] <= run["started"])
            age = run["started"] - newest
            if abs(age - WINDOW) < MARGIN:
                continue
            assert (f"- {parent}: " in stale_part) == (age > WINDOW), (parent, age, run["note"])
        if "- e2e_slow: " in stale_part:
            named_stale += 1
            assert run["state"] == "success"
    assert named_stale >= 1, "the slow parent was never stale: the timing assumption of this test broke"
    scheduler_log = (home.process_logs / "scheduler.log").read_text(errors="replace")
    assert "proceeds with stale parents" in scheduler_log and "e2e_slow" in scheduler_log
