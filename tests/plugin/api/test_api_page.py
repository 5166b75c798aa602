"""``GET /api/v1/page``: every row, a broken one with its error, and only the DAGs the caller may read.

On the app of ``test_api_app.py``: two healthy DAGs every 5 minutes, one whose stored timetable
no longer loads, one whose plan overflows near the year 10000, and a declared schedule's
pipeline whose timetable class is not registered.
"""

from __future__ import annotations

import pytest

from .test_api_app import HEALTHY, UNPLANNABLE, UNREADABLE, UNREADABLE_PIPELINE, api  # noqa: F401 - the fixture

PAGE = "/tessera/api/v1/page"


def _rows(answer) -> dict:  # noqa: ANN001
    assert answer.status_code == 200, answer.text
    return {row["dag_id"]: row for row in answer.json()["dags"]}


def test_a_dag_that_cannot_be_planned_answers_its_row_with_the_error_the_plan_gives(api):  # noqa: F811
    from tessera.plugin.fleet.overview import PageResponse

    answer = api.call("GET", PAGE, user="viewer")
    PageResponse.model_validate(answer.json())
    rows = _rows(answer)
    plans = _rows(api.call("GET", "/tessera/api/v1/plan?count=1", user="viewer"))
    for dag_id in (UNREADABLE, UNREADABLE_PIPELINE):
        assert rows[dag_id]["error"], dag_id
        assert rows[dag_id]["error"] == plans[dag_id]["error"], dag_id
        assert rows[dag_id]["lane"] is None and rows[dag_id]["lateness"]["state"] == "unknown"
    assert "does not divide a day evenly" in rows[UNREADABLE]["error"]
    # Its start date is minutes before the year 10000: its next run is then, and its lane is empty.
    overflowing = rows[UNPLANNABLE]
    assert overflowing["error"] is None and overflowing["next"] == plans[UNPLANNABLE]["occurrences"][0]
    assert overflowing["next"]["occurrence"].startswith("9999-12-31T23:5")
    assert overflowing["lane"]["segments"] == []
    for dag_id in HEALTHY:
        row = rows[dag_id]
        assert row["error"] is None and row["summary"].startswith("every 5m")
        (segment,) = row["lane"]["segments"]  # 71 days of a 5-minute cadence: one segment
        assert segment["period"] == 300_000_000 and segment["offsets"] == [0]
        assert row["next"]["occurrence"].endswith(":00Z")


def test_the_page_lists_only_the_dags_the_caller_may_read(api, monkeypatch):  # noqa: F811
    """An auth manager that lets the caller read one DAG: the page shows that row and no other."""
    from tessera.plugin.api.routes import costs

    # the page reads the caller's DAGs as every fleet-wide list does (``costs.readable_fleet``)
    monkeypatch.setattr(costs, "readable", lambda user: {HEALTHY[0], "a_dag_that_is_not_stored"})
    rows = _rows(api.call("GET", PAGE, user="viewer"))
    assert set(rows) == {HEALTHY[0]}


@pytest.mark.parametrize("caller", [None, "not-a-jwt"], ids=["no-token", "bad-token"])
def test_the_page_needs_a_signed_in_caller(api, caller):  # noqa: F811
    answer = api.call("GET", PAGE, user=None, token=caller)
    assert answer.status_code in (401, 403), answer.text
    assert "dags" not in answer.text


def test_a_lane_is_computed_once_an_hour_per_stored_version_and_anchor():
    """The page's lanes start at the hour: one lane serves every load in it, until the DAG or its next run changes."""
    import datetime
    from types import SimpleNamespace

    from tessera.plugin.fleet.plans import next_and_lane
    from tessera.plugin.fleet.schedules import ScheduledDag
    from tessera.plugin.fleet.stored import StoredDag
    from tessera.timetables import Every

    utc = datetime.timezone.utc
    daily = Every.day()  # from the last run: its lane depends on the run stored on the DAG row
    stored = StoredDag("page_cache", timetable=daily)
    anchor = datetime.datetime(2026, 3, 1, 6, 30, tzinfo=utc)

    def item(version: StoredDag, stored_next: datetime.datetime) -> ScheduledDag:
        row = SimpleNamespace(dag_id="page_cache", next_dagrun_data_interval_end=stored_next, timetable_summary="")
        return ScheduledDag(model=row, stored=version, timetable=version.timetable, declared_schedule=None)

    now = datetime.datetime(2026, 3, 2, 12, 10, tzinfo=utc)
    until = datetime.datetime(2026, 5, 12, 12, 0, tzinfo=utc)
    first, lane = next_and_lane(item(stored, anchor), now=now, lane_until=until)
    later_first, same = next_and_lane(item(stored, anchor), now=now + datetime.timedelta(minutes=40), lane_until=until)
    assert same is lane and lane.after == 1772452800000000  # 2026-03-02 12:00: the hour `now` is in
    assert first == later_first and first["occurrence"] == datetime.datetime(2026, 3, 3, 6, 30, tzinfo=utc)
    moved = anchor + datetime.timedelta(hours=2)  # the scheduler stored another next run
    _, other = next_and_lane(item(stored, moved), now=now, lane_until=until)
    assert other is not lane and other.segments[0].first % 86_400_000_000 == 8 * 3_600_000_000 + 30 * 60_000_000
    reparsed = StoredDag("page_cache", timetable=daily)  # a new stored version, even an equal one
    _, again = next_and_lane(item(reparsed, moved), now=now, lane_until=until)
    assert again is not other and again == other


def test_the_pages_of_rows_hold_every_row_once_in_dag_id_order(api):  # noqa: F811
    """Walking the pages two rows at a time lists what one page of every row lists, in the same order."""
    whole = api.call("GET", PAGE, user="viewer").json()
    assert whole["offset"] == 0 and whole["total"] == len(whole["dags"]) >= 5
    walked, offset = [], 0
    while True:
        page = api.call("GET", f"{PAGE}?offset={offset}&limit=2", user="viewer").json()
        assert page["total"] == whole["total"] and page["offset"] == offset
        assert len(page["dags"]) <= 2
        if not page["dags"]:
            break
        walked += [(row["dag_id"], row["summary"], row["error"]) for row in page["dags"]]
        offset += 2
    assert walked == [(row["dag_id"], row["summary"], row["error"]) for row in whole["dags"]]
    assert [dag_id for dag_id, _, _ in walked] == sorted({dag_id for dag_id, _, _ in walked})
    assert offset == whole["total"] + whole["total"] % 2  # the walk ended on the first empty page


def test_a_page_holds_at_most_1000_rows_and_a_bounded_offset(api):  # noqa: F811
    from tessera.plugin.api.inputs import MAX_PAGE_OFFSET, PAGE_ROWS

    assert PAGE_ROWS == 1000
    beyond = api.call("GET", f"{PAGE}?offset={MAX_PAGE_OFFSET}", user="viewer")
    assert beyond.status_code == 200 and beyond.json()["dags"] == [] and beyond.json()["total"] > 0
    for query, field in [
        ("limit=0", "limit"),
        (f"limit={PAGE_ROWS + 1}", "limit"),
        ("offset=-1", "offset"),
        (f"offset={MAX_PAGE_OFFSET + 1}", "offset"),
        ("limit=ten", "limit"),
    ]:
        answer = api.call("GET", f"{PAGE}?{query}", user="viewer")
        assert answer.status_code == 422, (query, answer.text)
        assert field in answer.text, (query, answer.text)
