"""Faults a cursor function and a fan-in must survive, on PostgreSQL with two schedulers and real workers.

The cursor function ``ha_cursor`` (``dags_postgres/ha_cursor.py``) fires every 10 s
on LocalExecutor workers through the API server, keeping its cursor in the default
store, an Airflow Variable. Two faults are injected from outside:

* its cursor store becomes unwritable: a PostgreSQL trigger refuses every write of
  the Variable, so the API server fails the worker's save;
* its worker is killed mid-fire (``kill -9`` of the task process and its supervisor):
  nobody ever reports the fire's end.

Each fire's outcome is read the way the status page reads it
(:func:`tessera.operators.functions.history.load_history`, in the deployment's own
environment), and each call's input from the log the function keeps. The fan-in
DAGs of ``test_fan_in_e2e.py`` run in the same deployment, one parent failing every
fire; their check is reused as is.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator

import pytest

from .conftest import SCHEDULERS, api_server_healthy
from .cursor_state import cursor_state
from .harness import AirflowHome
from .test_fan_in_e2e import CHILD, _check

DAG_ID, TASK_ID = "ha_cursor", "digest"
WAIT = 180

REFUSE_WRITES = """
CREATE FUNCTION tessera_e2e_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'cursor store unwritable (injected by the e2e test)'; END $$;
CREATE TRIGGER tessera_e2e_refuse BEFORE INSERT OR UPDATE ON variable
FOR EACH ROW WHEN (NEW.key = 'ha_cursor-state') EXECUTE FUNCTION tessera_e2e_refuse();
"""
ALLOW_WRITES = "DROP TRIGGER tessera_e2e_refuse ON variable; DROP FUNCTION tessera_e2e_refuse();"


def _state(home: AirflowHome) -> dict:
    """The stored cursor and, by run id, each finished fire's ``[outcome, reason]``."""
    return cursor_state(home, DAG_ID, TASK_ID)


def _calls(home: AirflowHome) -> list[dict]:
    path = home.root / "cursor-control" / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _fires_after(home: AirflowHome, run_id: str) -> tuple[list[dict], dict]:
    """The calls after the one of ``run_id`` (in call order), and the current state."""
    calls = _calls(home)
    position = [call["run_id"] for call in calls].index(run_id)
    return calls[position + 1 :], _state(home)


def _next_clean_fire(home: AirflowHome, run_id: str) -> tuple[list[dict], dict]:
    def found() -> tuple[list[dict], dict] | None:
        later, state = _fires_after(home, run_id)
        return (later, state) if any(state["fires"].get(c["run_id"], [None])[0] == "Succeeded" for c in later) else None

    return home.wait_for(f"a clean fire of {DAG_ID} after {run_id}", found, timeout=WAIT, interval=3)


@pytest.fixture(scope="module")
def cursor_stack(postgres_stack: AirflowHome) -> Iterator[AirflowHome]:
    """The deployment with ``ha_cursor`` unpaused (as the UI's toggle does) until the module ends."""
    home = postgres_stack
    home.wait_for("the API server", lambda: api_server_healthy(home), timeout=WAIT)
    home.wait_for(f"{DAG_ID} to be parsed", lambda: home.is_parsed(DAG_ID), timeout=WAIT)
    home.execute(f"UPDATE dag SET is_paused = false WHERE dag_id = '{DAG_ID}'")
    try:
        yield home
    finally:
        home.execute(f"UPDATE dag SET is_paused = true WHERE dag_id = '{DAG_ID}'")


@pytest.mark.e2e
def test_an_unwritable_cursor_store_fails_the_fire_and_keeps_the_cursor(cursor_stack: AirflowHome) -> None:
    home = cursor_stack
    home.wait_for("a clean first fire", lambda: _state(home)["stored"] is not None, timeout=WAIT, interval=3)
    home.execute(REFUSE_WRITES)
    try:

        def refused() -> tuple[dict, dict] | None:
            state = _state(home)
            failed = [c for c in _calls(home) if state["fires"].get(c["run_id"], [None])[0] == "Failed"]
            return (failed[0], state) if failed else None

        failed, during = home.wait_for("a fire to fail its cursor save", refused, timeout=WAIT, interval=3)
    finally:
        home.execute(ALLOW_WRITES)
    assert during["fires"][failed["run_id"]] == ["Failed", "CursorWriteFailed"]
    assert during["stored"] == failed["cursor"], "the failed fire moved the cursor"

    # Once the store takes writes again, the next fires start from the same cursor until one is clean.
    later, after = _next_clean_fire(home, failed["run_id"])
    for call in later:
        assert call["cursor"] == failed["cursor"], call
        if after["fires"].get(call["run_id"], [None])[0] == "Succeeded":
            break
    assert after["stored"]["n"] > failed["cursor"]["n"]


@pytest.mark.e2e
def test_a_worker_killed_mid_fire_leaves_the_cursor_and_reads_unknown(cursor_stack: AirflowHome) -> None:
    home = cursor_stack
    control = home.root / "cursor-control"
    (control / "hang").touch()
    try:
        hanging = home.wait_for(
            "a fire to hang", lambda: (control / "hanging").exists() and (control / "hanging").read_text(), timeout=WAIT
        )
    finally:
        (control / "hang").unlink()  # the fires after this one run normally
    killed = json.loads(hanging)
    stored_before = _state(home)["stored"]
    # The whole worker: the task process and the supervisor that would report its end.
    for pid in (killed["worker_pid"], killed["pid"]):
        os.kill(pid, signal.SIGKILL)

    assert stored_before == killed["cursor"]
    later, after = _next_clean_fire(home, killed["run_id"])
    assert after["fires"][killed["run_id"]] == ["Unknown", "FireLost"], after["fires"]
    assert later and later[0]["cursor"] == killed["cursor"], "the next fire did not reprocess the killed fire's window"
    assert after["stored"]["n"] > killed["cursor"]["n"]
    # The scheduler has declared the task lost (heartbeat timeout); the fire still reads Unknown, not Failed.
    (ti_state,) = home.query(
        "SELECT state FROM task_instance WHERE dag_id = ? AND run_id = ? AND task_id = ?",
        DAG_ID,
        killed["run_id"],
        TASK_ID,
    )[0]
    assert ti_state == "failed", ti_state


@pytest.mark.e2e
def test_a_failed_parent_still_releases_the_fan_in_child_once(postgres_stack: AirflowHome) -> None:
    home = postgres_stack
    # Three, not two: in the first minute every parent fires at once (new DAGs run their newest
    # occurrence), and the check's assumption that the slow parent goes stale holds from the second.
    finished = "SELECT count(*) FROM dag_run WHERE dag_id = ? AND state IN ('success', 'failed')"
    home.wait_for(f"3 finished runs of {CHILD}", lambda: home.query(finished, CHILD)[0][0] >= 3, timeout=WAIT)
    # The shared check reads one scheduler's log; with two, either may have logged a stale parent.
    logs = [(home.process_logs / f"{name}.log").read_text(errors="replace") for name in SCHEDULERS]
    (home.process_logs / "scheduler.log").write_text("\n".join(logs))
    _check(home)
