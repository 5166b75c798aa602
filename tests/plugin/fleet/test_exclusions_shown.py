"""Where a person sees the occurrences exclusions skip: the REST plan, the backfill preview, ``tessera plan``.

The scheduler creates no run for an excluded occurrence, so Airflow's tables hold no trace of
it; these are the surfaces that say it was skipped and why. Each test reads the words a person
reads (the holiday's name, the calendar, the local time), through Airflow's own API app on the
real SQLite metadata DB (the stored, serialized timetable: no ``holidays`` call behind it) and
through the CLI over the DAG file.

Independence Day 2026 falls on a Saturday, so New York observes it on Friday 3 July: a
business-day schedule runs Thursday 2 July and then Monday 6 July, whose window starts at
Thursday's run.
"""

from __future__ import annotations

import datetime
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tessera.plugin.cli import EXIT_OK, main
from tests.plugin.api.test_api_app import Api, airflow_api, store_dags

BUSINESS = "shown_business_days"
CRON = "shown_cron_except_range"
DAGS = """
from airflow.sdk import DAG
from tessera.timetables import Cron, Every, between, holidays_of

NEW_YORK = "America/New_York"
SCHEDULES = {{
    "shown_business_days": Every.business_day(
        at="09:00", timezone=NEW_YORK, calendar=holidays_of("US", subdiv="NY", years=(2026, 2026))
    ),
    "shown_cron_except_range": Cron("0 23 * * *", timezone=NEW_YORK, exclude=between("2026-07-03", "2026-07-04")),
}}
for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=SCHEDULES[dag_id], start_date=None):
        pass
"""
OBSERVED = "Independence Day (observed) (holidays US-NY)"


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-exclusions-shown")
    store_dags(folder, DAGS, (BUSINESS, CRON))
    with airflow_api(folder) as api:
        yield api


def test_the_plan_lists_the_holiday_it_skips_and_the_next_window_covers_it(api):
    answer = api.call(
        "GET",
        f"/tessera/api/v1/dags/{BUSINESS}/plan",
        user="viewer",
        params={"after": "2026-07-02T00:00:00Z", "count": 2},
    )
    assert answer.status_code == 200, answer.text
    plan = answer.json()
    assert [run["occurrence"] for run in plan["occurrences"]] == ["2026-07-02T13:00:00Z", "2026-07-06T13:00:00Z"]
    assert plan["occurrences"][1]["window_start"] == "2026-07-02T13:00:00Z"  # Thursday's run: the holiday is covered
    assert plan["excluded"] == [
        {"occurrence": "2026-07-03T13:00:00Z", "occurrence_local": "2026-07-03T09:00:00-04:00", "reasons": [OBSERVED]}
    ]
    assert "holidays US-NY 2026-2026" in plan["summary"]


def test_the_backfill_preview_lists_the_excluded_dates_with_their_range(api):
    query = {"from_date": "2026-07-02T00:00:00Z", "to_date": "2026-07-06T12:00:00Z"}
    answer = api.call("GET", f"/tessera/api/v1/dags/{CRON}/backfill-preview", user="viewer", params=query)
    assert answer.status_code == 200, answer.text
    preview = answer.json()
    # 23:00 New York is 03:00 UTC the next day: the runs of 2 and 5 July remain, those of 3 and 4 July are
    # skipped; the range bounds each period's start, so the period starting 6 July 03:00 UTC is the third run.
    ends = ["2026-07-03T03:00:00Z", "2026-07-06T03:00:00Z", "2026-07-07T03:00:00Z"]
    assert [run["window_end"] for run in preview["runs"]] == ends
    assert preview["runs"][1]["window_start"] == "2026-07-03T03:00:00Z"
    assert [(item["occurrence_local"], item["reasons"]) for item in preview["excluded"]] == [
        ("2026-07-03T23:00:00-04:00", ["excluded 2026-07-03 to 2026-07-04"]),
        ("2026-07-04T23:00:00-04:00", ["excluded 2026-07-03 to 2026-07-04"]),
    ]


