"""The admission's connection check reads the metadata DB through the scheduler's own session.

Airflow's own lookup (``Connection.get_connection_from_secrets``) opens a session of its own;
in the scheduler that is the loop's scoped session, and closing it detached every run the loop
was starting: the scheduler crashed on the next run's ``dag_id`` (seen in the demo).
"""

from __future__ import annotations

import pytest

from tessera.operators.functions.spec_reasons import connection_missing


@pytest.fixture
def stored_connection(airflow_db: str):
    from airflow.models.connection import Connection
    from airflow.utils.session import create_session

    with create_session() as session:
        session.add(Connection(conn_id="tessera_t_stored", conn_type="http", host="example.com"))
    yield "tessera_t_stored"
    with create_session() as session:
        session.query(Connection).filter(Connection.conn_id == "tessera_t_stored").delete()


def test_a_connection_in_the_metadata_db_is_found_and_the_callers_objects_stay_attached(stored_connection) -> None:
    from airflow import settings
    from airflow.models.dag import DagModel
    from sqlalchemy import inspect

    session = settings.Session()  # the scoped session the scheduler's loop uses
    try:
        pending = DagModel(dag_id="tessera_t_pending", bundle_name="dags-folder")
        session.add(pending)
        assert connection_missing(stored_connection, session) is None
        assert inspect(pending).session is session, "the lookup closed the caller's session"
        assert connection_missing("tessera_t_nowhere", session).startswith("conn_id: 'tessera_t_nowhere'")
        assert inspect(pending).session is session
    finally:
        session.rollback()
        settings.Session.remove()
