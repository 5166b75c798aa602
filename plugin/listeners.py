"""Tessera's Airflow listeners: declared-schedule fires, fan-in release notes and wave gates.

Dag-run hooks run in the scheduler (and in the API server when a user sets a
run's state). Every hook writes through the dag run's own session: its rows
commit with the state change that caused them, and SQLite sees no second writer.
No savepoint: the scheduler's commit guard refuses the release of one, so each
step reads and decides before it writes, and a failure (which Airflow logs)
leaves nothing half-written in the scheduler's transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from airflow.listeners import hookimpl

if TYPE_CHECKING:
    from airflow.models.dagrun import DagRun
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)


@contextmanager
def _session_of(dag_run: DagRun) -> Iterator[Session]:
    from sqlalchemy.orm import object_session

    session = object_session(dag_run)
    if session is not None:
        yield session
        return
    from airflow.utils.session import create_session

    with create_session() as own:
        yield own


def _run(step: Callable[[DagRun, Session], Any], dag_run: DagRun) -> None:
    try:
        with _session_of(dag_run) as session:
            step(dag_run, session)
    except Exception:
        log.exception("tessera listener %s failed for %s", step.__name__, dag_run)


@hookimpl
def on_dag_run_running(dag_run: DagRun, msg: str) -> None:
    from tessera.operators.fan_in.release import run_started
    from tessera.operators.schedules.waves import wave_started

    _run(run_started, dag_run)
    _run(wave_started, dag_run)


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
    _finished(dag_run)
