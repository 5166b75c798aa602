"""Cursor functions on the CeleryExecutor: fires alternating between two workers, Forbid across workers.

The tier's deployment (``celery_stack``) runs the DAGs of ``dags_celery/celery_cursors.py``;
its cluster policy routes consecutive fires of ``celery_alternate`` alternately, and each fire
of ``celery_forbid`` by a hash of its occurrence, to the two workers' own queues. Each test asserts on the
metadata DB (``task_instance``: state, queue, the hostname of the worker that ran it),
on the cursor store (the Variable ``<dag_id>-state``) and on the calls the functions
logged.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .celery_stack import CeleryHome, calls, fire_state, set_paused, task_instances

ALTERNATE, FORBID = "celery_alternate", "celery_forbid"
WAIT = 240
WORKER_OF = {"node-a": "worker-a", "node-b": "worker-b"}


@pytest.fixture(scope="module")
def cursors(celery_stack: CeleryHome) -> Iterator[CeleryHome]:
    """Both DAGs unpaused (the deployment started them, with the other first DAGs); paused when the module ends."""
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

    def handovers() -> int:
        # Consecutive clean fires on different workers: the cursor crossed machines in between.
        fires = fire_state(home, ALTERNATE)["fires"]
        workers = [
            c["worker"] for c in calls(home, ALTERNATE, "start") if fires.get(c["run_id"], [None])[0] == "Succeeded"
        ]
        return sum(a != b for a, b in zip(workers, workers[1:]))

    # Ticks a slow fire made Forbid skip can put two clean fires in a row on one worker: wait for three handovers.
    home.wait_for(f"3 handovers between the workers of {ALTERNATE}", lambda: handovers() >= 3, timeout=WAIT, interval=3)
    clean = check_cursor_chain(home, ALTERNATE)
    tis = task_instances(home, ALTERNATE)
    for call in clean:
        state, queue, hostname = tis[call["run_id"]]
        # Each fire ran on the worker of the queue the policy chose for it, and said so to the API server.
        assert (state, hostname, call["worker"]) == ("success", WORKER_OF[queue], WORKER_OF[queue]), call
    workers = [call["worker"] for call in clean]
    assert sum(a != b for a, b in zip(workers, workers[1:])) >= 3, workers


@pytest.mark.e2e
def test_forbid_holds_with_fires_queued_to_different_workers(cursors: CeleryHome) -> None:
    home = cursors

    def finished_on_both() -> bool:
        # Routing sends the fires that run to alternate workers only while each starts on time; late
        # starts on a busy machine (CI saw 11 to 27 s) can put three clean fires in a row on one worker.
        ended = {c["run_id"] for c in calls(home, FORBID, "end")}
        workers = {c["worker"] for c in calls(home, FORBID, "start") if c["run_id"] in ended}
        return _clean_fires(home, FORBID, 3) and workers == set(WORKER_OF.values())

    home.wait_for(f"3 clean fires of {FORBID}, fires run on both workers", finished_on_both, timeout=WAIT, interval=3)
    check_cursor_chain(home, FORBID)
    starts = {c["run_id"]: c for c in calls(home, FORBID, "start")}
    ends = {c["run_id"]: c for c in calls(home, FORBID, "end")}
    spans = sorted((starts[r]["at"], ends[r]["at"], starts[r]["worker"], r) for r in ends)
    for (_, end, worker, run), (start, _, other, later) in zip(spans, spans[1:]):
        assert start >= end, f"{later} on {other} started while {run} on {worker} was still running"
    assert {worker for _, _, worker, _ in spans} == set(WORKER_OF.values()), spans
    skips = fire_state(home, FORBID)["skips"]
    assert "ConcurrencyForbidden" in skips.values(), skips
