"""The Schedules page's "Why?" in a real browser: Debian's Chromium against a real Airflow on SQLite.

A dag-processor, a scheduler and an API server run one tessera DAG every 10 seconds. The test
unpauses it, lets it run, pauses it through Airflow's REST API (which writes the audit log),
waits for an occurrence to come due while paused, and then asks the page: the verdict says the
DAG was paused and cites the audit-log entry; the evidence is folded below it and opens from the
keyboard; a click on the DAG's timeline lane asks about the instant under the pointer.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator

import pytest

from tests.e2e.harness import AirflowHome, _free_port
from tests.plugin.ui.test_ui_browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    PASSWORDS,
    AirflowUi,
    _api,
    _api_settled,
    _log_in,
)

DAG_ID = "why_ui_every_10s"
DAG_FILE = f"""
import datetime
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

with DAG("{DAG_ID}", schedule=Every("10s", phase=Fixed("0s")), catchup=False,
         start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)):
    pass
"""
BROKEN_DAG = "why_ui_broken"
BROKEN_FILE = f"""
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG("{BROKEN_DAG}", schedule=Every("{{every}}"), start_date=None):
    pass
"""
LAPTOP = {"width": 1280, "height": 800}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium: apt-get install -y chromium"),
]


@pytest.fixture(scope="module")
def why_ui(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowUi]:
    home = AirflowHome(tmp_path_factory.mktemp("airflow-why-ui"))
    shutil.rmtree(home.dags)
    home.dags.mkdir()
    (home.dags / "why_ui.py").write_text(DAG_FILE)
    (home.dags / "why_ui_broken.py").write_text(BROKEN_FILE.format(every="1h"))
    passwords = home.root / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    home.env.update(
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin,viewer:viewer",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=str(passwords),
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-why-ui-" + "s" * 64,
        AIRFLOW__API__SECRET_KEY="tessera-why-ui-key",
        AIRFLOW__API__BASE_URL=base,
        AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL="5",
    )
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate", timeout=600)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("dag-processor", "dag-processor")
        home.start("scheduler", "scheduler")
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port))
        home.wait_for("the API server", lambda: _api(base, "GET", "/api/v2/monitor/health")[0] == 200, timeout=300)
        home.wait_for(
            "the DAGs to be parsed", lambda: home.is_parsed(DAG_ID) and home.is_parsed(BROKEN_DAG), timeout=300
        )
        (home.dags / "why_ui_broken.py").write_text(BROKEN_FILE.format(every="7m"))  # a bad edit: an import error
        status, login = _api_settled(base, "POST", "/auth/token", body={"username": "admin", "password": "admin-pw"})
        assert status == 201
        token = login["access_token"]
        path = f"/api/v2/dags/{DAG_ID}"
        assert _api_settled(base, "PATCH", path, token=token, body={"is_paused": False})[0] == 200
        home.wait_for(f"a run of {DAG_ID}", lambda: home.runs(DAG_ID), timeout=120)
        assert _api_settled(base, "PATCH", path, token=token, body={"is_paused": True})[0] == 200
        time.sleep(12)  # an occurrence comes due while the DAG is paused
        status = f"/tessera/api/v1/dags/{BROKEN_DAG}/status"
        broken = lambda: (_api(base, "GET", status, token=token)[1].get("broken") or {}).get("reason")  # noqa: E731
        home.wait_for("the bad edit to be seen", broken, timeout=120)
        yield AirflowUi(base, home, token)
    finally:
        home.stop()
        if request.session.testsfailed > failed_before:
            home.save_artifacts(ARTIFACTS / "airflow-why")


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _open(why_ui: AirflowUi, browser: object) -> tuple[object, object]:
    from playwright.sync_api import expect

    page = _log_in(browser, why_ui.base, "viewer", LAPTOP)
    page.goto(f"{why_ui.base}/plugin/tessera-schedules")
    frame = page.frame_locator("iframe[title=Schedules]")
    expect(frame.locator(f'button.why[data-dag-id="{DAG_ID}"]')).to_be_visible(timeout=90_000)
    return page, frame


def test_why_shows_the_verdict_first_and_the_evidence_folded_below_it(why_ui, chromium):
    from playwright.sync_api import expect

    page, frame = _open(why_ui, chromium)
    button = frame.locator(f'button.why[data-dag-id="{DAG_ID}"]')
    button.focus()
    page.keyboard.press("Enter")  # keyboard: the button opens the dialog
    dialog = frame.locator("dialog#why-dialog")
    expect(dialog).to_be_visible()
    verdict = dialog.locator(".why-verdict")
    expect(verdict).to_have_text(
        re.compile(r"^Did not run: the .* occurrence had no run because the DAG was paused when it came due at ")
    )
    assert verdict.get_attribute("data-cause") == "paused"
    airflow = dialog.locator('details.why-part[data-section="airflow"]')
    expect(airflow.locator("li").first).to_be_hidden()  # folded
    expect(airflow.locator("summary")).to_have_text(re.compile(r"^What Airflow did \(\d+\)$"))
    airflow.locator("summary").focus()
    page.keyboard.press("Enter")  # opens the fold from the keyboard
    expect(airflow.locator('li[data-fact="paused"]')).to_contain_text("through the UI or the REST API")
    expect(airflow.locator('li[data-fact="paused"] .why-record')).to_have_text(
        re.compile(r"audit log #\d+ \(patch_dag\)$")
    )
    schedule = dialog.locator('details.why-part[data-section="schedule"] summary')
    expect(schedule).to_have_text(re.compile(r"^What the schedule decided \(\d+\)$"))
    page.screenshot(path=ARTIFACTS / "why-paused.png")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert frame.locator(f'button.why[data-dag-id="{DAG_ID}"]').evaluate("b => b === document.activeElement")
    page.close()


def test_a_click_on_the_timeline_asks_about_that_instant(why_ui, chromium):
    from playwright.sync_api import expect

    page, frame = _open(why_ui, chromium)
    lane = frame.locator(f'tr.timeline[data-dag-id="{DAG_ID}"] svg.lane')
    expect(lane).to_have_attribute("data-span", re.compile(r"^\d+,\d+$"), timeout=60_000)
    box = lane.bounding_box()
    lane.click(position={"x": box["width"] * 0.9, "y": box["height"] / 2})  # ahead of now: not due yet
    dialog = frame.locator("dialog#why-dialog")
    expect(dialog.locator(".why-verdict")).to_have_text(
        re.compile(r"^Not due yet: T is later than now; the .* occurrence may start at ")
    )
    # The instant under the pointer, as the page shows every time: UTC, 24-hour (not the browser's locale).
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", dialog.locator("#why-at").input_value())
    dialog.locator("#why-at").fill("1 June, 12 AM")
    dialog.locator("button[value=ask]").click()
    expect(dialog.locator(".why-body .error")).to_have_text(
        '"1 June, 12 AM" is not an instant: write it as 2026-03-29 02:30:00 (UTC)'
    )
    # Another instant, typed: the answer follows it.
    dialog.locator("#why-at").fill("2025-06-01 00:00:00")
    dialog.locator("button[value=ask]").click()
    expect(dialog.locator(".why-verdict")).to_have_text(re.compile(r"^Not owed: the DAG was first stored "))
    page.close()


def test_a_dag_whose_file_broke_keeps_its_row_with_the_reason(why_ui, chromium):
    from playwright.sync_api import expect

    page, frame = _open(why_ui, chromium)
    row = frame.locator(f'tr.dag[data-dag-id="{BROKEN_DAG}"]')
    expect(row).to_be_visible(timeout=60_000)
    expect(row.locator(".chip.bad").first).to_have_attribute("title", re.compile(r"^ScheduleInvalid: every: '7m'"))
    row.locator("button.why").click()
    verdict = frame.locator("dialog#why-dialog .why-verdict")
    # Asked at "now": about the newest occurrence, which came due either after the file broke (the
    # DAG is broken now) or, when the clock passed an occurrence during the fixture, just before the
    # break was first recorded; both answers name the import failure and its reason.
    expect(verdict).to_have_text(
        re.compile(
            r"the DAG's file fails to import \(ScheduleInvalid\): Airflow creates no new"
            r"|had no run because the DAG file 'why_ui_broken\.py' failed to import "
            r"\(ScheduleInvalid: every: '7m' does not divide a day evenly[^)]*\) from "
        )
    )
    page.close()
