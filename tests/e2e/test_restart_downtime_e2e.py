"""A scheduler killed with runs in flight and restarted several ticks later: downtime, not overlap.

One deployment on SQLite (API server, dag-processor, scheduler, LocalExecutor workers) runs the
DAGs of ``dags_restart/restart_downtime.py`` (every 10 s). Once each one-slot DAG has a run in
flight, the scheduler is killed (``kill -9`` of its process group: its LocalExecutor workers and
the tasks they run die with it) and started again after :data:`DOWNTIME`, longer than the
scheduler's health-check grace (:data:`GRACE`), so Airflow's ``job`` table shows no scheduler
heartbeating for several ticks. Airflow then runs the killed run's task again. What the README
promises: the ticks due while no scheduler ran belong to the catch-up, whatever was in flight:

- ``buffer_one`` and ``skip``: the first run created after the restart is the newest tick due
  then (``Latest``), not the stale one after the killed run, and nothing records a tick due
  since the kill as ``BufferFull``, ``ConcurrencyForbidden`` or queued (run notes and audit log);
- ``Backfill(limit=3)`` (16 slots): the newest tick and the three before it run, and none of
  them carries a ``Queued`` note or a ``tessera.schedule.queued`` entry.

First, before the kill, the same deployment runs ``dags_restart/timeout_attempts.py``: a declared
schedule whose task outlasts its ``TIMEOUT`` (``RETRIES 1``). TIMEOUT stops the attempt: the
second attempt's copy of the task starts only after the first attempt's copy stopped (the
task stamps the time while it runs).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import one_deployment
from .harness import AirflowHome, _utc

pytestmark = [pytest.mark.e2e, pytest.mark.minutes(3.5)]

DAGS = Path(__file__).resolve().parent / "dags_restart"
ONE_SLOT = ("e2e_restart_buffer_one", "e2e_restart_skip")
BACKFILL = "e2e_restart_backfill"
TIMEOUT_DAG = "e2e_timeout_attempts"
PERIOD = datetime.timedelta(seconds=10)
GRACE = 15
"""``[scheduler] scheduler_health_check_threshold`` (s): a longer stretch with no scheduler heartbeating is downtime."""
DOWNTIME = datetime.timedelta(seconds=GRACE + 45)
"""How long the scheduler stays down: past the grace, and six ticks or more, so ``Backfill(limit=3)``
(the newest and three before it) leaves older ticks of the downtime unrun whatever the tick phase at
the kill (at 40 s, four ticks were sometimes all it missed, and all four ran)."""
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
WAIT = 300
EVENTS = ("tessera.schedule.skip", "tessera.schedule.queued")


@dataclass(frozen=True)
class Run:
    """One scheduled ``dag_run`` row and its note."""

    run_id: str
    due: datetime.datetime
    state: str
    created: datetime.datetime
    note: str | None


@dataclass(frozen=True)
class Restart:
    """When the scheduler was killed and started again, and each DAG's scheduled runs before the kill."""

    killed: datetime.datetime
    restarted: datetime.datetime
    before: dict[str, list[Run]]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowHome]:
    home = AirflowHome(tmp_path_factory.mktemp("airflow-restart"), dags_source=DAGS)
    yield from one_deployment(
        home,
        request,
        AIRFLOW__CORE__PARALLELISM="8",
        AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_THRESHOLD=str(GRACE),
    )


def _runs(home: AirflowHome, dag_id: str) -> list[Run]:
    rows = home.query(
        "SELECT r.run_id, r.run_after, r.state, r.created_at, n.content FROM dag_run r"
        " LEFT JOIN dag_run_note n ON n.dag_run_id = r.id"
        " WHERE r.dag_id = ? AND r.run_type = 'scheduled' ORDER BY r.run_after",
        dag_id,
    )
    return [Run(run_id, _utc(due), state, _utc(created), note) for run_id, due, state, created, note in rows]


def _task_running(home: AirflowHome, dag_id: str) -> bool:
    return bool(home.query("SELECT 1 FROM task_instance WHERE dag_id = ? AND state = 'running'", dag_id))


def _events(home: AirflowHome, dag_id: str) -> list[tuple[str, str, dict]]:
    rows = home.query(
        f"SELECT run_id, event, extra FROM log WHERE dag_id = ? AND event IN ({', '.join('?' * len(EVENTS))})",
        dag_id,
        *EVENTS,
    )
    return [(run_id, event, json.loads(extra)) for run_id, event, extra in rows]


