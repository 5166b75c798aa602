"""The dispatch cap on the CeleryExecutor: two schedulers admitting, two workers running, one pool.

``celery_cap_0`` .. ``celery_cap_3`` fire every 5 s and each fire takes 6 s, so four
want to run at once; the deployment's ``[tessera] max_concurrent_dispatches`` is 2. The
other cursor functions are paused for the test, so every call in the window is one of
these. Asserts on the pool row, on the runs (both schedulers created some), on the
task instances (both workers ran some), on the skips the status reads, and on the
calls the functions logged: never more than the cap running at once.
"""

from __future__ import annotations

import pytest

from .celery_stack import CAP, SCHEDULERS, CeleryHome, calls, fire_state, set_paused, task_instances
from .test_celery_cursor import ALTERNATE, FORBID, check_cursor_chain

CAPPED = tuple(f"celery_cap_{index}" for index in range(4))
WAIT = 240


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, step in edges:  # an end sorts before a start at the same instant: back to back is not overlap
        running += step
        most = max(most, running)
    return most


@pytest.mark.e2e
def test_the_dispatch_cap_holds_across_two_workers_and_two_schedulers(celery_stack: CeleryHome) -> None:
    home = celery_stack
    set_paused(home, (ALTERNATE, FORBID), True)
    set_paused(home, CAPPED, False)
    try:

        def enough() -> bool:
            states = [fire_state(home, dag_id) for dag_id in CAPPED]
            clean = sum(o == "Succeeded" for s in states for o, _ in s["fires"].values())
            creators = {run.creator for dag_id in CAPPED for run in home.runs(dag_id)}
            return clean >= 5 and creators == set(SCHEDULERS)

        home.wait_for("5 clean fires, runs by both schedulers", enough, timeout=WAIT, interval=3)
    finally:
        set_paused(home, CAPPED, True)
    (slots,) = home.query("SELECT slots FROM slot_pool WHERE pool = 'tessera_dispatch'")[0]
    assert slots == CAP
    # Every cursor call the deployment ever made, the capped ones and those before them: never over the cap.
    starts = {(c["dag_id"], c["run_id"]): c["at"] for c in calls(home, event="start")}
    ends = {(c["dag_id"], c["run_id"]): c["at"] for c in calls(home, event="end")}
    spans = [(starts[key], ends[key]) for key in ends]
    assert _most_at_once(spans) <= CAP, "more fires ran at once than the dispatch cap"
    capped_spans = [(starts[key], ends[key]) for key in ends if key[0] in CAPPED]
    assert _most_at_once(capped_spans) == CAP, "the cap never bound: the test proves nothing"
    workers = {ti[2] for dag_id in CAPPED for ti in task_instances(home, dag_id).values() if ti[0] == "success"}
    assert workers == {"worker-a", "worker-b"}
    creators = {run.creator for dag_id in CAPPED for run in home.runs(dag_id)}
    assert creators == set(SCHEDULERS)
    # The ticks over the cap were skipped and say why; the fires that ran carried their cursors exactly.
    # (A skip is not queued for later, so one function may go without a slot for the whole window.)
    states = {dag_id: fire_state(home, dag_id) for dag_id in CAPPED}
    assert "DispatchCapReached" in [reason for s in states.values() for reason in s["skips"].values()]
    fired = [dag_id for dag_id, s in states.items() if "Succeeded" in {o for o, _ in s["fires"].values()}]
    assert len(fired) >= 2, fired
    for dag_id in fired:
        check_cursor_chain(home, dag_id)
