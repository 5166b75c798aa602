"""A folder of generated DAGs on every schedule kind ``tessera migrate`` reads, across 12 zones.

Deterministic (DAG ``i`` gets kind ``i % len(KINDS)`` and zone ``i % 12``), so a test and the
benchmark see the same folder. Every third DAG's task reads its data interval.
"""

from __future__ import annotations

from pathlib import Path

ZONES = (
    "UTC",
    "Europe/London",
    "Europe/Amsterdam",
    "America/New_York",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Asia/Tokyo",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "America/St_Johns",
)
"""Twelve zones: no DST, northern and southern DST, half-hour offsets and Lord Howe's half-hour change."""

HEADER = """from __future__ import annotations

import datetime

from airflow.sdk import DAG, Asset, task
from airflow.timetables.events import EventsTimetable
from airflow.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable
from airflow.timetables.trigger import (
    CronPartitionTimetable,
    CronTriggerTimetable,
    DeltaTriggerTimetable,
    MultipleCronTriggerTimetable,
)

START = datetime.datetime(2025, 6, 1, 3, 15, tzinfo=datetime.timezone.utc)
"""


def _kinds(i: int, zone: str) -> list[str]:
    minute, hour = (7 * i) % 60, (5 * i) % 24
    return [
        f'"{minute} {hour} * * *"',  # a cron string: CronTriggerTimetable in UTC
        f'CronTriggerTimetable("{minute} {hour} * * *", timezone="{zone}")',
        f'CronTriggerTimetable("30 2 * * {i % 7}", timezone="{zone}")',  # a time DST days skip or repeat
        f'CronTriggerTimetable("{minute} * * * *", timezone="{zone}")',  # hourly: across the fold
        f'CronDataIntervalTimetable("{minute} {hour} * * *", timezone="{zone}")',
        f'CronTriggerTimetable("{minute} {hour} 1 * *", timezone="{zone}", interval=datetime.timedelta(hours=1))',
        f"datetime.timedelta(hours={(6, 12, 24)[i % 3]})",  # DeltaTriggerTimetable from START
        f"DeltaDataIntervalTimetable(datetime.timedelta(days={(1, 7)[i % 2]}))",
        f"DeltaTriggerTimetable(datetime.timedelta(minutes={(30, 60)[i % 2]}))",
        f'MultipleCronTriggerTimetable("0 {hour} * * *", "30 {(hour + 7) % 24} * * 1-5", timezone="{zone}")',
        f'CronPartitionTimetable("{minute} {hour} * * *", timezone="{zone}")',
        "EventsTimetable(event_dates=[START + datetime.timedelta(days=400 + k) for k in range(3)])",
        '"@once"',
        "None",
        'Asset("s3://bucket/generated")',
        f'"@weekly" if {i} % 2 else "@monthly"',  # a schedule computed when the file is parsed
    ]


KIND_COUNT = len(_kinds(0, "UTC"))

READS = """
    @task
    def work(data_interval_start=None, data_interval_end=None):
        print(data_interval_start, data_interval_end)

    work()
"""
QUIET = """
    @task
    def work():
        print("done")

    work()
"""


def write_generated(folder: Path, count: int = 200) -> list[str]:
    """Write ``count`` DAG files into ``folder``; their DAG ids."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = []
    for i in range(count):
        zone = ZONES[i % len(ZONES)]
        schedule = _kinds(i, zone)[i % KIND_COUNT]
        dag_id = f"generated_{i:03d}"
        body = READS if i % 3 == 0 else QUIET
        source = f"{HEADER}\nwith DAG(dag_id={dag_id!r}, schedule={schedule}, start_date=START, catchup=False):\n{body}"
        (folder / f"{dag_id}.py").write_text(source)
        ids.append(dag_id)
    return ids
