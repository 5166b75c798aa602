"""The Schedules page in a real browser: headless Chromium logs into a real Airflow and refreshes a DAG.

Airflow runs as a dag-processor, a scheduler and an API server on the example DAGs.
Chromium is Debian's (``/usr/bin/chromium``), driven through Playwright's Python API;
no browser is ever downloaded. Screenshots go to ``test-artifacts/ui/``: the page at 1280x800 in
Airflow's light and dark themes, and the fleet load view (its answer beside it, as JSON).
"""

from __future__ import annotations

import json
import re
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
REPO = Path(__file__).resolve().parents[3]
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
CAMEL_DAG = "uiNightlyWarehouseRollupForNorthAmericanRegionalSalesAndReturns"
# A camelCase id longer than its column: it must wrap between words ("…Warehouse|Rollup…"), never inside one.
CAMEL_DAG_FILE = f"""
import datetime
from airflow.sdk import DAG, task
from tessera.timetables import Every

tomorrow = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
with DAG("{CAMEL_DAG}", schedule=Every("1d"), start_date=tomorrow, catchup=False):
    @task
    def roll_up():
        pass
    roll_up()
"""
SHOWN_DAGS = ("tessera_every_5m_delay", "tessera_calendar_daily_new_york", REFRESHED_DAG, CAMEL_DAG)
OWN_DAGS = 4
"""The DAGs the fixture adds to the examples (the refreshed one, the fan-in pair's two, the camelCase one)."""
LOCK_HELD_SECONDS = 10
"""Longer than sqlite3's default busy timeout (5 s), well within the deployment's (sqlite_settings)."""
ATTEMPTS = 3
"""How often a fixture asks again after an answer a busy database explains (500, or none)."""

# About 2 minutes on an idle machine: make test starts the longest deployments first (tests/conftest.py).
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.minutes(2),
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
    (home.dags / "ui_camel_case.py").write_text(CAMEL_DAG_FILE)
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


def _log_in(browser: object, base: str, user: str, viewport: dict | None = None) -> object:
    page = browser.new_page(viewport=viewport or {"width": 1600, "height": 1000})
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
        expect(row.locator(".window")).to_contain_text("→")
    expect(frame.locator("tr.timeline svg.lane").first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "schedules.png")

    row = frame.locator(f'tr.dag[data-dag-id="{REFRESHED_DAG}"]')
    row.locator("button.refresh").click()
    result = row.locator(".result[data-run-id]")
    expect(result).to_be_visible(timeout=60_000)
    run_id = result.get_attribute("data-run-id")
    assert result.get_attribute("data-outcome") == "started"
    # Said as people say it; the raw run id stays in the tooltip.
    expect(result).to_have_text(re.compile(r"^Started refresh \d\d:\d\d:\d\d$"))
    assert result.locator("a").get_attribute("title") == f"run id: {run_id}"
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
    row) must wait for it and succeed, not answer 500. The example DAGs' tasks may be
    running meanwhile: a task's write that wins the lock after the release once kept it
    for the whole busy timeout (``tessera.plugin.api.routes.audit``).
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


# -- at 1280x800: layout, theme, timeline, address, keyboard, fleet load -------------------------

LAPTOP = {"width": 1280, "height": 800}
MONTHLY, BIWEEKLY, FIVE_MINUTES = (
    "tessera_calendar_month_end",
    "tessera_calendar_biweekly_amsterdam",
    "tessera_every_5m_delay",
)
AFTER_DAG = "tessera_declared_gold_cross_source"
HERD = [f"tessera_herd_cron_{i}" for i in range(6)]
ELEMENTS_PER_ROW = 45
"""An upper bound on the elements a DAG's two rows hold, whatever its cadence (a 5-minute DAG too)."""
# Records every address Airflow's router writes, so a test sees the UI's own sync of the frame's path.
RECORD_ADDRESSES = """
window.__addresses = [];
for (const name of ["pushState", "replaceState"]) {
  const original = history[name].bind(history);
  history[name] = (state, title, url) => {
    if (url !== undefined) window.__addresses.push(String(url));
    return original(state, title, url);
  };
}
"""


