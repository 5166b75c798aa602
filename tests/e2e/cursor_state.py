"""A cursor function's state as the status page reads it, from inside a running deployment.

The read runs in the deployment's own environment (its database, its settings) through the
deployment's one reader process (:meth:`AirflowHome.reader`): importing Airflow for every read
cost 3.7 s of CPU each.
"""

from __future__ import annotations

from .harness import AirflowHome

_SCRIPT = """
import datetime, json
from airflow._shared.timezones.timezone import utcnow
from airflow.configuration import conf
from airflow.models.variable import Variable
from airflow.utils.session import create_session
from sqlalchemy import select
from tessera.operators.functions.history import FIRE, SKIP, load_history

def read(dag_id, task_id):
    stale = utcnow() - datetime.timedelta(seconds=conf.getint("scheduler", "task_instance_heartbeat_timeout"))
    with create_session() as session:
        stored = session.scalar(select(Variable).where(Variable.key == dag_id + "-state"))
        _, readings = load_history(session, dag_id, task_id, limit=500, stale=stale)
        fires = {r.run_id: [r.outcome.value, r.reason] for r in readings if r.kind == FIRE}
        skips = {r.run_id: r.reason for r in readings if r.kind == SKIP}
        return {"stored": None if stored is None else json.loads(stored.val), "fires": fires, "skips": skips}
"""


def cursor_state(home: AirflowHome, dag_id: str, task_id: str) -> dict:
    """The stored cursor of ``dag_id``; by run id, each finished fire's ``[outcome, reason]`` and each skip's reason.

    Read as the status page reads it (``load_history``), the fires of the function task ``task_id``.
    """
    return home.reader(_SCRIPT)(dag_id, task_id)
