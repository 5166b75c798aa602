"""The Schedules page with 1,000 DAGs in real Chromium: a constant handful of elements per DAG, rows kept on reload.

No Airflow here: Playwright answers the page's own requests, the page's files from
``plugin/ui`` and its one data call (``GET /api/v1/page``) with 1,000 DAGs every 5 minutes,
each with its lane as the public plan describes it (the timeline's 20,000 runs a DAG are one
segment), so only the page's rendering is measured. Counts are asserted,
never time; the longest main-thread task of a reload is printed for the record.
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.plugin.ui.test_ui_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

UI = Path(__file__).resolve().parents[3] / "plugin" / "ui"
BASE = "http://tessera.test"
FLEET = 1000
"""The rows of the first page (the most one answer holds: ``PAGE_ROWS``)."""
BEYOND = 10
"""DAGs after the first page: on a second page, which the pager turns to."""
ELEMENTS_PER_DAG = 45
FIVE_MINUTES = datetime.timedelta(minutes=5)
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium (/usr/bin/chromium)")


def _iso(moment: datetime.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _run(occurrence: datetime.datetime) -> dict:
    return {
        "occurrence": _iso(occurrence),
        "occurrence_local": occurrence.isoformat(),
        "run_after": _iso(occurrence + datetime.timedelta(seconds=70)),
        "window_start": _iso(occurrence - FIVE_MINUTES),
        "window_end": _iso(occurrence),
        "interval_seconds": 300.0,
    }


def _answers() -> dict:
    from tessera.plugin.fleet.plans import lane_of
    from tessera.timetables import Every, Fixed

    now = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
    first = now - datetime.timedelta(minutes=now.minute % 5) + FIVE_MINUTES
    lanes_until = now + datetime.timedelta(days=71)
    lane = lane_of(Every("5m", phase=Fixed("1m10s")).plan.lane(after=now, until=lanes_until)).model_dump(mode="json")

    def dag(i: int) -> dict:
        return {
            "dag_id": f"scale_{i:04}", "summary": "every 5m · phase 1m10s", "timezone": "UTC",
            "cadence_kind": "interval", "phase": "1m10s", "is_paused": False, "trigger": None,
            "next": _run(first), "lane": lane, "last_outcome": "success", "last_run": None, "skip_reason": None,
            "consecutive_failures": 0,
            "conditions": [{"type": "SpecValid", "status": "True", "reason": "Valid", "message": ""},
                           {"type": "Ready", "status": "True", "reason": "RunSucceeded", "message": ""}],
            "lateness": {"state": "on_time", "late": False, "occurrence": None, "late_after": None,
                         "late_by_seconds": None, "reason": "", "rule": "phase + one interval"},
            "stale_parents": [], "error": None,
        }  # fmt: skip

    return {
        "now": _iso(now),
        "lanes_until": _iso(lanes_until),
        "dags": [dag(i) for i in range(FLEET + BEYOND)],
        "contradictions": [],
        "plan_check": "ok",
    }


def _page(fleet: dict, query: str) -> str:
    """``GET /api/v1/page`` as the API answers it: ``limit`` rows from ``offset`` of every DAG, and the total."""
    asked = urllib.parse.parse_qs(query)
    offset, limit = int(asked.get("offset", ["0"])[0]), int(asked.get("limit", ["1000"])[0])
    assert limit <= FLEET, f"the page asked for {limit} rows; an answer holds at most {FLEET}"
    dags = fleet["dags"]
    counts = {"late": 0, "not_ready": 0, "failed_last": 0, "paused": 0}  # every DAG is on time, ready, running
    return json.dumps(
        {**fleet, "dags": dags[offset : offset + limit], "total": len(dags), "fleet_total": len(dags), "offset": offset}
        | {"counts": counts, "query": {"search": None, "tags": [], "filters": [], "sort": "dag_id"}}
    )


@pytest.fixture(scope="module")
def page() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    fleet = _answers()

    def answer(route: object) -> None:
        url = route.request.url
        if "/tessera/api/v1/" in url:
            path, _, query = url.split("/tessera/api/v1/", 1)[1].partition("?")
            if path != "page":
                return route.fulfill(status=404, body="{}", content_type="application/json")
            return route.fulfill(status=200, body=_page(fleet, query), content_type="application/json")
        name = url.split("/tessera/ui/", 1)[1].split("?")[0] or "index.html"
        path = UI / name
        route.fulfill(status=200, body=path.read_bytes(), content_type=TYPES.get(path.suffix, "text/plain"))

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        tab.route(f"{BASE}/**", answer)
        tab.goto(f"{BASE}/tessera/ui/")
        last = tab.locator(f'tr.timeline[data-dag-id="scale_{FLEET - 1:04}"] .lane-note')
        last.wait_for(state="attached", timeout=120_000)
        tab.wait_for_function(
            f"() => document.querySelector('tr.timeline[data-dag-id=\"scale_{FLEET - 1:04}\"] .lane-note')"
            ".textContent.includes('runs')",
            timeout=120_000,
        )
        yield tab
        browser.close()


def test_a_thousand_dags_cost_a_constant_handful_of_elements_each(page):
    elements = page.evaluate("() => document.getElementsByTagName('*').length")
    rows = page.evaluate("() => document.querySelectorAll('#schedules tbody tr.dag').length")
    print(f"{FLEET} DAGs every 5 minutes: {elements} elements in the document")
    assert rows == FLEET
    assert elements <= FLEET * ELEMENTS_PER_DAG
    assert page.evaluate("() => document.querySelectorAll('rect').length") == 0
    band = page.locator('tr.timeline[data-dag-id="scale_0000"] .lane-note')
    assert band.text_content().endswith("runs, every 5 min")


def test_a_reload_updates_the_rows_in_place(page):
    page.evaluate("() => document.querySelectorAll('#schedules tbody tr').forEach((tr) => { tr.kept = true; })")
    before = page.evaluate("() => document.getElementsByTagName('*').length")
    page.evaluate(
        "() => { window.__longest = 0; new PerformanceObserver((list) => { for (const entry of list.getEntries())"
        " window.__longest = Math.max(window.__longest, entry.duration); }).observe({ type: 'longtask' }); }"
    )
    page.evaluate("() => load()")  # the page's own 30-second reload, now
    kept = page.evaluate("() => [...document.querySelectorAll('#schedules tbody tr')].every((tr) => tr.kept === true)")
    assert kept, "a row was rebuilt"
    assert page.evaluate("() => document.getElementsByTagName('*').length") == before
    print(f"longest main-thread task during the reload: {page.evaluate('() => window.__longest'):.0f} ms")


def _shown(page: object) -> list[str]:
    return page.evaluate(
        "() => [...document.querySelectorAll('#schedules tbody tr.dag')].map((tr) => tr.dataset.dagId)"
    )


def test_the_dags_beyond_one_answer_are_a_page_away(page):
    """1,010 DAGs: the first 1,000 rows, the pager saying so; Next shows the last 10, Previous the first 1,000 again."""
    pager = page.locator("#pager")
    assert pager.is_visible()
    assert page.locator("#page-range").text_content() == f"DAGs 1–1,000 of {FLEET + BEYOND:,}"
    assert page.locator("#summary").text_content().startswith(f"{FLEET + BEYOND:,} DAGs")
    assert page.locator("#page-prev").is_disabled() and page.locator("#page-next").is_enabled()
    try:
        page.locator("#page-next").click()
        page.wait_for_function(f"() => document.querySelectorAll('#schedules tbody tr.dag').length === {BEYOND}")
        page.locator("#page-range").filter(has_text="1,001").wait_for()
        assert _shown(page) == [f"scale_{i:04}" for i in range(FLEET, FLEET + BEYOND)]
        assert page.locator("#page-range").text_content() == f"DAGs 1,001–{FLEET + BEYOND:,} of {FLEET + BEYOND:,}"
        assert "0 late" in page.locator("#summary").text_content()  # the fleet's count, not this page's
        assert page.locator("#page-next").is_disabled() and page.locator("#page-prev").is_enabled()
        page.screenshot(path=ARTIFACTS / "pager-second-page-1280x800.png")
    finally:  # the other tests read the first page
        page.locator("#page-prev").click()
        page.wait_for_function(f"() => document.querySelectorAll('#schedules tbody tr.dag').length === {FLEET}")
    assert _shown(page) == [f"scale_{i:04}" for i in range(FLEET)]


def test_no_hour_label_is_printed_through_the_now_label(page):
    """The axis drops the hour labels the "now" label would cover (it read "no18:00" before)."""
    overlaps = page.evaluate(
        """() => {
      const now = document.querySelector("#axis .tick.now").getBoundingClientRect();
      return [...document.querySelectorAll("#axis .tick:not(.now)")]
        .map((tick) => [tick.textContent, tick.getBoundingClientRect()])
        .filter(([, box]) => box.left < now.right && box.right > now.left)
        .map(([text]) => text);
    }"""
    )
    assert page.locator("#axis .tick:not(.now)").count() >= 4  # the hours are still labelled
    assert overlaps == []
