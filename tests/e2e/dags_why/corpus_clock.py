"""Clock-driven DAGs of the "why" fault corpus (``tests/e2e/test_why_corpus.py``), all paused at creation.

Most have no task: their runs succeed as soon as the scheduler starts them, so the corpus
loads no worker for them. The few that must hold something (a slot, a pool, a backfill) sleep.
"""

from __future__ import annotations

import datetime
import time

from airflow.sdk import DAG, task

from tessera.timetables import Backfill, Cron, Every, Fixed

UTC = datetime.timezone.utc
START = datetime.datetime(2025, 1, 1, tzinfo=UTC)


@task
def sleep(seconds: float = 45) -> None:
    time.sleep(seconds)


EVERY_10S = Every("10s", phase=Fixed("0s"))
for dag_id, schedule, extra in [
    ("c_paused", EVERY_10S, {}),
    ("c_down_latest", EVERY_10S, {}),
    ("c_down_backfill", Every("10s", phase=Fixed("0s"), catch_up=Backfill(limit=2)), {}),
    ("c_deadline", Cron("@every 20s", starting_deadline="5s"), {}),
    ("c_future_start", Every("1h", phase=Fixed("0s")), {"start_date": datetime.datetime(2027, 6, 1, tzinfo=UTC)}),
    ("c_ended", Every("1h", phase=Fixed("0s")), {"end_date": datetime.datetime(2025, 6, 1, tzinfo=UTC)}),
    ("c_dst", Cron("30 2 * * *", timezone="Europe/Berlin"), {}),
    ("c_dst_once", Cron("30 2 * * *", timezone="Europe/Berlin", dst="once"), {}),
    ("c_builtin_cron", "* * * * *", {}),
]:
    with DAG(dag_id, schedule=schedule, **{"start_date": START, "catchup": False, **extra}):
        pass

with DAG("c_slots", schedule=EVERY_10S, start_date=START, catchup=False, max_active_runs=1):
    sleep(35)

with DAG("c_manual", schedule=None, start_date=START):
    sleep(15)

with DAG("c_pool_hog", schedule=None, start_date=START):
    sleep.override(pool="why_pool")(60)

with DAG("c_pool_wait", schedule=None, start_date=START):
    sleep.override(pool="why_pool")(1)

with DAG("c_bf", schedule=Every("1h", phase=Fixed("0s")), start_date=START, catchup=False):
    sleep(15)
