"""The Schedules page in headless Chromium at fleet scale: the first row with its content, every lane drawn.

The same fleet as ``page_scale.py`` (``_page_fleet.py``: 1,000 DAGs of a deployment's mix,
``--dags``, each with 3 days of runs) is stored in a metadata DB (PostgreSQL from
``scripts/postgres.sh`` unless ``--sqlite``), a real ``airflow api-server`` (one worker) serves
it, and Debian's Chromium (``/usr/bin/chromium``, driven by Playwright as
``tests/plugin/ui/test_ui_browser.py`` does; no browser download) logs in and opens the page
itself (``/tessera/ui/``). Reported, with the load average while it ran:

* first row: milliseconds from navigation start until a ``tr.dag`` row shows its content (its
  Health cell has words; a ``MutationObserver`` installed before the page's own scripts run);
* every lane drawn: until the page marks its load done (``body[data-loaded]``, set once every
  row and lane is drawn);
* the longest main-thread task (``PerformanceObserver`` ``longtask``) during the first
  load, and during the page's next periodic reload (waited for, ``--reload-wait`` s);
* DOM elements and SVG ``rect`` elements once the rows are in.

Not in ``make bench`` (an API server and a browser): run
``.venv/bin/python bench/page_browser.py`` (``--sqlite``, ``--dags N``, ``--code DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
WARM_LOADS = 3
"""Page loads measured after the first (the first is on an API server that has decoded no stored DAG yet)."""
OBSERVE = """
window.__tessera = { firstRow: null, drawn: null, longTasks: [] };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__tessera.longTasks.push([entry.startTime, entry.duration]);
}).observe({ type: "longtask", buffered: true });
new MutationObserver((_, observer) => {
  const seen = window.__tessera;
  const health = document.querySelector("tr.dag td.health");
  if (seen.firstRow === null && health && health.textContent.trim()) seen.firstRow = performance.now();
  if (document.body && document.body.dataset.loaded) { seen.drawn = performance.now(); observer.disconnect(); }
}).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-loaded"] });
"""
REMAP = """
import __editable___airflow_tessera_0_1_0_finder as finder
for package in ("timetables", "operators", "plugin"):
    finder.MAPPING["tessera." + package] = {root!r} + "/" + package
"""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _prepare(dags: int) -> None:
    """In a process of its own (the environment names the DB): migrate, then store the fleet and its runs."""
    import datetime

    sys.path.insert(0, str(HERE))
    from _page_fleet import history, store
    from airflow.utils import db

    db.initdb()
    stored, spent = store(Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"]), 0, dags)
    runs = history(stored, now=datetime.datetime.now(datetime.timezone.utc), days=3, cap=100)
    print(f"  stored {dags} DAGs in {spent:.0f}s, {runs} runs", file=sys.stderr)


def _wait_healthy(base: str, server: subprocess.Popen, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("the API server exited")
        try:
            with urllib.request.urlopen(base + "/api/v2/monitor/health", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(2)
    raise RuntimeError("the API server did not answer")


def _browse(base: str, reload_wait: float) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/auth/login?next=%2F")
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", "admin-pw")
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/auth/login" not in url, timeout=120_000)
        page.add_init_script(OBSERVE)
        loads, timings = [], []
        for _ in range(1 + WARM_LOADS):  # the first on a server that has decoded no DAG yet, then reloads
            loads.append(os.getloadavg()[0])
            page.goto(f"{base}/tessera/ui/", wait_until="commit")
            page.wait_for_function("window.__tessera && window.__tessera.drawn !== null", timeout=600_000, polling=100)
            loads[-1] = max(loads[-1], os.getloadavg()[0])
            timings.append(page.evaluate("window.__tessera"))
        first = timings[-1]
        counts = page.evaluate(
            "({rows: document.querySelectorAll('tr.dag').length, elements: document.getElementsByTagName('*').length,"
            " rects: document.querySelectorAll('svg rect').length})"
        )
        loaded_at = page.evaluate("performance.now()")
        page.wait_for_timeout(reload_wait * 1000)
        later = [task for task in page.evaluate("window.__tessera.longTasks") if task[0] > loaded_at]
        browser.close()
    warm = timings[1:]
    longest_first = max((duration for _, duration in first["longTasks"]), default=0.0)
    return {
        "first row with its content ms (warm, median)": round(statistics.median(t["firstRow"] for t in warm)),
        "every lane drawn ms (warm, median)": round(statistics.median(t["drawn"] for t in warm)),
        "first row / every lane ms (cold server)": f"{timings[0]['firstRow']:.0f} / {timings[0]['drawn']:.0f}",
        "load avg (1 min) during the loads": "/".join(f"{value:.1f}" for value in loads),
        "longest task, first load ms": round(longest_first),
        "longest task, next reload ms": round(max((duration for _, duration in later), default=0.0)),
        "long tasks on reload": len(later),
        **counts,
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    if argv is None:  # from bench/run.py: this one needs an API server and a browser, run it on its own
        print("  bench/page_browser.py: run it on its own (see its docstring)", file=sys.stderr)
        return []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dags", type=int, default=1000)
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--code", help="serve the tessera code (API and page) of this checkout instead")
    parser.add_argument("--reload-wait", type=float, default=40.0, help="seconds to watch for the periodic reload")
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.prepare:
        _prepare(args.dags)
        return []
    sys.path.insert(0, str(HERE))
    from page_scale import _postgres

    pg_data = None
    with tempfile.TemporaryDirectory(prefix="tessera-page-browser-") as scratch:
        home = Path(scratch)
        (home / "dags").mkdir()
        (home / "passwords.json").write_text(json.dumps({"admin": "admin-pw"}))
        site = home / "site"
        site.mkdir()
        if args.code:  # every Python process of the run (the API server too) imports that checkout's tessera
            (site / "sitecustomize.py").write_text(REMAP.format(root=str(Path(args.code).resolve())))
        url = f"sqlite:///{home / 'airflow.db'}" if args.sqlite else None
        if url is None:
            pg_data, url = _postgres()
        port = _free_port()
        env = {
            **os.environ,
            "PYTHONPATH": str(site),
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url,
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
            "AIRFLOW__API_AUTH__JWT_SECRET": "tessera-page-browser-" + "s" * 64,
            "AIRFLOW__API__SECRET_KEY": "tessera-page-browser-key",
            "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        }
        server = None
        try:
            prepare = [sys.executable, __file__, "--prepare", "--dags", str(args.dags)]
            subprocess.run(prepare, env=env, check=True)
            airflow = Path(sys.executable).with_name("airflow")
            command = [str(airflow), "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
            server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            base = f"http://127.0.0.1:{port}"
            _wait_healthy(base, server)
            row = {"bench": "page_browser", "db": "sqlite" if args.sqlite else "postgresql", "dags": args.dags}
            row |= {"code": args.code or "this checkout"} | _browse(base, args.reload_wait)
        finally:
            if server is not None:
                server.terminate()
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.kill()
            if pg_data is not None:
                subprocess.run(["bash", str(REPO / "scripts" / "postgres.sh"), "stop", pg_data], check=False)
    return [row]


if __name__ == "__main__":
    from tabulate import tabulate

    found = main(sys.argv[1:])
    if found:
        print(tabulate(found, headers="keys", tablefmt="github"))
