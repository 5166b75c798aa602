"""Every New York business day at 09:00, and a month-end close on the last business day at 18:00.

Business days are Monday to Friday except the holidays of ``holidays_of("US", subdiv="NY")``.
A holiday is skipped (``tessera plan`` lists it with its name) and the next run's window
covers it: Monday's run evaluates Friday 09:00 -> Monday 09:00.
"""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.timetables import Every, holidays_of

NEW_YORK = "America/New_York"
HOLIDAYS = holidays_of("US", subdiv="NY")

with DAG(
    dag_id="tessera_business_days_new_york",
    schedule=Every.business_day(at="09:00", timezone=NEW_YORK, calendar=HOLIDAYS),
    start_date=None,
    tags=["tessera", "calendar"],
    doc_md=__doc__,
):

    @task
    def load_trades(data_interval_start=None, data_interval_end=None):
        print(f"loading trades {data_interval_start} -> {data_interval_end}")

    load_trades()

with DAG(
    dag_id="tessera_month_end_close_new_york",
    schedule=Every.month(business_day=-1, at="18:00", timezone=NEW_YORK, calendar=HOLIDAYS),
    start_date=None,
    tags=["tessera", "calendar"],
    doc_md=__doc__,
):

    @task
    def close_books(data_interval_start=None, data_interval_end=None):
        print(f"closing the month {data_interval_start} -> {data_interval_end}")

    close_books()
