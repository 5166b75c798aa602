"""Run notes on PostgreSQL: the longest notes tessera writes fit the column, and the scheduler's session lives on.

On PostgreSQL ``dag_run_note.content`` is ``varchar(1000)``: a longer note fails the flush
(``StringDataRightTruncation``), and a failed flush leaves the session it was made in unusable
until rolled back. In the scheduler that session is the scheduler's own, which the tessera
listener writes through. So, against a real PostgreSQL metadata DB, in the deployment's own
environment (the plugin's listener registered by its entry point, as in the scheduler):

* a declared schedule with ``RETRIES 100`` (its documented maximum) and ``PAUSE_AFTER_FAILURES 1``
  (the pause's line grows only by its count's digits, so 1 makes it fire at the last attempt)
  fails 101 times in a row, each state change made on the run as the scheduler makes it (its
  start notified, its task failed, ``DagRun.update_state``) in one session under
  ``prohibit_commit``, committed through the guard after each, as the scheduler's loop does;
  the note stays within the column, says how many lines it dropped, and ends with the retry
  policy's and the pause's last words;
* a ``cancel_other`` DAG's new run replaces the most runs one start replaces (``MAX_REPLACED``),
  each with the longest run id Airflow stores: the new run's one line naming them all is cut
  to the column, and each replaced run says why;
* the writer at the column's edge: a note of exactly the limit is stored, one more character
  drops the oldest line;
* a step that bypasses the writer (a note one character too long, written directly) fails its
  own savepoint only: it is logged and undone, the other steps' writes are stored, and the
  session goes on creating runs and committing. The same write without the savepoint is shown to
  leave the session dead (``PendingRollbackError``), which is what the savepoint prevents.

No scheduler process: the hooks run in-process on real run state changes (a real scheduler would
need 101 task attempts on a worker). The PostgreSQL server is the tier's (``postgres_server``),
with a database of its own; the tests run in the tier's xdist group, on its worker.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tessera.operators.run_notes import NOTE_LIMIT, dropped_line

from .conftest import PostgresServer, keep_artifacts_if_failed
from .harness import AirflowHome

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e-postgres")]

DAG_ID = "notes_retried_pipeline"
RETRIES = 100
"""The documented maximum of a declared schedule's RETRIES (``operators/schedules/checks.py``)."""
REPLACING_ID = "notes_replacing"
RUN_ID_LENGTH = 250
"""The longest run id Airflow stores (``dag_run.run_id``)."""

DAG_FILE = f'''
"""A declared schedule that retries a failed run {RETRIES} times, then pauses its DAG."""
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.timetables import Every

SCHEDULES = ScheduleSet(
    [Schedule("notes_retries", cron="0 6 * * *", retries={RETRIES}, retry_delay=0, pause_after_failures=1)]
)
with DAG(dag_id={DAG_ID!r}, start_date=None, **SCHEDULES.dag_kwargs("notes_retries", tags=["tessera"])) as dag:
    EmptyOperator(task_id="work")
SCHEDULES.apply(dag)

with DAG(dag_id={REPLACING_ID!r}, schedule=Every("1m", overlap="cancel_other"), start_date=None):
    EmptyOperator(task_id="work")
'''

