"""Faults on the CeleryExecutor: a worker killed with ``kill -9`` in the middle of a fire, and a broker restart.

``celery_alternate`` (``dags_celery/celery_cursors.py``) fires every 10 s, consecutive
fires on ``worker-a`` and ``worker-b``. A fire on worker-b is made to hang, and the
whole worker is killed: Celery's main process, its pool, the task's supervisor and
the task. The deployment's broker hands a message a lost worker never acknowledged
back to its queue once it is older than 20 s (``visibility_timeout``) when a consumer
connects: the replacement worker-b is started after that, so the test sees Celery
redeliver the lost fire's message, and waits until that delivery has been refused.
Runs after the other modules that need worker-b's runs, which the kill would cut short.

Then the broker (Redis, append-only, fsync on every write) is stopped for longer than
an occurrence and started again on the same port and data.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Iterator

import pytest

from .celery_stack import FIRST_DAGS, CeleryHome, calls, fire_state, set_paused, task_instances
from .test_celery_cursor import ALTERNATE, check_cursor_chain

WAIT = 240


@pytest.fixture(scope="module")
def alternating(celery_stack: CeleryHome) -> Iterator[CeleryHome]:
    """``celery_alternate`` alone unpaused: the kill concerns one function, the other DAGs would only add load."""
    set_paused(celery_stack, tuple(d for d in FIRST_DAGS if d != ALTERNATE), True)
    set_paused(celery_stack, (ALTERNATE,), False)
    try:
        yield celery_stack
    finally:
        set_paused(celery_stack, (ALTERNATE,), True)


@pytest.mark.e2e
def test_a_worker_killed_mid_fire_neither_advances_nor_reruns_the_cursor(alternating: CeleryHome) -> None:
    home = alternating
    # A stored cursor first, so "the cursor did not advance" compares two real cursors.
    home.wait_for("a clean fire", lambda: fire_state(home, ALTERNATE)["stored"] is not None, timeout=WAIT, interval=3)
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
    logged_before = home.log_size("worker-b")
    # kill -9 of the whole worker: Celery's main process, its pool, the task's supervisor and the task.
    home.kill("worker-b")
    # A replacement on the same node, once the message the lost worker took is older than the
    # visibility timeout (20 s): a consumer connecting then hands such messages back to their queue.
    time.sleep(25)
    home.wait_until_ready("worker-b", home.start_worker("worker-b"))

    def refused_redelivery() -> bool:
        # The Execution API refused to start the task instance again, still running or already failed.
        since = home.logged_since("worker-b", logged_before)
        return b"ignoring redelivered message" in since or b"invalid_state" in since

    def settled() -> dict | None:
        # The redelivery refused, and a clean fire on each worker since the kill.
        if not refused_redelivery():
            return None
        state = fire_state(home, ALTERNATE)
        order = [c["run_id"] for c in calls(home, ALTERNATE, "start")]
        later = order[order.index(killed["run_id"]) + 1 :]
        workers = {c["worker"] for c in calls(home, ALTERNATE, "start") if c["run_id"] in later}
        clean = [r for r in later if state["fires"].get(r, [None])[0] == "Succeeded"]
        return state if len(clean) >= 2 and workers == {"worker-a", "worker-b"} else None

    after = home.wait_for(
        "Celery's redelivery to be refused and clean fires on both workers after the kill", settled, timeout=WAIT
    )
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


@pytest.mark.e2e
def test_a_broker_restart_loses_no_occurrence_and_doubles_none(alternating: CeleryHome) -> None:
    home = alternating
    step = datetime.timedelta(seconds=10)
    seen = len(calls(home, ALTERNATE, "start"))
    home.wait_for("a fire before the restart", lambda: len(calls(home, ALTERNATE, "start")) > seen, timeout=WAIT)
    stopped_at = datetime.datetime.now(datetime.timezone.utc)
    home.redis.stop()  # type: ignore[attr-defined]
    time.sleep(12)  # over an occurrence: the scheduler creates and tries to send a fire while the broker is gone
    home.redis.start()  # type: ignore[attr-defined]
    restarted_at = time.time()

    def recovered() -> dict | None:
        state = fire_state(home, ALTERNATE)
        after = [c for c in calls(home, ALTERNATE, "start") if c["at"] > restarted_at]
        clean = [c for c in after if state["fires"].get(c["run_id"], [None])[0] == "Succeeded"]
        return state if len(clean) >= 2 and {c["worker"] for c in clean} == {"worker-a", "worker-b"} else None

    state = home.wait_for("clean fires on both workers after the restart", recovered, timeout=WAIT, interval=3)
    runs = [run for run in home.runs(ALTERNATE) if run.run_after >= stopped_at - 2 * step]
    ends = [run.data_interval_end for run in runs]
    # One run per occurrence through the outage: none missing, none twice.
    assert len(ends) >= 4 and all(b - a == step for a, b in zip(ends, ends[1:])), ends
    # Every call made once, and the cursor carried exactly across the outage.
    started = [c["run_id"] for c in calls(home, ALTERNATE, "start")]
    assert len(started) == len(set(started))
    check_cursor_chain(home, ALTERNATE)
    for run in runs[:-1]:
        outcome = state["fires"].get(run.run_id, [None])[0] or state["skips"].get(run.run_id)
        # Clean; or a tick Forbid skipped; or a fire whose message the broker never took: recorded, never run.
        assert outcome in ("Succeeded", "ConcurrencyForbidden", "Unknown"), (run.run_id, outcome)
        if outcome == "Unknown":
            assert run.run_id not in started, f"{run.run_id} ran but reads Unknown"
