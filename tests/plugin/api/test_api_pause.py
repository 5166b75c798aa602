"""``POST /tessera/api/v1/dags/{id}/pause`` and ``/unpause``: who may, the note's bounds, what is recorded.

On Airflow's real API app (simple auth manager, real tokens) and the SQLite metadata DB:
a viewer may not pause (403, as Airflow's own ``PATCH /api/v2/dags/{id}``), a user may; the
note is bounded at 1024 bytes of plain text; every pause is an audit-log entry with its note.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from .test_api_app import DAG_FILE, Api, airflow_api, store_dags

DAG_ID = "api_pause_probe"
PAUSE, UNPAUSE = f"/tessera/api/v1/dags/{DAG_ID}/pause", f"/tessera/api/v1/dags/{DAG_ID}/unpause"


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-pause")
    store_dags(folder, DAG_FILE, (DAG_ID,))
    with airflow_api(folder) as api:
        yield api


def _state() -> tuple[bool, list[tuple[str, str | None, dict]]]:
    """Whether the DAG is paused, and tessera's pause entries in the audit log (event, owner, extra)."""
    from airflow.models.dag import DagModel
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        paused = session.scalar(select(DagModel.is_paused).where(DagModel.dag_id == DAG_ID))
        rows = session.execute(
            select(Log.event, Log.owner, Log.extra)
            .where(Log.dag_id == DAG_ID, Log.event.like("tessera.dag.%"))
            .order_by(Log.id)
        ).all()
    return bool(paused), [(event, owner, json.loads(extra)) for event, owner, extra in rows]


@pytest.fixture(autouse=True)
def unpaused(api: Api) -> None:
    from airflow.models.dag import DagModel
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import delete, update

    with create_session() as session:
        session.execute(update(DagModel).where(DagModel.dag_id == DAG_ID).values(is_paused=False))
        session.execute(delete(Log).where(Log.dag_id == DAG_ID, Log.event.like("tessera.dag.%")))


def test_a_viewer_may_not_pause_as_in_airflows_own_api(api):
    own = api.call("PATCH", f"/api/v2/dags/{DAG_ID}", user="viewer", json_body={"is_paused": True})
    answer = api.call("POST", PAUSE, user="viewer", json_body={"note": "not mine to pause"})
    assert (own.status_code, answer.status_code) == (403, 403)
    assert _state() == (False, []), "a refused call changed nothing"


@pytest.mark.parametrize("role", ["user", "op", "admin"])
def test_a_user_pauses_with_a_note_and_unpauses(api, role):
    answer = api.call("POST", PAUSE, user=role, json_body={"note": "source down, see INC-12"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["is_paused"], body["note"], body["by"], body["reason"]) == (
        True,
        "source down, see INC-12",
        role,
        "by_hand",
    )
    assert _state() == (
        True,
        [("tessera.dag.pause", role, {"is_paused": True, "note": "source down, see INC-12", "reason": "by_hand"})],
    )
    back = api.call("POST", UNPAUSE, user=role, json_body={})
    assert back.status_code == 200 and back.json()["is_paused"] is False and back.json()["note"] is None
    assert _state()[0] is False


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        pytest.param(
            {"note": "é" * 513},
            422,
            "note: 1026 bytes of UTF-8; a pause note is at most 1024 bytes, so shorten it",
            id="note-too-long",
        ),
        pytest.param(
            {"note": "down\x1b[31m"},
            422,
            "note: 'down\\x1b[31m' holds the control character U+001B; write plain text",
            id="control-character",
        ),
        pytest.param({"note": 12}, 422, "string_type", id="note-not-text"),
        pytest.param({"is_paused": False}, 422, "extra_forbidden", id="unknown-field"),
        pytest.param([], 422, "request body: a JSON array; send a JSON object such as {}", id="not-an-object"),
    ],
)
def test_a_bad_body_is_refused_and_changes_nothing(api, body, status, detail):
    answer = api.call("POST", PAUSE, user="admin", json_body=body)
    assert answer.status_code == status
    assert detail in json.dumps(answer.json()["detail"], ensure_ascii=False).replace("\\\\", "\\")
    assert _state() == (False, [])


def test_a_form_post_from_another_site_is_refused(api):
    answer = api.call("POST", PAUSE, user="admin", data={"note": "x"})
    assert answer.status_code == 415
    assert _state() == (False, [])


def test_an_unknown_dag_is_404_naming_it(api):
    answer = api.call("POST", "/tessera/api/v1/dags/no_such_dag/pause", user="admin", json_body={})
    assert answer.status_code == 404
    assert answer.json()["detail"] == "dag_id: 'no_such_dag' is not a DAG Airflow knows (never parsed, or deleted)"