DRIVER = textwrap.dedent(
    f"""
    import sys

    # Airflow logs to stdout, where the reader answers: its logs go to the reader's log (stderr) instead,
    # the answers alone to stdout (see read).
    ANSWERS, sys.stdout = sys.stdout, sys.stderr

    import datetime, logging
    from airflow.listeners.listener import get_listener_manager
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session
    from airflow.utils.sqlalchemy import prohibit_commit
    from airflow.utils.state import DagRunState, TaskInstanceState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType
    from sqlalchemy import func, select
    from tessera.operators.run_notes import append
    from tessera.plugin import listener

    DAG_ID = {DAG_ID!r}
    get_listener_manager().add_listener(listener)  # a no-op when the plugin's entry point registered it
    failures = []
    logging.getLogger(listener.__name__).addHandler(
        type("Kept", (logging.Handler,), {{"emit": lambda self, record: failures.append(record)}})()
    )
    created = iter(range(1, 10_000))

    def new_run(session, dag):
        n = next(created)
        return dag.create_dagrun(
            run_id=f"manual__notes_{{n}}",
            logical_date=None,
            run_after=datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(minutes=n),
            run_type=DagRunType.MANUAL,
            triggered_by=DagRunTriggeredByType.REST_API,
            state=DagRunState.QUEUED,
            session=session,
        )

    def start(run, dag):
        # What the scheduler does to a queued run it starts (_start_queued_dagruns).
        run.dag = dag
        run.state = DagRunState.RUNNING
        run.notify_dagrun_state_changed(msg="started")

    def fail(run, dag, session):
        # A task failed: the scheduler's update_state fails the run and tells the listeners (task_failure).
        for ti in run.get_task_instances(session=session):
            ti.state = TaskInstanceState.FAILED
        session.flush()
        run.dag = dag
        run.update_state(session=session)

    def audited(session, dag_id, event):
        return session.scalar(select(func.count()).select_from(Log).where(Log.dag_id == dag_id, Log.event == event))

    def summary(session, run):
        stored = session.scalar(select(DagRun).where(DagRun.id == run.id))
        return {{"note": stored.note, "state": str(stored.state), "clear_number": stored.clear_number}}

    def retries():
        lengths = []
        with create_session() as session, prohibit_commit(session) as guard:
            dag = SerializedDagModel.get_dag(DAG_ID, session=session)
            run = new_run(session, dag)
            guard.commit()
            for _ in range({RETRIES} + 1):
                start(run, dag)
                guard.commit()
                fail(run, dag, session)
                guard.commit()
                lengths.append(len(run.note or ""))
            retried = audited(session, DAG_ID, "tessera.schedule.retry")
            paused = session.scalar(select(DagModel.is_paused).where(DagModel.dag_id == DAG_ID))
            after = new_run(session, dag)  # scheduling goes on in the same session
            guard.commit()
            return {{
                **summary(session, run), "lengths": lengths, "retried": retried, "paused": paused,
                "created_after": after.run_id, "failures": [r.getMessage() for r in failures],
            }}

    def edges(limit):
        with create_session() as session, prohibit_commit(session) as guard:
            dag = SerializedDagModel.get_dag(DAG_ID, session=session)
            run = new_run(session, dag)
            append(run, "a" * (limit - 2), "b", session=session)  # limit - 2 + newline + 1 = exactly the limit
            guard.commit()
            exact = summary(session, run)["note"]
            append(run, "c", session=session)  # one character (and a newline) over
            guard.commit()
            return {{"exact": exact, "over": summary(session, run)["note"]}}

    def bypass(limit):
        import tessera.operators.fan_in.release as release
        import tessera.operators.schedules.waves as waves

        def noting(dag_run, session):
            append(dag_run, "written before the bypass", session=session)

        def too_long(dag_run, session):
            dag_run.note = "x" * (limit + 1)  # what a writer that bypasses run_notes.append could do

        kept = release.run_started, waves.wave_started
        release.run_started, waves.wave_started = noting, too_long
        try:
            with create_session() as session, prohibit_commit(session) as guard:
                dag = SerializedDagModel.get_dag(DAG_ID, session=session)
                run = new_run(session, dag)
                guard.commit()
                start(run, dag)
                guard.commit()
                after = new_run(session, dag)
                guard.commit()
                stored = summary(session, run)
        finally:
            release.run_started, waves.wave_started = kept
        causes = [type(getattr(r.exc_info[1], "orig", r.exc_info[1])).__name__ for r in failures if r.exc_info]
        failed = [r.getMessage() for r in failures]
        return {{**stored, "created_after": after.run_id, "failures": failed, "causes": causes}}

    def unguarded(limit):
        # The hole the savepoints close: the same flush, with no savepoint, leaves the session dead.
        with create_session() as session:
            dag = SerializedDagModel.get_dag(DAG_ID, session=session)
            run = new_run(session, dag)
            session.commit()
            run.note = "x" * (limit + 1)
            try:
                session.flush()
            except Exception as error:
                flushed = type(error.orig).__name__
            try:
                session.commit()
                after = "committed"
            except Exception as error:
                after = type(error).__name__
            session.rollback()
            return {{"flush": flushed, "commit": after}}

    def replaced(length):
        from tessera.operators.replaced_runs import MAX_REPLACED

        base = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
        with create_session() as session, prohibit_commit(session) as guard:
            dag = SerializedDagModel.get_dag({REPLACING_ID!r}, session=session)

            def scheduled(n, state):
                start = base + datetime.timedelta(minutes=n)
                return dag.create_dagrun(
                    run_id=f"scheduled__{{n:03d}}_".ljust(length, "r"),
                    logical_date=start,
                    data_interval=(start, start + datetime.timedelta(minutes=1)),
                    run_after=start + datetime.timedelta(minutes=1),
                    run_type=DagRunType.SCHEDULED,
                    triggered_by=DagRunTriggeredByType.TIMETABLE,
                    state=state,
                    session=session,
                )

            # More runs in flight than one start replaces (MAX_REPLACED), each with the longest run id.
            older = [scheduled(n, DagRunState.RUNNING) for n in range(MAX_REPLACED + 1)]
            new = scheduled(MAX_REPLACED + 1, DagRunState.QUEUED)
            guard.commit()
            start(new, dag)
            guard.commit()
            replaced = audited(session, {REPLACING_ID!r}, "tessera.schedule.replaced")
            notes = [summary(session, run)["note"] for run in older]
            return {{
                "replaced": replaced, "new": summary(session, new)["note"], "older": notes,
                "failures": [r.getMessage() for r in failures],
            }}

    def read(action, *args):
        del failures[:]  # each action reports the listener failures it caused
        sys.stdout = sys.stderr
        try:
            return globals()[action](*args)
        finally:
            sys.stdout = ANSWERS
    """
)


