"""One listener module registers every dag-run hook; its steps run in order, and one failing step stops none.

The hooks are called through Airflow's own listener manager (the plugin's entry point
registers the module, as in every Airflow process), on a real ``DagRun`` held by a real
session of the metadata DB. The feature steps are replaced by recorders: what is under
test is the order, the session each step gets and the isolation, not the features.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from tessera.plugin import listener
from tessera.plugin.airflow_plugin import TesseraPlugin

RUNNING = [
    ("tessera.operators.functions.admission", "admit"),
    ("tessera.operators.fan_in.release", "run_started"),
    ("tessera.operators.schedules.waves", "wave_started"),
]
FINISHED = [
    ("tessera.operators.fan_in.release", "run_finished"),
    ("tessera.operators.schedules.waves", "wave_finished"),
]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Every feature step replaced by a recorder of (step, session it was given)."""
    import importlib

    made: list[tuple[str, Any]] = []
    for module, name in RUNNING + FINISHED:

        def record(dag_run: Any, session: Any, *, name: str = name) -> None:
            made.append((name, session))

        monkeypatch.setattr(importlib.import_module(module), name, record)
    return made


@pytest.fixture
def hooks() -> Any:
    from airflow.listeners.listener import get_listener_manager

    manager = get_listener_manager()
    manager.add_listener(listener)  # a no-op when the plugin's entry point already registered it
    return manager.hook


@pytest.fixture
def held_run(airflow_db: str) -> Iterator[tuple[Any, Any]]:
    """A dag run held by a session, as the scheduler holds the runs it changes; nothing is committed.

    A whole run: each step's savepoint flushes the session first, as the scheduler's does.
    """
    from airflow import settings
    from airflow.models.dagrun import DagRun
    from airflow.utils.types import DagRunType

    from tessera.plugin._airflow import utcnow

    session = settings.NonScopedSession()
    run = DagRun(dag_id="listener_probe", run_id="manual__probe", run_type=DagRunType.MANUAL, run_after=utcnow())
    session.add(run)
    yield run, session
    session.expunge_all()
    session.rollback()
    session.close()


def _fail(monkeypatch: pytest.MonkeyPatch, module: str, name: str, calls: list[tuple[str, Any]]) -> None:
    import importlib

    def broken(dag_run: Any, session: Any) -> None:
        calls.append((name, session))
        raise RuntimeError(f"{name} fell over")

    broken.__name__ = name
    monkeypatch.setattr(importlib.import_module(module), name, broken)


def test_the_plugin_registers_one_module_for_every_hook(hooks):
    from airflow.listeners.listener import get_listener_manager

    assert TesseraPlugin.listeners == [listener]
    tessera = [p for p in get_listener_manager().pm.get_plugins() if getattr(p, "__name__", "").startswith("tessera")]
    assert tessera == [listener]
    for hook in ("on_dag_run_running", "on_dag_run_success", "on_dag_run_failed"):
        implementations = getattr(hooks, hook).get_hookimpls()
        assert [impl.plugin for impl in implementations if impl.plugin is listener] == [listener]


def test_a_started_run_is_admitted_then_released_then_gated_in_its_own_session(hooks, calls, held_run):
    run, session = held_run
    hooks.on_dag_run_running(dag_run=run, msg="")
    assert calls == [("admit", session), ("run_started", session), ("wave_started", session)]


@pytest.mark.parametrize("hook", ["on_dag_run_success", "on_dag_run_failed"])
def test_a_finished_run_records_its_fire_then_opens_the_next_wave(hooks, calls, held_run, hook):
    run, session = held_run
    getattr(hooks, hook)(dag_run=run, msg="")
    assert calls == [("run_finished", session), ("wave_finished", session)]


@pytest.mark.parametrize(("module", "name"), RUNNING, ids=[name for _, name in RUNNING])
def test_a_failing_step_on_start_is_logged_and_the_others_still_run(
    hooks, calls, held_run, monkeypatch, caplog, module, name
):
    run, _ = held_run
    _fail(monkeypatch, module, name, calls)
    with caplog.at_level(logging.ERROR, logger=listener.__name__):
        hooks.on_dag_run_running(dag_run=run, msg="")
    assert [step for step, _ in calls] == ["admit", "run_started", "wave_started"]
    (logged,) = caplog.records
    assert f"step {name} failed" in logged.getMessage() and logged.exc_info is not None


@pytest.mark.parametrize(("module", "name"), FINISHED, ids=[name for _, name in FINISHED])
def test_a_failing_step_on_finish_is_logged_and_the_others_still_run(
    hooks, calls, held_run, monkeypatch, caplog, module, name
):
    run, _ = held_run
    _fail(monkeypatch, module, name, calls)
    with caplog.at_level(logging.ERROR, logger=listener.__name__):
        hooks.on_dag_run_failed(dag_run=run, msg="")
    assert [step for step, _ in calls] == ["run_finished", "wave_finished"]
    assert len(caplog.records) == 1


def test_a_run_outside_any_session_is_not_admitted_but_released_and_gated_in_a_new_one(hooks, calls, airflow_db):
    from airflow.models.dagrun import DagRun

    hooks.on_dag_run_running(dag_run=DagRun(dag_id="listener_probe", run_id="manual__loose"), msg="")
    assert [step for step, _ in calls] == ["run_started", "wave_started"]
    assert all(session is not None for _, session in calls)


# -- each step in a savepoint, under the scheduler's commit guard ---------------------------------

PROBE_DAG = "listener_savepoint_probe"


