"""Cross-site request forgery, in a real browser: a page on another localhost port must not start runs.

An admin logs into a real ``airflow api-server`` in headless Chromium (Debian's
``/usr/bin/chromium``, driven through Playwright; no browser is downloaded). Then a
page served on another port of the same host, a different origin but the same site,
so the UI's ``SameSite=Lax`` session cookie goes with its requests, tries to start a
run of a tessera DAG: auto-submitted forms of every encoding a form has, and scripted
requests. The refresh route takes only ``application/json``, which a form cannot send
and a cross-origin script cannot send without a CORS preflight the server refuses:
the forms get 415, and no run is created. The Schedules page's own Refresh button,
same-origin, still starts one; and a DAG whose stored timetable no longer loads is
shown with its error in its row.
"""

from __future__ import annotations

import html
import json
import shutil
import sqlite3
import textwrap
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import AirflowHome, _free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
PASSWORDS = {"admin": "admin-pw"}
TARGET = "csrf_target"
"""The DAG the forged requests try to run; unpaused, so a refresh that got through would start a run."""
PAGE_DAG = "csrf_page_refresh"
"""The DAG the Schedules page's own Refresh button runs."""
BROKEN = "csrf_broken_timetable"
"""Its stored timetable is edited to a 7-minute interval, which tessera refuses to load."""
DAG_FILE = """
from airflow.sdk import DAG, task
from tessera.timetables import Every

for dag_id in {dag_ids!r}:
    with DAG(dag_id, schedule=Every("1h"), start_date=None):
        @task
        def work():
            pass
        work()
"""

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's Chromium: apt-get update && apt-get install -y chromium chromium-driver",
    ),
]


@dataclass
class Deployment:
    home: AirflowHome
    base: str

    def refresh_url(self, dag_id: str) -> str:
        return f"{self.base}/tessera/api/v1/dags/{dag_id}/refresh"

    def run_ids(self, dag_id: str) -> list[str]:
        return [run.run_id for run in self.home.runs(dag_id)]


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/api/v2/monitor/health", timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _break_timetable(db: Path, dag_id: str) -> None:
    """Edit the stored timetable as a hand-edited row or an older tessera could have left it."""
    with sqlite3.connect(db, timeout=60) as conn:
        (data,) = conn.execute("SELECT data FROM serialized_dag WHERE dag_id = ?", (dag_id,)).fetchone()
        dag = json.loads(data)
        dag["dag"]["timetable"]["__var"]["interval_us"] = 7 * 60 * 1_000_000
        conn.execute("UPDATE serialized_dag SET data = ? WHERE dag_id = ?", (json.dumps(dag), dag_id))


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """An API server (no scheduler: nothing but a request can create a run) on three tessera DAGs."""
    home = AirflowHome(tmp_path_factory.mktemp("airflow-csrf"))
    shutil.rmtree(home.dags)
    home.dags.mkdir()
    (home.dags / "csrf_dags.py").write_text(textwrap.dedent(DAG_FILE.format(dag_ids=[TARGET, PAGE_DAG, BROKEN])))
    passwords = home.root / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    home.env.update(
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=str(passwords),
        AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION="False",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-csrf-test-" + "s" * 64,
        AIRFLOW__API__SECRET_KEY="tessera-csrf-test-key",
        AIRFLOW__API__BASE_URL=base,
    )
    try:
        for step in (("db", "migrate"), ("dags", "reserialize")):
            done = home.cli(*step, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
        _break_timetable(home.db, BROKEN)
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port))
        home.wait_for("the API server", lambda: _healthy(base), timeout=300, interval=2)
        yield Deployment(home, base)
    finally:
        home.stop()


def _form(action: str, enctype: str, name: str, value: str) -> str:
    return f"""<!doctype html><title>win a prize</title>
<form id="forged" method="POST" action="{html.escape(action)}" enctype="{enctype}">
  <input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">
</form>
<script>document.getElementById("forged").submit();</script>"""


