"""``GET /tessera/api/v1/migrate`` through Airflow's API app on the real SQLite DB: the stored DAGs' report, bounded."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from ..api.test_api_app import DAG_FILE, Api, airflow_api, store_dags

CRON_FILE = """
import datetime
from airflow.sdk import DAG
from airflow.timetables.trigger import CronTriggerTimetable

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=CronTriggerTimetable("0 6 * * *", timezone="Europe/London"),
             start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)):
        pass
"""
CRON = ("migrate_cron_a", "migrate_cron_b")
MANY = tuple(f"migrate_cron_{n:02d}" for n in range(30))
"""Enough DAGs that a caller who leaves after the first few leaves most of the work undone."""
TESSERA = ("migrate_tessera",)
RANGE = "after=2026-02-01T00:00:00Z&until=2026-05-01T00:00:00Z"


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-migrate")
    store_dags(folder, CRON_FILE, (*CRON, *MANY))
    store_dags(folder, DAG_FILE, TESSERA)
    with airflow_api(folder) as api:
        yield api


def test_the_stored_dags_are_compared_and_windows_count_since_no_source_is_read(api):
    answer = api.call("GET", f"/tessera/api/v1/migrate?{RANGE}&limit=200", user="viewer")
    assert answer.status_code == 200, answer.text
    dags = {dag["dag_id"]: dag for dag in answer.json()["dags"]}
    cron = dags["migrate_cron_a"]
    assert cron["file"] is None and cron["reads_windows"] is None
    # The runs are kept; the windows are not, and without the file nothing says they are unread.
    assert cron["verdict"] == "same runs, different windows"
    assert cron["variants"][0]["proposal"] == "Cron('0 6 * * *', timezone='Europe/London', dst='once')"
    assert dags["migrate_tessera"]["kind"] == "tessera" and not dags["migrate_tessera"]["variants"]


def test_a_page_is_at_most_200_dags_and_a_range_at_most_400_days(api):
    assert api.call("GET", "/tessera/api/v1/migrate?limit=201", user="viewer").status_code == 422
    too_long = api.call("GET", "/tessera/api/v1/migrate?after=2026-01-01T00:00:00Z&until=2027-03-01T00:00:00Z")
    assert too_long.status_code == 422 and "by at most 400 days" in too_long.text
    paged = api.call("GET", f"/tessera/api/v1/migrate?{RANGE}&limit=1&offset=1", user="viewer")
    assert paged.status_code == 200 and len(paged.json()["dags"]) == 1


def test_a_page_holds_the_active_dags_a_stale_one_takes_no_place(api):
    """A page is ``limit`` of the active DAGs from ``offset``: a stale DAG the caller may still read, sorted before
    the one asked for, took its place (CI saw an empty page at offset 1, another module's stale DAG there)."""
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from sqlalchemy import delete, select

    stale = "migrate_cron_0_stale"  # sorts before migrate_cron_a
    with create_session() as session:
        session.merge(DagModel(dag_id=stale, bundle_name="dags-folder", is_paused=False, is_stale=True))
    try:
        with create_session() as session:
            active = sorted(session.scalars(select(DagModel.dag_id).where(~DagModel.is_stale)))
        offset = active.index("migrate_cron_a")
        page = api.call("GET", f"/tessera/api/v1/migrate?{RANGE}&limit=2&offset={offset}", user="viewer")
        assert page.status_code == 200, page.text
        assert [dag["dag_id"] for dag in page.json()["dags"]] == active[offset : offset + 2]
    finally:
        with create_session() as session:
            session.execute(delete(DagModel).where(DagModel.dag_id == stale))


def test_a_caller_that_leaves_stops_the_comparison_at_the_next_dag(api, monkeypatch):
    """Uvicorn on 127.0.0.1, three callers asking for every DAG, who hang up once the first DAGs are compared."""
    from tessera.plugin.migrate import report

    from ..api.test_api_cancellation import STOPPED_WITHIN_SECONDS, _served, callers_that_leave_once

    compared: list[str] = []
    real = report.compare_one

    def counted(dag_id: str, *args: Any, **kwargs: Any) -> Any:
        compared.append(dag_id)
        # A DAG that takes a tenth of a second, as one stepped through a dense year does (these daily crons repeat,
        # and compare in milliseconds): the requests would otherwise finish before a loaded server sees anyone leave.
        time.sleep(0.1)
        return real(dag_id, *args, **kwargs)

    monkeypatch.setattr(report, "compare_one", counted)
    headers = {"Authorization": f"Bearer {api.tokens['viewer']}"}
    with _served(api.client.app) as base:
        callers_that_leave_once(base, f"/tessera/api/v1/migrate?{RANGE}&limit=200", headers, lambda: len(compared) >= 3)
        left_at = len(compared)
        deadline = time.monotonic() + STOPPED_WITHIN_SECONDS
        seen, still_since = len(compared), time.monotonic()
        while time.monotonic() - still_since < 1.0:  # no DAG compared for a whole second
            assert time.monotonic() < deadline + 1.0, f"still comparing: {len(compared)}, {left_at} when they left"
            time.sleep(0.05)
            if len(compared) != seen:
                seen, still_since = len(compared), time.monotonic()
    # Each request stops at the first DAG boundary after the server has seen its caller leave; how many DAGs
    # that is depends on how fast a DAG compares against how fast a loaded server notices (a repeating
    # schedule now compares in milliseconds, and CI saw more than 3 a request). So the bounds are in time (the
    # work stopped within STOPPED_WITHIN_SECONDS, above) and in work: it stayed far from done.
    assert len(compared) < 3 * (len(CRON) + len(MANY) + len(TESSERA)) // 2, "the abandoned requests stopped early"
