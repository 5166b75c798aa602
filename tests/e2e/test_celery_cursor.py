"""Cursor functions on the CeleryExecutor: fires on two workers, a worker killed mid-fire, Forbid across workers.

The tier's deployment (``celery_stack``) runs the DAGs of ``dags_celery/celery_cursors.py``;
its cluster policy routes consecutive fires of ``celery_alternate`` (and the fires that
run of ``celery_forbid``) to the two workers' own queues. Each test asserts on the
metadata DB (``task_instance``: state, queue, the hostname of the worker that ran it),
on the cursor store (the Variable ``<dag_id>-state``) and on the calls the functions
logged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from .celery_stack import CeleryHome, calls, celery_stack, fire_state, set_paused, task_instances

__all__ = ["celery_stack"]  # the session fixture, imported so pytest finds it here

ALTERNATE, FORBID = "celery_alternate", "celery_forbid"
WAIT = 240
WORKER_OF = {"node-a": "worker-a", "node-b": "worker-b"}


@pytest.fixture(scope="module")
def cursors(celery_stack: CeleryHome) -> Iterator[CeleryHome]:
    """Both DAGs unpaused at once (their first checks run side by side); paused when the module ends."""
    set_paused(celery_stack, (ALTERNATE, FORBID), False)
    try:
        yield celery_stack
    finally:
        set_paused(celery_stack, (ALTERNATE, FORBID), True)


def check_cursor_chain(home: CeleryHome, dag_id: str) -> list[dict]:
    """Every clean fire started from the cursor the clean fire before it saved; the store holds the last one.

    Returns the clean fires' ``start`` calls in order.
    """
    state = fire_state(home, dag_id)
    clean = [c for c in calls(home, dag_id, "start") if state["fires"].get(c["run_id"], [None])[0] == "Succeeded"]
    assert clean, f"no clean fire of {dag_id}"
    started = [c["run_id"] for c in calls(home, dag_id, "start")]
    assert len(started) == len(set(started)), f"a fire of {dag_id} was called twice: {started}"
    expected = {"n": 0, "by": None}
    for call in clean:
        assert call["cursor"] == expected, f"{call['run_id']} started from {call['cursor']}, not {expected}"
        expected = {"n": expected["n"] + 1, "by": call["run_id"]}
    assert state["stored"] == expected, f"stored {state['stored']}, last clean fire saved {expected}"
    return clean


def _clean_fires(home: CeleryHome, dag_id: str, count: int) -> bool:
    fires = fire_state(home, dag_id)["fires"]
    return sum(outcome == "Succeeded" for outcome, _ in fires.values()) >= count


@pytest.mark.e2e
def test_fires_alternating_between_two_workers_carry_the_cursor_exactly(cursors: CeleryHome) -> None:
    home = cursors
    home.wait_for(f"6 clean fires of {ALTERNATE}", lambda: _clean_fires(home, ALTERNATE, 6), timeout=WAIT, interval=3)
    clean = check_cursor_chain(home, ALTERNATE)
    tis = task_instances(home, ALTERNATE)
    for call in clean:
        state, queue, hostname = tis[call["run_id"]]
        # Each fire ran on the worker of the queue the policy chose for it, and said so to the API server.
        assert (state, hostname, call["worker"]) == ("success", WORKER_OF[queue], WORKER_OF[queue]), call
    workers = [call["worker"] for call in clean]
    assert set(workers) == set(WORKER_OF.values()), workers
    # Consecutive occurrences go to different workers: the cursor crossed machines at each handover.
    handovers = sum(a != b for a, b in zip(workers, workers[1:]))
    assert handovers >= len(workers) // 2, workers


@pytest.mark.e2e
def test_forbid_holds_with_fires_queued_to_different_workers(cursors: CeleryHome) -> None:
    home = cursors
    home.wait_for(f"4 clean fires of {FORBID}", lambda: _clean_fires(home, FORBID, 4), timeout=WAIT, interval=3)
    check_cursor_chain(home, FORBID)
    starts = {c["run_id"]: c for c in calls(home, FORBID, "start")}
    ends = {c["run_id"]: c for c in calls(home, FORBID, "end")}
    spans = sorted((starts[r]["at"], ends[r]["at"], starts[r]["worker"], r) for r in ends)
    for (_, end, worker, run), (start, _, other, later) in zip(spans, spans[1:]):
        assert start >= end, f"{later} on {other} started while {run} on {worker} was still running"
    assert {worker for _, _, worker, _ in spans} == set(WORKER_OF.values()), spans
    skips = fire_state(home, FORBID)["skips"]
    assert "ConcurrencyForbidden" in skips.values(), skips


@pytest.mark.e2e
def test_a_worker_killed_mid_fire_neither_advances_nor_reruns_the_cursor(cursors: CeleryHome) -> None:
    home = cursors
    set_paused(home, (FORBID,), True)  # the kill concerns one function; the other only adds load
    control = home.root / "cursor-control"
    (control / f"hang-{ALTERNATE}").touch()
    try:
        hanging = home.wait_for(
            "a fire to hang on worker-b",
            lambda: (control / "hanging").exists() and (control / "hanging").read_text(),
            timeout=WAIT,
        )
    finally:
        (control / f"hang-{ALTERNATE}").unlink()
    killed = json.loads(hanging)
    stored_before = fire_state(home, ALTERNATE)["stored"]
    assert stored_before == killed["cursor"]
    # kill -9 of the whole worker: Celery's main process, its pool, the task's supervisor and the task.
    home.kill("worker-b")
    killed_at = time.monotonic()
    home.start_worker("worker-b")  # a replacement on the same node; Celery may redeliver the lost message to it

    def settled() -> dict | None:
        # Past Celery's visibility timeout (30 s) plus its restore cycle, and a clean fire on each worker since.
        if time.monotonic() - killed_at < 75:
            return None
        state = fire_state(home, ALTERNATE)
        order = [c["run_id"] for c in calls(home, ALTERNATE, "start")]
        later = order[order.index(killed["run_id"]) + 1 :]
        workers = {c["worker"] for c in calls(home, ALTERNATE, "start") if c["run_id"] in later}
        clean = [r for r in later if state["fires"].get(r, [None])[0] == "Succeeded"]
        return state if len(clean) >= 2 and workers == {"worker-a", "worker-b"} else None

    after = home.wait_for("clean fires on both workers after the kill", settled, timeout=WAIT, interval=3)
    # The lost fire: never reported, so Unknown (not Failed), its task instance failed by the heartbeat timeout.
    assert after["fires"][killed["run_id"]] == ["Unknown", "FireLost"], after["fires"]
    assert task_instances(home, ALTERNATE)[killed["run_id"]][0] == "failed"
    # Never re-run: the message Celery redelivers finds the task instance no longer queued.
    again = [c for c in calls(home, ALTERNATE, "start") if c["run_id"] == killed["run_id"]]
    assert len(again) == 1, again
    # The next fire resumed from the killed fire's cursor, and the chain of clean fires is unbroken.
    clean = check_cursor_chain(home, ALTERNATE)
    started = [c["run_id"] for c in calls(home, ALTERNATE, "start")]
    position = started.index(killed["run_id"])
    first_after = next(c for c in clean if started.index(c["run_id"]) > position)
    assert first_after["cursor"] == killed["cursor"], first_after
