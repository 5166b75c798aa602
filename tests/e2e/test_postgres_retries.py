"""Run retries on PostgreSQL under the real schedulers: the longest note fits, and the schedulers go on creating runs.

``dags_postgres/retried_pipeline.py`` declares a schedule with ``RETRIES 12`` and ``RETRY_DELAY 0``
whose one task fails at once. Every failed attempt makes the scheduler that fails the run call
tessera's listener in its own session, which clears the run, queues it again and adds a line to its
note; together the lines pass 1,000 characters, the length of ``dag_run_note.content``, which on
PostgreSQL is ``varchar(1000)``. Before the one note writer capped the note
(:mod:`tessera.operators.run_notes`), that flush failed (``StringDataRightTruncation``) in the
scheduler's own session and left it dead (``PendingRollbackError`` at its next commit): the scheduler
stopped creating runs. Here, on the PostgreSQL deployment with two schedulers (``postgres_stack``):

* the run uses every attempt: one audit-log retry entry per retry, the run cleared ``RETRIES`` times;
* its note holds at most 1,000 characters: it starts with the writer's count of the lines it dropped,
  keeps the newest attempts in order and ends with the last attempt's line;
* afterwards both schedulers still create the runs of the 10-second DAGs, and neither logged a
  ``PendingRollbackError`` or a failed listener step.

In CI this file runs after ``test_postgres_notes.py``, which uses no deployment of its own, so the
session already stopped the deployment after ``test_postgres_ha.py`` (``conftest.pytest_runtest_teardown``):
it is started again here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from tessera.operators.run_notes import NOTE_LIMIT, dropped_line
from tessera.operators.schedules.identity import record_of
from tessera.operators.schedules.run_retries import RETRY_EVENT
from tests.compat.airflow_names import DagBag

from .conftest import POSTGRES_DAGS, SCHEDULERS, api_server_healthy, start_postgres_stack
from .harness import AirflowHome, _utc

DAG_ID = "retried_pipeline"
STEADY = ("ha_every_10s_a", "ha_every_10s_b", "ha_every_10s_c")
"""DAGs of ``dags_postgres/ha_schedules.py`` that each scheduler creates runs of every few seconds."""
ATTEMPT_WAIT = 30
"""Seconds one attempt may take on a loaded machine: the run started, its task run by a worker, the run failed."""
WAIT = 240
CAUSE = "a task failed"


@pytest.fixture(scope="module")
def retries() -> int:
    """The RETRIES the DAG file declares, as the dag-processor parses it."""
    bag = DagBag(str(POSTGRES_DAGS / "retried_pipeline.py"))
    assert not bag.import_errors, bag.import_errors
    declared = int((record_of(bag.dags[DAG_ID].default_args) or {})["retries"])
    # Fewer lines would fit the column whole, and the test would prove nothing about the cap.
    assert declared >= 12, declared
    return declared


@pytest.fixture(scope="module")
def stack(postgres_stack: AirflowHome) -> AirflowHome:
    """The deployment, running: started again if the session stopped it after an earlier module."""
    home = postgres_stack
    # conftest's teardown hook stops a shared deployment when the next test does not use it, and in the
    # whole suite test_postgres_notes.py (no deployment) runs between test_postgres_ha.py and this file.
    if not home.running:
        start_postgres_stack(home)
    home.wait_for("the API server", lambda: api_server_healthy(home), timeout=WAIT)
    home.wait_for(f"{DAG_ID} to be parsed", lambda: home.is_parsed(DAG_ID), timeout=WAIT)
    return home


def _run(home: AirflowHome) -> dict | None:
    """The DAG's one run: its id, state, clears, end and note (``None`` until the scheduler created it)."""
    rows = home.query(
        "SELECT r.run_id, r.state, r.clear_number, r.end_date, n.content"
        " FROM dag_run r LEFT JOIN dag_run_note n ON n.dag_run_id = r.id WHERE r.dag_id = ?",
        DAG_ID,
    )
    assert len(rows) <= 1, f"the yearly schedule created {len(rows)} runs: {rows}"
    if not rows:
        return None
    run_id, state, clears, end, note = rows[0]
    return {"run_id": run_id, "state": state, "clears": clears, "end": _utc(end), "note": note}


