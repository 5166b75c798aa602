"""A declared schedule whose one task outlasts its TIMEOUT: each attempt stamps the time while it runs.

``TIMEOUT 20`` with ``RETRIES 1`` and ``RETRY_DELAY 0``: the first attempt is stopped after 20 s
and the second queued at once. The task stamps ``time.time()`` every 0.1 s for a minute into
``$AIRFLOW_HOME/timeout-stamps/<try number>`` (a line each, the file closed after each), so the
stamps show exactly when each attempt's copy ran. The schedule is declared inactive: the test
activates it once the workers are warm (a fresh deployment's first task can take longer to
start than the TIMEOUT); a yearly cron then gives one run, the newest due occurrence.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from airflow.sdk import DAG, get_current_context, task

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

DAG_ID = "e2e_timeout_attempts"
TIMED = Schedule("timed_yearly", cron="0 0 1 1 *", retries=1, retry_delay=0, timeout=20, active=False)
SCHEDULES = ScheduleSet([TIMED])

with DAG(dag_id=DAG_ID, start_date=None, **SCHEDULES.dag_kwargs("timed_yearly")) as dag:

    @task
    def outlast_the_timeout() -> None:
        folder = Path(os.environ["AIRFLOW_HOME"]) / "timeout-stamps"
        folder.mkdir(exist_ok=True)
        stamps = folder / str(get_current_context()["ti"].try_number)
        for _ in range(600):
            with stamps.open("a") as out:
                out.write(f"{time.time()}\n")
            time.sleep(0.1)

    outlast_the_timeout()
SCHEDULES.apply(dag)