def _schedules_frame(page: object) -> object:
    """The document of the Schedules iframe on the page now: the one ``iframe[title=Schedules]`` finds.

    Not the first of ``page.frames`` at a /tessera/ui/ address: Airflow's UI may have mounted the
    plugin's iframe more than once, and an earlier frame, never loaded, has no rows (0 / 0 rows
    per element, or a load that never ends, in a busy run).
    """
    return page.locator("iframe[title=Schedules]").element_handle(timeout=90_000).content_frame()


def _open_schedules(airflow_ui: AirflowUi, browser: object, *, theme: str | None = None) -> tuple[object, object]:
    from playwright.sync_api import expect

    page = _log_in(browser, airflow_ui.base, "admin", LAPTOP)
    if theme is not None:  # Airflow's own theme setting (next-themes keeps it under "theme")
        page.evaluate("theme => localStorage.setItem('theme', theme)", theme)
    page.goto(f"{airflow_ui.base}/plugin/tessera-schedules")
    frame = page.frame_locator("iframe[title=Schedules]")
    lane = frame.locator(f'tr.timeline[data-dag-id="{MONTHLY}"] path.even')
    expect(lane).to_have_attribute("d", re.compile(r"^M"), timeout=90_000)  # the lanes are drawn
    return page, frame


def _widths(target: object) -> tuple[int, int]:
    return tuple(target.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_page_fits_a_laptop_screen_in_airflows_theme(airflow_ui, browser, theme):
    page, frame = _open_schedules(airflow_ui, browser, theme=theme)
    inner = _schedules_frame(page)
    scroll, client = _widths(inner)
    assert scroll <= client, f"the page scrolls sideways: {scroll} px of content in {client} px"
    scroll, client = _widths(page)
    assert scroll <= client
    buttons = frame.locator("button.refresh").all()
    assert len(buttons) >= len(SHOWN_DAGS)
    for button in buttons:
        box = button.bounding_box()
        assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= LAPTOP["width"], box
    assert page.evaluate("() => document.documentElement.classList.contains('dark')") == (theme == "dark")
    assert inner.evaluate("() => document.documentElement.classList.contains('dark')") == (theme == "dark")
    page.screenshot(path=ARTIFACTS / f"schedules-1280x800-{theme}.png")
    page.close()


def test_the_header_and_the_axis_stay_in_view_while_scrolling(airflow_ui, browser):
    page, _ = _open_schedules(airflow_ui, browser)
    inner = _schedules_frame(page)
    height = inner.evaluate("() => innerHeight")
    inner.evaluate("() => scrollTo(0, document.documentElement.scrollHeight)")
    inner.wait_for_function("() => scrollY > 0", timeout=10_000)
    seen = inner.evaluate(
        """() => {
      const head = document.querySelector("#schedules thead th").getBoundingClientRect();
      const axis = document.querySelector("#axis").getBoundingClientRect();
      const ticks = [...document.querySelectorAll("#axis .tick")].map((tick) => tick.textContent);
      return { scrolled: scrollY, head: [head.top, head.bottom], axis: [axis.top, axis.bottom], ticks };
    }"""
    )
    assert seen["scrolled"] > height, f"the page is too short to test scrolling: {seen}"
    assert -1 <= seen["head"][0] <= 1, f"the column headers scrolled away: {seen}"
    assert 0 <= seen["axis"][0] and seen["axis"][1] <= height, f"the timeline axis scrolled away: {seen}"
    assert any(re.search(r"\d", tick) for tick in seen["ticks"]), f"the axis shows no time: {seen}"
    page.close()


def test_long_waits_read_in_their_largest_units(airflow_ui, browser):
    page, _ = _open_schedules(airflow_ui, browser)
    inner = _schedules_frame(page)
    # 28,005 minutes late is how the page used to word a run 19 days and 11 hours late.
    cases = {"59": "59 s", "150": "2 min", "7260": "2 h 1 min", "172800": "2 d", "1680300": "19 d 10 h"}
    shown = inner.evaluate("cases => Object.keys(cases).map((s) => spoken(Number(s)))", cases)
    assert shown == list(cases.values())
    page.close()


def test_the_page_follows_a_theme_change_without_a_reload(airflow_ui, browser):
    page, _ = _open_schedules(airflow_ui, browser, theme="light")
    inner = _schedules_frame(page)
    # What Airflow's theme switch does to its own page: the resolved theme is the class on <html>.
    page.evaluate("() => document.documentElement.classList.replace('light', 'dark')")
    inner.wait_for_function("() => document.documentElement.classList.contains('dark')", timeout=10_000)
    page.close()


def test_the_address_stays_the_one_the_user_opened(airflow_ui, browser):
    page = _log_in(browser, airflow_ui.base, "admin", LAPTOP)
    page.add_init_script(RECORD_ADDRESSES)
    page.goto(f"{airflow_ui.base}/plugin/tessera-schedules")
    inner = page.wait_for_event("framenavigated", lambda f: "/tessera/ui/" in f.url, timeout=60_000)
    inner.wait_for_load_state("load")
    # Airflow's UI mirrors the frame's path into the address once the frame has loaded ...
    page.wait_for_function("() => window.__addresses.some(url => url.endsWith('/tessera/ui/'))", timeout=30_000)
    # ... and the page puts the address the user opened back.
    page.wait_for_function("() => location.pathname === '/plugin/tessera-schedules'", timeout=30_000)
    page.wait_for_timeout(2_000)  # and it stays there
    assert urllib.parse.urlparse(page.url).path == "/plugin/tessera-schedules"
    page.close()


def test_long_and_dense_cadences_and_after_dags_read_in_words(airflow_ui, browser):
    from playwright.sync_api import expect

    page, frame = _open_schedules(airflow_ui, browser)
    inner = _schedules_frame(page)
    expect(frame.locator("#range-used")).to_contain_text("(auto")
    for dag_id in (MONTHLY, BIWEEKLY):  # the current window and the start of the next one are in range
        lane = frame.locator(f'tr.timeline[data-dag-id="{dag_id}"]')
        expect(lane.locator("path.even")).to_have_attribute("d", re.compile(r"^M"))
        expect(lane.locator("path.odd")).to_have_attribute("d", re.compile(r"^M"))
    dense = frame.locator(f'tr.timeline[data-dag-id="{FIVE_MINUTES}"]')
    expect(dense.locator(".lane-note")).to_have_text(re.compile(r"^[≈\d,]+ runs, every 5 min$"))
    expect(dense.locator("path.band")).to_have_attribute("d", re.compile(r"^M"))
    expect(dense.locator("path.even")).to_have_attribute("d", "")
    after = frame.locator(f'tr.dag[data-dag-id="{AFTER_DAG}"] .schedule')
    expect(after).to_have_text(re.compile(r"^after apc_daily and norled_daily and mpc_daily$"))
    per_row = inner.evaluate(
        "() => document.querySelectorAll('#schedules tbody *').length"
        " / document.querySelectorAll('#schedules tbody tr.dag').length"
    )
    assert per_row <= ELEMENTS_PER_ROW
    assert inner.evaluate("() => document.querySelectorAll('#schedules rect').length") == 0
    page.close()


def test_the_range_is_keyboard_operable_and_rows_are_updated_in_place(airflow_ui, browser):
    from playwright.sync_api import expect

    page, frame = _open_schedules(airflow_ui, browser)
    # the locator waits for the row (the first answer may still be on its way), then marks that element
    frame.locator(f'tr.dag[data-dag-id="{MONTHLY}"]').evaluate("row => { row.dataset.kept = 'yes'; }")
    frame.locator('#range input[value="24h"]').focus()
    page.keyboard.press("Space")
    expect(frame.locator("#range-used")).to_have_text("next 24 hours")
    note = frame.locator(f'tr.timeline[data-dag-id="{MONTHLY}"] .lane-note')
    expect(note).to_contain_text("beyond the next 24 hours")
    page.keyboard.press("ArrowRight")
    expect(frame.locator("#range-used")).to_have_text("next 7 days")
    assert frame.locator('#range input[value="7d"]').is_checked()
    # The reloads changed the row's content, not the row: it is the element marked before.
    assert frame.locator(f'tr.dag[data-dag-id="{MONTHLY}"][data-kept="yes"]').count() == 1
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # back to auto, for the other tests (the choice is remembered)
    expect(frame.locator("#range-used")).to_contain_text("(auto")
    page.close()


def test_the_fleet_load_names_the_herd_that_plain_cron_makes(airflow_ui, browser):
    from playwright.sync_api import expect

    page, frame = _open_schedules(airflow_ui, browser)
    frame.locator("#load summary").focus()
    page.keyboard.press("Enter")  # a <details>: opened from the keyboard, computed when opened
    expect(frame.locator("#load-body[data-peak-to-mean]")).to_be_visible(timeout=60_000)
    # The examples start paused here (the demo unpauses them): count them too, as the demo would.
    frame.locator("#load-paused").focus()
    page.keyboard.press("Space")
    expect(frame.locator("#load .load-summary")).to_contain_text("paused DAGs counted", timeout=60_000)
    spikes = frame.locator("#load ol.spikes")
    for dag_id in HERD:
        expect(spikes).to_contain_text(dag_id)
    phased_in_every_spike = frame.locator("#load ol.spikes li", has_text="tessera_herd_phased_0")
    assert phased_in_every_spike.count() <= 1, "a phased DAG starts in one minute of the quarter hour at most"
    frame.locator("#load").scroll_into_view_if_needed()
    frame.locator("#load").screenshot(path=ARTIFACTS / "load.png")
    status, load = _api(airflow_ui.base, "GET", "/tessera/api/v1/load?include_paused=true", token=airflow_ui.token)
    assert status == 200
    (ARTIFACTS / "load.json").write_text(json.dumps({k: v for k, v in load.items() if k != "counts"}, indent=2))
    assert load["peak_to_mean"] >= 3
    expect(frame.locator("#load .without-phases b")).to_have_text(re.compile(r"^\d+(\.\d+)?$"))
    page.close()


# -- every cell reads as words, in both themes, at laptop sizes ----------------------------------

VIEWPORTS = {"1280x800": LAPTOP, "1440x900": {"width": 1440, "height": 900}}
UNREADABLE_TEXT = ("[object", "undefined", "NaN", "null", "Invalid Date")
HEALTH_WORDS = re.compile(
    r"^(spec valid|spec invalid|ready|not ready|ready\?|on time|paused|not scheduled|unknown"
    r"|late (\d+ s|\d+ min|\d+ h( \d+ min)?|\d+ d( \d+ h)?)"
    r"|\d+ failed in a row|stale parent \S+)$"
)
"""Every word the Health column may show (README, "Schedules page")."""
REQUIRED_CELLS = ("dag", "next", "outcome", "health")
# Reads every row the way a person does: the text of each cell, what each cell's boxes cover, and
# where the browser broke the DAG id's line (a break must come after "_", "-" or ".", or between the
# words of camelCase, never mid-word).
READ_ROWS = """
() => {
  const inside = (box, cell) => box.left >= cell.left - 0.5 && box.right <= cell.right + 0.5;
  return [...document.querySelectorAll("#schedules tbody tr.dag")].map((row) => {
    const cells = {};
    for (const td of row.querySelectorAll("td")) {
      const cell = td.getBoundingClientRect();
      const over = [...td.querySelectorAll("*")].filter((node) => {
        const box = node.getBoundingClientRect();
        return box.width > 0 && !inside(box, cell);
      }).map((node) => node.outerHTML.slice(0, 120));
      const cut = [...td.querySelectorAll(".chip, .lane-note, a, div, span")]
        .filter((node) => node.scrollWidth > node.clientWidth + 1 && getComputedStyle(node).overflow === "hidden")
        .map((node) => node.textContent);
      const titles = [...td.querySelectorAll("[title]")].map((node) => node.title);
      cells[td.className] = { text: td.innerText.trim(), titles, over, cut };
    }
    const link = row.querySelector("td.dag a");
    const breaks = [];
    if (link && link.firstChild) {
      const text = link.textContent;
      const range = document.createRange();
      let top = null;
      let index = 0;
      for (const node of link.childNodes) {
        if (node.nodeType !== Node.TEXT_NODE) continue;
        for (let i = 0; i < node.length; i++, index++) {
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rect = range.getClientRects()[0];
          if (!rect) continue;
          if (top !== null && rect.top > top + 2) breaks.push(text.slice(0, index));
          top = rect.top;
        }
      }
    }
    const lane = document.querySelector(`tr.timeline[data-dag-id="${CSS.escape(row.dataset.dagId)}"]`);
    const note = lane.querySelector(".lane-note");
    const now = lane.querySelector("line.now").getBoundingClientRect();
    const noteBox = note.getBoundingClientRect();
    return {
      dag_id: row.dataset.dagId,
      cells,
      health: [...row.querySelectorAll("td.health .chip")].map((chip) => chip.textContent),
      breaks,
      note: note.textContent,
      note_crosses_now: note.textContent !== "" && !note.classList.contains("error")
        && noteBox.left <= now.left + now.width && noteBox.right >= now.left,
    };
  });
}
"""


def _word_boundary(text: str, index: int) -> bool:
    """Whether a line may break before ``text[index]``: after "_", "-" or ".", or at a camelCase word's start."""
    before, after = text[index - 1], text[index]
    return before in "_-." or ((before.islower() or before.isdigit()) and after.isupper())


def _tessera_examples() -> set[str]:
    """The example DAGs the page shows: those on a tessera timetable or in a declared schedule."""
    from tests.compat.airflow_names import DagBag

    bag = DagBag(str(REPO / "dags_examples"))
    assert not bag.import_errors, bag.import_errors
    return {
        dag_id
        for dag_id, dag in bag.dags.items()
        if type(dag.timetable).__module__.startswith("tessera.")
        or any(tag.startswith("tessera-schedule:") for tag in dag.tags)
    }


@pytest.mark.parametrize("size", VIEWPORTS)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_cell_reads_as_words_and_fits_its_column(airflow_ui, browser, theme, size):
    from playwright.sync_api import expect

    page = _log_in(browser, airflow_ui.base, "admin", VIEWPORTS[size])
    page.evaluate("theme => localStorage.setItem('theme', theme)", theme)
    page.goto(f"{airflow_ui.base}/plugin/tessera-schedules")
    frame = page.frame_locator("iframe[title=Schedules]")
    expected = _tessera_examples()
    expect(frame.locator("tr.dag")).to_have_count(len(expected) + OWN_DAGS, timeout=90_000)
    # Every row and lane drawn: the page marks its load done once the last lane is.
    inner = _schedules_frame(page)
    inner.wait_for_function(
        "count => document.body.dataset.loaded && document.querySelectorAll('tr.dag').length === count",
        arg=len(expected) + OWN_DAGS,
        timeout=90_000,
    )
    rows = inner.evaluate(READ_ROWS)
    assert expected <= {row["dag_id"] for row in rows}
    problems = []
    for row in rows:
        for name in REQUIRED_CELLS:
            cell = row["cells"][name]
            if not cell["text"] or cell["text"] in ("—", "-"):
                problems.append(f"{row['dag_id']}: the {name} cell is empty")
            for text in (cell["text"], *cell["titles"]):
                problems += [f"{row['dag_id']}: {name} reads {text!r}" for bad in UNREADABLE_TEXT if bad in text]
            problems += [f"{row['dag_id']}: {name} overflows its column: {html}" for html in cell["over"]]
            problems += [f"{row['dag_id']}: {name} is cut: {text!r}" for text in cell["cut"]]
        problems += [f"{row['dag_id']}: lane note {row['note']!r}" for bad in UNREADABLE_TEXT if bad in row["note"]]
        if not row["health"]:
            problems.append(f"{row['dag_id']}: Health shows no word")
        problems += [
            f"{row['dag_id']}: Health shows {word!r}" for word in row["health"] if not HEALTH_WORDS.match(word)
        ]
        problems += [
            f"{row['dag_id']}: its id breaks mid-word after {before!r}"
            for before in row["breaks"]
            if not _word_boundary(row["dag_id"], len(before))
        ]
        if row["note_crosses_now"]:
            problems.append(f"{row['dag_id']}: the now line is drawn through the lane note {row['note']!r}")
    camel = next(row for row in rows if row["dag_id"] == CAMEL_DAG)
    assert camel["breaks"], f"{CAMEL_DAG} fits one line: it no longer tests where a long camelCase id wraps"
    page.screenshot(path=ARTIFACTS / f"readable-{size}-{theme}.png", full_page=True)
    inner.locator("main").screenshot(path=ARTIFACTS / f"readable-{size}-{theme}-rows.png")
    page.close()
    assert not problems, "\n".join(problems)
