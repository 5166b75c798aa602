"""The backfill preview is bounded: supported dates, at most 1000 runs, a deadline, and it stops when its caller leaves.

In-process, through Airflow's own API app with the tessera app mounted (``test_api_app.airflow_api``)
on the real SQLite metadata DB, with a viewer's token: a viewer may ask for a preview, so the
bounds must hold for the least-trusted caller. ``test_backfill_bounds_live.py`` measures the
same requests against a real ``airflow api-server`` process (time and memory).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine

from tessera.plugin.actions import backfill_preview
from tessera.plugin.actions.backfill_preview import (
    MAX_PREVIEW_RUNS,
    Budget,
    PreviewAbandoned,
    preview_stored,
)
from tessera.plugin.errors import Invalid
from tessera.timetables.support import PARTITIONS, carried
from tests.compat import needs
from tests.compat.airflow_names import airflows_dry_run, partition_fields
from tests.plugin.api.test_api_app import Api, airflow_api, store_dags

UTC = datetime.timezone.utc
FIVE = "bounds_five_minutes"
ONE_SECOND = "bounds_one_second"
PARTITIONED = "bounds_partitioned"
DAGS = """
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

SCHEDULES = {{  # built for the DAGs stored only: partitions need Airflow 3.3 (tests/compat)
    "bounds_five_minutes": lambda: Every("5m", delay="30s", phase=Fixed("2m10s")),
    "bounds_one_second": lambda: Every("1s", phase=Fixed("0s")),
    "bounds_partitioned": lambda: Every("1h", delay="5m", phase=Fixed("0s"), partitioned=True),
}}
for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=SCHEDULES[dag_id](), start_date=None):
        pass
"""


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-backfill-bounds")
    store_dags(folder, DAGS, (FIVE, ONE_SECOND, *((PARTITIONED,) if carried(PARTITIONS) else ())))
    with airflow_api(folder) as api:
        yield api


def _preview(api: Api, dag_id: str, from_date: str, to_date: str, **more: str) -> Any:
    query = {"from_date": from_date, "to_date": to_date, **more}
    return api.call("GET", f"/tessera/api/v1/dags/{dag_id}/backfill-preview", user="viewer", params=query)


# -- dates: only the supported range, checked before any work ----------------------------------------


@pytest.mark.parametrize(
    ("dag_id", "from_date", "to_date", "named"),
    [
        pytest.param(
            PARTITIONED,
            "0001-01-01T00:00:00Z",
            "0001-01-01T01:00:00Z",
            "from_date",
            id="partitioned-year-1",
            marks=needs(PARTITIONS),
        ),
        pytest.param(
            PARTITIONED,
            "2999-12-31T00:00:00Z",
            "9999-12-31T23:00:00Z",
            "to_date",
            id="partitioned-9999",
            marks=needs(PARTITIONS),
        ),
        pytest.param(FIVE, "2026-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "to_date", id="to-year-9999"),
        pytest.param(FIVE, "1899-12-31T23:59:59Z", "2026-01-01T00:00:00Z", "from_date", id="just-before-1900"),
        pytest.param(FIVE, "2026-01-01T00:00:00", "2026-01-02T00:00:00Z", "from_date", id="naive"),
    ],
)
def test_a_date_outside_the_supported_range_is_a_422_naming_it(api, dag_id, from_date, to_date, named):
    answer = _preview(api, dag_id, from_date, to_date)
    assert answer.status_code == 422, answer.text
    problems = {problem["loc"][-1]: problem["msg"] for problem in answer.json()["detail"]}
    assert named in problems
    for name, message in problems.items():
        assert f"`{name}`" in message and ("outside the supported range" in message or "has no timezone" in message)


# -- the number of runs: at most MAX_PREVIEW_RUNS ------------------------------------------------------


@pytest.fixture
def no_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The count cap under test, not the time limit (tested below): on a loaded machine (the compatibility
    tier beside the suite) listing 1,000 runs took more than PREVIEW_SECONDS, and the answer was that refusal."""
    monkeypatch.setattr(backfill_preview, "PREVIEW_SECONDS", 600.0)


