"""Declared schedules' overlap, CATCHUP, TIMEOUT and RETRIES, backoff and refresh, end to end.

One deployment on SQLite (API server, dag-processor, scheduler, LocalExecutor workers), the
DAGs below, and the behaviour each specification sentence promises, read from the rows the
scheduler wrote:

- ``fid_buffer`` (every 20 s, one 45 s task, MAX_CONCURRENT 1): the fire that found the slot
  taken is queued and runs as soon as the slot frees; the one after it, which came while one
  was queued, is dropped and recorded (``BufferFull``); the queued run's note says so;
- ``fid_skip`` (the same with ``OVERLAP skip``): no fire that came while a run was in flight
  ever runs, and each is recorded (``ConcurrencyForbidden``);
- ``fid_timeout`` (``sleep 5`` three times, ``TIMEOUT 6``, ``RETRIES 1``): each attempt of the
  whole pipeline is stopped at 6 s, the timed-out attempt is retried, and the run fails after two;
- ``fid_catchup_true`` / ``fid_catchup_false`` (declared ``INACTIVE``, no start date): on
  unpause the first replays exactly the fires due while it was inactive, oldest first, one at a
  time (and again after a pause), the second runs none of them;
- ``fid_backoff`` (``backoff(retries=1)``, a task that always fails): the second run's first
  failure is counted after the first run's two, not from 1;
- ``fid_backoff_forever`` (default ``backoff``): retries never stop on their own; pausing holds
  them, unpausing resumes them;
- ``fid_refresh``: a ``dags test`` dry run is not a refresh to coalesce with.

The tests run in the order that overlaps their waits: the catch-up and backoff stories first,
while the 45 s runs of ``fid_buffer`` and ``fid_skip`` pile up, whose tests then read runs
already finished. ``Backfill(limit=N)`` after downtime is not here: a scheduler stopped for a
minute is ``test_restart_downtime_e2e.py``'s whole deployment (newest tick and the three
before it, exactly) and the why corpus's ``backfill_limit``.
"""

from __future__ import annotations

import datetime
import json
import textwrap
import time
import urllib.error
from collections.abc import Iterator

import pytest

from .conftest import admin_api, api_server_healthy, keep_artifacts_if_failed
from .harness import AirflowHome, _free_port, _utc

# About 3 minutes on an idle machine (4 in CI): make test starts the longest deployments first (tests/conftest.py).
pytestmark = [pytest.mark.e2e, pytest.mark.minutes(4)]

WAIT = 420
SECOND = datetime.timedelta(seconds=1)