def test_why_cites_the_pause_tessera_recorded(api):
    assert api.call("POST", PAUSE, user="op", json_body={"note": "source down"}).status_code == 200
    why = api.call("GET", f"/tessera/api/v1/dags/{DAG_ID}/why", user="viewer")
    assert why.status_code == 200, why.text
    answer = json.dumps(why.json())
    # paused after the newest occurrence came due: what happens next cites the entry that proves the pause
    assert "The DAG is paused now: nothing is scheduled until it is unpaused" in answer, answer
    assert "(tessera.dag.pause)" in answer


# -- why a paused DAG is paused: on its status, its page row and in "why" ------------------------


def _rows(api: Api) -> tuple[dict, dict, dict]:
    """The DAG's row in the status list, its own status and its page row, as a viewer reads them."""
    answers = [
        api.call("GET", path, user="viewer")
        for path in ("/tessera/api/v1/status", f"/tessera/api/v1/dags/{DAG_ID}/status", "/tessera/api/v1/page")
    ]
    assert all(answer.status_code == 200 for answer in answers), [answer.text for answer in answers]
    listed, own, page = (answer.json() for answer in answers)
    of = lambda body: next(row for row in body["dags"] if row["dag_id"] == DAG_ID)  # noqa: E731
    return of(listed), own, of(page)


def test_the_status_and_the_page_say_who_paused_the_dag_why_and_the_note(api):
    note = "source down, see INC-12\n<img src=x onerror=alert(1)>"
    paused = api.call("POST", PAUSE, user="op", json_body={"note": note}).json()
    for row in _rows(api):
        assert row["is_paused"] is True
        assert row["pause"] == {
            "note": note,
            "by": "op",
            "at": paused["at"],
            "reason": "by_hand",
            "failed_runs": [],
            "failed_run_count": 0,
        }


def test_a_pause_made_in_airflow_after_tessera_s_has_no_note(api):
    assert api.call("POST", PAUSE, user="op", json_body={"note": "old reason"}).status_code == 200
    assert api.call("POST", UNPAUSE, user="op", json_body={}).status_code == 200
    assert all(row["pause"] is None for row in _rows(api)), "an unpaused DAG has no pause"
    assert api.call("POST", PAUSE, user="op", json_body={"note": "old reason"}).status_code == 200
    own = api.call("PATCH", f"/api/v2/dags/{DAG_ID}", user="op", json_body={"is_paused": True})
    assert own.status_code == 200, own.text
    rows = _rows(api)
    assert all(row["is_paused"] is True and row["pause"] is None for row in rows), rows


def _paused_after_failures(runs: list[str]) -> None:
    from airflow.utils.session import create_session

    from tessera.operators.pauses.notes import AFTER_FAILURES, set_paused

    with create_session() as session:
        set_paused(
            session, DAG_ID, paused=True, note="Paused by tessera: 12 runs failed in a row", by="tessera",
            reason=AFTER_FAILURES, failed_runs=runs,
        )  # fmt: skip


def test_a_pause_after_failures_names_its_reason_and_its_newest_failed_runs(api):
    runs = [f"scheduled__2026-03-02T{hour:02d}:00:00+00:00" for hour in range(12, 0, -1)]
    _paused_after_failures(runs)
    for row in _rows(api):
        pause = row["pause"]
        assert (pause["reason"], pause["by"], pause["failed_run_count"]) == ("pause_after_failures", "tessera", 12)
        assert pause["failed_runs"] == runs[:10], "the ten newest, of twelve"
        assert pause["note"] == "Paused by tessera: 12 runs failed in a row"


def test_why_says_the_note_and_the_reason_of_tessera_s_pause(api):
    assert api.call("POST", PAUSE, user="op", json_body={"note": 'source "down"'}).status_code == 200
    why = api.call("GET", f"/tessera/api/v1/dags/{DAG_ID}/why", user="viewer")
    assert why.status_code == 200, why.text
    paused = next(item for item in why.json()["evidence"] if (item["section"], item["fact"]) == ("next", "paused"))
    assert paused["text"].startswith("The DAG is paused now: nothing is scheduled until it is unpaused; then ")
    assert paused["text"].endswith(' by hand by op with the note "source \\"down\\"".'), paused
    assert paused["record"].endswith("(tessera.dag.pause)")


def test_why_says_a_pause_after_failures_and_its_runs(api):
    _paused_after_failures(["scheduled__c", "scheduled__b", "scheduled__a", "scheduled__0"])
    why = api.call("GET", f"/tessera/api/v1/dags/{DAG_ID}/why", user="viewer")
    assert why.status_code == 200, why.text
    paused = next(item for item in why.json()["evidence"] if (item["section"], item["fact"]) == ("next", "paused"))
    assert (
        "by tessera after 4 failed runs in a row (pause_after_failures: 'scheduled__c', 'scheduled__b', "
        "'scheduled__a' and 1 more) with the note \"Paused by tessera: 12 runs failed in a row\""
    ) in paused["text"], paused
