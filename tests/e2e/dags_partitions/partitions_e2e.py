"""Partitioned producers and aligned consumers (tests/e2e/test_partitions_e2e.py).

The producers only ever run what a partition-range backfill creates: their one
scheduled run falls on 2025-10-01, far from the backfilled day (their end date).
"""

from __future__ import annotations

import datetime

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

CLICKS_A = Asset(uri="file://e2e/clicks_a", name="clicks_a")
CLICKS_B = Asset(uri="file://e2e/clicks_b", name="clicks_b")
CLICKS_AMS = Asset(uri="file://e2e/clicks_ams", name="clicks_ams")
CLICKS_BERLIN = Asset(uri="file://e2e/clicks_berlin", name="clicks_berlin")
START = datetime.datetime(2025, 10, 1, tzinfo=datetime.timezone.utc)
END = datetime.datetime(2025, 10, 2, tzinfo=datetime.timezone.utc)

for dag_id, timetable, asset in (
    ("part_a", Every("1h", delay="5m", partitioned=True), CLICKS_A),
    ("part_b", Cron("0 * * * *", partitioned=True), CLICKS_B),
    ("part_ams", Cron("0 * * * *", timezone="Europe/Amsterdam", partitioned=True), CLICKS_AMS),
    # Daily at a time Berlin's fall-back repeats and its spring-forward skips.
    ("part_berlin", Cron("30 2 * * *", timezone="Europe/Berlin", partitioned=True), CLICKS_BERLIN),
):
    with DAG(dag_id, schedule=timetable, start_date=START, end_date=END, is_paused_upon_creation=False):

        @task(task_id="load", outlets=[asset])
        def load() -> None:
            """Emits the asset event; Airflow stamps it with the run's partition_key."""

        load()

with DAG(
    "part_hourly_join",
    schedule=PartitionedAssetTimetable(assets=CLICKS_A & CLICKS_B, default_partition_mapper=StartOfHourMapper()),
    is_paused_upon_creation=False,
):

    @task(task_id="join")
    def join() -> None:
        """One run per hour once both producers have that hour."""

    join()

with DAG(
    "part_daily_rollup",
    schedule=PartitionedAssetTimetable(
        assets=CLICKS_A, default_partition_mapper=RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())
    ),
    is_paused_upon_creation=False,
):

    @task(task_id="rollup")
    def rollup() -> None:
        """One run per UTC day once its 24 hourly keys have arrived."""

    rollup()

with DAG(
    "part_daily_rollup_ams",
    schedule=PartitionedAssetTimetable(
        assets=CLICKS_AMS,
        default_partition_mapper=RollupMapper(
            upstream_mapper=StartOfDayMapper(timezone="Europe/Amsterdam", input_format="%Y-%m-%dT%H:%M:%S%z"),
            window=DayWindow(),
        ),
    ),
    is_paused_upon_creation=False,
):

    @task(task_id="rollup")
    def rollup_ams() -> None:
        """One run per Amsterdam day, 23, 24 or 25 hourly keys."""

    rollup_ams()

with DAG(
    "part_berlin_consumer",
    schedule=PartitionedAssetTimetable(assets=CLICKS_BERLIN),
    is_paused_upon_creation=False,
):

    @task(task_id="consume")
    def consume() -> None:
        """One run per Berlin key: two on the fall-back day, never one for both."""

    consume()