@pytest.fixture(scope="module")
def other_origin(deployment: Deployment) -> Iterator[str]:
    """Another port of the same host, serving the forging pages: ``/form/<enctype>``, ``/frame`` and ``/blank``."""
    action = deployment.refresh_url(TARGET)
    pages = {
        "/form/urlencoded": _form(action, "application/x-www-form-urlencoded", "conf", "{}"),
        "/form/multipart": _form(action, "multipart/form-data", "conf", "{}"),
        # name + "=" + value is the body: '{"a": "=b"}', valid JSON sent as text/plain.
        "/form/text-plain": _form(action, "text/plain", '{"a": "', 'b"}'),
        "/blank": "<!doctype html><title>blank</title>",
        # Clickjacking: the Schedules page in a frame, which an attacker would make invisible.
        "/frame": f"""<!doctype html><title>win a prize</title>
<iframe id="victim" src="{deployment.base}/tessera/ui/" width="1200" height="700"
        onload="this.dataset.loaded = '1'"></iframe>""",
    }

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            body = pages.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write((body or "not here").encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", _free_port()), Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def admin_page(deployment: Deployment) -> Iterator[Any]:
    """A Chromium page logged into Airflow as admin (the session cookie is set)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{deployment.base}/auth/login?next=%2F")
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", PASSWORDS["admin"])
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/auth/login" not in url, timeout=60_000)
        assert any(cookie["name"] == "_token" for cookie in page.context.cookies(deployment.base))
        yield page
        browser.close()


@pytest.mark.parametrize("enctype", ["urlencoded", "multipart", "text-plain"])
def test_a_form_on_another_port_cannot_start_a_run_with_the_admins_session(
    deployment, other_origin, admin_page, enctype
):
    def forged(response: Any) -> bool:
        return response.url == deployment.refresh_url(TARGET) and response.request.method == "POST"

    with admin_page.expect_response(forged, timeout=60_000) as answered:
        admin_page.goto(f"{other_origin}/form/{enctype}")
    response = answered.value
    # 415, not 401: the session cookie did go with the forged request, it was authorized,
    # and only the body's media type refused it.
    assert response.status == 415, response.text()
    assert "application/json" in response.json()["detail"]
    assert deployment.run_ids(TARGET) == []


@pytest.mark.parametrize(
    ("mode", "content_type"),
    [
        pytest.param("no-cors", "text/plain", id="no-cors-text-plain"),
        pytest.param("cors", "application/json", id="cors-json-needs-a-preflight"),
    ],
)
def test_a_script_on_another_port_cannot_start_a_run_either(deployment, other_origin, admin_page, mode, content_type):
    admin_page.goto(f"{other_origin}/blank")
    outcome = admin_page.evaluate(
        """async ([url, mode, contentType]) => {
            try {
                const response = await fetch(url, { method: "POST", mode, credentials: "include",
                    headers: { "Content-Type": contentType }, body: "{}" });
                return `answered ${response.type}`;
            } catch (error) {
                return `blocked: ${error.name}`;
            }
        }""",
        [deployment.refresh_url(TARGET), mode, content_type],
    )
    # A no-cors answer is opaque to the page; a JSON request dies at its preflight.
    assert outcome == ("answered opaque" if mode == "no-cors" else "blocked: TypeError")
    assert deployment.run_ids(TARGET) == []


def test_the_schedules_pages_own_refresh_button_still_starts_a_run(deployment, admin_page):
    from playwright.sync_api import expect

    admin_page.goto(f"{deployment.base}/tessera/ui/")
    row = admin_page.locator(f'tr.dag[data-dag-id="{PAGE_DAG}"]')
    expect(row).to_be_visible(timeout=60_000)
    row.locator("button.refresh").click()
    result = row.locator(".result[data-run-id]")
    expect(result).to_be_visible(timeout=60_000)
    assert result.get_attribute("data-outcome") == "started"
    assert deployment.run_ids(PAGE_DAG) == [result.get_attribute("data-run-id")]


def test_a_dag_that_cannot_be_planned_shows_its_error_in_its_row_and_the_others_still_show(deployment, admin_page):
    from playwright.sync_api import expect

    admin_page.goto(f"{deployment.base}/tessera/ui/")
    broken = admin_page.locator(f'tr.dag.broken[data-dag-id="{BROKEN}"]')
    expect(broken).to_be_visible(timeout=60_000)
    expect(broken.locator(".chip.bad", has_text="error")).to_be_visible()
    error = admin_page.locator(f'tr.dag[data-dag-id="{BROKEN}"] + tr.timeline .row-error')
    expect(error).to_contain_text("does not divide a day evenly")
    for dag_id in (TARGET, PAGE_DAG):
        expect(admin_page.locator(f'tr.dag:not(.broken)[data-dag-id="{dag_id}"]')).to_be_visible()
    expect(admin_page.locator("#error")).to_be_hidden()


def test_a_page_on_another_port_cannot_frame_the_schedules_page(deployment, other_origin, admin_page):
    """Clickjacking: the frame stays empty (Chromium's error page), so there is no Refresh button to lure a click to.

    The page sends ``frame-ancestors 'self'`` and ``X-Frame-Options: SAMEORIGIN``; Airflow's own UI,
    same origin, still embeds it (``tests/plugin/ui/test_ui_browser.py`` opens it there).
    """
    admin_page.goto(f"{other_origin}/frame")
    admin_page.wait_for_function("document.getElementById('victim').dataset.loaded === '1'", timeout=60_000)
    (framed,) = [frame for frame in admin_page.frames if frame != admin_page.main_frame]
    assert framed.url != f"{deployment.base}/tessera/ui/", "the browser refused to render it"
    assert framed.locator("button.refresh").count() == 0
    # The same page, opened directly, is the page with its Refresh buttons: the refusal is the frame's.
    admin_page.goto(f"{deployment.base}/tessera/ui/")
    admin_page.locator(f'tr.dag[data-dag-id="{TARGET}"] button.refresh').wait_for(timeout=60_000)
