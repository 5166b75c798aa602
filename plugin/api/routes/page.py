"""The Schedules page (``/ui/``, embedded in Airflow's UI) and the OpenAPI document, behind authentication."""

from __future__ import annotations

from pathlib import Path

from fastapi import Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse

from tessera.plugin.errors import NotFound

from .guarded import NO_DAG_DATA, Budget, guarded_router, route

UI_DIR = Path(__file__).resolve().parents[2] / "ui"
"""``tessera/plugin/ui``: the page's files, shipped as package data."""
UI_ASSETS = {
    "host.js": "text/javascript",
    "lane.js": "text/javascript",
    "timeline.js": "text/javascript",
    "schedules.js": "text/javascript",
    "load.js": "text/javascript",
    "why.js": "text/javascript",
    "pager.js": "text/javascript",
    "find.js": "text/javascript",
    "actions.js": "text/javascript",
    "why.css": "text/css",
    "schedules.css": "text/css",
    "icon.svg": "image/svg+xml",
}

router = guarded_router(include_in_schema=False)
ONE_FILE = Budget.fixed("files", 1, "one file of the package, or the document; nothing the caller sends")


@route(router, "GET", "/openapi.json", scope=NO_DAG_DATA, budget=ONE_FILE)
def openapi(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())


@route(router, "GET", "/ui/", scope=NO_DAG_DATA, budget=ONE_FILE)
def schedules_page() -> HTMLResponse:
    return HTMLResponse((UI_DIR / "index.html").read_text(encoding="utf-8"))


@route(router, "GET", "/ui/{name}", scope=NO_DAG_DATA, budget=ONE_FILE)
def schedules_asset(name: str) -> FileResponse:
    if name not in UI_ASSETS:
        raise NotFound(f"{name!r} is not part of the Schedules page")
    return FileResponse(UI_DIR / name, media_type=UI_ASSETS[name])
