"""What Airflow's providers manager learns about tessera (entry point ``apache_airflow_provider``).

Registering as a provider, beside the plugin, is how a distribution outside the
``apache-airflow-providers-*`` family gets its configuration section into Airflow:
``airflow providers list`` names it, ``airflow config list --section tessera`` shows
every option with its description, and ``conf.get("tessera", ...)`` falls back to
the defaults declared here (Airflow reads provider defaults before its own
fallbacks). The plugin itself stays on the ``airflow.plugins`` entry point: listing
it under ``plugins`` here too would make Airflow load it twice.

The dictionary follows Airflow 3.3's ``airflow/provider_info.schema.json``; every
option the code reads from ``[tessera]`` is declared (a test greps the code for
them), with a string default because Airflow's config parser stores strings.
"""

from __future__ import annotations

import textwrap
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from tessera.operators.tessera_names import CONFIG_SECTION

DISTRIBUTION = "airflow-tessera"
SECTION = CONFIG_SECTION


def _lines(text: str) -> str:
    # Airflow prints a description line by line as comments (airflow.cfg, `airflow config list -d`).
    return textwrap.fill(text, width=88) + "\n"


OPTIONS: dict[str, dict[str, Any]] = {
    "max_concurrent_dispatches": {
        "description": _lines(
            "Fires of cursor-carrying functions in flight at once, across the deployment: the size "
            "of the tessera_dispatch pool the scheduler-side admission creates and keeps sized. A "
            "scheduled tick over the cap is skipped with reason DispatchCapReached; a manual run, a "
            "backfill or a cleared run waits for a slot instead. A whole number, at least 1."
        ),
        "version_added": "0.1.0",
        "type": "integer",
        "example": "25",
        "default": "10",
    },
    "nodes": {
        "description": _lines(
            "The deployment's nodes, comma-separated: each the name of an executor queue that only "
            "that node's workers serve (airflow celery worker --queues default,<node>). A schedule "
            "with TARGET_NODES ALL builds one copy of its pipelines' work per node listed here; at "
            "run time the copies on nodes with no live worker are skipped and reported. Read by the "
            "dag-processor when it parses the DAGs. Empty: the deployment is one node, and ALL is a "
            "single copy that any worker runs."
        ),
        "version_added": "0.1.0",
        "type": "string",
        "example": "node-a,node-b",
        "default": "",
    },
    "allow_private_outbound": {
        "description": _lines(
            "Let webhooks and HTTP functions reach loopback, link-local, private and reserved "
            "addresses. Off by default, so a DAG author cannot point an outbound call at the "
            "metadata database, a cloud metadata endpoint or another internal service; turn it on "
            "only where those targets are meant to be reachable (a laptop, a test deployment)."
        ),
        "version_added": "0.1.0",
        "type": "boolean",
        "example": "True",
        "default": "False",
    },
}


def _versions() -> list[str]:
    # The installed distribution is the source of truth; a bare checkout on sys.path has none.
    try:
        return [version(DISTRIBUTION)]
    except PackageNotFoundError:
        return []


def get_provider_info() -> dict[str, Any]:
    """The provider description Airflow validates against ``provider_info.schema.json``."""
    return {
        "package-name": DISTRIBUTION,
        "name": "Tessera",
        "description": (
            "Exact scheduling for Apache Airflow: epoch-aligned intervals, tiling windows, stable "
            "phases, calendar cadences, cron, fan-in and cursor-carrying functions."
        ),
        "versions": _versions(),
        "config": {
            SECTION: {
                "description": "Deployment-wide settings of the tessera plugin.",
                "options": {name: dict(option) for name, option in OPTIONS.items()},
            }
        },
    }
