"""A declared schedule whose one task fails at once, retried RETRIES times by the schedulers themselves.

Each retry adds a line of about 95 characters to the run's note, so past about ten of them the
note outgrows Airflow's ``dag_run_note.content`` column (1,000 characters): on PostgreSQL a note
that long once failed the flush inside the scheduler's own session. ``RETRY_DELAY 0`` starts each
attempt at once, so the whole run costs only its attempts. A yearly cron gives exactly one run,
the newest due occurrence, when ``test_postgres_retries.py`` unpauses the DAG (``active=False``
keeps it paused until then, out of the other PostgreSQL tests' way), and no other for a year.
"""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

DAG_ID = "retried_pipeline"
RETRIES = 12
"""Enough that the note's lines (12 retries, then the last failure) together pass 1,000 characters."""

SCHEDULES = ScheduleSet([Schedule("retried_yearly", cron="0 0 1 1 *", retries=RETRIES, retry_delay=0, active=False)])

with DAG(dag_id=DAG_ID, start_date=None, **SCHEDULES.dag_kwargs("retried_yearly", tags=["tessera"])) as dag:

    @task
    def fail_at_once() -> None:
        raise RuntimeError("fails every attempt, so the schedule retries the run until RETRIES are used up")

    fail_at_once()
SCHEDULES.apply(dag)
