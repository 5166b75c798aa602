"""The Schedules page in a real browser: headless Chromium logs into a real Airflow and refreshes a DAG.

Airflow runs as a dag-processor, a scheduler and an API server on the example DAGs.
Chromium is Debian's (``/usr/bin/chromium``), driven through Playwright's Python API;
no browser is ever downloaded. Screenshots go to ``test-artifacts/ui/``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.harness import AirflowHome, _free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "ui"
PASSWORDS = {"admin": "admin-pw", "viewer": "viewer-pw"}
REFRESHED_DAG = "ui_refresh_on_demand"
# Starts tomorrow, so the scheduler has not run it by itself when the test clicks Refresh.
REFRESHED_DAG_FILE = f"""
import datetime
from airflow.sdk import DAG, task
from tessera.timetables import Every

tomorrow = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
with DAG("{REFRESHED_DAG}", schedule=Every("1h"), start_date=tomorrow, catchup=False):
    @task
    def recompute():
        pass
    recompute()
"""
FAN_IN_DAG = "ui_fan_in_step"
# A fan-in behind a parent that never fires (its schedule is inactive): a stale parent, deterministically.
FAN_IN_DAG_FILE = f"""
from airflow.sdk import DAG, task
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

S = ScheduleSet([
    Schedule("ui_quiet_parent", cron="0 0 1 1 *", active=False),
    Schedule("ui_fan_in", after=["ui_quiet_parent"], parent_freshness=1),
])
for name, dag_id in (("ui_quiet_parent", "ui_quiet_load"), ("ui_fan_in", "{FAN_IN_DAG}")):
    with DAG(dag_id, start_date=None, **S.dag_kwargs(name)):
        @task
        def work():
            pass
        work()
"""
SHOWN_DAGS = ("tessera_every_5m_delay", "tessera_calendar_daily_new_york", REFRESHED_DAG)
LOCK_HELD_SECONDS = 10
"""Longer than sqlite3's default busy timeout (5 s), well within the deployment's (sqlite_settings)."""
ATTEMPTS = 3
"""How often a fixture asks again after an answer a busy database explains (500, or none)."""

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's Chromium: apt-get update && apt-get install -y chromium chromium-driver",
    ),
]


def _api(base: str, method: str, path: str, *, token: str = "", body: object = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, {}
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, {}


def _api_settled(base: str, method: str, path: str, *, token: str = "", body: object = None) -> tuple[int, dict]:
    """``_api`` for a fixture's setup step: asked again, a bounded number of times, after a 500 or no answer.

    Each process waits a minute for SQLite's write lock, so a 500 here is rare; the retry keeps
    a setup step from failing a test that is about something else. The tests themselves ask once.
    """
    for _ in range(ATTEMPTS):
        status, answer = _api(base, method, path, token=token, body=body)
        if status not in (0, 500):
            break
    return status, answer


@dataclass(frozen=True)
class AirflowUi:
    base: str
    """The UI's address."""
    home: AirflowHome
    token: str
    """An admin's API token."""


@pytest.fixture(scope="module")
def airflow_ui(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowUi]:
    """A dag-processor, scheduler and API server on a copy of ``dags_examples``, on SQLite."""
    home = AirflowHome(tmp_path_factory.mktemp("airflow-ui"))
    shutil.rmtree(home.dags)
    shutil.copytree(REPO / "dags_examples", home.dags, ignore=shutil.ignore_patterns("__pycache__"))
    (home.dags / "ui_refresh_on_demand.py").write_text(REFRESHED_DAG_FILE)
    (home.dags / "ui_fan_in.py").write_text(FAN_IN_DAG_FILE)
    passwords = home.root / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    home.env.update(
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin,viewer:viewer",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=str(passwords),
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-ui-test-" + "s" * 64,
        AIRFLOW__API__SECRET_KEY="tessera-ui-test-key",
        AIRFLOW__API__BASE_URL=base,
    )
    failed_before = request.session.testsfailed
    try:
        migrated = home.cli("db", "migrate", timeout=600)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("dag-processor", "dag-processor")
        home.start("scheduler", "scheduler")
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port))
        healthy = lambda: _api(base, "GET", "/api/v2/monitor/health")[0] == 200  # noqa: E731
        home.wait_for("the API server", healthy, timeout=300)
        home.wait_for("the examples to be parsed", lambda: all(map(home.is_parsed, SHOWN_DAGS)), timeout=300)
        credentials = {"username": "admin", "password": "admin-pw"}
        status, login = _api_settled(base, "POST", "/auth/token", body=credentials)
        assert status == 201
        token, unpause = login["access_token"], {"is_paused": False}
        status, _ = _api_settled(base, "PATCH", f"/api/v2/dags/{REFRESHED_DAG}", token=token, body=unpause)
        assert status == 200
        yield AirflowUi(base, home, token)
    finally:
        home.stop()
        if request.session.testsfailed > failed_before:
            home.save_artifacts(ARTIFACTS / "airflow")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _log_in(browser: object, base: str, user: str) -> object:
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(f"{base}/auth/login?next=%2F")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", PASSWORDS[user])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/auth/login" not in url, timeout=60_000)
    return page


