"""The Schedules page as an on-call console at 3,000 DAGs, in real Chromium over the real tessera app.

3,000 DAGs are stored in the real metadata DB (SQLite); Playwright hands every request the page
makes to Airflow's API app with the tessera app mounted (in process, as the tab's user: ``op`` or
``viewer``), and serves the page's files from ``plugin/ui``. Checked: the search, each filter and
each sort show the rows the REST answer lists and the database says; the counts are the fleet's;
the column headers and the axis stay in view while scrolling; a backfill started from the page
creates exactly the runs its preview listed (Airflow's own ``POST /api/v2/backfills``); a viewer
sees no action button. Screenshots at 1280x800 go to ``test-artifacts/ui/`` (and to ``SCREENS``).
"""

from __future__ import annotations

import datetime
import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.api.test_api_app import Api, airflow_api, forget_dags, store_dags
from tests.plugin.ui.test_ui_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS
from tests.plugin.ui.test_ui_scale_browser import BASE, TYPES, UI

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium (/usr/bin/chromium)"),
    pytest.mark.in_order,  # the lane-segment test reads the runs the backfill test created
]

FLEET = 3000
PER_FILE = 500
SCREENS = Path(os.environ.get("TESSERA_SCREENS", ARTIFACTS))
WEEKLY_DAG = "con_1234"
"""Weekly: among 99 five-minute DAGs, it needs a longer timeline than they do."""
FILE = """
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator
from tessera.timetables import Every, Fixed

WEEKLY = 1234
for dag_id in {dag_ids!r}:
    n = int(dag_id[-4:])
    if n == WEEKLY:
        schedule = Every.week(on="monday", at="{at}", timezone="UTC")
    elif n % 100 == 42:
        schedule = Every.day(at="{at}", timezone="UTC")
    else:
        schedule = Every("5m", phase=Fixed("1m"))
    with DAG(dag_id, schedule=schedule, start_date=None, tags=["team-" + "abc"[n % 3]]):
        EmptyOperator(task_id="work")
"""
LATE = {f"con_{n:04d}" for n in range(0, FLEET, 97)}
"""Their stored next run hours ago (each by another amount): late."""
FAILED = {f"con_{n:04d}" for n in range(5, FLEET, 211)}
PAUSED = {f"con_{n:04d}" for n in range(7, FLEET, 101)}
DAILY = {f"con_{n:04d}" for n in range(42, FLEET, 100)} | {WEEKLY_DAG}
"""Daily at :data:`AT` (and the weekly one): never run, so their stored next run (the latest one due) is late too."""
AT = "18:00" if 3 <= datetime.datetime.now(datetime.timezone.utc).hour < 9 else "06:00"
"""Hours from when the suite runs: a run at 06:00 UTC found the daily DAGs' newest fire seconds old, not yet late."""
LATE_NOW = (LATE | DAILY) - PAUSED
BACKFILLED = "con_0042"
"""A daily DAG the test backfills from the page."""


def _plant() -> None:
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunType
    from sqlalchemy import update

    now = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
    now -= datetime.timedelta(minutes=now.minute % 5)
    with create_session() as session:
        session.execute(update(DagModel).where(DagModel.dag_id.in_(sorted(PAUSED))).values(is_paused=True))
        # The others' stored next run an hour ahead: storing 3,000 DAGs on a busy machine takes longer than
        # the 5 minutes after which a 5-minute DAG whose run was not created would be late.
        ahead = now + datetime.timedelta(hours=1)
        on_time = sorted({f"con_{n:04d}" for n in range(FLEET)} - LATE - DAILY)
        session.execute(
            update(DagModel)
            .where(DagModel.dag_id.in_(on_time))
            .values(
                next_dagrun_data_interval_start=ahead - datetime.timedelta(minutes=5),
                next_dagrun_data_interval_end=ahead,
                next_dagrun=ahead - datetime.timedelta(minutes=5),
                next_dagrun_create_after=ahead + datetime.timedelta(minutes=1),
            )
        )
        for k, dag_id in enumerate(sorted(LATE)):
            end = now - datetime.timedelta(hours=1 + k)
            session.execute(
                update(DagModel)
                .where(DagModel.dag_id == dag_id)
                .values(
                    next_dagrun_data_interval_start=end - datetime.timedelta(minutes=5),
                    next_dagrun_data_interval_end=end,
                    next_dagrun=end - datetime.timedelta(minutes=5),
                    next_dagrun_create_after=end + datetime.timedelta(minutes=1),
                )
            )
        start = datetime.datetime(2026, 3, 2, tzinfo=datetime.timezone.utc)
        for dag_id in FAILED:
            run = DagRun(dag_id, "manual__failed", run_after=start, run_type=DagRunType.MANUAL,
                         state=DagRunState.FAILED, start_date=start)  # fmt: skip
            run.end_date = start + datetime.timedelta(minutes=1)
            session.add(run)


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("tessera-console")
    ids = [f"con_{n:04d}" for n in range(FLEET)]
    for block in range(0, FLEET, PER_FILE):
        store_dags(folder, FILE.replace('"{at}"', repr(AT)), tuple(ids[block : block + PER_FILE]))
    _plant()
    try:
        with airflow_api(folder) as api:
            yield api
    finally:
        forget_dags("con_")


