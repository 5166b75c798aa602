"""The Schedules page's search, filters and sort, applied on the server to the whole matching fleet.

A fleet of 40 DAGs in the real metadata DB (SQLite) through Airflow's API app: tagged two ways,
some late (their stored next run hours ago), some whose newest run failed, some paused, some whose
schedule skips today. Each filter's rows are checked against the status route's answer (the
REST API's own judgement of each DAG) and the database; the counts are the matching fleet's
whatever page is shown; each order is the one the rows' own fields give.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from ..api.test_api_app import Api, airflow_api, forget_dags, store_dags

FLEET = 40
IDS = tuple(f"flt_{n:02d}" for n in range(FLEET))
TODAY = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
FILE = """
from airflow.sdk import DAG, task
from tessera.timetables import Cron, Every, Fixed, between

for dag_id in {dag_ids!r}:
    n = int(dag_id[-2:])
    tags = ["team-a" if n % 2 == 0 else "team-b"] + (["urgent"] if n % 5 == 0 else [])
    if n % 4 == 3:  # skips today
        schedule = Cron("0 * * * *", exclude=between("TODAY", "TODAY"))
    elif n % 13 == 12:  # keeps one-period windows: a dropped fire's window is owed
        schedule = Every("5m", phase=Fixed("1m"), dropped="owe")
    else:
        schedule = Every("5m", phase=Fixed("1m"))
    with DAG(dag_id, schedule=schedule, start_date=None, tags=tags):
        @task
        def work():
            pass
        work()
""".replace("TODAY", TODAY)
LATE = {dag_id for dag_id in IDS if int(dag_id[-2:]) % 3 == 0}
FAILED = {dag_id for dag_id in IDS if int(dag_id[-2:]) % 7 == 0}
PAUSED = {dag_id for dag_id in IDS if int(dag_id[-2:]) % 10 == 9}
SKIPS_TODAY = {dag_id for dag_id in IDS if int(dag_id[-2:]) % 4 == 3}
OWING = {dag_id for dag_id in IDS if int(dag_id[-2:]) % 13 == 12 and dag_id not in SKIPS_TODAY}
PAGE = "/tessera/api/v1/page"


def _plant() -> None:
    """Late DAGs: their stored next run 1 to 14 hours ago (each by a different amount); failed runs; pauses.

    The other five-minute DAGs' stored next run is an hour ahead: as parsed it is the newest window,
    late five minutes after it came due, and a loaded worker reached the module's later tests past
    that (CI: 17 more DAGs late than planted, and the paged late list cut at 20 rows).
    """
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunType

    now = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
    now -= datetime.timedelta(minutes=now.minute % 5)
    with create_session() as session:
        for dag_id in IDS:
            n = int(dag_id[-2:])
            model = session.get(DagModel, dag_id)
            model.is_paused = dag_id in PAUSED
            if dag_id in LATE or dag_id not in SKIPS_TODAY:
                ago = datetime.timedelta(hours=1 + n // 3) if dag_id in LATE else datetime.timedelta(hours=-1)
                end = now - ago
                model.next_dagrun_data_interval_start = end - datetime.timedelta(minutes=5)
                model.next_dagrun_data_interval_end = end
                model.next_dagrun = end - datetime.timedelta(minutes=5)
                model.next_dagrun_create_after = end + datetime.timedelta(minutes=1)
            if dag_id in OWING:  # two scheduled runs two windows apart: those two windows are owed
                first = datetime.datetime(2026, 3, 1, tzinfo=datetime.timezone.utc)
                for start in (first, first + datetime.timedelta(minutes=15)):
                    end = start + datetime.timedelta(minutes=5)
                    run = DagRun(dag_id, f"scheduled__{start.isoformat()}", run_after=end,
                                 logical_date=start, run_type=DagRunType.SCHEDULED, state=DagRunState.SUCCESS,
                                 data_interval=(start, end))  # fmt: skip
                    session.add(run)
            if dag_id in FAILED:
                start = datetime.datetime(2026, 3, 2, tzinfo=datetime.timezone.utc)
                run = DagRun(dag_id, "manual__failed", run_after=start, run_type=DagRunType.MANUAL,
                             state=DagRunState.FAILED, start_date=start)  # fmt: skip
                run.end_date = start + datetime.timedelta(minutes=1)
                session.add(run)


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-filters")
    store_dags(folder, FILE, IDS)
    _plant()
    try:
        with airflow_api(folder) as api:
            yield api
    finally:
        forget_dags("flt_")


def _page(api: Api, query: str, user: str = "viewer") -> dict[str, Any]:
    answer = api.call("GET", f"{PAGE}?search=flt_&{query}", user=user)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _ids(page: dict[str, Any]) -> list[str]:
    return [row["dag_id"] for row in page["dags"]]


@pytest.fixture(scope="module")
def statuses(api: Api) -> dict[str, dict[str, Any]]:
    """The REST API's status of each DAG of the fleet: what the filters must agree with."""
    rows = api.call("GET", "/tessera/api/v1/status", user="viewer").json()["dags"]
    return {row["dag_id"]: row for row in rows if row["dag_id"].startswith("flt_")}


def test_the_planted_fleet_is_what_the_status_says(statuses):
    """The premise: the status route judges the planted DAGs late, failed and paused.

    (An hourly cron that skips today is late too: its stored next run is yesterday's last; so is a
    DAG owing windows, whose newest scheduled run is months old.)
    """
    late = {d for d, row in statuses.items() if row["lateness"]["late"]}
    assert LATE - PAUSED <= late and late - LATE <= SKIPS_TODAY | OWING
    assert {d for d, row in statuses.items() if row["last_outcome"] == "failed"} == FAILED
    assert {d for d, row in statuses.items() if row["is_paused"]} == PAUSED
    assert {d: row["owed_windows"] for d, row in statuses.items() if row["owed_windows"]} == dict.fromkeys(OWING, 2)