@pytest.fixture(scope="module")
def notes_db(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[AirflowHome]:
    """A migrated PostgreSQL metadata DB of its own, the retried DAG stored by Airflow's own parse."""
    dags = tmp_path_factory.mktemp("notes-dags")
    (dags / "notes_retried.py").write_text(DAG_FILE)
    home = AirflowHome(
        tmp_path_factory.mktemp("airflow-postgres-notes"),
        database_url=postgres_server.create_database("tessera_notes"),
        dags_source=Path(dags),
    )
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate", timeout=600)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        stored = home.cli("dags", "reserialize", timeout=300)
        assert stored.returncode == 0, stored.stderr[-3000:]
        assert home.is_parsed(DAG_ID), stored.stderr[-3000:]
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


def test_a_hundred_retries_keep_the_note_within_the_column_and_the_session_commits(notes_db: AirflowHome):
    found = notes_db.reader(DRIVER)("retries", timeout=600)
    assert found["failures"] == [], "a listener step failed"
    assert found["retried"] == RETRIES
    assert found["state"] == "failed" and found["clear_number"] == RETRIES
    assert max(found["lengths"]) <= NOTE_LIMIT
    lines = found["note"].split("\n")
    written = RETRIES + 2  # a Retry line per retry, the Failed line, the Paused line
    assert lines[0] == dropped_line(written - (len(lines) - 1))
    assert (
        lines[-2]
        == f"Failed: attempt {RETRIES + 1} of {RETRIES + 1} failed (a task failed); RETRIES {RETRIES} used up."
    )
    assert lines[-1] == "Paused: the DAG is paused after 1 failed runs in a row (pause_after_failures 1)."
    assert lines[-3].startswith(f"Retry: attempt {RETRIES} of {RETRIES + 1} failed (a task failed); attempt")
    assert found["paused"] is True
    assert found["created_after"]


def test_a_note_of_exactly_the_limit_is_stored_and_one_more_line_drops_the_oldest(notes_db: AirflowHome):
    found = notes_db.reader(DRIVER)("edges", NOTE_LIMIT)
    assert found["exact"] == "a" * (NOTE_LIMIT - 2) + "\nb"
    assert len(found["exact"]) == NOTE_LIMIT
    assert found["over"] == f"{dropped_line(1)}\nb\nc"


def test_a_note_too_long_for_the_column_fails_its_step_alone(notes_db: AirflowHome):
    reader = notes_db.reader(DRIVER)
    assert reader("unguarded", NOTE_LIMIT) == {"flush": "StringDataRightTruncation", "commit": "PendingRollbackError"}
    found = reader("bypass", NOTE_LIMIT)
    (failure,) = found["failures"]
    assert "step too_long failed" in failure and "undone" in failure
    assert found["causes"] == ["StringDataRightTruncation"]
    assert found["note"] == "written before the bypass"
    assert found["state"] == "running"
    assert found["created_after"]


def test_the_longest_replacement_note_is_cut_to_the_column_and_every_replaced_run_says_why(notes_db: AirflowHome):
    from tessera.operators.replaced_runs import MAX_REPLACED

    found = notes_db.reader(DRIVER)("replaced", RUN_ID_LENGTH)
    assert found["failures"] == []
    assert found["replaced"] == MAX_REPLACED
    new = found["new"]
    assert len(new) == NOTE_LIMIT and new.startswith("Replaced run(s) scheduled__000_rrr") and new.endswith("…")
    said = [note for note in found["older"] if note]
    assert len(said) == MAX_REPLACED and all(note.startswith("Replaced: failed when run scheduled__") for note in said)
    assert all(len(note) <= NOTE_LIMIT for note in said)