def _tab(browser: Any, api: Api, user: str) -> Any:
    """A tab whose requests the tessera app and Airflow's API answer as ``user``."""
    tab = browser.new_page(viewport={"width": 1280, "height": 800})

    def answer(route: Any) -> None:
        request = route.request
        url = urllib.parse.urlsplit(request.url)
        if url.path.startswith(("/tessera/api/", "/api/v2/")):
            headers = {"Content-Type": request.headers["content-type"]} if "content-type" in request.headers else {}
            body = request.post_data_buffer
            got = api.call(request.method, url.path + (f"?{url.query}" if url.query else ""), user=user,
                           headers=headers, content=body if body else None)  # fmt: skip
            return route.fulfill(status=got.status_code, body=got.content, content_type="application/json")
        path = UI / (url.path.split("/tessera/ui/", 1)[1] or "index.html")
        route.fulfill(status=200, body=path.read_bytes(), content_type=TYPES.get(path.suffix, "text/plain"))

    tab.route(f"{BASE}/**", answer)
    return tab


def _open(tab: Any, query: str = "") -> None:
    tab.goto(f"{BASE}/tessera/ui/{'?' + query if query else ''}")
    tab.wait_for_function("() => Number(document.body.dataset.loaded) > 0", timeout=120_000)


def _wait_loaded(tab: Any, before: int) -> None:
    tab.wait_for_function(f"() => Number(document.body.dataset.loaded) > {before}", timeout=120_000)


def _shown(tab: Any) -> list[str]:
    """The rows shown, once no load is placing rows (the page's own 30-second reload may have begun one)."""
    tab.wait_for_function("() => inFlight === 0", timeout=120_000)
    return tab.evaluate("() => [...document.querySelectorAll('#schedules tbody tr.dag')].map((tr) => tr.dataset.dagId)")


def _counts(tab: Any) -> dict[str, str]:
    return tab.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#summary [data-count]')]"
        ".map((span) => [span.dataset.count, span.textContent]))"
    )


def _rest(api: Api, query: str, user: str = "op") -> dict[str, Any]:
    got = api.call("GET", f"/tessera/api/v1/page?{query}", user=user)
    assert got.status_code == 200, got.text
    return got.json()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def op_tab(browser: Any, api: Api) -> Iterator[Any]:
    tab = _tab(browser, api, "op")
    _open(tab, "search=con_")
    yield tab
    tab.close()


def _choose(tab: Any, *, search: str = "con_", filters: tuple[str, ...] = (), sort: str = "dag_id") -> None:
    """Set the controls as a person would, and wait for the page to have loaded what they ask."""
    before = int(tab.evaluate("() => document.body.dataset.loaded"))
    tab.fill("#search", search)
    for box in tab.locator('#filters input[name="filter"]').all():
        box.set_checked(box.get_attribute("value") in filters)
    tab.select_option("#sort", sort)
    tab.locator("#search").press("Enter")
    tab.wait_for_function(f"() => Number(document.body.dataset.loaded) > {before}", timeout=120_000)
    expected = {"search": search, "filter": list(filters), "sort": [sort] if sort != "dag_id" else []}
    tab.wait_for_function(
        "(want) => { const p = new URLSearchParams(location.search); return p.get('search') === want.search"
        " && JSON.stringify(p.getAll('filter')) === JSON.stringify(want.filter)"
        " && JSON.stringify(p.getAll('sort')) === JSON.stringify(want.sort); }",
        arg=expected,
    )
    _wait_loaded(tab, int(tab.evaluate("() => document.body.dataset.loaded")) - 1)


def test_the_whole_fleet_is_counted_not_one_page(op_tab, api):
    page = _rest(api, "search=con_&limit=1")
    assert page["total"] == FLEET
    assert page["counts"]["paused"] == len(PAUSED)
    assert page["counts"]["failed_last"] == len(FAILED)
    assert page["counts"]["late"] == len(LATE_NOW)
    assert len(_shown(op_tab)) == 1000
    counts = _counts(op_tab)
    assert counts["total"].startswith(f"{FLEET:,} of") or counts["total"] == f"{FLEET:,} DAGs"
    assert counts["late"] == f"{len(LATE_NOW)} late" and counts["paused"] == f"{len(PAUSED)} paused"


