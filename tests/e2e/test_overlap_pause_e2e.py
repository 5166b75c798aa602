"""``overlap="cancel_other"`` and ``pause_after_failures`` on a real dag-processor, scheduler and LocalExecutor.

The DAGs are ``dags/e2e_overlap.py``, in the session's deployment (``airflow_stack``):

- ``e2e_cancel_other`` (every 10 s, each run 25 s): every tick gets its run, on time (the
  dag policy gave it two slots); when it starts, the run still in flight is failed with a note
  naming its replacement, the new run's note names the run it replaced, and each replacement
  is an audit-log entry; at no moment do two of its runs stay running for long.
- ``e2e_pause_after_failures`` (every 10 s, every run fails, ``pause_after_failures=2``): the
  DAG is paused by tessera after its second failed run in a row, the pause is an audit-log
  entry naming the reason and both failed runs, and the second run's note says so.
"""

from __future__ import annotations

import datetime
import json

import pytest

from .harness import AirflowHome

CANCEL, FAILING = "e2e_cancel_other", "e2e_pause_after_failures"
WAIT = 150
OVERLAP_SECONDS = 5
"""How long a replaced run may outlive its successor's start: the listener fails it as that run starts."""

pytestmark = pytest.mark.e2e


def _at(value: str | None) -> datetime.datetime | None:
    return None if value is None else datetime.datetime.fromisoformat(value)


def _set_paused(home: AirflowHome, dag_id: str, paused: bool) -> None:
    home.execute("UPDATE dag SET is_paused = ? WHERE dag_id = ?", paused, dag_id)


def _runs(home: AirflowHome, dag_id: str) -> list[tuple[str, str, str | None, str | None]]:
    """(run_id, state, note, run_after) of the DAG's scheduled runs, oldest first."""
    return home.query(
        "SELECT r.run_id, r.state, n.content, r.run_after FROM dag_run r "
        "LEFT JOIN dag_run_note n ON n.dag_run_id = r.id "
        "WHERE r.dag_id = ? AND r.run_type = 'scheduled' ORDER BY r.run_after",
        dag_id,
    )


def _log(home: AirflowHome, dag_id: str, event: str) -> list[tuple[str | None, dict]]:
    rows = home.query("SELECT run_id, extra FROM log WHERE dag_id = ? AND event = ? ORDER BY id", dag_id, event)
    return [(run_id, json.loads(extra)) for run_id, extra in rows]


def test_cancel_other_fails_the_run_in_flight_when_the_next_tick_starts(airflow_stack: AirflowHome) -> None:
    home = airflow_stack
    home.wait_for(f"{CANCEL} to be parsed", lambda: home.is_parsed(CANCEL), timeout=WAIT)
    assert home.query("SELECT max_active_runs FROM dag WHERE dag_id = ?", CANCEL) == [(2,)]
    _set_paused(home, CANCEL, False)
    try:
        home.wait_for(
            "two replaced runs",
            lambda: len(_log(home, CANCEL, "tessera.schedule.replaced")) >= 2 or None,
            timeout=WAIT,
        )
    finally:
        _set_paused(home, CANCEL, True)
    runs = _runs(home, CANCEL)
    by_id = {run_id: (state, note) for run_id, state, note, _ in runs}
    replaced = _log(home, CANCEL, "tessera.schedule.replaced")
    for old, extra in replaced:
        state, note = by_id[old]
        new = extra["replaced_by"]
        assert state == "failed"
        (line,) = [line for line in note.splitlines() if line.startswith("Replaced: ")]
        assert line.startswith(f"Replaced: failed when run {new} (due ")
        assert line.endswith("because this run was still in flight (overlap cancel_other runs the newest fire).")
        assert f"Replaced run(s) {old} still in flight when this fire came due (overlap cancel_other)." in (
            by_id[new][1] or ""
        )
    rows = home.query("SELECT run_id, start_date, end_date FROM dag_run WHERE dag_id = ?", CANCEL)
    times = {run_id: (_at(start), _at(end)) for run_id, start, end in rows}
    for old, extra in replaced:
        ended, started = times[old][1], times[extra["replaced_by"]][0]
        assert (ended - started).total_seconds() < OVERLAP_SECONDS, "replaced as its successor started"
    ids = [run_id for run_id, *_ in runs]
    # Every tick got its run: consecutive 10 s occurrences, none dropped or queued.
    due = [run.run_after for run in home.runs(CANCEL) if run.run_type == "scheduled"]
    assert all((b - a).total_seconds() == 10 for a, b in zip(due, due[1:], strict=False)), due
    assert [old for old, _ in replaced] == ids[: len(replaced)], "each run replaced, oldest first"


def test_the_dag_pauses_itself_after_two_failed_runs_in_a_row(airflow_stack: AirflowHome) -> None:
    home = airflow_stack
    home.wait_for(f"{FAILING} to be parsed", lambda: home.is_parsed(FAILING), timeout=WAIT)
    _set_paused(home, FAILING, False)
    try:
        pauses = home.wait_for(
            "the pause after failures", lambda: _log(home, FAILING, "tessera.dag.pause") or None, timeout=WAIT
        )
    finally:
        _set_paused(home, FAILING, True)
    (_, extra), *more = pauses
    assert more == [], "paused once"
    # In the order they failed: two runs in flight at once can fail in the other order than they were due
    # (CI: the 23:27:40 run failed after the 23:27:50 one). Runs failing after the pause end later still.
    failed = [
        run_id
        for (run_id,) in home.query(
            "SELECT run_id FROM dag_run WHERE dag_id = ? AND run_type = 'scheduled' AND state = 'failed' "
            "ORDER BY end_date, id",
            FAILING,
        )
    ]
    assert extra["reason"] == "pause_after_failures" and extra["is_paused"] is True
    assert extra["failed_runs"] == failed[:2][::-1], "the two failed runs, the last to fail first"
    assert extra["note"].startswith(
        f"Paused by tessera: 2 runs failed in a row (pause_after_failures 2), the newest {failed[1]}"
    )
    notes = {run_id: note for run_id, _, note, _ in _runs(home, FAILING)}
    assert notes[failed[1]].endswith("Paused: the DAG is paused after 2 failed runs in a row (pause_after_failures 2).")
    assert notes[failed[0]] is None or "Paused" not in notes[failed[0]]
