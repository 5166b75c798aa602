"""DAGs of the "why" fault corpus whose answers rest on tessera's own records, or on none.

``c_drop_skip`` and ``c_drop_buffer`` are due every 10 s and run 25 s, so their overlap policy
drops ticks (``ConcurrencyForbidden``, ``BufferFull``) and the next run records them. The others
hold a run in a known state: past its ``dagrun_timeout``, waiting for a pool of no slots, queued
while the DAG is paused, an asset event arriving while the DAG is paused; and two calendars
(a holiday ahead, an excluded day) that need no run at all.
"""

from __future__ import annotations

import datetime
import time

from airflow.sdk import DAG, Asset, task

from tessera.timetables import Cron, Every, Fixed, holidays_of

UTC = datetime.timezone.utc
START = datetime.datetime(2025, 1, 1, tzinfo=UTC)
ASSET = Asset("x-why://corpus/asset")
EXCLUDED_DAY = datetime.date(2026, 6, 10)


@task
def sleep(seconds: float) -> None:
    time.sleep(seconds)


for dag_id, overlap in [("c_drop_skip", "skip"), ("c_drop_buffer", "buffer_one")]:
    with DAG(dag_id, schedule=Every("10s", phase=Fixed("0s"), overlap=overlap), start_date=START, catchup=False):
        sleep(25)

with DAG("c_timeout", schedule=None, start_date=START, dagrun_timeout=datetime.timedelta(seconds=10)):
    sleep(60)

with DAG("c_zero_pool", schedule=None, start_date=START):
    sleep.override(pool="why_zero")(1)

with DAG("c_paused_manual", schedule=None, start_date=START):
    pass

with DAG("c_asset_child", schedule=[ASSET], start_date=START):
    pass

with DAG(
    "c_holiday",
    schedule=Every.business_day(at="09:00", timezone="America/New_York", calendar=holidays_of("US", subdiv="NY")),
    start_date=START,
    catchup=False,
):
    pass

with DAG("c_excluded_day", schedule=Cron("0 * * * *", exclude=[EXCLUDED_DAY]), start_date=START, catchup=False):
    pass
