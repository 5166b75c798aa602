"""The dag policy (entry point ``airflow.policy``): tells each tessera timetable which DAG it schedules.

The dag-processor runs it before a DAG is serialized. The timetable learns the
DAG id (what its default phase is hashed from), the DAG's ``catchup`` flag and
its ``end_date``, which the scheduler-side catch-up check needs.

It also refuses a tessera-scheduled DAG whose start or end dates (its own, or its
tasks', which Airflow folds into the same restriction) lie outside the supported
range of instants: an import error naming the date is better than a scheduler
that later stops scheduling the DAG without a word.

It gives a tessera DAG the ``max_active_runs`` its ``overlap=`` policy needs, refusing a value
or ``catchup`` the policy contradicts (:mod:`tessera.operators.overlap_slots`), and holds every
DAG with a ``RefreshSQLOperator`` task, whatever its schedule, to one active run
(:mod:`tessera.operators.refresh_single_flight`).

On Airflow 3.1, which records no timetable type on the DAG row, it tags each DAG with a tessera
timetable ``tessera:timetable`` (the plugin door's ``TIMETABLE_TAG``): there the tag is how the
surfaces find tessera's DAGs. From 3.2 a DAG keeps exactly the tags its file declares.
"""

from __future__ import annotations

from airflow.policies import hookimpl

from tessera.plugin.orm_state_keys import reserve_state_names

# Airflow imports this module first thing in every process, before its ORM holds any state: the
# one moment SQLAlchemy's state attribute names still fit CPython 3.11's shared keys (the module says why).
reserve_state_names()


@hookimpl
def dag_policy(dag) -> None:
    # Imported here: Airflow loads policy entry points while `airflow` itself is still
    # initialising, before the timetable modules (which import airflow) can be imported.
    from airflow.configuration import conf
    from airflow.exceptions import AirflowClusterPolicyViolation

    from tessera.operators.overlap_slots import hold_overlap
    from tessera.operators.refresh_single_flight import hold_single_flight
    from tessera.plugin._airflow import TIMETABLE_TAG, timetable_needs_tag
    from tessera.timetables.base import TesseraTimetable
    from tessera.timetables.limits import check_supported_instant

    default = conf.getint("core", "max_active_runs_per_dag")
    timetable = dag.timetable
    try:
        if isinstance(timetable, TesseraTimetable):
            hold_overlap(dag, timetable.run_policy, default_max_active_runs=default)
        hold_single_flight(dag, default_max_active_runs=default)
    except ValueError as refused:
        raise AirflowClusterPolicyViolation(str(refused)) from None
    if isinstance(timetable, TesseraTimetable):
        dates = [("start_date", dag.start_date), ("end_date", dag.end_date)]
        for task in dag.tasks:
            dates += [("start_date", task.start_date), ("end_date", task.end_date)]
        try:
            for field, moment in dates:
                if moment is not None:
                    check_supported_instant(field, moment)
        except ValueError as refused:
            raise AirflowClusterPolicyViolation(str(refused)) from None
        dag.timetable = timetable.bind(dag_id=dag.dag_id, catchup=bool(dag.catchup), end_date=dag.end_date)
        if timetable_needs_tag():
            dag.tags.add(TIMETABLE_TAG)