def _tick_at_or_before(moment: datetime.datetime) -> datetime.datetime:
    return EPOCH + ((moment - EPOCH) // PERIOD) * PERIOD


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


@pytest.fixture(scope="module")
def restart(stack: AirflowHome) -> Restart:
    """Kill the scheduler once each one-slot DAG has a finished run and a task running; restart after ``DOWNTIME``."""
    home = stack
    for dag_id in (*ONE_SLOT, BACKFILL):
        home.wait_for(f"{dag_id} to be parsed", lambda dag_id=dag_id: home.is_parsed(dag_id), timeout=WAIT)

    def in_flight() -> bool:
        finished = all(any(run.state == "success" for run in _runs(home, dag_id)) for dag_id in ONE_SLOT)
        return finished and all(_task_running(home, dag_id) for dag_id in ONE_SLOT)

    home.wait_for("a finished run and a task running for each one-slot DAG", in_flight, timeout=WAIT, interval=0.5)
    home.kill("scheduler")
    killed = _now()
    before = {dag_id: _runs(home, dag_id) for dag_id in (*ONE_SLOT, BACKFILL)}
    home.wait_for(f"{DOWNTIME.total_seconds():.0f}s of downtime", lambda: _now() - killed > DOWNTIME, timeout=WAIT)
    restarted = _now()
    home.start("scheduler", "scheduler")
    return Restart(killed, restarted, before)


def _after_restart(home: AirflowHome, restart: Restart, dag_id: str, count: int) -> list[Run]:
    """The first ``count`` scheduled runs created after the restart, once started (a run's records are written then)."""

    def started() -> list[Run] | None:
        runs = [run for run in _runs(home, dag_id) if run.created > restart.restarted]
        return runs[:count] if len(runs) >= count and all(r.state != "queued" for r in runs[:count]) else None

    return home.wait_for(f"{count} started runs of {dag_id} after the restart", started, timeout=WAIT)


def _no_overlap_records(home: AirflowHome, restart: Restart, dag_id: str, runs: list[Run]) -> None:
    """No run created after the restart is noted queued, nor names a tick due since the kill as dropped.

    Ticks due before the kill may have been dropped by the overlap policy while the scheduler
    ran (``buffer_one``: ticks due while the killed run itself waited for the slot); the run
    after them names those, as ever.
    """
    made = {run.run_id for run in runs}
    for run in runs:
        assert "Queued" not in (run.note or ""), run
    for run_id, event, extra in _events(home, dag_id):
        if run_id in made:
            assert event == "tessera.schedule.skip", (run_id, event, extra)
            assert datetime.datetime.fromisoformat(extra["last"]) < restart.killed, (run_id, extra)


def test_a_timed_out_attempts_task_stops_before_the_next_attempts_copy_starts(stack: AirflowHome) -> None:
    stack.wait_for(f"{TIMEOUT_DAG} to be parsed", lambda: stack.is_parsed(TIMEOUT_DAG), timeout=WAIT)

    def warm() -> bool:  # a worker has started and finished a task: the next one starts in seconds
        return any(run.state == "success" for dag_id in ONE_SLOT for run in _runs(stack, dag_id))

    stack.wait_for("a finished run of a one-slot DAG", warm, timeout=WAIT)
    stack.execute("UPDATE dag SET is_paused = ? WHERE dag_id = ?", False, TIMEOUT_DAG)

    def failed() -> bool:
        return bool(stack.query("SELECT 1 FROM dag_run WHERE dag_id = ? AND state = 'failed'", TIMEOUT_DAG))

    stack.wait_for(f"{TIMEOUT_DAG}'s run to use its two attempts", failed, timeout=WAIT)
    folder = stack.root / "timeout-stamps"
    stamps = {int(path.name): [float(line) for line in path.read_text().split()] for path in folder.iterdir()}
    assert sorted(stamps) == [1, 2], "each attempt's copy of the task started within the TIMEOUT"
    assert max(stamps[1]) < min(stamps[2]), (
        f"attempt 1's copy stamped until {max(stamps[1])}, attempt 2's from {min(stamps[2])}: they overlapped"
    )
    ((note,),) = stack.query(
        "SELECT n.content FROM dag_run r JOIN dag_run_note n ON n.dag_run_id = r.id WHERE r.dag_id = ?", TIMEOUT_DAG
    )
    assert "attempt 1 of 2 failed (it ran past its TIMEOUT)" in note, note


@pytest.mark.parametrize("dag_id", ONE_SLOT)
def test_after_a_restart_the_newest_window_runs_and_the_missed_ticks_are_the_catch_ups(
    stack: AirflowHome, restart: Restart, dag_id: str
) -> None:
    killed_run = next(run for run in restart.before[dag_id] if run.state == "running")
    (first,) = _after_restart(stack, restart, dag_id, 1)
    assert first.due >= restart.restarted, "no tick due while the scheduler was down runs: the catch-up's newest"
    # The newest tick due when the scheduler created it (one tick's leeway: it decides a moment before).
    assert first.due >= _tick_at_or_before(first.created) - PERIOD, first
    assert first.due > killed_run.due + PERIOD, "not the stale tick after the run the kill cut short"
    _no_overlap_records(stack, restart, dag_id, [first])


def test_after_a_restart_backfill_runs_the_newest_and_three_before_it_none_of_them_queued(
    stack: AirflowHome, restart: Restart
) -> None:
    caught_up = _after_restart(stack, restart, BACKFILL, 4)
    dues = [run.due for run in caught_up]
    assert dues == [dues[0] + k * PERIOD for k in range(4)], "four consecutive ticks, oldest first"
    newest = _tick_at_or_before(caught_up[0].created)
    assert newest - 4 * PERIOD <= dues[0] <= newest - 3 * PERIOD, (newest, dues)
    last_before = restart.before[BACKFILL][-1].due
    assert dues[0] - last_before > PERIOD, "the older ticks of the downtime were not run"
    _no_overlap_records(stack, restart, BACKFILL, caught_up)
