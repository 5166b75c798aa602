"""Two schedules as one: every day at 09:00 in Amsterdam, and Fridays at 17:00 as well.

``Every.day(...) | Cron(...)`` merges the occurrences of both; each run's window starts
where the previous run's ended, whichever schedule it came from (Friday 09:00 -> 17:00,
then Friday 17:00 -> Saturday 09:00), and the dates of ``exclude`` are skipped by both.
"""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Cron, Every, Union, between

AMSTERDAM = "Europe/Amsterdam"

with DAG(
    dag_id="tessera_union_mornings_and_friday_close",
    schedule=Union(
        Every.day(at="09:00", timezone=AMSTERDAM),
        Cron("0 17 * * 5", timezone=AMSTERDAM),
        exclude=between("2026-12-24", "2026-12-26"),
    ),
    start_date=None,
    tags=["tessera", "union"],
    doc_md=__doc__,
):

    @task
    def report(data_interval_start=None, data_interval_end=None):
        print(f"reporting {data_interval_start} -> {data_interval_end}")

    report()
