"""AFTER fan-in and a gated wave on the CeleryExecutor, their pipelines on different workers.

``dags_celery/celery_fan_in.py``: two parents pinned to ``node-a`` and ``node-b`` feed a
fan-in child; a wave-gated schedule runs ``celery_wave_1`` (node-a) then
``celery_wave_2`` (node-b). Both were unpaused when the tier's deployment started.
Asserts on ``dag_run``, ``asset_event`` and ``dagrun_asset_event`` (which parent
fires released which child run) and on the steps the tasks logged.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from tessera.operators.schedules.identity import asset_uri

from .celery_stack import CeleryHome, calls

PARENTS = {"celery_fan_a": "worker-a", "celery_fan_b": "worker-b"}
CHILD = "celery_fan_child"
WAVE = {"celery_wave_1": "worker-a", "celery_wave_2": "worker-b"}
WAIT = 300


def _released(home: CeleryHome) -> dict[str, list[tuple[str, int]]]:
    """By child run: the (parent schedule asset URI, event id) pairs it consumed."""
    rows = home.query(
        "SELECT r.run_id, a.uri, e.id FROM dag_run r"
        " JOIN dagrun_asset_event dre ON dre.dag_run_id = r.id"
        " JOIN asset_event e ON e.id = dre.event_id JOIN asset a ON a.id = e.asset_id"
        " WHERE r.dag_id = ?",
        CHILD,
    )
    released: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for run_id, uri, event_id in rows:
        released[run_id].append((uri, event_id))
    return dict(released)


@pytest.mark.e2e
def test_fan_in_releases_each_child_once_per_pair_of_parent_fires(celery_stack: CeleryHome) -> None:
    home = celery_stack
    done = "SELECT count(*) FROM dag_run WHERE dag_id = ? AND state = 'success'"
    home.wait_for(f"3 successful runs of {CHILD}", lambda: home.query(done, CHILD)[0][0] >= 3, timeout=WAIT)
    released = _released(home)
    uris = {asset_uri(parent) for parent in PARENTS}
    for run_id, events in released.items():
        # Each child run was released by a fire of EACH parent.
        assert {uri for uri, _ in events} == uris, (run_id, events)
    # No parent fire released two child runs.
    consumed = Counter(event_id for events in released.values() for _, event_id in events)
    assert max(consumed.values()) == 1, consumed
    # The child ran its step once per run; the parents' steps ran on their own workers.
    steps = Counter(c["run_id"] for c in calls(home, CHILD, "step"))
    finished = [r for (r,) in home.query("SELECT run_id FROM dag_run WHERE dag_id = ? AND state = 'success'", CHILD)]
    assert all(steps[run_id] == 1 for run_id in finished), steps
    for parent, worker in PARENTS.items():
        assert {c["worker"] for c in calls(home, parent, "step")} == {worker}, parent
        assert max(Counter(c["run_id"] for c in calls(home, parent, "step")).values()) == 1, parent


@pytest.mark.e2e
def test_a_gated_wave_runs_its_pipelines_one_after_the_other_across_workers(celery_stack: CeleryHome) -> None:
    home = celery_stack

    def both_ran() -> list[str] | None:
        runs = [{c["run_id"] for c in calls(home, dag_id, "step")} for dag_id in WAVE]
        common = sorted(set.intersection(*runs))
        return common if len(common) >= 2 else None

    fires = home.wait_for("2 fires of the wave with both pipelines run", both_ran, timeout=WAIT)
    first, second = WAVE
    for dag_id, worker in WAVE.items():
        steps = calls(home, dag_id, "step")
        assert {c["worker"] for c in steps} == {worker}, dag_id
        assert max(Counter(c["run_id"] for c in steps).values()) == 1, f"a wave member of {dag_id} ran twice"
    for run_id in fires:
        (one,) = [c for c in calls(home, first, "step") if c["run_id"] == run_id]
        (two,) = [c for c in calls(home, second, "step") if c["run_id"] == run_id]
        # MAX_WAVE_CONCURRENT 1: wave 2 (on worker-b) started only once wave 1 (on worker-a) had finished.
        assert two["start"] >= one["end"], (run_id, one, two)
