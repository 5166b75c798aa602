"""The Schedules page (``/ui/``, embedded in Airflow's UI) and the OpenAPI document, behind authentication."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse

from ..errors import NotFound
from .access import authenticated

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
    "why.css": "text/css",
    "schedules.css": "text/css",
    "icon.svg": "image/svg+xml",
}

router = APIRouter(include_in_schema=False, dependencies=[authenticated])


@router.get("/openapi.json")
def openapi(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())


@router.get("/ui/")
def schedules_page() -> HTMLResponse:
    return HTMLResponse((UI_DIR / "index.html").read_text(encoding="utf-8"))


@router.get("/ui/{name}")
def schedules_asset(name: str) -> FileResponse:
    if name not in UI_ASSETS:
        raise NotFound(f"{name!r} is not part of the Schedules page")
    return FileResponse(UI_DIR / name, media_type=UI_ASSETS[name])