JUDGED = {
    "late": lambda row: row["lateness"]["late"],
    "not_ready": lambda row: any(c["status"] == "False" for c in row["conditions"]),
    "failed_last": lambda row: row["last_outcome"] == "failed",
    "paused": lambda row: row["is_paused"],
}


@pytest.mark.parametrize("name", [*JUDGED, "excluded_today", "owed"])
def test_each_filter_lists_the_dags_the_status_and_the_plan_judge_so(api, statuses, name):
    page = _page(api, f"filter={name}")
    if name in JUDGED:
        expected = sorted(d for d, row in statuses.items() if JUDGED[name](row))
    elif name == "excluded_today":
        expected = sorted(SKIPS_TODAY)
    else:  # the DAGs owing windows, and those whose newest record dropped fires
        expected = sorted(d for d, row in statuses.items() if row["owed_windows"] or row["latest_drop"])
        assert set(expected) >= OWING and OWING, "the planted gaps are owed"
        shown = {row["dag_id"]: row["owed_windows"] for row in page["dags"]}
        assert {dag_id: shown[dag_id] for dag_id in OWING} == dict.fromkeys(OWING, 2), "the row says what is owed"
    assert _ids(page) == expected
    # The fleet: every tessera DAG the caller may read, this module's and those other tests stored.
    assert page["total"] == len(expected) and page["fleet_total"] == _page(api, "")["fleet_total"] >= FLEET
    assert page["query"]["filters"] == [name]


def test_filters_combine_and_the_counts_are_the_whole_matching_fleets_not_the_pages(api, statuses):
    page = _page(api, "filter=late&filter=failed_last&limit=1")
    both = sorted(d for d, row in statuses.items() if row["lateness"]["late"] and row["last_outcome"] == "failed")
    assert page["total"] == len(both) and _ids(page) == both[:1]
    everything = _page(api, "limit=3")
    assert len(everything["dags"]) == 3 and everything["total"] == FLEET
    for name, judge in JUDGED.items():
        assert everything["counts"][name] == sum(1 for row in statuses.values() if judge(row)), name


def test_the_search_is_a_substring_of_the_id_whatever_its_case_and_a_wildcard_is_itself(api):
    assert _ids(_page(api, "search=FLT_1")) == sorted(d for d in IDS if d.startswith("flt_1"))
    assert _ids(_page(api, "search=%25")) == []  # "%" is searched for as itself: no id holds it
    # A search narrows the fleet in SQL; the fleet's size is still told.
    assert _page(api, "search=flt_0")["fleet_total"] >= FLEET


def test_a_tag_lists_the_dags_the_database_tags_so(api):
    from airflow.models.dag import DagTag
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        urgent = sorted(session.scalars(select(DagTag.dag_id).where(DagTag.name == "urgent", DagTag.dag_id.in_(IDS))))
        team_b = set(session.scalars(select(DagTag.dag_id).where(DagTag.name == "team-b", DagTag.dag_id.in_(IDS))))
    assert urgent and _ids(_page(api, "tag=urgent")) == urgent
    assert _ids(_page(api, "tag=urgent&tag=team-b")) == sorted(set(urgent) | team_b)  # any of them
    late = {row["dag_id"] for row in _page(api, "filter=late")["dags"]}
    assert _ids(_page(api, "tag=urgent&filter=late")) == sorted(set(urgent) & late)


def test_each_sort_orders_by_what_the_rows_say(api, statuses):
    by_id = _page(api, "sort=dag_id")
    assert _ids(by_id) == sorted(IDS)
    late = _page(api, "sort=lateness")
    lateness = [row["lateness"]["late_by_seconds"] for row in late["dags"] if row["lateness"]["late"]]
    judged = {d: row["lateness"]["late_by_seconds"] for d, row in statuses.items() if row["lateness"]["late"]}
    assert len(lateness) == len(judged) and lateness == sorted(lateness, reverse=True)
    assert _ids(late)[: len(judged)] == sorted(judged, key=lambda d: (-judged[d], d))
    assert _ids(late)[len(judged) :] == sorted(set(IDS) - set(judged))
    soonest = _page(api, "sort=next_run")
    starts = [(row["next"]["run_after"], row["dag_id"]) for row in soonest["dags"] if row["next"]]
    assert starts == sorted(starts) and len(starts) == FLEET
    assert soonest["query"]["sort"] == "next_run"


def test_a_later_page_of_a_sorted_filtered_list_continues_it(api):
    whole = _ids(_page(api, "filter=late&sort=lateness"))
    pages = [_ids(_page(api, f"filter=late&sort=lateness&offset={offset}&limit=4")) for offset in range(0, 20, 4)]
    assert [d for page in pages for d in page] == whole


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("filter=latte", "`filter`: 'latte' is not a filter; use one of late, not_ready"),
        ("sort=fastest", "`sort`: 'fastest' is not an order; use one of dag_id, lateness, next_run"),
        ("search=" + "x" * 251, "`search`: 'xxxxxxxx"),
        ("tag=" + "t" * 101, "`tag`: 'tttt"),
        ("&".join(["tag=a"] * 11), "`tag`: 11 tags given; name at most 10"),
        ("limit=0", "limit"),
        ("offset=-1", "offset"),
    ],
)
def test_a_parameter_out_of_bounds_is_a_422_naming_it_the_value_and_the_fix(api, query, says):
    answer = api.call("GET", f"{PAGE}?{query}", user="viewer")
    assert answer.status_code == 422, answer.text
    assert says in answer.text
