"""A key_format without the offset for a cron that fires twice at one reading: an import error naming the fix."""

from __future__ import annotations

import datetime

from airflow.sdk import DAG, task

from tessera.timetables import Cron

with DAG(
    "part_berlin_no_offset",
    # 02:30 shows twice in Berlin when its clocks go back, and the CronJob rule runs at both.
    schedule=Cron("30 2 * * *", timezone="Europe/Berlin", partitioned=True, key_format="%Y-%m-%dT%H:%M:%S"),
    start_date=datetime.datetime(2025, 10, 1, tzinfo=datetime.timezone.utc),
):

    @task(task_id="never")
    def never() -> None:
        """Never parsed into a DAG."""

    never()
