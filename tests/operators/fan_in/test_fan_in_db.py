"""AFTER fan-in on the real metadata DB, driven by Airflow's own code paths.

Parent runs finish through ``DagRun.update_state`` (which calls the tessera listener
registered by the plugin, in the run's session, under the scheduler's commit guard);
child runs are created and started by the scheduler's own
``_create_dag_runs_asset_triggered`` and ``_start_queued_dagruns``. Nothing of
Airflow is replaced.
"""

# ruff: noqa: E402 (the module is gated on the asset state store's release before it builds anything)
from __future__ import annotations

from tessera.timetables.support import SCHEDULE_STATE
from tests.compat import module_needs

module_needs(SCHEDULE_STATE)

import datetime
import json
import logging
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import time_machine
from airflow.utils.sqlalchemy import prohibit_commit

from tessera.operators.fan_in.release import FIRES_KEY
from tessera.operators.schedules.identity import asset_uri
from tessera.operators.schedules.waves import WAVES_KEY

# One story over one deployment: a schedule's fire is recorded only when newer than its last one, so each
# test's fires assume the earlier tests' (and some count the runs those left). Until each test makes its
# own, the tests run in the order written.
pytestmark = pytest.mark.in_order

UTC = datetime.timezone.utc
HOUR = datetime.timedelta(hours=1)
T0 = datetime.datetime(2026, 3, 1, tzinfo=UTC)
FRESHNESS_HOURS = 0.001
"""3.6 s: short enough for a test to let one parent go stale by waiting."""

DAGS = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

S = ScheduleSet([
    Schedule("t4_a", interval_seconds=3600),
    Schedule("t4_b", interval_seconds=3600),
    Schedule("t4_c", interval_seconds=3600),
    Schedule("t4_gold", after=["t4_a", "t4_b", "t4_c"], parent_freshness=1),
    Schedule("t4_chain", after=["t4_a"]),
    Schedule("t4_multi", interval_seconds=3600),
    Schedule("t4_after_multi", after=["t4_multi"]),
    Schedule("t4_wave", interval_seconds=3600, max_wave_concurrent=1),
    Schedule("t4_fa", interval_seconds=3600),
    Schedule("t4_fb", interval_seconds=3600),
    Schedule("t4_fresh", after=["t4_fa", "t4_fb"], parent_freshness=FRESHNESS_HOURS),
    Schedule("t4_wave_solo", interval_seconds=3600, max_wave_concurrent=1),
])
PIPELINES = {
    "t4_a": ["t4_load_a"], "t4_b": ["t4_load_b"], "t4_c": ["t4_load_c"],
    "t4_gold": ["t4_gold_fact"], "t4_chain": ["t4_chained"],
    "t4_multi": ["t4_multi_1", "t4_multi_2"], "t4_after_multi": ["t4_after_multi_step"],
    "t4_wave": ["t4_wave_1", "t4_wave_2", "t4_wave_3"],
    "t4_fa": ["t4_fresh_a"], "t4_fb": ["t4_fresh_b"], "t4_fresh": ["t4_fresh_step"],
}
for schedule, dag_ids in PIPELINES.items():
    for dag_id in dag_ids:
        with DAG(dag_id, start_date=None, **S.dag_kwargs(schedule)) as dag:
            EmptyOperator(task_id="work")
        S.apply(dag)
with DAG("t4_ungated", start_date=None, **S.dag_kwargs("t4_wave_solo")) as dag:
    EmptyOperator(task_id="work")  # S.apply(dag) forgotten
