"""The in-run AFTER sensor and the wave gate, run for real: ``dag.test()`` executes the tasks through the
Task SDK against an in-process Execution API and runs their triggers inline, while parent fires
complete in another thread through the scheduler's code path (``DagRun.update_state`` + listener)."""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Iterator

import pendulum
import pytest

from tessera.operators.fan_in import trigger
from tessera.operators.schedules import wave_gate
from tessera.operators.schedules.state import write_state
from tessera.operators.schedules.waves import WAVES_KEY

from ..conftest import BUNDLE_CONFIG, dags_folder_bundle
from .test_fan_in_db import Deployment

UTC = datetime.timezone.utc
HOUR = datetime.timedelta(hours=1)
T0 = datetime.datetime(2026, 4, 1, tzinfo=UTC)

DAGS = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.fan_in.sensor import AfterSensor
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.operators.schedules.wave_gate import WaveGate

S = ScheduleSet([Schedule("t5_p", interval_seconds=3600), Schedule("t5_q", interval_seconds=3600)])
for name in ("t5_p", "t5_q"):
    with DAG(f"{name}_load", start_date=None, **S.dag_kwargs(name)):
        EmptyOperator(task_id="work")

with DAG("t5_report", schedule=None, start_date=None):
    AfterSensor(task_id="wait", parents=["t5_p", "t5_q"], poll_interval=1) >> EmptyOperator(task_id="report")

with DAG("t5_gated", schedule=None, start_date=None):
    WaveGate(schedule="t5_p", poll_interval=0.3) >> EmptyOperator(task_id="work")
"""


@pytest.fixture(scope="module")
def deployment(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("sensor-dags")
    # dag.test() parses and stores every DAG of the bundle holding the DAG it runs, on every call: here the
    # bundle is this module's own folder, not dags_examples/ (see dags_folder_bundle).
    with pytest.MonkeyPatch.context() as env:
        env.setenv(BUNDLE_CONFIG, dags_folder_bundle(folder))
        yield Deployment(folder, DAGS, prefix="t5_")


class TriggerReads:
    """Counts the state reads of the triggers ``dag.test()`` runs inline, so a step can wait for the next one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._changed = threading.Condition()
        self._step = 0  # how many steps have changed the state so far
        self._read = -1  # the highest step count a finished read started at
        for module in (trigger, wave_gate):
            monkeypatch.setattr(module, "schedule_state", self._counted(module.schedule_state))

    def _counted(self, read: Callable) -> Callable:
        async def schedule_state(name: str, key: str) -> object:
            step = self._step
            value = await read(name, key)
            with self._changed:
                self._read = max(self._read, step)
                self._changed.notify_all()
            return value

        return schedule_state

    def wait(self, timeout: float) -> bool:
        """Wait until the trigger has read the state as the last step left it (it saw that and kept waiting)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._read >= self._step, timeout)

    def stepped(self) -> None:
        with self._changed:
            self._step += 1


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> TriggerReads:
    return TriggerReads(monkeypatch)


def _once_deferred(
    reads: TriggerReads, dag_id: str, task_id: str, *steps: Callable[[], None]
) -> tuple[threading.Thread, list[object]]:
    """In another thread: wait until the task has deferred (its trigger runs, no worker slot held),
    then run ``steps``, each once the trigger has polled the state the one before left. The returned
    list says whether the deferral was seen (and names a poll that never came)."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import select

    seen: list[bool] = []

    def run() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not seen:
            with create_session() as session:
                # dag.test() puts a deferred task back to QUEUED while it runs the trigger inline;
                # what stays is the method the trigger's event resumes.
                resumes = session.scalars(
                    select(TaskInstance.next_method).where(
                        TaskInstance.dag_id == dag_id, TaskInstance.task_id == task_id, TaskInstance.state == "queued"
                    )
                ).all()
            if "execute_complete" in resumes:
                seen.append(True)
            else:
                time.sleep(0.2)  # the poll's interval: the deferral shows only in the DB
        for number, step in enumerate(steps):
            # Run every step even then: dag.test() returns only once the last one released the trigger.
            if seen and not reads.wait(timeout=120):
                seen.append(f"no trigger poll within 120 s before step {number}")
            step()
            reads.stepped()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, seen


