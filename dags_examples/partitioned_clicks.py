"""Hourly windows as Airflow partitions: two producers, an aligned hourly join and a daily roll-up.

``Every("1h", delay="5m", partitioned=True)`` gives each run its window (11:55 -> 12:55 for
the 13:00 occurrence) and the key of the hour it stands for (``2026-03-10T12:00:00``).
Airflow stamps the key on the run's asset events, so consumers on ``PartitionedAssetTimetable``
line up with Airflow's stock mappers: ``tessera_clicks_join`` runs once per hour both producers
have, ``tessera_clicks_daily`` once the 24 hours of a UTC day are in.

Backfill a range of keys:  ``airflow backfill create --dag-id tessera_clicks_hourly
--from-date 2026-03-10T00:00:00 --to-date 2026-03-10T23:00:00`` (only missing keys are made).
Rerun one window, keeping its key:  ``airflow dags clear tessera_clicks_hourly
--partition-key 2026-03-10T12:00:00 --yes``.
"""

from __future__ import annotations

from airflow.sdk import (
    DAG,
    Asset,
    DayWindow,
    PartitionedAssetTimetable,
    RollupMapper,
    StartOfDayMapper,
    StartOfHourMapper,
    task,
)

from tessera.timetables import Cron, Every

CLICKS = Asset(uri="file://tessera-examples/clicks", name="tessera_clicks")
IMPRESSIONS = Asset(uri="file://tessera-examples/impressions", name="tessera_impressions")

with DAG(
    dag_id="tessera_clicks_hourly",
    schedule=Every("1h", delay="5m", partitioned=True),
    start_date=None,
    tags=["tessera", "partitions"],
    doc_md=__doc__,
):

    @task(outlets=[CLICKS])
    def load_clicks(data_interval_start=None, data_interval_end=None, dag_run=None):
        print(f"clicks {dag_run.partition_key}: {data_interval_start} -> {data_interval_end}")

    load_clicks()

with DAG(
    dag_id="tessera_impressions_hourly",
    schedule=Cron("0 * * * *", partitioned=True),
    start_date=None,
    tags=["tessera", "partitions"],
    doc_md=__doc__,
):

    @task(outlets=[IMPRESSIONS])
    def load_impressions(dag_run=None):
        print(f"impressions {dag_run.partition_key}")

    load_impressions()

with DAG(
    dag_id="tessera_clicks_join",
    schedule=PartitionedAssetTimetable(assets=CLICKS & IMPRESSIONS, default_partition_mapper=StartOfHourMapper()),
    tags=["tessera", "partitions"],
    doc_md=__doc__,
):

    @task
    def join(dag_run=None):
        print(f"joining hour {dag_run.partition_key}")

    join()

with DAG(
    dag_id="tessera_clicks_daily",
    schedule=PartitionedAssetTimetable(
        assets=CLICKS, default_partition_mapper=RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())
    ),
    tags=["tessera", "partitions"],
    doc_md=__doc__,
):

    @task
    def roll_up(dag_run=None):
        print(f"all 24 hours of {dag_run.partition_key} are in")

    roll_up()
