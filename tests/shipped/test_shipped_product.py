"""The product as a user gets it: the built wheel installed into a fresh Airflow, run by its four components.

Every other tier runs the editable checkout, which serves whatever the source tree
holds; this one runs what ``make dist`` ships. Once per module: build the sdist and
the wheel (``python -m build``, the wheel from the sdist), install the wheel (not
editable) with Airflow at this venv's versions into a new virtualenv outside the
checkout, and start the API server, dag-processor, scheduler and triggerer from it on
SQLite with the example DAGs (:mod:`tests.shipped.stack`). Then, as a user would: the
plugin, provider and config as Airflow lists them, every example parsed, every route
of ``/tessera/openapi.json`` called with a token, the Schedules page in Chromium,
``tessera plan`` on a file and against the API, and a cursor-function DAG run to success.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..compat import check_example_errors
from ..compat.airflow_names import config_list_values, provider_default_source
from .distribution import DISTRIBUTION, REPO, Built, build, fresh_venv
from .stack import ADMIN, ShippedAirflow

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
ARTIFACTS = REPO / "test-artifacts" / "shipped"
EXAMPLES = REPO / "dags_examples"
PLANNED_DAG = "tessera_every_5m_delay"
"""A paused example with a tessera timetable: the path parameter of every per-DAG route."""
CURSOR_DAG = "tessera_cursor_digest"
BROKEN_TEXT = ("[object", "undefined", "NaN", "null", "Invalid Date")
"""What a page cell shows when its script put a value where text belongs."""


@dataclass(frozen=True)
class Shipped:
    airflow: ShippedAirflow
    built: Built
    token: str
    """An admin's API token, from ``POST /auth/token`` as the README tells a user."""


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Shipped]:
    root = tmp_path_factory.mktemp("shipped")
    assert not root.resolve().is_relative_to(REPO), "the deployment must live outside the checkout"
    built = build(root / "build", isolated=True)
    bin_dir = fresh_venv(built.wheel, root / "venv")
    dags = root / "dags"
    shutil.copytree(EXAMPLES, dags, ignore=shutil.ignore_patterns("__pycache__"))
    airflow = ShippedAirflow(root, bin_dir, dags)
    failed_before = request.session.testsfailed
    try:
        migrated = airflow.run("airflow", "db", "migrate", timeout=600)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        airflow.start("api-server", "api-server")
        airflow.start("dag-processor", "dag-processor")
        # A task a worker starts before the API server listens fails at once.
        airflow.wait_for("the API server's health endpoint", airflow.healthy, timeout=300)
        airflow.start("scheduler", "scheduler")
        airflow.start("triggerer", "triggerer")
        yield Shipped(airflow, built, airflow.token())
    finally:
        airflow.stop()
        if request.session.testsfailed > failed_before:
            shutil.copytree(airflow.logs, ARTIFACTS / "process-logs", dirs_exist_ok=True)


@pytest.fixture(scope="module")
def parsed(shipped: Shipped) -> Shipped:
    """Once every example file is in the metadata DB, as a DAG or as an import error."""
    files = {path.name for path in EXAMPLES.glob("*.py")}

    def every_file_parsed() -> bool:
        seen = shipped.airflow.query("SELECT relative_fileloc FROM dag WHERE is_stale = 0")
        seen += shipped.airflow.query("SELECT filename FROM import_error")
        return files <= {Path(name).name for (name,) in seen}

    shipped.airflow.wait_for("every example file parsed", every_file_parsed, timeout=300)
    return shipped


def _json(shipped: Shipped, method: str, path: str, body: Any = None) -> Any:
    status, text = shipped.airflow.request(method, path, token=shipped.token, body=body)
    assert 200 <= status < 300, f"{method} {path} answered {status}: {text[:1000]}"
    return json.loads(text)


@pytest.fixture(scope="module")
def cursor_run(parsed: Shipped) -> None:
    """Unpause the cursor-function example early, so its run goes on while the other tests look around.

    The DAG never ran, so the scheduler creates a run for its newest due occurrence at once.
    """
    _json(parsed, "PATCH", f"/api/v2/dags/{CURSOR_DAG}", {"is_paused": False})