def test_the_schedules_page_shows_the_examples_and_refresh_starts_a_run(airflow_ui, browser):
    from playwright.sync_api import expect

    page = _log_in(browser, airflow_ui.base, "admin")
    page.get_by_role("link", name="Schedules").click()  # the entry the plugin adds to Airflow's navigation
    page.wait_for_url("**/plugin/tessera-schedules", timeout=30_000)
    frame = page.frame_locator("iframe[title=Schedules]")
    for dag_id in SHOWN_DAGS:
        row = frame.locator(f'tr.dag[data-dag-id="{dag_id}"]')
        expect(row).to_be_visible(timeout=90_000)
        expect(row.locator("td.window")).to_contain_text("→")
    expect(frame.locator("tr.timeline svg.lane").first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "schedules.png")

    row = frame.locator(f'tr.dag[data-dag-id="{REFRESHED_DAG}"]')
    row.locator("button.refresh").click()
    result = row.locator(".result[data-run-id]")
    expect(result).to_be_visible(timeout=60_000)
    run_id = result.get_attribute("data-run-id")
    assert result.get_attribute("data-outcome") == "started"
    row.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "refreshed.png")
    row.locator("button.refresh").click()  # again: joins the run (or returns it, if it already succeeded)
    again = row.locator('.result[data-outcome]:not([data-outcome="started"])')
    expect(again).to_be_visible(timeout=60_000)
    assert again.get_attribute("data-run-id") == run_id

    result.locator("a").click()  # opens the run in Airflow's own UI (a same-document navigation)
    run_path = f"/dags/{REFRESHED_DAG}/runs/{run_id}"
    page.wait_for_url(lambda url: urllib.parse.unquote(url).endswith(run_path), wait_until="commit", timeout=30_000)
    expect(page.get_by_text(run_id).first).to_be_visible(timeout=60_000)
    page.screenshot(path=ARTIFACTS / "run.png")

    page.goto(f"{airflow_ui.base}/dags/{REFRESHED_DAG}")
    hrefs = {f"/runs/{run_id}", f"/runs/{urllib.parse.quote(run_id, safe='')}"}
    grid_bar = page.locator(", ".join(f'a[href*="{href}"]' for href in hrefs)).first
    expect(grid_bar).to_be_visible(timeout=60_000)
    page.screenshot(path=ARTIFACTS / "grid.png")
    page.close()


def test_the_row_names_each_stale_parent_of_a_fan_in_schedule(airflow_ui, browser):
    from playwright.sync_api import expect

    page = _log_in(browser, airflow_ui.base, "viewer")
    page.goto(f"{airflow_ui.base}/plugin/tessera-schedules")
    frame = page.frame_locator("iframe[title=Schedules]")
    row = frame.locator(f'tr.dag[data-dag-id="{FAN_IN_DAG}"]')
    expect(row).to_be_visible(timeout=90_000)
    stale = row.locator('.stale[data-parent="ui_quiet_parent"]')
    expect(stale).to_contain_text("stale parent ui_quiet_parent", timeout=60_000)
    expect(stale).to_contain_text("never completed a fire (bound 1 h)")
    expect(frame.locator(f'tr.dag[data-dag-id="{REFRESHED_DAG}"] .stale')).to_have_count(0)
    row.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "stale-parents.png")
    page.close()


def test_a_viewer_sees_the_page_but_may_not_refresh(airflow_ui, browser):
    from playwright.sync_api import expect

    page = _log_in(browser, airflow_ui.base, "viewer")
    page.goto(f"{airflow_ui.base}/plugin/tessera-schedules")
    row = page.frame_locator("iframe[title=Schedules]").locator(f'tr.dag[data-dag-id="{REFRESHED_DAG}"]')
    expect(row).to_be_visible(timeout=90_000)
    row.locator("button.refresh").click()
    refused = "You may view this DAG but not start its runs."
    expect(row.locator(".result")).to_have_text(refused, timeout=60_000)
    page.screenshot(path=ARTIFACTS / "viewer.png")
    page.close()


def test_an_unpause_waits_out_a_long_write_of_another_process(airflow_ui):
    """SQLite has one writer; sqlite3 gives up after 5 s, the deployment's processes wait a minute.

    Another process (here: this test) holds the write lock for longer than 5 s, as a
    long scheduler loop or parse does; unpausing in the UI (a write, and an action-log
    row) must wait for it and succeed, not answer 500.
    """
    held, released = threading.Event(), []

    def hold_the_write_lock() -> None:
        with closing(sqlite3.connect(airflow_ui.home.db, timeout=60, isolation_level=None)) as conn:
            conn.execute("BEGIN IMMEDIATE")
            held.set()
            time.sleep(LOCK_HELD_SECONDS)
            conn.execute("ROLLBACK")
            released.append(time.monotonic())

    holder = threading.Thread(target=hold_the_write_lock)
    holder.start()
    try:
        assert held.wait(60), "could not take the write lock"
        unpause = {"is_paused": False}
        status, answer = _api(
            airflow_ui.base, "PATCH", f"/api/v2/dags/{REFRESHED_DAG}", token=airflow_ui.token, body=unpause
        )
        answered = time.monotonic()
    finally:
        holder.join()
    assert (status, answer.get("is_paused")) == (200, False)
    # The test proves something only if the request met the lock: it answered after the release.
    assert answered > released[0]