def test_a_span_without_a_holiday_lists_none(api):
    answer = api.call(
        "GET", f"/tessera/api/v1/dags/{BUSINESS}/plan", user="viewer", params={"after": "2026-07-06T14:00:00Z"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["excluded"] == []  # no holiday in the next ten business days


# -- tessera plan, over the DAG file -------------------------------------------------------------


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "shown.py"
    path.write_text(textwrap.dedent(DAGS.format(dag_ids=[BUSINESS, CRON])))
    return path


def test_tessera_plan_prints_the_skipped_holiday_by_name(tmp_path, capsys):
    argv = ["plan", str(_file(tmp_path)), "--dag-id", BUSINESS, "--after", "2026-07-02T00:00:00Z", "--count", "2"]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert f"  skipped 2026-07-03 09:00: {OBSERVED}\n" in out
    assert out.count("skipped") == 1


def test_tessera_plan_json_has_the_excluded_list(tmp_path, capsys):
    argv = ["plan", str(_file(tmp_path)), "--dag-id", CRON, "--after", "2026-07-02T12:00:00Z", "--count", "2", "--json"]
    assert main(argv) == EXIT_OK
    (dag,) = json.loads(capsys.readouterr().out)["dags"]
    assert [item["occurrence"] for item in dag["excluded"]] == ["2026-07-04T03:00:00Z", "2026-07-05T03:00:00Z"]


def test_the_preview_from_the_file_prints_each_skipped_occurrence(tmp_path, capsys):
    argv = [
        "plan",
        str(_file(tmp_path)),
        "--dag-id",
        CRON,
        "--from",
        "2026-07-02T00:00:00Z",
        "--to",
        "2026-07-06T12:00:00Z",
    ]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert "creates 3 runs" in out
    assert "  skipped 2026-07-03 23:00: excluded 2026-07-03 to 2026-07-04\n" in out
    assert "  skipped 2026-07-04 23:00: excluded 2026-07-03 to 2026-07-04\n" in out


def test_why_says_the_occurrence_at_t_was_excluded_and_by_what(api):
    # Friday 3 July 2026, 09:00 New York: the observed Independence Day, skipped by the business-day calendar.
    at = {"at": "2026-07-03T14:00:00Z"}
    answer = api.call("GET", f"/tessera/api/v1/dags/{BUSINESS}/why", user="viewer", params=at)
    assert answer.status_code == 200, answer.text
    why = answer.json()
    assert why["cause"] == "excluded", why
    assert why["verdict"].startswith(
        "No run at T: the 2026-07-03 13:00:00 UTC (09:00:00 EDT America/New_York) occurrence was skipped"
    ), why["verdict"]
    assert f"skipped by the schedule's exclusions ({OBSERVED})" in why["verdict"]
    assert "The occurrence before it was 2026-07-02 13:00:00 UTC (09:00:00 EDT America/New_York)" in why["verdict"]


def _page_at(api: Api, monkeypatch: pytest.MonkeyPatch, now: datetime.datetime) -> dict[str, dict]:
    """The page's rows as of ``now`` (the route's clock only: the callers' tokens stay valid)."""
    monkeypatch.setattr("tessera.plugin.api.routes.plan.utcnow", lambda: now)
    answer = api.call("GET", "/tessera/api/v1/page", user="viewer")
    assert answer.status_code == 200, answer.text
    return {row["dag_id"]: row for row in answer.json()["dags"]}


def test_the_page_row_names_the_next_holiday_before_its_gap_reaches_the_lane(api, monkeypatch):
    """On 1 July the business-day row says it skips 3 July and why; the cron row names its range's first day."""
    rows = _page_at(api, monkeypatch, datetime.datetime(2026, 7, 1, 12, tzinfo=datetime.UTC))
    assert rows[BUSINESS]["next_exclusion"] == {
        "occurrence": "2026-07-03T13:00:00Z",
        "occurrence_local": "2026-07-03T09:00:00-04:00",
        "reasons": [OBSERVED],
    }
    excluded = rows[CRON]["next_exclusion"]
    assert excluded["occurrence_local"] == "2026-07-03T23:00:00-04:00", excluded
    assert excluded["reasons"] and "2026-07-03" in excluded["reasons"][0], excluded


def test_a_row_whose_exclusions_are_all_past_names_none(api, monkeypatch):
    """After the calendar's last year (2026), nothing is named: no stale holiday on the row."""
    rows = _page_at(api, monkeypatch, datetime.datetime(2027, 1, 4, 12, tzinfo=datetime.UTC))
    assert rows[BUSINESS]["next_exclusion"] is None and rows[CRON]["next_exclusion"] is None