def test_the_processes_run_the_installed_wheel_and_airflow_lists_the_plugin_provider_and_config(
    shipped: Shipped, cursor_run: None
) -> None:
    airflow = shipped.airflow
    script = "import sys, tessera.plugin.api.routes as routes; print(routes.__file__); print(sys.path)"
    where = airflow.run("python", "-c", script)
    assert where.returncode == 0, where.stderr[-3000:]
    routes_file, path = where.stdout.splitlines()[-2:]
    assert Path(routes_file).is_relative_to(airflow.bin.parent), f"imported {routes_file}, not the wheel"
    assert str(REPO) not in path, f"the checkout is importable: {path}"

    plugins = json.loads(airflow.run("airflow", "plugins", "--output", "json").stdout)
    (plugin,) = [p for p in plugins if p["name"] == "tessera"]
    assert plugin["source"].startswith(f"{DISTRIBUTION}==")
    assert "tessera.timetables.every.Every" in plugin["timetables"]
    providers = json.loads(airflow.run("airflow", "providers", "list", "--output", "json").stdout)
    assert DISTRIBUTION in [p["package_name"] for p in providers]

    from tessera.plugin import provider_info  # the declared options, compared with what the shipped Airflow says

    # An airflow.cfg without [tessera]: whatever Airflow says about the section comes from the provider.
    listed = airflow.run("airflow", "config", "list", "--section", "tessera", *config_list_values(),
                         "--include-descriptions", "--include-examples", "--include-sources")  # fmt: skip
    assert listed.returncode == 0, listed.stderr[-3000:]
    comments = " ".join(line.lstrip("# ") for line in listed.stdout.splitlines() if line.startswith("#"))
    for name, option in provider_info.OPTIONS.items():
        assert f"{name} = {option['default']}" in listed.stdout, name
        assert " ".join(option["description"].split()) in comments, name
        assert f"Example: {name} = {option['example']}" in listed.stdout, name
    assert listed.stdout.count(f"Source: {provider_default_source(DISTRIBUTION)}") == len(provider_info.OPTIONS)


def test_every_example_parses_without_an_import_error(parsed: Shipped) -> None:
    errors = parsed.airflow.query("SELECT filename, stacktrace FROM import_error")
    check_example_errors({Path(name).name: text for name, text in errors})
    dag_ids = {dag_id for (dag_id,) in parsed.airflow.query("SELECT dag_id FROM dag WHERE is_stale = 0")}
    assert {PLANNED_DAG, CURSOR_DAG} <= dag_ids


def _request_for(path: str, operation: dict[str, Any]) -> str:
    """``path`` with its parameters filled in: the planned example for a DAG id, an hour for a date range."""
    values = {"dag_id": PLANNED_DAG, "from_date": "2026-01-01T00:00:00Z", "to_date": "2026-01-01T01:00:00Z"}
    query = []
    for parameter in operation.get("parameters", []):
        name, where = parameter["name"], parameter["in"]
        if where == "path":
            assert name in values, f"{path}: no value for the path parameter {name!r}; add one to this test"
            path = path.replace("{" + name + "}", values[name])
        elif where == "query" and parameter.get("required"):
            assert name in values, f"{path}: no value for the required parameter {name!r}; add one to this test"
            query.append(f"{name}={values[name]}")
    return f"/tessera{path}" + (f"?{'&'.join(query)}" if query else "")


def test_every_route_of_the_openapi_document_answers_as_documented(parsed: Shipped) -> None:
    document = _json(parsed, "GET", "/tessera/openapi.json")
    called = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            url = _request_for(path, operation)
            # A write gets the smallest valid body; on a paused DAG a refresh is refused (409), starting nothing.
            status, text = parsed.airflow.request(
                method.upper(), url, token=parsed.token, body={} if method != "get" else None
            )
            documented = {int(code) for code in operation["responses"] if code.isdigit()}
            called.append((method.upper(), url, status))
            assert status < 500, f"{method.upper()} {url} answered {status}: {text[:1000]}"
            assert text.strip() != '{"detail":"Not Found"}', f"{method.upper()} {url}: no such route in the wheel"
            if method == "get":
                assert 200 <= status < 300, f"GET {url} answered {status}: {text[:1000]}"
            assert status in documented, f"{method.upper()} {url} answered {status}, documented {sorted(documented)}"
    # A few of today's routes by name: a wheel without its routers would document none.
    paths = {url for _, url, _ in called}
    assert {"/tessera/api/v1/plan", "/tessera/api/v1/status", f"/tessera/api/v1/dags/{PLANNED_DAG}/refresh"} <= paths