@pytest.mark.parametrize(
    ("from_date", "to_date"),
    [
        pytest.param("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", id="a-month-of-five-minutes"),
        pytest.param("1970-01-01T00:00:00Z", "2026-01-01T00:00:00Z", id="1970-to-2026"),
        pytest.param("1900-01-01T00:00:00Z", "2999-12-31T23:59:00Z", id="the-whole-supported-range"),
    ],
)
def test_a_range_of_more_runs_than_a_preview_lists_is_refused_naming_the_maximum(
    api, no_time_limit, from_date, to_date
):
    answer = _preview(api, FIVE, from_date, to_date)
    assert answer.status_code == 400, answer.text[:500]
    detail = answer.json()["detail"]
    assert f"more than 1000 runs of {FIVE!r}, the most one preview lists; narrow the range" in detail
    assert f"`from_date` {datetime.datetime.fromisoformat(from_date).isoformat()}" in detail


def test_the_largest_preview_the_api_allows_is_answered_and_one_more_run_is_refused(api, no_time_limit):
    """On a 1-second DAG, 00:00:00 to 00:16:39 holds exactly 1000 runs; one second more holds 1001."""
    answer = _preview(api, ONE_SECOND, "2026-01-01T00:00:00Z", "2026-01-01T00:16:39Z")
    assert answer.status_code == 200, answer.text[:500]
    runs = answer.json()["runs"]
    assert len(runs) == MAX_PREVIEW_RUNS == 1000
    assert (runs[0]["window_start"], runs[-1]["window_end"]) == ("2026-01-01T00:00:00Z", "2026-01-01T00:16:40Z")

    refused = _preview(api, ONE_SECOND, "2026-01-01T00:00:00Z", "2026-01-01T00:16:40Z")
    assert refused.status_code == 400, refused.text[:500]
    assert "its first 1000 runs reach 2026-01-01T00:16:39+00:00" in refused.json()["detail"]


def test_a_range_into_the_far_future_stops_at_the_first_window_that_has_not_ended(api):
    """Airflow creates no run whose window has not ended, so the year 2999 costs nothing more than now."""
    now = datetime.datetime.now(UTC).replace(microsecond=0)
    with time_machine.travel(now, tick=False):
        answer = _preview(api, ONE_SECOND, (now - datetime.timedelta(seconds=30)).isoformat(), "2999-12-31T23:59:59Z")
    assert answer.status_code == 200, answer.text[:500]
    runs = answer.json()["runs"]
    assert len(runs) == 29, "windows from now-30s that ended before now: [now-30s, now-29s) ... [now-2s, now-1s)"
    assert runs[-1]["window_end"] == (now - datetime.timedelta(seconds=1)).isoformat().replace("+00:00", "Z")


# -- Airflow's dry run, lazily: the same runs left out -------------------------------------------------


