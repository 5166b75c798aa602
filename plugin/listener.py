"""Tessera's Airflow listener: the one module that registers every dag-run hook tessera needs.

Each hook runs the feature steps that react to a dag run's state, in this order:

* ``on_dag_run_running``: a retried attempt's ``run_after`` put back
  (:mod:`tessera.operators.schedules.run_retries`), then the older runs a ``cancel_other`` DAG's
  new run replaces failed (:mod:`tessera.operators.replaced_runs`; before admission, so a cursor
  function's Forbid no longer sees them in flight), then cursor-function admission (may skip this tick's cursor tasks,
  :mod:`tessera.operators.functions.admission`), then AFTER fan-in's release note
  (:mod:`tessera.operators.fan_in.release`), then the wave gate
  (:mod:`tessera.operators.schedules.waves`), then the note on the fires a declared schedule
  queued, replayed or dropped before this run (:mod:`tessera.operators.schedules.held_fires`);
* ``on_dag_run_failed``: first a declared schedule's run retry
  (:mod:`tessera.operators.schedules.run_retries`): a run queued for its next attempt is not
  finished, so nothing else reacts to it; otherwise the pause after failed runs in a row
  (:mod:`tessera.operators.pauses.after_failures`; not for a run ``cancel_other`` replaced), then as
  ``on_dag_run_success``:
* ``on_dag_run_success``: the fan-in fire record, then the wave gate;
* ``on_starting`` / ``before_stopping`` (an Airflow job, e.g. the scheduler, starts or stops):
  the cursor functions' health gauges (:mod:`tessera.operators.functions.health`), which
  run only in a scheduler, and the parse-state record (:mod:`tessera.plugin.parse_watch`),
  which runs only in a dag-processor;
* ``on_task_instance_success`` (in the worker, once the task's success is stored): a clean
  cursor fire's health gauge point, 0.

Importing this module (Airflow does, when it loads the plugin's listeners in the scheduler) also
registers the reader of a declared schedule's run history that the timetables ask when the
scheduler creates a run (:mod:`tessera.operators.schedules.activity`).

The logic lives in each feature's module; this one only orders the steps and isolates
them: a step that raises is logged and the next one still runs, because one feature's bug
must not stop the others (nor the scheduler, which would otherwise log and drop the rest).

Dag-run hooks run in the scheduler (and in the API server when a user sets a run's state).
Every step writes through the dag run's own session: its rows commit with the state change
that caused them, and SQLite sees no second writer. Each step runs in a savepoint
(``session.begin_nested()``): a step that raises, or whose writes the database refuses (a
value too long for its column on PostgreSQL), is rolled back to it alone, and the session,
the scheduler's own, goes on to commit the rest. The scheduler's commit guard
(``prohibit_commit``) refuses any commit it was not told of, and SQLAlchemy reports a
savepoint's release to it as one, so the release is announced to the guard first
(:func:`_savepoint`). On SQLite a savepoint opened outside a transaction would commit on its
release; tessera's SQLite settings (:mod:`tessera.plugin.sqlite_settings`) begin one first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from airflow.listeners import hookimpl

from tessera.plugin._airflow import commit_guards

if TYPE_CHECKING:
    from airflow.models.dagrun import DagRun
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)


def _register_activity_reader() -> None:
    from tessera.operators.schedules.activity import activity_of
    from tessera.timetables.run_policy import register_activity_reader

    register_activity_reader(activity_of)


_register_activity_reader()

Step = Callable[["DagRun", "Session"], Any]


@contextmanager
def _session_of(dag_run: DagRun, *, open_one: bool) -> Iterator[Session | None]:
    from sqlalchemy.orm import object_session

    session = object_session(dag_run)
    if session is not None or not open_one:
        yield session
        return
    from airflow.utils.session import create_session

    with create_session() as own:
        yield own


@contextmanager
def _savepoint(session: Session) -> Iterator[None]:
    """A savepoint around a step: released if the step returns, rolled back to (and re-raised) if it raises.

    Its release flushes the step's writes, so a write the database refuses is rolled back too.
    Every commit guard on the session is told that the release is coming (a guard forgets it
    once it has let one commit pass) and is left as it was found, whatever happens.
    """
    guards = commit_guards(session)
    announced = [guard.expected_commit for guard in guards]
    try:
        with session.begin_nested():
            yield
            for guard in guards:
                guard.expected_commit = True  # the savepoint's release, next, is the commit it will see
    finally:
        for guard, was in zip(guards, announced):
            guard.expected_commit = was


def _run(step: Step, dag_run: DagRun, *, own_session: bool = True) -> None:
    """Run one feature's step in a savepoint; if it raises, undo it, log it and return so the next step still runs.

    ``own_session=False``: only inside the run's own transaction (admission must commit with
    the run's start); a run changed outside any session (rare) is then left alone.
    """
    try:
        with _session_of(dag_run, open_one=own_session) as session:
            if session is not None:
                with _savepoint(session):
                    step(dag_run, session)
    except Exception:
        log.exception(
            "tessera: listener step %s failed for %s; its writes were undone, the other steps still ran",
            step.__name__,
            dag_run,
        )


# The features are imported when a run changes state, not when every Airflow process loads the plugin.


@hookimpl
def on_dag_run_running(dag_run: DagRun, msg: str) -> None:
    from tessera.operators.fan_in.release import run_started
    from tessera.operators.functions.admission import admit
    from tessera.operators.replaced_runs import replace_older_runs
    from tessera.operators.schedules.held_fires import fires_before
    from tessera.operators.schedules.run_retries import attempt_started
    from tessera.operators.schedules.waves import wave_started

    _run(attempt_started, dag_run)
    _run(replace_older_runs, dag_run, own_session=False)
    _run(admit, dag_run, own_session=False)
    _run(run_started, dag_run)
    _run(wave_started, dag_run)
    _run(fires_before, dag_run)


def _finished(dag_run: DagRun) -> None:
    from tessera.operators.fan_in.release import run_finished
    from tessera.operators.schedules.waves import wave_finished

    _run(run_finished, dag_run)
    _run(wave_finished, dag_run)


@hookimpl
def on_dag_run_success(dag_run: DagRun, msg: str) -> None:
    _finished(dag_run)


@hookimpl
def on_dag_run_failed(dag_run: DagRun, msg: str) -> None:
    from tessera.operators.pauses.after_failures import pause_if_failing
    from tessera.operators.replaced_runs import REPLACED_MESSAGE
    from tessera.operators.schedules.run_retries import retry_failed_run

    retried: list[bool] = []

    def run_retry(run: DagRun, session: Session) -> None:
        retried.append(retry_failed_run(run, session, msg))

    _run(run_retry, dag_run)
    if not any(retried):
        if msg != REPLACED_MESSAGE:
            _run(pause_if_failing, dag_run)
        _finished(dag_run)


@hookimpl
def on_starting(component: Any) -> None:
    try:
        from tessera.operators.functions.health import job_starting

        job_starting(component)
    except Exception:
        log.exception("tessera: the health gauges did not start; the job runs without them")
    try:
        from tessera.plugin import parse_watch

        parse_watch.job_starting(component)
    except Exception:
        log.exception("tessera: the parse-state record did not start; the job runs without it")


@hookimpl
def before_stopping(component: Any) -> None:
    try:
        from tessera.operators.functions.health import job_stopping

        job_stopping(component)
    except Exception:
        log.exception("tessera: the health gauges did not stop cleanly")
    try:
        from tessera.plugin import parse_watch

        parse_watch.job_stopping(component)
    except Exception:
        log.exception("tessera: the parse-state record did not stop cleanly")


@hookimpl
def on_task_instance_success(previous_state: Any, task_instance: Any) -> None:
    try:
        from tessera.operators.functions.health import clean_fire_stored

        clean_fire_stored(task_instance)
    except Exception:
        log.exception("tessera: the health gauge of a clean fire was not sent")
