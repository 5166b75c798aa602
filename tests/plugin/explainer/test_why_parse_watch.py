"""The dag-processor's parse-state record: one audit-log entry per change, on the real SQLite metadata DB.

What the dag-processor leaves is written as it writes it (an import error for the file,
``has_import_errors``, ``is_stale``); :func:`observe` is what its watch thread runs every period.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator

import pytest
from sqlalchemy import delete, select, update

from tessera.plugin.parse_watch import EVENT, observe
from tests.plugin.api.test_api_app import DAG_FILE, store_dags

DAG_ID = "why_watch_broken"


@pytest.fixture
def session(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from airflow.models.log import Log
    from airflow.utils.session import create_session

    store_dags(tmp_path_factory.mktemp("why-watch"), DAG_FILE, (DAG_ID,))
    with create_session() as session:
        session.execute(delete(Log).where(Log.event == EVENT))
        yield session


def entries(session) -> list[dict]:
    from airflow.models.log import Log

    rows = session.scalars(select(Log.extra).where(Log.event == EVENT, Log.dag_id == DAG_ID).order_by(Log.id))
    return [json.loads(extra) for extra in rows]


def recorded(session) -> int:
    """How many entries one observation wrote about this test's DAG (the shared database may hold
    other tests' broken DAGs, which the observation records too)."""
    before = len(entries(session))
    observe(session)
    return len(entries(session)) - before


def test_a_broken_file_is_recorded_once_then_when_stale_then_when_restored(session):
    from airflow.models.dag import DagModel
    from airflow.models.errors import ParseImportError

    model = session.get(DagModel, DAG_ID)
    failed_at = datetime.datetime(2026, 11, 30, 12, 3, tzinfo=datetime.timezone.utc)
    error = ParseImportError(
        filename=model.relative_fileloc,
        bundle_name=model.bundle_name,
        stacktrace="Traceback ...\ntessera.timetables._time.cron.CronInvalid: expression: '61 * * * *' is not a minute",
        timestamp=failed_at,
    )
    session.add(error)
    session.execute(update(DagModel).where(DagModel.dag_id == DAG_ID).values(has_import_errors=True))
    session.flush()

    assert recorded(session) == 1
    assert recorded(session) == 0  # nothing changed: nothing written
    first = entries(session)[-1]
    assert (first["state"], first["reason"], first["stale"]) == ("broken", "CronInvalid", False)
    assert first["since"].startswith("2026-11-30T12:03:00")
    assert "61 * * * *" not in json.dumps(first)  # the error's text stays where Airflow guards it

    session.execute(update(DagModel).where(DagModel.dag_id == DAG_ID).values(is_stale=True))
    assert recorded(session) == 1
    stale = entries(session)[-1]
    assert (stale["state"], stale["stale"], stale["since"]) == ("broken", True, first["since"])

    session.delete(error)
    session.execute(update(DagModel).where(DagModel.dag_id == DAG_ID).values(is_stale=False, has_import_errors=False))
    assert recorded(session) == 1
    assert entries(session)[-1]["state"] == "restored"
    assert recorded(session) == 0