"""


class Deployment:
    """The test DAGs, stored in the metadata DB and unpaused, with helpers to finish runs and schedule."""

    def __init__(self, folder: Path, source: str = DAGS, prefix: str = "t4_") -> None:
        from airflow.dag_processing.bundles.manager import DagBundlesManager
        from airflow.models.dag import DagModel
        from airflow.utils.session import create_session
        from sqlalchemy import update

        from tests.compat.airflow_names import DagBag, sync_bag_to_db

        (folder / "dags.py").write_text(f"FRESHNESS_HOURS = {FRESHNESS_HOURS}\n" + textwrap.dedent(source))
        DagBundlesManager().sync_bundles_to_db()
        bag = DagBag(str(folder))
        assert bag.import_errors == {}
        self.prefix, self.dags = prefix, bag.dags
        sync_bag_to_db(bag, "dags-folder", None)
        with create_session() as session:
            session.execute(update(DagModel).where(DagModel.dag_id.in_(bag.dags)).values(is_paused=False))

    def run(self, dag_id: str, occurrence: datetime.datetime, *, state: str | None, run_type: str = "scheduled") -> str:
        """Create a run of ``occurrence``; with ``state``, finish its task and let the run update itself."""
        from airflow.models.serialized_dag import SerializedDagModel
        from airflow.timetables.base import DataInterval
        from airflow.utils.session import create_session
        from airflow.utils.state import DagRunState
        from airflow.utils.types import DagRunTriggeredByType, DagRunType

        with create_session() as session:
            dag = SerializedDagModel.get_dag(dag_id, session=session)
            run = dag.create_dagrun(
                run_id=f"{run_type}__{occurrence.isoformat()}",
                # A manual run gets its own logical date: (dag_id, logical_date) is unique.
                logical_date=occurrence - (HOUR if run_type == "scheduled" else HOUR / 2),
                data_interval=DataInterval(occurrence - HOUR, occurrence),
                run_after=occurrence,
                run_type=DagRunType(run_type),
                triggered_by=DagRunTriggeredByType.TIMETABLE,
                state=DagRunState.RUNNING if state else DagRunState.QUEUED,
                session=session,
            )
            if state:
                self._finish(run, state, session)
            return run.run_id

    @staticmethod
    def _finish(run: Any, state: str, session: Any) -> None:
        from airflow.models.serialized_dag import SerializedDagModel

        for ti in run.get_task_instances(session=session):
            ti.state = state
        session.flush()
        run.dag = SerializedDagModel.get_dag(run.dag_id, session=session)
        # As in the scheduler's loop: any commit but the guard's own (a savepoint release too) is refused.
        with prohibit_commit(session) as guard:
            run.update_state(session=session)
            guard.commit()

    def finish(self, dag_id: str, run_id: str, state: str) -> None:
        from airflow.models.dagrun import DagRun
        from airflow.utils.session import create_session

        with create_session() as session:
            self._finish(DagRun.find(dag_id=dag_id, run_id=run_id, session=session)[0], state, session)

    def finish_unfinished(self, dag_id: str) -> None:
        for run in self.runs(dag_id):
            if run["state"] in ("queued", "running"):
                self.finish(dag_id, run["run_id"], "success")

    def schedule(self) -> None:
        """One pass of the scheduler's run creation for asset-triggered DAGs, then its run starting."""
        from airflow.jobs.job import Job
        from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
        from airflow.models.dag import DagModel
        from airflow.models.dagrun import DagRun
        from airflow.utils.session import create_session
        from sqlalchemy import func, select

        runner = SchedulerJobRunner(job=Job())
        with create_session() as session:
            query, triggered = DagModel.dags_needing_dagruns(session)
            ready = [model for model in query.all() if model.dag_id in triggered]
            runner._create_dag_runs_asset_triggered(dag_models=ready, session=session)
        # SQLite's now() has whole seconds, and the scheduler starts a run once run_after <= now():
        # a run created this second starts on a later pass, as it would in the scheduler's loop.
        for _ in range(15):
            with create_session() as session, prohibit_commit(session) as guard:
                runner._start_queued_dagruns(session)
                guard.commit()
                waiting = session.scalar(
                    select(func.count()).where(DagRun.state == "queued", DagRun.dag_id.like(f"{self.prefix}%"))
                )
            if not waiting:
                return
            time.sleep(0.2)

    # -- reading back ---------------------------------------------------------------------------

    @staticmethod
    def runs(dag_id: str) -> list[dict[str, Any]]:
        from airflow.models.dagrun import DagRun
        from airflow.utils.session import create_session

        with create_session() as session:
            return [
                {
                    "run_id": run.run_id,
                    "run_type": str(run.run_type),
                    "state": str(run.state),
                    "note": run.note,
                    "parents": sorted(
                        (event.asset.uri.split("//")[1], event.extra["tessera"]["fire"])
                        for event in run.consumed_asset_events
                    ),
                    "tasks": len(run.get_task_instances(session=session)),
                }
                for run in DagRun.find(dag_id=dag_id, session=session)
            ]

    @staticmethod
    def events(schedule: str) -> list[dict[str, Any]]:
        from airflow.models.asset import AssetEvent, AssetModel
        from airflow.utils.session import create_session
        from sqlalchemy import select

        with create_session() as session:
            rows = session.scalars(
                select(AssetEvent)
                .join(AssetModel, AssetModel.id == AssetEvent.asset_id)
                .where(AssetModel.uri == asset_uri(schedule))
                .order_by(AssetEvent.id)
            )
            return [{**row.extra["tessera"], "source": (row.source_dag_id, row.source_run_id)} for row in rows]

    @staticmethod
    def state(schedule: str, key: str) -> Any:
        from airflow.models.asset import AssetModel
        from airflow.models.asset_state_store import AssetStateStoreModel
        from airflow.utils.session import create_session
        from sqlalchemy import select

        with create_session() as session:
            value = session.scalar(
                select(AssetStateStoreModel.value)
                .join(AssetModel, AssetModel.id == AssetStateStoreModel.asset_id)
                .where(AssetModel.uri == asset_uri(schedule), AssetStateStoreModel.key == key)
            )
            return None if value is None else json.loads(value)

    @staticmethod
    def queued(dag_id: str) -> list[str]:
        from airflow.models.asset import AssetDagRunQueue, AssetModel
        from airflow.utils.session import create_session
        from sqlalchemy import select

        with create_session() as session:
            return sorted(
                session.scalars(
                    select(AssetModel.uri)
                    .join(AssetDagRunQueue, AssetDagRunQueue.asset_id == AssetModel.id)
                    .where(AssetDagRunQueue.target_dag_id == dag_id)
                )
            )


