"""What must never stop or fool a scheduler, under a real dag-processor, scheduler and workers on SQLite.

The DAGs are ``dags/e2e_safety.py``, in the session's fresh deployment
(``airflow_stack``): nothing but the product itself prepared its database.

- Two cursor functions unpaused at once on a fresh database are admitted in one
  scheduler transaction before the dispatch pool exists: both must run, and the
  scheduler must live (it once died on a duplicate pool, at every restart).
- Several run-nows of a paused function, all started in the scheduler loop after its
  unpause: none fires, each is skipped as ``Suspended`` (Airflow would fire them all);
  a run-now asked once it is unpaused fires. (Several runs of one loop under Forbid:
  ``test_cursor_admission.py``.)
- A DAG whose catch-up steps over the largest backlog beside a healthy one: the
  healthy DAG keeps getting its runs and the scheduler passes its health check.
"""

from __future__ import annotations

import json

import pytest

from tessera.operators.functions.record import RECORD_KEY

from .harness import AirflowHome

CURSORS = ("e2e_cursor_a", "e2e_cursor_b")
FORBID = "e2e_cursor_forbid"
HOSTILE, HEALTHY = "e2e_hostile_cron", "e2e_healthy_every_20s"
RUN_NOWS = 2
WAIT = 300

pytestmark = pytest.mark.e2e


def _task_states(home: AirflowHome, dag_id: str) -> dict[str, str | None]:
    rows = home.query("SELECT run_id, state FROM task_instance WHERE dag_id = ? AND task_id = 'fn'", dag_id)
    return dict(rows)


def _skip_reasons(home: AirflowHome, dag_id: str) -> dict[str, str]:
    rows = home.query("SELECT run_id, value FROM xcom WHERE dag_id = ? AND key = ?", dag_id, RECORD_KEY)
    records = {run_id: json.loads(value) for run_id, value in rows}
    return {run_id: record["reason"] for run_id, record in records.items() if "reason" in record}


def _scheduler_is_healthy(home: AirflowHome) -> None:
    home.check_alive()
    checked = home.cli("jobs", "check", "--job-type", "SchedulerJob")
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]


def check_simultaneous_functions_fire(home: AirflowHome, dag_ids: tuple[str, ...]) -> None:
    """Each cursor function fired twice, runs of them were due at the same instant, and one pool exists."""

    def fired_twice() -> bool:
        fired = [[s for s in _task_states(home, dag_id).values() if s == "success"] for dag_id in dag_ids]
        return all(len(states) >= 2 for states in fired)

    home.wait_for("2 successful fires of each cursor function", fired_twice, timeout=WAIT)
    # Due at the same second every minute: their runs started together, admitted together.
    due = [{run.run_after for run in home.runs(dag_id)} for dag_id in dag_ids]
    assert set.intersection(*due), "the functions never had runs due at the same instant: the test proves nothing"
    pools = home.query("SELECT slots, include_deferred FROM slot_pool WHERE pool = 'tessera_dispatch'")
    assert pools == [(10, True)]


def test_two_cursor_functions_unpaused_at_once_both_run_on_a_fresh_deployment(airflow_stack: AirflowHome) -> None:
    check_simultaneous_functions_fire(airflow_stack, CURSORS)
    _scheduler_is_healthy(airflow_stack)


def test_run_nows_asked_while_a_function_is_paused_are_skipped_as_suspended(airflow_stack: AirflowHome) -> None:
    home = airflow_stack
    home.wait_for(f"{FORBID} to be parsed", lambda: home.is_parsed(FORBID), timeout=WAIT)
    for _ in range(RUN_NOWS):
        triggered = home.cli("dags", "trigger", FORBID)
        assert triggered.returncode == 0, triggered.stderr[-3000:]
    # Paused, so none started yet: unpausing hands all of them to one scheduler loop.
    assert [run.state for run in home.runs(FORBID)] == ["queued"] * RUN_NOWS
    unpaused = home.cli("dags", "unpause", FORBID)
    assert unpaused.returncode == 0, unpaused.stderr[-3000:]

    def finished(count: int) -> list[str] | None:
        states = [run.state for run in home.runs(FORBID)]
        return states if len(states) == count and all(state in ("success", "failed") for state in states) else None

    home.wait_for(f"the {RUN_NOWS} runs of {FORBID} to finish", lambda: finished(RUN_NOWS), timeout=WAIT)
    runs = [run.run_id for run in home.runs(FORBID)]
    states, reasons = _task_states(home, FORBID), _skip_reasons(home, FORBID)
    assert [states[run_id] for run_id in runs] == ["skipped"] * RUN_NOWS
    assert [reasons.get(run_id) for run_id in runs] == ["Suspended"] * RUN_NOWS
    assert not home.query("SELECT 1 FROM variable WHERE key = ?", f"{FORBID}-state")  # never fired

    triggered = home.cli("dags", "trigger", FORBID)  # asked while it runs: a real fire
    assert triggered.returncode == 0, triggered.stderr[-3000:]
    home.wait_for(f"the run-now of unpaused {FORBID}", lambda: finished(RUN_NOWS + 1), timeout=WAIT)
    newest = home.runs(FORBID)[-1].run_id
    assert (_task_states(home, FORBID)[newest], _skip_reasons(home, FORBID).get(newest)) == ("success", None)


def test_a_healthy_dag_keeps_its_runs_beside_the_largest_catch_up(airflow_stack: AirflowHome) -> None:
    home = airflow_stack
    home.wait_for(f"{HOSTILE} to be scheduled", lambda: home.runs(HOSTILE), timeout=WAIT)
    assert not home.query("SELECT filename, stacktrace FROM import_error")
    before = len(home.runs(HEALTHY))
    runs = home.wait_for_runs(HEALTHY, before + 2, timeout=WAIT)
    for previous, run in zip(runs, runs[1:]):
        assert run.data_interval_start == previous.data_interval_end, f"{HEALTHY} skipped a window before {run}"
    _scheduler_is_healthy(home)