def _test_run(deployment: Deployment, dag_id: str, logical_date: datetime.datetime) -> dict[str, object]:
    """Run the DAG with ``dag.test()``; return each task's state and XCom."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    run = deployment.dags[dag_id].test(logical_date=logical_date, run_after=logical_date)
    with create_session() as session:
        tis = session.scalars(
            select(TaskInstance).where(TaskInstance.run_id == run.run_id, TaskInstance.dag_id == dag_id)
        )
        found = {}
        for ti in tis:
            xcom = session.scalar(
                select(XComModel).where(
                    XComModel.dag_id == dag_id, XComModel.run_id == run.run_id, XComModel.task_id == ti.task_id
                )
            )
            found[ti.task_id] = {
                "state": str(ti.state),
                "xcom": None if xcom is None else XComModel.deserialize_value(xcom),
            }
        return found


def test_the_sensor_waits_deferred_for_the_next_fire_of_every_parent(
    deployment: Deployment, reads: TriggerReads
) -> None:
    deployment.run("t5_p_load", T0 + HOUR, state="success")
    deployment.run("t5_q_load", T0 + HOUR, state="success")
    # First run of the sensor: fires already completed are history; it waits for the next ones.
    worker, deferred = _once_deferred(
        reads,
        "t5_report",
        "wait",
        lambda: deployment.run("t5_p_load", T0 + 2 * HOUR, state="failed"),
        lambda: deployment.run("t5_q_load", T0 + 2 * HOUR, state="success"),
    )
    tasks = _test_run(deployment, "t5_report", T0)
    worker.join()
    assert deferred == [True]
    assert tasks["wait"]["state"] == "success" and tasks["report"]["state"] == "success"
    released = tasks["wait"]["xcom"]
    assert {name: state["count"] for name, state in released.items()} == {"t5_p": 2, "t5_q": 2}
    assert released["t5_p"]["runs"][0].endswith("(failed)"), "a failed parent fire releases too"

    # Second run: one parent has a new fire, the other not yet; it waits for both.
    deployment.run("t5_p_load", T0 + 3 * HOUR, state="success")
    worker, deferred = _once_deferred(
        reads, "t5_report", "wait", lambda: deployment.run("t5_q_load", T0 + 3 * HOUR, state="success")
    )
    tasks = _test_run(deployment, "t5_report", T0 + HOUR)
    worker.join()
    assert deferred == [True]
    assert {name: state["count"] for name, state in tasks["wait"]["xcom"].items()} == {"t5_p": 3, "t5_q": 3}

    # Third run: fires it has not reacted to already exist, so it passes without deferring.
    deployment.run("t5_p_load", T0 + 4 * HOUR, state="success")
    deployment.run("t5_q_load", T0 + 4 * HOUR, state="success")
    tasks = _test_run(deployment, "t5_report", T0 + 2 * HOUR)  # would wait forever if it deferred
    assert {name: state["count"] for name, state in tasks["wait"]["xcom"].items()} == {"t5_p": 4, "t5_q": 4}


def test_the_wave_gate_holds_its_run_until_the_wave_opens(deployment: Deployment, reads: TriggerReads) -> None:
    from airflow.models.asset import AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tessera.operators.schedules.identity import asset_uri

    logical_date = T0 + 10 * HOUR
    member = f"t5_gated/manual__{logical_date.isoformat()}"
    plan = {"fire": "t:9", "waves": [["t5_other"], ["t5_gated"]], "open": 0, "members": {member: 1}}

    def write(value: dict) -> None:
        with create_session() as session:
            asset_id = session.scalar(select(AssetModel.id).where(AssetModel.uri == asset_uri("t5_p")))
            write_state(asset_id, WAVES_KEY, value, session)

    write(plan)
    worker, deferred = _once_deferred(reads, "t5_gated", "tessera_wave_gate", lambda: write({**plan, "open": 1}))
    tasks = _test_run(deployment, "t5_gated", logical_date)
    worker.join()
    assert deferred == [True], "the gate of wave 1 waited in the triggerer while wave 0 was open"
    assert tasks["tessera_wave_gate"]["state"] == "success" and tasks["work"]["state"] == "success"


def test_a_cancelled_wave_fails_its_gate_and_its_work_never_starts(deployment: Deployment, reads: TriggerReads) -> None:
    from airflow.models.asset import AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tessera.operators.schedules.identity import asset_uri

    logical_date = T0 + 11 * HOUR
    member = f"t5_gated/manual__{logical_date.isoformat()}"
    plan = {"fire": "t:9", "waves": [["t5_other"], ["t5_gated"]], "open": 0, "members": {member: 1}}

    def write(value: dict) -> None:
        with create_session() as session:
            asset_id = session.scalar(select(AssetModel.id).where(AssetModel.uri == asset_uri("t5_p")))
            write_state(asset_id, WAVES_KEY, value, session)

    write(plan)
    cancelled = {
        **plan,
        "members": {**plan["members"], "t5_other/r": 0},
        "cancelled": {"by": "t5_other/r", "waves": [1], "note": "Fail-fast: t5_other/r failed"},
    }
    worker, deferred = _once_deferred(reads, "t5_gated", "tessera_wave_gate", lambda: write(cancelled))
    tasks = _test_run(deployment, "t5_gated", logical_date)
    worker.join()
    assert deferred == [True]
    assert tasks["tessera_wave_gate"]["state"] == "failed", "a cancelled gate fails (no retry)"
    assert tasks["work"]["state"] == "upstream_failed", "the pipeline's own work never starts"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        pytest.param({"poll_interval": 0.3}, "poll_interval: 0.3; give a number of seconds from 1 to 3600", id="fast"),
        pytest.param({"poll_interval": 3601}, "poll_interval: 3601", id="slow"),
        pytest.param({"poll_interval": float("nan")}, "poll_interval: nan", id="nan"),
        pytest.param({"poll_interval": 10**5000}, "poll_interval: <integer of about 5000 digits>", id="huge"),
        pytest.param({"wait_timeout": datetime.timedelta(days=367)}, "wait_timeout: datetime.timedelta", id="long"),
        pytest.param({"wait_timeout": datetime.timedelta(0)}, "more than zero", id="zero-wait"),
        pytest.param({"wait_timeout": 60}, "wait_timeout: 60; give a duration of more than zero", id="seconds-number"),
        pytest.param({"wait_timeout": "367d"}, "wait_timeout: '367d' is longer than", id="text-too-long"),
        pytest.param({"poll_interval": "0.5s"}, "poll_interval: '0.5s'; give a number of seconds", id="text-fast"),
        pytest.param(
            {"wait_timeout": pendulum.duration(months=1)},
            "wait_timeout: Duration(months=1) counts months",
            id="pendulum-months",  # a month is no fixed length: refused as every other duration refuses it
        ),
        pytest.param({"poll_interval": pendulum.duration(years=1)}, "poll_interval: Duration(years=1)", id="years"),
    ],
)
def test_sensor_arguments_out_of_bounds_are_refused_naming_the_field(kwargs: dict, fragment: str) -> None:
    from tessera.operators.fan_in.sensor import AfterSensor

    with pytest.raises(ValueError) as caught:
        AfterSensor(task_id="wait", parents=["p"], **kwargs)
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("parents", "message"),
    [
        pytest.param(
            None, "parents: None; give the parent schedules' names as a list, e.g. parents=['apc_daily']", id="none"
        ),
        pytest.param(5, "parents: 5; give the parent schedules' names as a list, e.g. parents=['apc_daily']", id="int"),
        pytest.param({"p": 1}, "parents: {'p': 1}; give the parent schedules' names as a list", id="dict"),
        pytest.param([], "parents: []; name at least one parent schedule, e.g. parents=['apc_daily']", id="empty"),
    ],
)
def test_parents_that_are_not_a_list_of_names_are_refused_naming_the_field(parents: object, message: str) -> None:
    from tessera.operators.fan_in.sensor import AfterSensor

    with pytest.raises((TypeError, ValueError)) as caught:
        AfterSensor(task_id="wait", parents=parents)
    assert str(caught.value).startswith(message)


def test_sensor_arguments_at_their_bounds_are_accepted() -> None:
    from tessera.operators.fan_in.sensor import AfterSensor

    sensor = AfterSensor(task_id="wait", parents=["p"], poll_interval=3600, wait_timeout=datetime.timedelta(days=366))
    assert (sensor.poll_interval, sensor.wait_timeout) == (3600.0, datetime.timedelta(days=366))
    assert AfterSensor(task_id="w2", parents=["p"], poll_interval=1).poll_interval == 1.0
    durations = AfterSensor(task_id="w3", parents=["p"], poll_interval="30s", wait_timeout="6h")
    assert (durations.poll_interval, durations.wait_timeout) == (30.0, datetime.timedelta(hours=6))
    spelled = AfterSensor(task_id="w4", parents=["p"], poll_interval=datetime.timedelta(minutes=1))
    assert spelled.poll_interval == 60.0
    pendulums = AfterSensor(
        task_id="w5",
        parents=["p"],
        poll_interval=pendulum.duration(seconds=90),
        wait_timeout=pendulum.duration(days=30),
    )
    assert (pendulums.poll_interval, pendulums.wait_timeout) == (90.0, datetime.timedelta(days=30))