@pytest.fixture
def guarded_run(airflow_db: str) -> Iterator[tuple[Any, Any, Any]]:
    """A stored run, held by a session under ``prohibit_commit`` as in the scheduler's loop: (run, session, guard).

    Everything the test commits is deleted afterwards.
    """
    from airflow import settings
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from airflow.utils.sqlalchemy import prohibit_commit
    from airflow.utils.types import DagRunType
    from sqlalchemy import delete, select

    from tessera.plugin._airflow import utcnow

    with create_session() as setup:
        setup.add(DagRun(dag_id=PROBE_DAG, run_id="manual__guarded", run_type=DagRunType.MANUAL, run_after=utcnow()))
    session = settings.NonScopedSession()
    try:
        with prohibit_commit(session) as guard:
            run = session.scalar(select(DagRun).where(DagRun.dag_id == PROBE_DAG))
            run.state = "running"  # the scheduler's own change, pending when the hook is called
            yield run, session, guard
    finally:
        session.rollback()
        session.close()
        with create_session() as cleanup:
            for model in (Log, DagRun):
                cleanup.execute(delete(model).where(model.dag_id == PROBE_DAG))


def _writing_step(monkeypatch: pytest.MonkeyPatch, module: str, name: str, then: Any = None) -> None:
    """Replace a step by one that notes ``name`` on the run and adds an audit entry, then calls ``then``."""
    import importlib

    from tessera.operators.run_notes import Audit, append

    def step(dag_run: Any, session: Any) -> None:
        append(dag_run, name, session=session, audit=[Audit(f"tessera.probe.{name}", {})])
        if then is not None:
            then(dag_run, session)

    step.__name__ = name
    monkeypatch.setattr(importlib.import_module(module), name, step)


def _stored(dag_id: str) -> tuple[list[str], str | None, str | None]:
    """What another session sees committed: the audit events, the run's note and state."""
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as reader:
        events = reader.scalars(select(Log.event).where(Log.dag_id == dag_id).order_by(Log.id)).all()
        run = reader.scalar(select(DagRun).where(DagRun.dag_id == dag_id))
        return list(events), run.note, str(run.state)


def _raise(dag_run: Any, session: Any) -> None:
    raise RuntimeError("the step fell over after writing")


def _refused(dag_run: Any, session: Any) -> None:
    from airflow.models.dagrun import DagRun
    from airflow.utils.types import DagRunType

    # A row the database refuses when the savepoint is released (the run's id again: a unique key).
    session.add(
        DagRun(dag_id=dag_run.dag_id, run_id=dag_run.run_id, run_type=DagRunType.MANUAL, run_after=dag_run.run_after)
    )


@pytest.mark.parametrize("failure", [_raise, _refused], ids=["raises-after-writing", "write-refused-by-the-db"])
def test_a_failing_step_is_undone_alone_and_the_schedulers_session_still_commits(
    hooks, guarded_run, monkeypatch, caplog, failure
):
    run, session, guard = guarded_run
    _writing_step(monkeypatch, "tessera.operators.fan_in.release", "run_started")
    _writing_step(monkeypatch, "tessera.operators.schedules.waves", "wave_started", then=failure)
    _writing_step(monkeypatch, "tessera.operators.schedules.held_fires", "fires_before")
    with caplog.at_level(logging.ERROR, logger=listener.__name__):
        hooks.on_dag_run_running(dag_run=run, msg="started")
    (logged,) = caplog.records
    assert "step wave_started failed" in logged.getMessage() and "undone" in logged.getMessage()
    assert run.note == "run_started\nfires_before"
    assert guard.expected_commit is False, "no commit is let through the guard beyond the savepoints' releases"
    guard.commit()
    events, note, state = _stored(PROBE_DAG)
    assert events == ["tessera.probe.run_started", "tessera.probe.fires_before"]
    assert note == "run_started\nfires_before"
    assert state == "running"


@pytest.mark.parametrize("pending", [True, False], ids=["state-change-pending", "nothing-written-yet"])
def test_on_sqlite_a_steps_writes_commit_only_with_the_schedulers_commit(hooks, airflow_db, monkeypatch, pending):
    """With tessera's SQLite settings a savepoint opened before anything was written (SQLite then has no
    transaction) is preceded by BEGIN IMMEDIATE, so its release commits nothing: the steps' writes are
    seen by another connection only once the guard commits, as without savepoints."""
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.settings import create_metadata_engine
    from airflow.utils.session import create_session
    from airflow.utils.sqlalchemy import prohibit_commit
    from airflow.utils.types import DagRunType
    from sqlalchemy import delete, select
    from sqlalchemy.orm import Session

    from tessera.plugin._airflow import utcnow
    from tessera.plugin.sqlite_settings import CONNECT_ARGS

    _writing_step(monkeypatch, "tessera.operators.fan_in.release", "run_started")
    with create_session() as setup:
        setup.add(DagRun(dag_id=PROBE_DAG, run_id="manual__sqlite", run_type=DagRunType.MANUAL, run_after=utcnow()))
    engine = create_metadata_engine(
        airflow_db, engine_args={}, connect_args={**CONNECT_ARGS, "check_same_thread": False}
    )
    session = Session(bind=engine, autoflush=False, expire_on_commit=False)
    try:
        with prohibit_commit(session) as guard:
            run = session.scalar(select(DagRun).where(DagRun.dag_id == PROBE_DAG))
            if pending:
                run.state = "running"
            hooks.on_dag_run_running(dag_run=run, msg="started")
            assert _stored(PROBE_DAG)[:2] == ([], None), "a savepoint's release committed the step's writes early"
            guard.commit()
        assert _stored(PROBE_DAG)[:2] == (["tessera.probe.run_started"], "run_started")
    finally:
        session.close()
        engine.dispose()
        with create_session() as cleanup:
            for model in (Log, DagRun):
                cleanup.execute(delete(model).where(model.dag_id == PROBE_DAG))
