"""Window-aligned AFTER: a fact table rebuilt once per hour, after both loads finished that hour.

``orders_hourly`` runs every hour and ``payments_half_hourly`` every 30 minutes. Plain AFTER
would rebuild whenever each parent has some new fire; ``ALIGN WINDOW`` (here the Python
``align_window=True``) waits for the same window: the rebuild for 13:00 starts once both
parents completed their fire ending at 13:00, failed or not, and its run note names those runs.
The SQL form is ``SCHEDULE orders_fact AFTER 'orders_hourly', 'payments_half_hourly' ALIGN WINDOW;``.
"""

from __future__ import annotations

from airflow.sdk import DAG, task

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

SCHEDULES = ScheduleSet(
    [
        Schedule("orders_hourly", interval_seconds=3600),
        Schedule("payments_half_hourly", interval_seconds=1800),
        Schedule("orders_fact", after=("orders_hourly", "payments_half_hourly"), align_window=True, parent_freshness=2),
    ]
)

for name in ("orders_hourly", "payments_half_hourly", "orders_fact"):
    with DAG(
        dag_id=f"tessera_aligned_{name}",
        start_date=None,
        doc_md=__doc__,
        **SCHEDULES.dag_kwargs(name, tags=["tessera", "declared"]),
    ) as dag:

        @task
        def work(schedule: str = name, data_interval_start=None, data_interval_end=None) -> None:
            print(f"{schedule}: {data_interval_start} -> {data_interval_end}")

        work()
    SCHEDULES.apply(dag)
