"""A local-day roll-up across daylight saving: hourly keys in Europe/Amsterdam, one run per local day.

``Cron("0 * * * *", timezone="Europe/Amsterdam", partitioned=True)`` keys each hour on the
Amsterdam clock with its offset (``2026-10-25T02:00:00+0200`` and ``...02:00:00+0100`` are two
hours of the fall-back day), because a repeated hour must not share a key. The roll-up reads
that format, so Airflow's stock ``DayWindow`` completes the 23-hour spring day and the 25-hour
autumn day alike.
"""

from __future__ import annotations

from airflow.sdk import DAG, Asset, DayWindow, PartitionedAssetTimetable, RollupMapper, StartOfDayMapper, task

from tessera.timetables import Cron

METER = Asset(uri="file://tessera-examples/meter-amsterdam", name="tessera_meter_amsterdam")
ZONE = "Europe/Amsterdam"

with DAG(
    dag_id="tessera_meter_amsterdam_hourly",
    schedule=Cron("0 * * * *", timezone=ZONE, partitioned=True),
    start_date=None,
    tags=["tessera", "partitions"],
    doc_md=__doc__,
):

    @task(outlets=[METER])
    def read_meter(dag_run=None):
        print(f"meter hour {dag_run.partition_key}")

    read_meter()

with DAG(
    dag_id="tessera_meter_amsterdam_daily",
    schedule=PartitionedAssetTimetable(
        assets=METER,
        default_partition_mapper=RollupMapper(
            upstream_mapper=StartOfDayMapper(timezone=ZONE, input_format="%Y-%m-%dT%H:%M:%S%z"),
            window=DayWindow(),
        ),
    ),
    tags=["tessera", "partitions"],
    doc_md=__doc__,
):

    @task
    def bill_day(dag_run=None):
        print(f"every hour of the Amsterdam day {dag_run.partition_key} is in")

    bill_day()
