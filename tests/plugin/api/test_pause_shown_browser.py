"""Why a DAG is paused, as a person reads it on the Schedules page: Debian's Chromium on Airflow's real API app.

Airflow's API app runs in-process (the tessera app mounted in it, the simple auth manager, the
SQLite metadata DB, as in ``test_api_app``); Chromium loads the page from it and every request
the page makes (its files and ``GET /tessera/api/v1/page``) is answered by that app with a
viewer's token. One DAG is paused through tessera's REST route with a note holding HTML, one by
tessera after failed runs, one with Airflow's own ``PATCH``; the test reads the chips, their
tooltips and the note line, and checks that the note stayed text (no element, no script ran).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.plugin.ui.test_ui_browser import CHROMIUM, CHROMIUM_ARGS

from .test_api_app import DAG_FILE, Api, airflow_api, store_dags

BY_HAND, AFTER_FAILURES, IN_AIRFLOW = "shown_pause_by_hand", "shown_pause_after_failures", "shown_pause_in_airflow"
NOTE = "<img src=x onerror=alert(1)> source down, see INC-12\nback after the vendor's fix"
BASE = "http://tessera.test"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium (/usr/bin/chromium)")


@pytest.fixture(scope="module")
def api(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    from airflow.utils.session import create_session

    from tessera.operators.pauses.notes import AFTER_FAILURES as REASON
    from tessera.operators.pauses.notes import set_paused

    folder = tmp_path_factory.mktemp("tessera-pause-shown")
    store_dags(folder, DAG_FILE, (BY_HAND, AFTER_FAILURES, IN_AIRFLOW))
    with airflow_api(folder) as api:
        paused = api.call("POST", f"/tessera/api/v1/dags/{BY_HAND}/pause", user="op", json_body={"note": NOTE})
        assert paused.status_code == 200, paused.text
        own = api.call("PATCH", f"/api/v2/dags/{IN_AIRFLOW}", user="op", json_body={"is_paused": True})
        assert own.status_code == 200, own.text
        with create_session() as session:  # what the scheduler-side listener does after 3 failed runs
            runs = ["scheduled__c", "scheduled__b", "scheduled__a"]
            note = "Paused by tessera: 3 runs failed in a row"
            set_paused(session, AFTER_FAILURES, paused=True, note=note, by="tessera", reason=REASON, failed_runs=runs)
        yield api


@pytest.fixture(scope="module")
def page(api: Api) -> Iterator[Any]:
    """The Schedules page as the viewer sees it, every request answered by Airflow's API app."""
    from playwright.sync_api import sync_playwright

    def answer(route: Any) -> None:
        request = route.request
        path = request.url.removeprefix(BASE)
        got = api.call(request.method, path, user="viewer")
        route.fulfill(status=got.status_code, body=got.content, content_type=got.headers.get("content-type"))

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        tab.dialogs = []
        tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
        tab.route(f"{BASE}/**", answer)
        tab.goto(f"{BASE}/tessera/ui/")
        tab.locator(f'tr.dag[data-dag-id="{IN_AIRFLOW}"] .chip').first.wait_for(timeout=60_000)
        yield tab
        browser.close()


def _cell(page: Any, dag_id: str) -> Any:
    return page.locator(f'tr.dag[data-dag-id="{dag_id}"] td.dag')


def test_a_pause_with_a_note_shows_who_and_the_note_as_text(page):
    cell = _cell(page, BY_HAND)
    chip = cell.locator(".chip", has_text="paused")
    assert chip.inner_text() == "paused by op"
    title = chip.get_attribute("title")
    assert title.startswith("Paused by hand by op · at ") and title.endswith(f" UTC · Note: {NOTE}"), title
    note = cell.locator(".pause-note")
    assert note.inner_text() == "Note: <img src=x onerror=alert(1)> source down, see INC-12…"  # its first line
    assert note.get_attribute("title") == NOTE
    assert page.locator("img").count() == 0, "the note became an element"
    assert page.dialogs == [], "the note ran a script"
    assert note.is_visible()


def test_a_pause_after_failures_names_the_reason_and_the_runs(page):
    chip = _cell(page, AFTER_FAILURES).locator(".chip", has_text="paused")
    assert chip.inner_text() == "paused after 3 failures"
    assert chip.get_attribute("title").startswith(
        "Paused by tessera after 3 failed runs in a row (pause_after_failures): scheduled__c, scheduled__b, "
        "scheduled__a · at "
    )
    assert _cell(page, AFTER_FAILURES).locator(".pause-note").inner_text() == (
        "Note: Paused by tessera: 3 runs failed in a row"
    )


def test_a_pause_made_in_airflow_says_no_note_was_recorded(page):
    cell = _cell(page, IN_AIRFLOW)
    chip = cell.locator(".chip", has_text="paused")
    assert chip.inner_text() == "paused"
    assert chip.get_attribute("title") == "Paused in Airflow (its UI, REST API or CLI): no note recorded"
    assert cell.locator(".pause-note").count() == 0