JUDGED = {"late": LATE_NOW, "failed_last": FAILED, "paused": PAUSED, "not_ready": FAILED}
"""What the database holds for each filter (a failed newest run is "not ready")."""


@pytest.mark.parametrize("name", [*JUDGED, "excluded_today", "owed"])
def test_each_filter_shows_the_rows_the_rest_answer_and_the_database_give(op_tab, api, name):
    _choose(op_tab, filters=(name,))
    rest = [row["dag_id"] for row in _rest(api, f"search=con_&filter={name}")["dags"]]
    assert _shown(op_tab) == rest == sorted(JUDGED.get(name, ()))
    assert _counts(op_tab)["total"].startswith(f"{len(rest):,} of ")


@pytest.mark.parametrize("sort", ["lateness", "next_run", "dag_id"])
def test_each_sort_shows_the_order_of_the_rest_answer(op_tab, api, sort):
    query = f"search=con_&sort={sort}" + ("&filter=late" if sort == "lateness" else "")
    for _ in range(3):  # a 5-minute DAG's next run moves on every 5 minutes: the page and REST asked across one differ
        _choose(op_tab, filters=("late",) if sort == "lateness" else (), sort=sort)
        rest = [row["dag_id"] for row in _rest(api, query)["dags"]]
        if _shown(op_tab) == rest:
            break
    assert _shown(op_tab) == rest
    if sort == "lateness":  # by how late each is, the most first
        late = {row["dag_id"]: row["lateness"]["late_by_seconds"] for row in _rest(api, query)["dags"]}
        assert rest == sorted(LATE_NOW, key=lambda dag_id: (-late[dag_id], dag_id))
    if sort == "dag_id":
        assert rest == sorted(rest)


def test_the_search_finds_ids_by_a_part_whatever_its_case(op_tab, api):
    _choose(op_tab, search="ON_004")
    assert _shown(op_tab) == [f"con_{n:04d}" for n in range(40, 50)]
    assert [row["dag_id"] for row in _rest(api, "search=ON_004")["dags"]] == _shown(op_tab)


def test_a_link_with_the_filters_opens_the_same_view(browser, api):
    tab = _tab(browser, api, "op")
    try:
        _open(tab, "search=con_&filter=late&sort=lateness")
        assert tab.locator('#filters input[value="late"]').is_checked()
        assert tab.locator("#sort").input_value() == "lateness"
        assert sorted(_shown(tab)) == sorted(LATE_NOW)
        SCREENS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=SCREENS / "console-filtered-late-1280x800.png")
    finally:
        tab.close()


def test_the_header_and_the_axis_stay_in_view_after_scrolling_1000_rows(op_tab):
    _choose(op_tab)
    op_tab.evaluate("() => scrollTo(0, document.documentElement.scrollHeight / 2)")
    op_tab.wait_for_function("() => scrollY > 10000")
    seen = op_tab.evaluate(
        """() => ({ head: document.querySelector("#schedules thead th").getBoundingClientRect().top,
                   axis: document.querySelector("#axis").getBoundingClientRect().bottom,
                   ticks: document.querySelectorAll("#axis .tick").length })"""
    )
    assert -1 <= seen["head"] <= 1 and 0 < seen["axis"] < 100 and seen["ticks"] >= 3, seen
    op_tab.evaluate("() => scrollTo(0, 0)")


def test_a_backfill_from_the_page_creates_the_runs_its_preview_listed(op_tab, api):
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    _choose(op_tab, search=BACKFILLED)
    op_tab.locator(f'button.backfill[data-dag-id="{BACKFILLED}"]').click()
    op_tab.fill("#backfill-from", "2026-03-01 00:00:00")
    op_tab.fill("#backfill-to", "2026-03-04 00:00:00")
    op_tab.locator("#backfill-preview").click()
    op_tab.locator(".backfill-preview table.preview").wait_for()
    listed = op_tab.evaluate(
        "() => [...document.querySelectorAll('table.preview tbody tr')].map((tr) => tr.dataset.runId)"
    )
    assert len(listed) == 3, listed
    SCREENS.mkdir(parents=True, exist_ok=True)
    op_tab.screenshot(path=SCREENS / "console-backfill-dialog-1280x800.png")
    op_tab.locator("#backfill-create").click()
    op_tab.locator("#action-dialog .result[data-backfill-id]").wait_for(timeout=60_000)
    with create_session() as session:
        created = sorted(session.scalars(select(DagRun.run_id).where(DagRun.dag_id == BACKFILLED)))
    assert created == sorted(listed)
    op_tab.keyboard.press("Escape")