@pytest.fixture(scope="module")
def deployment(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    # Deployed a minute before its tests, as a deployment that has been running: a parent's fire that a
    # test dates back (a stale parent) still comes after its child began scheduling on the parents' assets.
    with time_machine.travel(datetime.datetime.now(UTC) - datetime.timedelta(minutes=1), tick=True):
        deployed = Deployment(tmp_path_factory.mktemp("fan-in-dags"))
    yield deployed


def _fire(hour: int) -> str:
    return f"t:2026-03-01T{hour:02d}:00:00.000000Z"


def test_the_child_waits_with_no_run_and_no_task_instance_then_runs_once(deployment: Deployment) -> None:
    now = datetime.datetime.now(UTC)
    deployment.run("t4_load_a", now - 2 * HOUR, state="failed")
    deployment.run("t4_load_b", now - 2 * HOUR, state="success")
    deployment.schedule()
    # Waiting costs nothing: no run, so no task instance and no worker slot; just two queue rows.
    assert deployment.runs("t4_gold_fact") == []
    assert deployment.queued("t4_gold_fact") == [asset_uri("t4_a"), asset_uri("t4_b")]
    # One parent is a plain chain: the failed fire of t4_a released it on its own.
    (chained,) = deployment.runs("t4_chained")
    assert chained["parents"] == [("t4_a", deployment.events("t4_a")[0]["fire"])]

    deployment.run("t4_load_c", now - HOUR, state="success")
    deployment.schedule()
    (gold,) = deployment.runs("t4_gold_fact")
    assert gold["run_type"] == "asset_triggered" and gold["tasks"] == 1
    assert [parent for parent, _ in gold["parents"]] == ["t4_a", "t4_b", "t4_c"]
    assert deployment.queued("t4_gold_fact") == []
    # The failed parent fire is on the run, with what it was made of.
    assert "Released by parent fires:" in gold["note"]
    assert "t4_load_a/scheduled__" in gold["note"] and "(failed)" in gold["note"]
    deployment.schedule()
    assert len(deployment.runs("t4_gold_fact")) == 1, "released once, not once per scheduler pass"


def test_a_parent_completing_several_fires_releases_the_child_once(deployment: Deployment) -> None:
    now = datetime.datetime.now(UTC)
    before = len(deployment.runs("t4_gold_fact"))
    for hours in (1, 2, 3):
        deployment.run("t4_load_a", now.replace(minute=0, second=0, microsecond=0) + hours * HOUR, state="success")
    deployment.schedule()
    assert len(deployment.runs("t4_gold_fact")) == before
    assert deployment.queued("t4_gold_fact") == [asset_uri("t4_a")], "three fires, one queue row"
    deployment.run("t4_load_b", now + 4 * HOUR, state="success")
    deployment.run("t4_load_c", now + 4 * HOUR, state="failed")
    deployment.schedule()
    # MAX_CONCURRENT 1: the complete set waits in the queue while the previous child run is in flight.
    assert len(deployment.runs("t4_gold_fact")) == before
    assert len(deployment.queued("t4_gold_fact")) == 3
    deployment.finish_unfinished("t4_gold_fact")
    deployment.schedule()
    runs = deployment.runs("t4_gold_fact")
    assert len(runs) == before + 1
    newest = runs[-1]
    assert [parent for parent, _ in newest["parents"]] == ["t4_a", "t4_a", "t4_a", "t4_b", "t4_c"]
    assert deployment.queued("t4_gold_fact") == [], "the next release needs a new fire of every parent"


def test_a_fire_completes_when_every_pipeline_of_it_finished(deployment: Deployment) -> None:
    first = deployment.run("t4_multi_1", T0 + HOUR, state=None)
    second = deployment.run("t4_multi_2", T0 + HOUR, state=None)
    deployment.finish("t4_multi_1", first, "success")
    assert deployment.events("t4_multi") == []
    deployment.run("t4_multi_1", T0 + HOUR, state="success", run_type="manual")
    assert deployment.events("t4_multi") == [], "a manual run is not a fire"
    deployment.finish("t4_multi_2", second, "failed")
    (event,) = deployment.events("t4_multi")
    assert event["fire"] == _fire(1)
    assert event["runs"] == [f"t4_multi_1/{first} (success)", f"t4_multi_2/{second} (failed)"]
    assert event["source"] == ("t4_multi_2", second)
    fires = deployment.state("t4_multi", FIRES_KEY)
    assert (fires["count"], fires["last_fire"]) == (1, _fire(1))


def test_a_fire_is_recorded_once_and_never_after_a_newer_one(deployment: Deployment) -> None:
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session

    from tessera.operators.fan_in.release import run_finished

    deployment.run("t4_multi_1", T0 + 3 * HOUR, state="success")
    deployment.run("t4_multi_2", T0 + 3 * HOUR, state="success")
    assert [e["fire"] for e in deployment.events("t4_multi")][-1] == _fire(3)
    late_1 = deployment.run("t4_multi_1", T0 + 2 * HOUR, state="success")
    deployment.run("t4_multi_2", T0 + 2 * HOUR, state="success")
    with create_session() as session:
        (run,) = DagRun.find(dag_id="t4_multi_1", run_id=late_1, session=session)
        assert run_finished(run, session) == []
    assert [e["fire"] for e in deployment.events("t4_multi")] == [_fire(1), _fire(3)]
    # The AFTER child of a multi-pipeline schedule was released by each recorded fire.
    deployment.schedule()
    assert len(deployment.runs("t4_after_multi_step")) == 1


def test_a_stale_parent_is_named_and_the_fire_still_proceeds(
    deployment: Deployment, caplog: pytest.LogCaptureFixture
) -> None:
    now = datetime.datetime.now(UTC)
    # t4_fa's fire completes on a clock set back past the window: it is older than the window now.
    with time_machine.travel(now - datetime.timedelta(hours=FRESHNESS_HOURS, seconds=1.5), tick=True):
        deployment.run("t4_fresh_a", now, state="success")
    deployment.run("t4_fresh_b", now, state="success")
    with caplog.at_level(logging.WARNING, logger="tessera.operators.fan_in.release"):
        deployment.schedule()
    (run,) = deployment.runs("t4_fresh_step")
    assert run["state"] == "running", "a stale parent never holds the fire back"
    stale, released = run["note"].split("Released by parent fires:\n")
    assert stale.startswith("Stale parents (no completed fire within 0.001 h); this run proceeded anyway:\n")
    assert "- t4_fa: last completed " in stale and "t4_fb" not in stale
    assert released.count("\n- ") == 1 and "t4_fresh_a/scheduled__" in released
    assert "proceeds with stale parents (no completed fire within 0.001 h): t4_fa" in caplog.text


def test_waves_open_one_after_another_as_their_runs_finish(deployment: Deployment) -> None:
    from tessera.operators.schedules.waves import gate_open

    ids = {n: deployment.run(f"t4_wave_{n}", T0 + HOUR, state=None) for n in (1, 2, 3)}
    deployment.schedule()  # starts the queued runs: each takes its place in the fire's plan
    plan = deployment.state("t4_wave", WAVES_KEY)
    assert plan["waves"] == [["t4_wave_1"], ["t4_wave_2"], ["t4_wave_3"]]
    members = {n: f"t4_wave_{n}/{ids[n]}" for n in (1, 2, 3)}
    assert [gate_open(plan, members[n]) for n in (1, 2, 3)] == [True, False, False]

    deployment.finish("t4_wave_3", ids[3], "failed")  # out of turn: opens nothing, cancels nothing
    plan = deployment.state("t4_wave", WAVES_KEY)
    assert (plan["open"], plan.get("cancelled")) == (0, None)
    deployment.finish("t4_wave_1", ids[1], "success")
    plan = deployment.state("t4_wave", WAVES_KEY)
    assert plan["open"] == 1 and gate_open(plan, members[2])
    deployment.finish("t4_wave_2", ids[2], "success")
    assert deployment.state("t4_wave", WAVES_KEY)["open"] == 2
    # The next fire starts a new plan.
    deployment.run("t4_wave_2", T0 + 2 * HOUR, state=None)
    deployment.schedule()
    plan = deployment.state("t4_wave", WAVES_KEY)
    assert (plan["fire"], plan["open"], list(plan["members"])) == (
        _fire(2),
        0,
        [f"t4_wave_2/scheduled__{(T0 + 2 * HOUR).isoformat()}"],
    )


def _new_wave_fire(deployment: Deployment, hour: int) -> dict[int, str]:
    """Runs of the three wave pipelines for the fire at ``hour``, started (earlier fires finished first)."""
    for n in (1, 2, 3):
        deployment.finish_unfinished(f"t4_wave_{n}")
    ids = {n: deployment.run(f"t4_wave_{n}", T0 + hour * HOUR, state=None) for n in (1, 2, 3)}
    deployment.schedule()
    return ids


def _note(deployment: Deployment, n: int, run_id: str) -> str | None:
    return next(run["note"] for run in deployment.runs(f"t4_wave_{n}") if run["run_id"] == run_id)


def test_a_failed_member_cancels_the_waves_not_yet_open(deployment: Deployment) -> None:
    from tessera.operators.schedules.waves import gate_state

    ids = _new_wave_fire(deployment, 5)
    members = {n: f"t4_wave_{n}/{ids[n]}" for n in (1, 2, 3)}

    deployment.finish("t4_wave_1", ids[1], "failed")  # its retries are spent: the run itself failed
    plan = deployment.state("t4_wave", WAVES_KEY)
    assert plan["open"] == 0
    expected = (
        f"Fail-fast: {members[1]} failed in wave 1 of schedule t4_wave's fire {_fire(5)}; "
        "cancelled wave 2 (t4_wave_2), wave 3 (t4_wave_3): their pipelines do not run this fire."
    )
    assert plan["cancelled"] == {"by": members[1], "waves": [1, 2], "note": expected}
    assert [gate_state(plan, members[n]) for n in (1, 2, 3)] == ["open", "cancelled", "cancelled"]
    for n in (1, 2, 3):  # the failed run and every cancelled one say why
        assert _note(deployment, n, ids[n]) == expected

    # The next fire's plan keeps them cancelled: a gate that had not yet looked cannot slip through.
    deployment.run("t4_wave_1", T0 + 6 * HOUR, state=None)
    deployment.schedule()
    newer = deployment.state("t4_wave", WAVES_KEY)
    assert newer["fire"] == _fire(6) and newer.get("cancelled") is None
    assert [gate_state(newer, members[n]) for n in (2, 3)] == ["cancelled", "cancelled"]

    # The cancelled runs' gates fail; their failures neither open a wave nor cancel again.
    deployment.finish("t4_wave_2", ids[2], "failed")
    deployment.finish("t4_wave_3", ids[3], "failed")
    assert deployment.state("t4_wave", WAVES_KEY) == newer
    assert _note(deployment, 2, ids[2]) == expected


def test_a_failure_in_the_last_wave_cancels_nothing(deployment: Deployment) -> None:
    ids = _new_wave_fire(deployment, 7)
    deployment.finish("t4_wave_1", ids[1], "success")
    deployment.finish("t4_wave_2", ids[2], "success")
    deployment.finish("t4_wave_3", ids[3], "failed")
    plan = deployment.state("t4_wave", WAVES_KEY)
    assert (plan["open"], plan.get("cancelled")) == (2, None)
    assert _note(deployment, 3, ids[3]) is None


def test_a_wave_gated_pipeline_without_its_gate_is_reported(
    deployment: Deployment, caplog: pytest.LogCaptureFixture
) -> None:
    deployment.run("t4_ungated", T0 + HOUR, state=None)
    with caplog.at_level(logging.WARNING, logger="tessera.operators.schedules.waves"):
        deployment.schedule()
    assert "t4_ungated is a pipeline of wave-gated schedule t4_wave_solo but has no wave gate" in caplog.text
