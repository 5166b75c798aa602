"""``GET /tessera/api/v1/dags/{dag_id}/why`` and broken DAGs in the lists, through Airflow's own API app.

In-process: Airflow's API app with the tessera app mounted, the simple auth manager's users,
the real SQLite metadata DB. A broken DAG is made as the dag-processor leaves one: an import
error for its file, ``has_import_errors`` and ``is_stale`` set on its row, and tessera's parse
record in the audit log. Before the lists kept such a DAG, its status route answered 404.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator

import pytest
from sqlalchemy import update

from tests.plugin.api.test_api_app import DAG_FILE, Api, airflow_api, store_dags

HEALTHY, BROKEN, MISSING = "why_api_healthy", "why_api_broken", "why_api_missing"
SIBLING = "why_api_sibling"
ERROR = (
    'Traceback (most recent call last):\n  File "why_api_broken.py", line 5\n'
    "ValueError: every: '7m' does not divide a day evenly; use a divisor of 24h"
)
WHY = f"/tessera/api/v1/dags/{HEALTHY}/why"


def break_dag(dag_id: str, *, error: str | None, since: datetime.datetime) -> None:
    """What the dag-processor leaves for a DAG whose file fails (``error``) or is gone (None), and tessera's record."""
    from airflow.models.dag import DagModel
    from airflow.models.errors import ParseImportError
    from airflow.models.log import Log
    from airflow.utils.session import create_session

    with create_session() as session:
        model = session.get(DagModel, dag_id)
        state = {"state": "missing", "stale": True, "reason": "FileMissing", "since": since.isoformat()}
        if error is not None:
            parsed_error = ParseImportError(
                filename=model.relative_fileloc, bundle_name=model.bundle_name, stacktrace=error
            )
            parsed_error.timestamp = since
            session.add(parsed_error)
            session.flush()
            state = {**state, "state": "broken", "reason": "ScheduleInvalid", "import_error_id": parsed_error.id}
        session.execute(
            update(DagModel).where(DagModel.dag_id == dag_id).values(is_stale=True, has_import_errors=error is not None)
        )
        entry = Log("tessera.parse", dag_id=dag_id, owner="tessera", extra=json.dumps(state))
        entry.dttm = since
        session.add(entry)


def _stored_long_ago(dag_ids: tuple[str, ...]) -> None:
    """The DAGs existed at the instants asked about (their first version is dated back)."""
    from airflow.models.dag_version import DagVersion
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session

    stored = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    with create_session() as session:
        session.execute(update(DagVersion).where(DagVersion.dag_id.in_(dag_ids)).values(created_at=stored))
        serialized = update(SerializedDagModel).where(SerializedDagModel.dag_id.in_(dag_ids))
        session.execute(serialized.values(created_at=stored, last_updated=stored))


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-why-api")
    store_dags(folder, DAG_FILE, (HEALTHY, BROKEN, SIBLING))
    store_dags(folder, DAG_FILE, (MISSING,))
    _stored_long_ago((HEALTHY, BROKEN, SIBLING, MISSING))
    since = datetime.datetime(2026, 11, 30, 12, 3, tzinfo=datetime.timezone.utc)
    break_dag(BROKEN, error=ERROR, since=since)
    break_dag(MISSING, error=None, since=since)
    with airflow_api(folder) as api:
        yield api