def _add_run(dag_id: str, info: Any, state: str) -> None:
    """A run where the backfill would create ``info``'s run, as the scheduler would have stored it."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session

    interval = info.data_interval
    with create_session() as session:
        session.add(
            DagRun(
                dag_id,
                f"existing__{state}__{info.run_after.isoformat()}",
                logical_date=info.logical_date,
                run_after=info.run_after,
                start_date=None if state == "queued" else info.run_after,
                state=state,
                run_type="scheduled",
                data_interval=None if interval is None else (interval.start, interval.end),
                **partition_fields(info),
            )
        )


def _facts(logical_date: Any, partition_key: Any, run_after: Any) -> tuple:
    return (None if logical_date is None else logical_date.isoformat(), partition_key, run_after.isoformat())


@pytest.mark.parametrize("dag_id", [FIVE, pytest.param(PARTITIONED, marks=needs(PARTITIONS))])
def test_the_preview_leaves_out_exactly_the_runs_airflows_dry_run_leaves_out(api, dag_id):
    from airflow.utils.session import create_session

    start = datetime.datetime(2026, 2, 1, tzinfo=UTC)
    to_date = start + 11 * (datetime.timedelta(hours=1) if dag_id == PARTITIONED else datetime.timedelta(minutes=5))
    every_run = airflows_dry_run(dag_id, start, to_date, "none")
    assert len(every_run) == 12
    for index, state in ((2, "success"), (4, "failed"), (6, "running"), (8, "queued")):
        _add_run(dag_id, every_run[index], state)

    for behavior, kept in (("none", 8), ("failed", 9), ("completed", 10)):  # running and queued are never re-run
        expected = [
            _facts(i.logical_date, partition_fields(i).get("partition_key"), i.run_after)
            for i in airflows_dry_run(dag_id, start, to_date, behavior)
        ]
        with create_session() as session:
            preview = preview_stored(session, dag_id, from_date=start, to_date=to_date, reprocess_behavior=behavior)
        assert [_facts(run.logical_date, run.partition_key, run.run_after) for run in preview.runs] == expected
        assert len(expected) == kept, behavior


# -- a deadline, and a caller that leaves --------------------------------------------------------------


def test_a_preview_past_its_deadline_is_refused_saying_how_far_it_got(api):
    from airflow.utils.session import create_session

    start = datetime.datetime(2026, 1, 1, tzinfo=UTC)
    with create_session() as session, pytest.raises(Invalid) as refused:
        preview_stored(
            session,
            FIVE,
            from_date=start,
            to_date=start + datetime.timedelta(hours=1),
            budget=Budget(seconds=-1),
        )
    assert "took more than -1 s (0 listed, up to 2026-01-01T00:00:00+00:00); narrow the range" in refused.value.detail


def test_a_preview_stops_at_the_next_run_once_its_caller_has_left(api):
    from airflow.utils.session import create_session

    asked = []

    def abandoned() -> bool:
        asked.append(1)
        return len(asked) > 5

    with create_session() as session, pytest.raises(PreviewAbandoned):
        preview_stored(
            session,
            FIVE,
            from_date=datetime.datetime(1970, 1, 1, tzinfo=UTC),
            to_date=datetime.datetime(2026, 1, 1, tzinfo=UTC),
            budget=Budget(abandoned=abandoned),
        )
    assert len(asked) == 6, "asked once per run, and stopped at the first answer that the caller left"


def test_the_route_stops_the_preview_when_the_client_disconnects(api, caplog, mocker):
    """The ASGI conversation of a client that sends its request and hangs up at once.

    The preview waits (at most 10 s) for the route to notice the disconnect before it lists a run: a
    1000-run range is listed in about 10 ms, and on a busy machine the thread could list it all
    before the event loop ran the route's watcher, which would answer 400 and prove nothing.
    """
    app = api.client.app
    real_take_runs = backfill_preview.take_runs

    def take_runs_once_left(infos, budget, **range_):
        deadline = time.monotonic() + 10
        while not budget.abandoned() and time.monotonic() < deadline:
            time.sleep(0.01)
        return real_take_runs(infos, budget, **range_)

    mocker.patch.object(backfill_preview, "take_runs", take_runs_once_left)
    query = "from_date=1970-01-01T00%3A00%3A00Z&to_date=2026-01-01T00%3A00%3A00Z"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": f"/tessera/api/v1/dags/{FIVE}/backfill-preview",
        "raw_path": f"/tessera/api/v1/dags/{FIVE}/backfill-preview".encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"testserver"), (b"authorization", f"Bearer {api.tokens['viewer']}".encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with caplog.at_level(logging.INFO, logger="tessera.plugin.actions.backfill_preview"):
        asyncio.run(app(scope, receive, send))
    (start,) = [m for m in sent if m["type"] == "http.response.start"]
    assert start["status"] == 499, json.dumps([m.get("body", b"").decode() for m in sent])[:500]
    (stopped,) = [r.getMessage() for r in caplog.records if "stopped after" in r.getMessage()]
    assert stopped.startswith(f"Backfill preview of {FIVE} stopped after ") and stopped.endswith("the caller left")