DAGS = """
\"\"\"Specification-fidelity end-to-end DAGs (written by tests/e2e/test_schedule_fidelity_e2e.py).\"\"\"
import time

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG
from tessera.operators.backoff import backoff
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.timetables import Every, Fixed

S = ScheduleSet(
    [
        Schedule("fid_buffer", interval_seconds=20),
        Schedule("fid_skip", interval_seconds=20, overlap="skip"),
        Schedule("fid_timeout", interval_seconds=3600, timeout=6, retries=1, retry_delay=2),
        Schedule("fid_catchup_true", interval_seconds=15, catchup=True, active=False),
        Schedule("fid_catchup_false", interval_seconds=15, active=False),
    ]
)


def slow():
    time.sleep(45)


def five():
    time.sleep(5)


def fail():
    raise RuntimeError("source down")


for name in ("fid_buffer", "fid_skip"):
    with DAG(name, start_date=None, **S.dag_kwargs(name)):
        PythonOperator(task_id="work", python_callable=slow)
with DAG("fid_timeout", start_date=None, **S.dag_kwargs("fid_timeout")):
    # Each task is shorter than TIMEOUT, the pipeline is not. Three, not two: a retry reruns only the tasks
    # that did not succeed, so the second attempt has at least b and c (10 s) left, far past 6 s.
    (
        PythonOperator(task_id="a", python_callable=five)
        >> PythonOperator(task_id="b", python_callable=five)
        >> PythonOperator(task_id="c", python_callable=five)
    )
for name in ("fid_catchup_true", "fid_catchup_false"):
    with DAG(name, start_date=None, **S.dag_kwargs(name)):
        EmptyOperator(task_id="archive")

plain = {"start_date": None, "is_paused_upon_creation": False, "max_active_runs": 1}
twice = backoff("1m", first="3s", retries=1)
with DAG("fid_backoff", schedule=Every("30s", phase=Fixed("0s")), default_args=twice, **plain):
    PythonOperator(task_id="load", python_callable=fail)
forever = backoff("20s", first="2s")
with DAG("fid_backoff_forever", schedule=Every("1h", phase=Fixed("0s")), default_args=forever, **plain):
    PythonOperator(task_id="load", python_callable=fail)
with DAG("fid_refresh", schedule=Every("1d", phase=Fixed("{refresh_phase}")), **plain):
    EmptyOperator(task_id="work")
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowHome]:
    """Its own deployment: the API server serves the workers and the REST calls (everyone is admin)."""
    home = AirflowHome(tmp_path_factory.mktemp("airflow-fidelity"))
    for copied in home.dags.glob("*.py"):
        copied.unlink()
    # fid_refresh fires daily half a day from now: no scheduled run of it can succeed just before the refresh
    # test asks for one (an hourly one did, when the test ran in the first minute of an hour, and coalesced).
    refresh_phase = f"{(datetime.datetime.now(datetime.timezone.utc).hour + 12) % 24}h"
    (home.dags / "fidelity_e2e_dags.py").write_text(textwrap.dedent(DAGS).replace("{refresh_phase}", refresh_phase))
    port = _free_port()
    home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "s" * 64,
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="True",
        AIRFLOW__CORE__PARALLELISM="6",
    )
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate")
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1")
        home.start("dag-processor", "dag-processor")
        home.wait_for("the API server", lambda: api_server_healthy(home), timeout=300)
        home.start("scheduler", "scheduler")
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


PAUSE_ATTEMPTS = 3
"""Airflow's PATCH of a DAG, asked again after a 500 (see :func:`_set_paused`); tessera's own routes are asked once."""


def _pause_log(home: AirflowHome, dag_id: str) -> list[tuple]:
    return home.query("SELECT id, dttm, extra FROM log WHERE dag_id = ? AND event = 'patch_dag' ORDER BY id", dag_id)


def _set_paused(home: AirflowHome, dag_id: str, paused: bool) -> datetime.datetime:
    """Pause or unpause through Airflow's REST API, which records it in its audit log; when it was logged."""
    logged = len(_pause_log(home, dag_id))
    for attempt in range(1, PAUSE_ATTEMPTS + 1):
        try:
            answer = admin_api(home, "PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": paused})
            break
        except urllib.error.HTTPError as refused:
            # Airflow answers 500 when SQLite's write lock stays taken past the minute each process waits for
            # it (its audit-log insert fails, nothing is changed): CI saw every process stall 60 s at once.
            if refused.code not in (500, 503) or attempt == PAUSE_ATTEMPTS:
                raise
    assert answer["is_paused"] is paused, answer
    rows = home.wait_for("the audit log entry", lambda: _pause_log(home, dag_id)[logged:], timeout=60)
    at = _utc(rows[-1][1])
    assert at is not None
    return at


def _runs(home: AirflowHome, dag_id: str) -> list[dict]:
    rows = home.query(
        "SELECT r.run_id, r.state, r.data_interval_end, r.run_after, r.created_at, r.start_date, r.end_date,"
        " r.clear_number, n.content FROM dag_run r LEFT JOIN dag_run_note n ON n.dag_run_id = r.id"
        " WHERE r.dag_id = ? AND r.run_type = 'scheduled' ORDER BY r.data_interval_end",
        dag_id,
    )
    keys = ("run_id", "state", "occurrence", "run_after", "created", "start", "end", "clears", "note")
    found = [dict(zip(keys, row, strict=True)) for row in rows]
    for run in found:
        for key in ("occurrence", "run_after", "created", "start", "end"):
            run[key] = _utc(run[key])
    return found


def _skips(home: AirflowHome, dag_id: str) -> list[dict]:
    rows = home.query("SELECT extra FROM log WHERE dag_id = ? AND event = 'tessera.schedule.skip'", dag_id)
    return [json.loads(extra) for (extra,) in rows]


