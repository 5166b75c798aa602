"""A dashboard's numbers, re-computed daily at 09:00 New York time and on demand.

Each run re-runs the dashboard's SQL through the connection ``tessera_demo_sqlite``
and replaces the rows of ``dashboard_totals``. Its receipt says how many rows, how
long it took and whether the numbers changed ("No change" when they did not); a run
whose write would overwrite a newer version's result is "Skipped" and loses nothing.

The schedule carries a stable 0-14 minute anti-herd phase: the run starts a few
minutes after 09:00, while its window and the next run the UI shows stay at 09:00.
Use the Schedules page's Refresh (or ``POST /tessera/api/v1/dags/<id>/refresh``) to
recompute now: it joins a run already in flight and never moves the 09:00 run.
Nothing runs two refreshes at once on any surface: tessera's dag policy gives a DAG
with a ``RefreshSQLOperator`` ``max_active_runs=1``, so a run started by the schedule,
the Trigger button or the REST API while another is in flight waits queued.

The demo defines the connection; elsewhere, e.g.::

    export AIRFLOW_CONN_TESSERA_DEMO_SQLITE='{"conn_type": "sqlite", "host": "/tmp/dashboard.db"}'
"""

from __future__ import annotations

from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.sdk import DAG

from tessera.operators.refresh_sql import RefreshSQLOperator
from tessera.timetables import Every, anti_herd

CONNECTION = "tessera_demo_sqlite"

with DAG(
    dag_id="tessera_refresh_dashboard",
    schedule=Every.day(at="09:00", timezone="America/New_York", phase=anti_herd()),
    start_date=None,
    tags=["tessera", "refresh"],
    doc_md=__doc__,
):
    # Demo data, so the example works on an empty database.
    orders = SQLExecuteQueryOperator(
        task_id="ensure_orders",
        conn_id=CONNECTION,
        sql=[
            "CREATE TABLE IF NOT EXISTS orders (region TEXT, amount REAL)",
            "INSERT INTO orders SELECT 'emea', 120.0 WHERE NOT EXISTS (SELECT 1 FROM orders)",
            "INSERT INTO orders SELECT 'apac', 80.5 WHERE (SELECT COUNT(*) FROM orders) = 1",
        ],
    )
    totals = RefreshSQLOperator(
        task_id="refresh_totals",
        conn_id=CONNECTION,
        sql="SELECT region, COUNT(*) AS orders, SUM(amount) AS revenue FROM orders GROUP BY region",
        target_table="dashboard_totals",
        target_ddl="CREATE TABLE IF NOT EXISTS dashboard_totals (region TEXT, orders INTEGER, revenue REAL)",
    )
    orders >> totals
