"""A watermark-driven digest: each fire summarises the events in ``[cursor.since, now)``.

The cursor is a watermark: the instant up to which events have been digested. A
clean fire returns the new watermark and the next fire starts there; a fire that
fails (a malformed row, say) leaves it where it was, so the next fire digests the
same window again and no event is ever skipped. On the fall-back day of daylight
saving the 06:00 London schedule can fire twice; the second fire simply finds an
empty window.

The events live in a real SQLite table, ``$AIRFLOW_HOME/tessera_digest.db``, created
on first use. The cursor is the Airflow Variable ``tessera_cursor_digest-state``:
edit it in Admin > Variables to re-digest from an earlier instant, or delete it to
start again from ``initial``. Try a fire that saves nothing with
``airflow dags test tessera_cursor_digest -c '{"dry_run": true}'``.
"""

from __future__ import annotations

import datetime
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, Param

from tessera.operators.functions.operator import cursor_function
from tessera.timetables import Cron

SCHEMA = "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, at TEXT NOT NULL, region TEXT, amount)"
STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"  # fixed width, so text order is time order in SQL
WATERMARK = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$"}


def events_db() -> Path:
    """Where the events table lives: next to the Airflow metadata of this deployment."""
    return Path(os.environ.get("AIRFLOW_HOME") or tempfile.gettempdir()) / "tessera_digest.db"


def stamp(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime(STAMP)


@cursor_function(
    input={"region": "emea"},
    input_schema={
        "type": "object",
        "required": ["region", "cursor"],
        "properties": {
            "region": {"type": "string"},
            "cursor": {"type": "object", "required": ["since"], "properties": {"since": WATERMARK}},
        },
    },
    output_schema={
        "type": "object",
        "required": ["count", "total", "cursor"],
        "properties": {
            "count": {"type": "integer", "minimum": 0},
            "total": {"type": "number"},
            "cursor": {"type": "object", "required": ["since"], "properties": {"since": WATERMARK}},
        },
    },
    cursor_from="/cursor",
    cursor_into="/cursor",
    initial={"since": "2026-01-01T00:00:00.000000Z"},
)
def digest(payload: dict[str, Any]) -> dict[str, Any]:
    """Count and total the region's events since the watermark; return the new watermark."""
    since, until = payload["cursor"]["since"], stamp(datetime.datetime.now(datetime.timezone.utc))
    with sqlite3.connect(events_db()) as db:
        db.execute(SCHEMA)
        rows = db.execute(
            "SELECT id, amount FROM events WHERE region = ? AND at >= ? AND at < ? ORDER BY at",
            (payload["region"], since, until),
        ).fetchall()
    # A malformed amount fails the fire: the watermark stays, and the window is digested again once fixed.
    amounts = [float(amount) for _, amount in rows]
    return {
        "region": payload["region"],
        "window": {"since": since, "until": until},
        "count": len(amounts),
        "total": sum(amounts),
        "cursor": {"since": until},
    }


with DAG(
    dag_id="tessera_cursor_digest",
    schedule=Cron("0 6 * * *", timezone="Europe/London"),
    start_date=None,
    catchup=False,
    params={"dry_run": Param(False, type="boolean", description="Call the digest but do not move the watermark")},
    tags=["tessera", "cursor"],
    doc_md=__doc__,
):
    digest()