def _finished_runs(home: AirflowHome, dag_id: str, count: int) -> list[dict]:
    def enough() -> list[dict] | None:
        runs = _runs(home, dag_id)
        done = [run for run in runs if run["state"] in ("success", "failed")]
        return runs if len(done) >= count else None

    return home.wait_for(f"{count} finished runs of {dag_id}", enough, timeout=WAIT)


def _dropped(skips: list[dict], reason: str) -> set[datetime.datetime]:
    """Every fire the audit log says was dropped for ``reason`` (first to last, 20 s apart)."""
    found = set()
    for skip in skips:
        if skip["reason"] == reason:
            first, last = _utc(skip["first"]), _utc(skip["last"])
            found |= {first + n * 20 * SECOND for n in range(int((last - first) / (20 * SECOND)) + 1)}
    return found


# -- CATCHUP: exactly the fires due while inactive, oldest first, one at a time -------------------------


def _due_between(start: datetime.datetime, end: datetime.datetime) -> list[datetime.datetime]:
    """The 15 s grid (epoch-aligned) from ``start`` (inclusive) to ``end`` (exclusive)."""
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    first = epoch + -(-(start - epoch) // (15 * SECOND)) * 15 * SECOND
    grid = (first + n * 15 * SECOND for n in range(int((end - first) / (15 * SECOND)) + 1))
    return [moment for moment in grid if moment < end]


def _created(home: AirflowHome, dag_id: str) -> datetime.datetime:
    rows = home.query("SELECT MIN(created_at) FROM dag_version WHERE dag_id = ?", dag_id)
    created = _utc(rows[0][0])
    assert created is not None
    return created


def test_catchup_replays_exactly_the_inactive_period_and_catchup_false_none_of_it(stack: AirflowHome) -> None:
    home = stack
    for dag_id in ("fid_catchup_true", "fid_catchup_false"):
        home.wait_for(f"{dag_id} parsed", lambda dag_id=dag_id: home.is_parsed(dag_id), timeout=WAIT)
    # Inactive since they were first parsed: wait for a few fires to come due, then switch them on.
    time.sleep(max(0.0, (_created(home, "fid_catchup_true") + 50 * SECOND - _utc_now()).total_seconds()))
    unpaused = {dag_id: _set_paused(home, dag_id, False) for dag_id in ("fid_catchup_true", "fid_catchup_false")}

    owed = _due_between(_created(home, "fid_catchup_true"), unpaused["fid_catchup_true"])
    assert len(owed) >= 3
    runs = _finished_runs(home, "fid_catchup_true", len(owed) + 1)
    assert [run["occurrence"] for run in runs[: len(owed)]] == owed, "exactly the inactive period, oldest first"
    assert runs[len(owed)]["occurrence"] >= unpaused["fid_catchup_true"] - 15 * SECOND
    for before, after in zip(runs[: len(owed)], runs[1 : len(owed)], strict=False):
        assert after["created"] >= before["end"], "one at a time"
    assert "Catch-up: this fire came due at" in (runs[0]["note"] or "")

    (first_false,) = _finished_runs(home, "fid_catchup_false", 1)[:1]
    assert first_false["occurrence"] >= unpaused["fid_catchup_false"], "none of the inactive period runs"
    suspended = [skip for skip in _skips(home, "fid_catchup_false") if skip["reason"] == "Suspended"]
    assert suspended and suspended[0]["count"] >= 3

    # Switched off and on again: exactly the fires of that pause are replayed.
    paused_at = _set_paused(home, "fid_catchup_true", True)
    time.sleep(50)
    resumed = _set_paused(home, "fid_catchup_true", False)
    # The audit log stamps a change when the request arrives; on SQLite it may commit seconds later, and a
    # fire due in between still ran as usual: only the fires of the logged span that did not run are owed.
    ran = {run["occurrence"] for run in _runs(home, "fid_catchup_true") if run["created"] < resumed}
    replay = [moment for moment in _due_between(paused_at, resumed) if moment not in ran]
    assert replay, "some fire came due while paused"

    def replayed() -> list[dict] | None:
        done = [r for r in _runs(home, "fid_catchup_true") if r["state"] == "success" and r["created"] >= resumed]
        # Every owed fire, not as many fires: the one due just before the pause may be among them (see below),
        # and counting it returned while the pause's last fire was still running (CI, seed 2899745921).
        return done if set(replay) <= {r["occurrence"] for r in done} else None

    after_resume = home.wait_for("the pause's fires to be replayed", replayed, timeout=WAIT)
    occurrences = [run["occurrence"] for run in after_resume]
    # The pause's fires, oldest first; before them at most the one due just before the pause that the
    # scheduler had not created yet (due while active: it runs as any due fire would).
    during = [o for o in occurrences if paused_at <= o < resumed]
    assert during == replay, (paused_at, resumed, occurrences, _pause_log(home, "fid_catchup_true"))
    assert len([o for o in occurrences if o < paused_at]) <= 1


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


# -- failure backoff: counted across runs, never giving up on its own, stopped by a pause ---------------


def _reasons(home: AirflowHome, dag_id: str) -> list[str]:
    rows = home.query(
        "SELECT retry_reason FROM task_instance WHERE dag_id = ? AND retry_reason IS NOT NULL"
        " UNION ALL SELECT retry_reason FROM task_instance_history WHERE dag_id = ? AND retry_reason IS NOT NULL",
        dag_id,
        dag_id,
    )
    return [reason for (reason,) in rows]


def test_the_backoff_counts_consecutive_failures_across_runs(stack: AirflowHome) -> None:
    def across() -> list[str] | None:
        reasons = _reasons(stack, "fid_backoff")
        return reasons if any("failure 3" in reason for reason in reasons) else None

    reasons = stack.wait_for("the second run's first failure", across, timeout=WAIT)
    # The first run failed twice (3 s apart); the second run's first failure is the third, 3 s x 2 x 2.
    assert any(
        reason.startswith("backoff after failure 3, 2 of them in earlier runs: retry in 12s") for reason in reasons
    ), reasons


def test_backoff_retries_never_stop_on_their_own_and_a_pause_holds_them(stack: AirflowHome) -> None:
    home = stack

    def task() -> tuple[str, int, int]:
        # The first run's task: a deployment started just before an hour has the next hour's run too.
        rows = home.query(
            "SELECT state, try_number, max_tries FROM task_instance WHERE dag_id = 'fid_backoff_forever'"
            " ORDER BY run_id"
        )
        return rows[0] if rows else ("", 0, 0)

    home.wait_for("a third try", lambda: task()[1] >= 3 and task()[0] == "up_for_retry", timeout=WAIT)
    assert task()[2] >= 1_000_000_000, "retries never stop on their own"
    _set_paused(home, "fid_backoff_forever", True)
    held = task()[1]
    time.sleep(30)  # longer than the 20 s cap: an active DAG would have retried by now
    assert task()[:2] == ("up_for_retry", held), "a paused DAG's retries wait"
    _set_paused(home, "fid_backoff_forever", False)
    home.wait_for("the retries to resume", lambda: task()[1] > held, timeout=90)


# -- TIMEOUT and RETRIES: one attempt of the whole pipeline, retried as a whole ----------------------


def test_timeout_bounds_each_attempt_of_the_whole_pipeline_and_a_timeout_is_retried(stack: AirflowHome) -> None:
    def failed() -> dict | None:
        runs = _runs(stack, "fid_timeout")
        return runs[0] if runs and runs[0]["state"] == "failed" else None

    run = stack.wait_for("fid_timeout's run to fail for good", failed, timeout=WAIT)
    assert run["clears"] == 1, "one retry: two attempts"
    note = run["note"] or ""
    assert "Retry: attempt 1 of 2 failed (it ran past its TIMEOUT); attempt 2 may start at" in note, note
    assert "Failed: attempt 2 of 2 failed (it ran past its TIMEOUT); RETRIES 1 used up." in note, note
    # This run's tasks and retry only: a deployment started just before an hour also runs the next hour's
    # occurrence (CI: 04:58 and 05:00). The last attempt was stopped (the scheduler checks once a loop), not
    # let run to its end: its last task never succeeded. (With two tasks a retry reran only b, 5 s, and a slow
    # loop could see it succeed first.)
    tasks = dict(
        stack.query(
            "SELECT task_id, state FROM task_instance WHERE dag_id = 'fid_timeout' AND run_id = ?", run["run_id"]
        )
    )
    assert tasks["c"] != "success", tasks
    retry = stack.query(
        "SELECT dttm FROM log WHERE dag_id = 'fid_timeout' AND event = 'tessera.schedule.retry' AND run_id = ?",
        run["run_id"],
    )
    assert len(retry) == 1
    assert run["start"] >= _utc(retry[0][0]) + 2 * SECOND, "RETRY_DELAY 2 s before the second attempt"
    assert run["run_after"] < _utc(retry[0][0]), "the attempt's run_after is its occurrence's again"


# -- refresh: a dry run is not a refresh -------------------------------------------------------------------


def test_a_refresh_right_after_a_dags_test_dry_run_starts_a_run(stack: AirflowHome) -> None:
    home = stack
    home.wait_for("fid_refresh parsed", lambda: home.is_parsed("fid_refresh"), timeout=WAIT)
    # Paused while `dags test` runs its task in its own process: the running scheduler also schedules the
    # task instances of an active DAG's running runs, and in CI it ran this one first (the test's own
    # attempt was then refused, "TI was not in a state where it could be marked as running", and the run failed).
    _set_paused(home, "fid_refresh", True)
    tested = home.cli("dags", "test", "fid_refresh", "-c", '{"dry_run": true}', timeout=300)
    assert tested.returncode == 0, tested.stderr[-3000:]
    _set_paused(home, "fid_refresh", False)
    answer = admin_api(home, "POST", "/tessera/api/v1/dags/fid_refresh/refresh", {})
    assert answer["outcome"] == "started", answer
    assert answer["run"]["triggered_by"] != "test"


# -- MAX_CONCURRENT: a fire that finds the slot taken is queued, never silently dropped -----------------


def test_a_fire_that_finds_max_concurrent_reached_is_queued_and_runs_when_the_slot_frees(stack: AirflowHome) -> None:
    runs = _finished_runs(stack, "fid_buffer", 3)
    first, second = runs[0], runs[1]
    # The first run holds the slot for 45 s and more: the fires 20 s and 40 s later find it taken.
    assert second["occurrence"] == first["occurrence"] + 20 * SECOND, "the first fire that found the slot taken"
    assert second["created"] >= first["end"], "queued until the slot freed"
    assert second["created"] - first["end"] < 15 * SECOND, "and created as soon as it freed"
    assert second["note"] and "Queued: this fire came due at" in second["note"], second["note"]
    assert "while MAX_CONCURRENT 1 run(s) of fid_buffer were in flight (overlap buffer_one)" in second["note"]
    # Every fire from the first run to the newest started one is either a run or recorded as dropped, never
    # lost. A run records the fires before it as it starts, and Airflow commits a new run (queued) before it
    # starts it: the newest run read may not have recorded its fires yet, and the skips are read after the runs.
    ran = {run["occurrence"] for run in runs}
    skips = _skips(stack, "fid_buffer")
    full = _dropped(skips, "BufferFull")
    # A scheduler that created the queued run over a minute after the slot freed (CI's SQLite stalls) ran the
    # newest fire instead, as after downtime, and recorded the others so.
    dropped = full | _dropped(skips, "MissedDeadline")
    newest = max(run["occurrence"] for run in runs if run["start"] is not None)
    every = {first["occurrence"] + n * 20 * SECOND for n in range(int((newest - first["occurrence"]) / (20 * SECOND)))}
    assert every <= ran | dropped, sorted(every - ran - dropped)
    assert not ran & dropped
    assert first["occurrence"] + 40 * SECOND in full, "the fire that came while one was already queued"
    for before, after in zip(runs, runs[1:], strict=False):  # one at a time
        if before["end"] is not None and after["start"] is not None:
            assert after["start"] >= before["end"]


def test_overlap_skip_runs_no_fire_that_came_while_a_run_was_in_flight(stack: AirflowHome) -> None:
    runs = _finished_runs(stack, "fid_skip", 2)
    for before, after in zip(runs, runs[1:], strict=False):
        if before["end"] is not None:
            assert after["run_after"] >= before["end"], "a fire due during the previous run never runs"
    dropped = _dropped(_skips(stack, "fid_skip"), "ConcurrencyForbidden")
    assert {runs[0]["occurrence"] + 20 * SECOND, runs[0]["occurrence"] + 40 * SECOND} <= dropped