def _retry_line(attempt: int, attempts: int) -> re.Pattern[str]:
    return re.compile(
        rf"Retry: attempt {attempt} of {attempts} failed \({CAUSE}\); attempt {attempt + 1} may start at "
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\."
    )


@pytest.fixture(scope="module")
def retried(stack: AirflowHome, retries: int) -> Iterator[dict]:
    """Unpause the DAG and wait until its run failed for good: the run, and the schedulers' log offsets before."""
    home = stack
    logged = {name: home.log_size(name) for name in SCHEDULERS}
    home.execute("UPDATE dag SET is_paused = false WHERE dag_id = ?", DAG_ID)
    try:
        home.wait_for(f"the scheduler to create {DAG_ID}'s run", lambda: _run(home), timeout=WAIT)

        def failed_for_good() -> dict | None:
            # The listener queues a failed run again in the transaction that failed it: the committed
            # state is "failed" only once no attempt is left (or once a retry could not be queued).
            run = _run(home)
            return run if run and run["state"] == "failed" else None

        run = home.wait_for(
            f"{DAG_ID}'s run to fail for good", failed_for_good, timeout=ATTEMPT_WAIT * (retries + 1), interval=1
        )
        yield {**run, "logged": logged}
    finally:
        home.execute("UPDATE dag SET is_paused = true WHERE dag_id = ?", DAG_ID)


@pytest.mark.e2e
def test_every_attempt_is_made_and_audited(stack: AirflowHome, retried: dict, retries: int) -> None:
    assert retried["clears"] == retries, (
        f"cleared {retried['clears']} times, not RETRIES {retries}; note:\n{retried['note']}"
    )
    audited = stack.query(
        "SELECT extra FROM log WHERE dag_id = ? AND run_id = ? AND event = ? ORDER BY id",
        DAG_ID,
        retried["run_id"],
        RETRY_EVENT,
    )
    # One entry per retry, each naming the attempt it queued: the 2nd to the last.
    assert [json.loads(extra)["attempt"] for (extra,) in audited] == list(range(2, retries + 2)), audited


@pytest.mark.e2e
def test_the_longest_note_keeps_the_newest_lines_within_the_column(retried: dict, retries: int) -> None:
    note, attempts = retried["note"] or "", retries + 1
    assert len(note) <= NOTE_LIMIT, f"{len(note)} characters: {note}"
    first, *kept = note.split("\n")
    found = re.fullmatch(r"… (\d+) earlier lines? dropped", first)
    assert found, f"the note does not start with the count of dropped lines:\n{note}"
    dropped = int(found.group(1))
    assert first == dropped_line(dropped)
    # The note was every retry's line and the last failure's, oldest first: the oldest ``dropped`` went.
    assert dropped + len(kept) == retries + 1, note
    assert kept[-1] == f"Failed: attempt {attempts} of {attempts} failed ({CAUSE}); RETRIES {retries} used up."
    for attempt, line in enumerate(kept[:-1], start=dropped + 1):
        assert _retry_line(attempt, attempts).fullmatch(line), f"line for attempt {attempt}: {line!r}"


@pytest.mark.e2e
def test_the_schedulers_go_on_creating_runs_afterwards(stack: AirflowHome, retried: dict) -> None:
    home, ended = stack, retried["end"]

    def created_after() -> dict[str, set[str | None]] | None:
        creators = {
            dag_id: {run.creator for run in home.runs(dag_id) if run.created_at and run.created_at > ended}
            for dag_id in STEADY
        }
        every_dag = all(creators.values())
        return creators if every_dag and set().union(*creators.values()) >= set(SCHEDULERS) else None

    home.wait_for("new runs of each 10-second DAG, from both schedulers", created_after, timeout=WAIT)
    assert home.scheduler_jobs() == dict.fromkeys(SCHEDULERS, "running")
    for name in SCHEDULERS:
        log = home.logged_since(name, retried["logged"][name]).decode(errors="replace")
        assert "PendingRollbackError" not in log, f"{name} found its session dead"
        failed_steps = [line for line in log.splitlines() if "tessera: listener step" in line and "failed" in line]
        assert not failed_steps, f"{name}: {failed_steps}"
