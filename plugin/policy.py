"""The dag policy (entry point ``airflow.policy``): tells each tessera timetable which DAG it schedules.

The dag-processor runs it before a DAG is serialized. The timetable learns the
DAG id (what its default phase is hashed from), the DAG's ``catchup`` flag and
its ``end_date``, which the scheduler-side catch-up check needs.
"""

from __future__ import annotations

from airflow.policies import hookimpl


@hookimpl
def dag_policy(dag) -> None:
    # Imported here: Airflow loads policy entry points while `airflow` itself is still
    # initialising, before the timetable modules (which import airflow) can be imported.
    from tessera.timetables.base import TesseraTimetable

    timetable = dag.timetable
    if isinstance(timetable, TesseraTimetable):
        dag.timetable = timetable.bind(dag_id=dag.dag_id, catchup=bool(dag.catchup), end_date=dag.end_date)