def test_the_schedules_page_shows_a_row_per_planned_dag_and_no_broken_cell(parsed: Shipped) -> None:
    texts = _schedules_page_cells(parsed)
    planned = {dag["dag_id"] for dag in _json(parsed, "GET", "/tessera/api/v1/plan")["dags"]}
    assert {PLANNED_DAG, CURSOR_DAG} <= planned
    assert set(texts) == planned
    broken = [
        (dag_id, cell, text)
        for dag_id, cells in texts.items()
        for cell, text in cells.items()
        if cell != "health" and any(word in text for word in BROKEN_TEXT)
    ]
    assert broken == []
    assert all(cells["dag"].startswith(dag_id) for dag_id, cells in texts.items())


def test_the_schedules_pages_health_cells_show_words(parsed: Shipped) -> None:
    texts = _schedules_page_cells(parsed)
    broken = [(dag_id, cells["health"]) for dag_id, cells in texts.items() if "[object" in cells["health"]]
    assert broken == []


_cells: dict[str, dict[str, str]] = {}
_failed: list[BaseException] = []


def _schedules_page_cells(shipped: Shipped) -> dict[str, dict[str, str]]:
    """The text of every cell of every DAG row, by DAG id and cell class, as Chromium shows it (read once)."""
    if _cells:
        return _cells
    if _failed:  # read once: a second test does not wait out the same broken page again
        raise _failed[0]
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run installs it)")
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{shipped.airflow.base}/auth/login?next=%2F")
            page.fill("input[name=username]", ADMIN[0])
            page.fill("input[name=password]", ADMIN[1])
            page.click("button[type=submit]")
            page.wait_for_url(lambda url: "/auth/login" not in url, timeout=60_000)
            # The entry the plugin adds to Airflow's navigation (generous: a busy machine renders slowly).
            page.get_by_role("link", name="Schedules").click(timeout=120_000)
            frame = page.frame_locator("iframe[title=Schedules]")
            expect(frame.locator(f'tr.dag[data-dag-id="{PLANNED_DAG}"] .window')).to_contain_text("→", timeout=120_000)
            page.screenshot(path=ARTIFACTS / "schedules.png")
            rows = frame.locator("tr.dag").evaluate_all(
                "rows => rows.map(row => [row.dataset.dagId,"
                " Object.fromEntries([...row.cells].map(cell => [cell.className, cell.innerText]))])"
            )
        except BaseException as error:
            _failed.append(error)
            raise
        finally:
            browser.close()
    _cells.update({dag_id: cells for dag_id, cells in rows})
    return _cells


def test_tessera_plan_reads_an_example_file(shipped: Shipped) -> None:
    planned = shipped.airflow.run("tessera", "plan", shipped.airflow.dags / "every_5m_delay.py", "--count", "2")
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert f"{PLANNED_DAG}: every 5m · delay 30s" in planned.stdout
    assert len(re.findall(r"\d\d:\d\d:\d\d -> \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", planned.stdout)) == 2


def test_tessera_plan_reads_the_running_deployment_with_a_token(parsed: Shipped) -> None:
    base = parsed.airflow.base
    planned = parsed.airflow.run("tessera", "plan", "--api", base, "--token", parsed.token, "--dag-id", PLANNED_DAG)
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert f"{PLANNED_DAG}: every 5m · delay 30s" in planned.stdout
    refused = parsed.airflow.run("tessera", "plan", "--api", base, "--token", "not-a-token")
    assert refused.returncode == 2 and re.search(r"answered 40[13]", refused.stderr), refused.stderr[-2000:]


def test_a_cursor_function_dag_runs_to_success_and_stores_its_cursor(parsed: Shipped, cursor_run: None) -> None:
    airflow = parsed.airflow

    def finished() -> list[tuple] | None:
        rows = airflow.query("SELECT run_id, state FROM dag_run WHERE dag_id = ? ORDER BY id LIMIT 1", CURSOR_DAG)
        return rows if rows and rows[0][1] in ("success", "failed") else None

    ((run_id, state),) = airflow.wait_for("the cursor function's first run to finish", finished, timeout=300)
    tasks = airflow.query("SELECT task_id, state FROM task_instance WHERE run_id = ?", run_id)
    assert (state, tasks) == ("success", [("digest", "success")]), f"see {airflow.logs}"
    stored = _json(parsed, "GET", f"/api/v2/variables/{CURSOR_DAG}-state")  # the cursor, as Admin > Variables shows it
    assert json.loads(stored["value"])["since"] > "2026-01-01T00:00:00.000000Z"  # the watermark moved past `initial`
