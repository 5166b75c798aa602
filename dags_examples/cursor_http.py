"""A function behind HTTP that pages through a source: the cursor is the next page token.

Every 15 minutes the fire POSTs ``{"source": "crm", "page_token": <cursor>}`` to the
``tessera_sync_service`` connection's ``/functions/sync``. An HTTP 200 whose JSON
body matches the output schema is a clean fire and its ``next_page`` becomes the
cursor; any other answer (or no answer) leaves the token where it was, so the same
page is asked for again. ``page_token`` starts as null: the first page.

Create the connection before the first fire, e.g.
``airflow connections add tessera_sync_service --conn-type http --conn-host sync.internal --conn-port 8080``.
The DAG parses without it; a fire without it fails and keeps the cursor.

tessera calls only public addresses: a service on the deployment's own network
(``sync.internal`` resolving to 10.x, or 127.0.0.1 on a laptop) is refused until
``[tessera] allow_private_outbound = True`` is set for the workers
(``AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND=True``).
"""

from __future__ import annotations

from airflow.sdk import DAG

from tessera.operators.functions.http import HttpFunction
from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Cron

with DAG(
    dag_id="tessera_cursor_http",
    schedule=Cron("@every 15m"),
    start_date=None,
    catchup=False,
    tags=["tessera", "cursor"],
    doc_md=__doc__,
):
    CursorFunctionOperator(
        task_id="sync",
        function=HttpFunction("tessera_sync_service", "/functions/sync", timeout=120),
        input={"source": "crm"},
        input_schema={
            "type": "object",
            "required": ["source", "page_token"],
            "properties": {"source": {"type": "string"}, "page_token": {"type": ["string", "null"]}},
        },
        output_schema={
            "type": "object",
            "required": ["synced", "next_page"],
            "properties": {"synced": {"type": "integer", "minimum": 0}, "next_page": {"type": ["string", "null"]}},
        },
        cursor_from="/next_page",
        cursor_into="/page_token",
        initial=None,
        concurrency="Forbid",
    )