def test_a_viewer_sees_no_action_button_and_the_server_refuses_one(browser, api):
    tab = _tab(browser, api, "viewer")
    try:
        _open(tab, f"search={BACKFILLED}")
        assert _shown(tab) == [BACKFILLED]
        assert tab.locator("button.act").count() == 0
    finally:
        tab.close()
    body = {"dag_id": BACKFILLED, "from_date": "2026-03-05T00:00:00Z", "to_date": "2026-03-06T00:00:00Z"}
    assert api.call("POST", "/api/v2/backfills", user="viewer", json_body=body).status_code == 403
    assert api.call("POST", f"/tessera/api/v1/dags/{BACKFILLED}/pause", user="viewer", json_body={}).status_code == 403
    rights = _rest(api, f"search={BACKFILLED}", user="viewer")["dags"][0]["may"]
    assert rights == {"pause": False, "backfill": False}
    assert _rest(api, f"search={BACKFILLED}", user="op")["dags"][0]["may"] == {"pause": True, "backfill": True}


def test_auto_serves_most_rows_and_draws_a_longer_cadence_on_a_scale_of_its_own(op_tab):
    """One weekly DAG among 99 five-minute ones: the axis stays at 24 hours, the weekly lane gets its own scale."""
    _choose(op_tab, search="con_12")
    lanes = op_tab.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll("tr.timeline")].map((tr) =>
             [tr.dataset.dagId, [tr.querySelector("svg.lane").dataset.range, tr.classList.contains("own-scale"),
                                 tr.querySelector(".lane-note").textContent]]))"""
    )
    assert len(lanes) == 100
    weekly = lanes.pop(WEEKLY_DAG)
    assert weekly[0] in ("7d", "35d") and weekly[1] and weekly[2].startswith("own scale: next"), weekly
    assert {(scale, own) for scale, own, _ in lanes.values()} == {("24h", False)}
    assert "1 on a scale of their own" in op_tab.locator("#range-used").text_content()


def test_a_lane_segment_opens_its_run_in_airflow_with_the_whole_run_id(op_tab):
    """A click on a lane asks "Why?" at that instant (why.js); the answer links the segment's run in Airflow's UI."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        run_id = session.scalar(select(DagRun.run_id).where(DagRun.dag_id == BACKFILLED).order_by(DagRun.run_after))
    assert run_id, "the backfill test runs first"
    _choose(op_tab, search=BACKFILLED)
    op_tab.evaluate(f"() => openWhy({BACKFILLED!r}, '2026-03-02T{AT}:00.000Z', null)")  # as a click on the lane does
    link = op_tab.locator(f'#why-dialog a[data-run-id="{run_id}"]')
    link.wait_for(timeout=60_000)
    assert link.get_attribute("href").endswith(f"/dags/{BACKFILLED}/runs/{urllib.parse.quote(run_id, safe='')}")
    assert link.text_content() == run_id
    op_tab.keyboard.press("Escape")


def test_the_action_buttons_keep_a_row_within_its_element_budget(op_tab):
    """Backfill and Pause add three elements to a row: still within what the page's other tests allow."""
    from tests.plugin.ui.test_ui_browser import ELEMENTS_PER_ROW

    _choose(op_tab)
    # The rows render in batches after the answer arrives: wait until every listed row has its buttons.
    op_tab.wait_for_function("() => document.querySelectorAll('button.act').length >= 2 * 1000", timeout=60_000)
    per_row = op_tab.evaluate(
        "() => document.querySelectorAll('#schedules tbody *').length"
        " / document.querySelectorAll('#schedules tbody tr.dag').length"
    )
    assert op_tab.locator("button.act").count() == 2 * 1000
    assert per_row <= ELEMENTS_PER_ROW, per_row


def test_a_pause_from_the_page_keeps_its_note_and_an_unpause_lifts_it(op_tab, api):
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    dag_id = "con_0001"
    _choose(op_tab, search=dag_id)
    before = int(op_tab.evaluate("() => document.body.dataset.loaded"))
    op_tab.locator(f'button.pause[data-dag-id="{dag_id}"]').click()
    op_tab.fill("#pause-note", "source down: INC-42")
    op_tab.locator("#pause-confirm").click()
    _wait_loaded(op_tab, before)
    op_tab.locator(f'tr.dag[data-dag-id="{dag_id}"] .pause-note').wait_for()
    assert op_tab.locator(f'tr.dag[data-dag-id="{dag_id}"] .pause-note').text_content() == "Note: source down: INC-42"
    with create_session() as session:
        assert session.get(DagModel, dag_id).is_paused
    before = int(op_tab.evaluate("() => document.body.dataset.loaded"))
    op_tab.locator(f'button.pause[data-dag-id="{dag_id}"]').click()  # now "Unpause…"
    op_tab.locator("#pause-confirm").click()
    _wait_loaded(op_tab, before)
    with create_session() as session:
        assert not session.get(DagModel, dag_id).is_paused
