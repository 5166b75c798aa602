"""The scheduler's own run creation for a partitioned tessera DAG, on the real metadata DB.

Airflow takes a separate path for partitioned DAGs (``DagModel.timetable_partitioned``): it
stores the next run's key on the DAG row and refuses to create a run without one. The runs
it creates must carry the window and the key the timetable plans, one after the other.
"""

from __future__ import annotations

import textwrap

import pendulum
import time_machine

DAG_FILE = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
import datetime
from tessera.timetables import Every, Fixed

with DAG("tp_hourly", schedule=Every("1h", delay="5m", phase=Fixed("0s"), partitioned=True),
         start_date=datetime.datetime(2026, 3, 10, 9, tzinfo=datetime.timezone.utc), catchup=True):
    EmptyOperator(task_id="work")
"""


def test_the_scheduler_creates_keyed_runs_in_order(airflow_db, tmp_path):
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select, update

    from tests.compat.airflow_names import DagBag, sync_bag_to_db

    (tmp_path / "tp.py").write_text(textwrap.dedent(DAG_FILE))
    with time_machine.travel(pendulum.datetime(2026, 3, 10, 12, 30), tick=False):
        DagBundlesManager().sync_bundles_to_db()
        bag = DagBag(str(tmp_path))
        assert bag.import_errors == {}
        sync_bag_to_db(bag, "dags-folder", None)
        runner = SchedulerJobRunner(job=Job())
        with create_session() as session:
            session.execute(update(DagModel).where(DagModel.dag_id == "tp_hourly").values(is_paused=False))
            model = session.scalar(select(DagModel).where(DagModel.dag_id == "tp_hourly"))
            assert model.timetable_partitioned is True
            assert model.next_dagrun_partition_key == "2026-03-10T09:00:00"
        for _ in range(3):
            with create_session() as session:
                models = session.scalars(select(DagModel).where(DagModel.dag_id == "tp_hourly")).all()
                runner._create_dag_runs(models, session)
        with create_session() as session:
            runs = session.scalars(select(DagRun).where(DagRun.dag_id == "tp_hourly").order_by(DagRun.id)).all()
            got = [(r.partition_key, r.data_interval_start.isoformat(), r.partition_date.isoformat()) for r in runs]
    assert got == [
        ("2026-03-10T09:00:00", "2026-03-10T08:55:00+00:00", "2026-03-10T09:00:00+00:00"),
        ("2026-03-10T10:00:00", "2026-03-10T09:55:00+00:00", "2026-03-10T10:00:00+00:00"),
        ("2026-03-10T11:00:00", "2026-03-10T10:55:00+00:00", "2026-03-10T11:00:00+00:00"),
    ]