def test_the_why_route_answers_a_verdict_with_evidence_for_a_viewer(api):
    answer = api.call("GET", WHY, user="viewer", params={"at": "2026-11-30T12:06:00+01:00"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["at"].startswith("2026-11-30T11:06:00")
    assert body["verdict"] and body["cause"]
    sections = [item["section"] for item in body["evidence"]]
    assert sections[0] == "schedule" and "airflow" in sections or "next" in sections
    assert body["schedule_in_force"].startswith("every 5m · delay 30s · phase 2m10s")
    assert "conf" not in json.dumps(body)


@pytest.mark.parametrize(
    "value",
    [
        "0001-01-01T00:00:00Z",
        "1899-12-31T23:59:59Z",
        "3000-01-01T00:00:00Z",
        "2026-11-30T12:00:00",
        "yesterday",
        "1764504000",  # pydantic would read a bare number as seconds since 1970: not an instant the document names
    ],
    ids=["year-1", "before-1900", "year-3000", "naive", "not-an-instant", "bare-number"],
)
def test_an_instant_outside_the_supported_range_is_a_422_naming_at(api, value):
    answer = api.call("GET", WHY, user="viewer", params={"at": value})
    assert answer.status_code == 422, answer.text
    assert "`at`" in json.dumps(answer.json()["detail"])


def test_without_a_token_it_is_a_401_and_an_unknown_dag_a_404(api):
    assert api.call("GET", WHY, user=None).status_code == 401
    answer = api.call("GET", "/tessera/api/v1/dags/no_such_dag/why", user="admin")
    assert answer.status_code == 404, answer.text
    assert "no_such_dag" in answer.json()["detail"]


def test_a_broken_dag_keeps_its_status_row_with_the_reason_and_when_it_broke(api):
    answer = api.call("GET", f"/tessera/api/v1/dags/{BROKEN}/status", user="viewer")
    assert answer.status_code == 200, answer.text
    row = answer.json()
    assert row["broken"]["reason"] == "ScheduleInvalid"
    assert row["broken"]["since"].startswith("2026-11-30T12:03:00")
    assert row["broken"]["stale"] is True
    assert "every: '7m' does not divide a day evenly" in row["broken"]["message"]
    spec = next(c for c in row["conditions"] if c["type"] == "SpecValid")
    assert (spec["status"], spec["reason"]) == ("False", "ScheduleInvalid")
    assert row["error"].startswith("ScheduleInvalid: every: '7m'")
    assert "since 2026-11-30 12:03:00 UTC; Airflow creates no new run of it" in row["error"]


def test_a_dag_whose_file_is_gone_keeps_its_rows_in_both_lists(api):
    statuses = {row["dag_id"]: row for row in api.call("GET", "/tessera/api/v1/status", user="viewer").json()["dags"]}
    plans = {row["dag_id"]: row for row in api.call("GET", "/tessera/api/v1/plan", user="viewer").json()["dags"]}
    for dag_id in (BROKEN, MISSING):
        assert statuses[dag_id]["broken"] is not None and plans[dag_id]["broken"] is not None, dag_id
        assert plans[dag_id]["occurrences"] == [] and plans[dag_id]["error"]
    assert statuses[MISSING]["broken"]["reason"] == "FileMissing"
    assert statuses[HEALTHY]["broken"] is None
    assert list(statuses) == sorted(statuses)


def test_why_at_a_broken_instant_cites_the_parse_record(api):
    answer = api.call("GET", f"/tessera/api/v1/dags/{BROKEN}/why", user="viewer", params={"at": "2026-11-30T12:20:00Z"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["cause"] == "broken", body["verdict"]
    # the file, the reason and the error's first line (the caller may read every DAG of the file)
    assert re.search(
        r"the DAG file '[^']+' failed to import \(ScheduleInvalid: every: '7m' does not divide a day evenly[^)]*\) "
        r"from 2026-11-30 12:03:00 UTC",
        body["verdict"],
    ), body["verdict"]
    assert any((item["record"] or "").endswith("(tessera.parse)") for item in body["evidence"])


def test_an_import_error_is_hidden_from_a_caller_who_may_not_read_every_dag_of_its_file(api):
    from airflow.utils.session import create_session

    from tessera.plugin.fleet.broken import broken_dags
    from tessera.plugin.scoped_reads import HIDDEN, Scope

    with create_session() as session:
        everyone = broken_dags(session, Scope.everything(), [BROKEN])[BROKEN]
        without_sibling = broken_dags(session, Scope.of({BROKEN, HEALTHY}), [BROKEN])[BROKEN]
    assert everyone.message.startswith("every: '7m' does not divide a day evenly")
    assert (without_sibling.message, without_sibling.reason) == (HIDDEN, "ScheduleInvalid")


def test_why_about_an_occurrence_before_the_break_still_says_the_file_is_broken_now(api):
    answer = api.call(
        "GET", f"/tessera/api/v1/dags/{MISSING}/why", user="viewer", params={"at": "2026-11-30T12:03:10Z"}
    )
    assert answer.status_code == 200, answer.text
    verdict = answer.json()["verdict"]
    assert verdict.endswith(
        "Since 2026-11-30 12:03:00 UTC the DAG's file is gone: Airflow creates no new run of it until it parses again."
    )
