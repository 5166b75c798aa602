"""How a declared schedule is recognisable inside Airflow: a DAG tag, an asset, and the DAG's policy record.

- Each pipeline DAG carries the tag ``tessera-schedule:<name>``: the scheduler finds
  every pipeline of a schedule with one indexed query, and the UI filters by it.
- Each schedule owns the asset ``x-tessera-schedule://<name>`` (the ``x-`` scheme
  is Airflow's marker for a custom URI that is kept verbatim). A completed fire is
  an event on it; an ``after`` schedule is triggered by these assets.
- ``default_args["tessera_schedule"]`` records what the scheduler-side listener
  needs to know about a pipeline (its schedule, parents, freshness, wave width).
  Airflow serializes ``default_args`` with the DAG and operators ignore keys that
  are not their parameters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TAG_PREFIX = "tessera-schedule:"
ASSET_SCHEME = "x-tessera-schedule"
RECORD_KEY = "tessera_schedule"
ALIGN_TAG = "tessera-align-window"
"""The tag of a pipeline whose AFTER schedule aligns windows: fan-in queues it only per whole window."""


def schedule_tag(name: str) -> str:
    return f"{TAG_PREFIX}{name}"


def schedules_in_tags(tags: Iterable[str]) -> list[str]:
    """The schedule names a DAG's tags declare (normally one)."""
    return sorted(tag[len(TAG_PREFIX) :] for tag in tags if tag.startswith(TAG_PREFIX))


def asset_uri(name: str) -> str:
    return f"{ASSET_SCHEME}://{name}"


def schedule_of_uri(uri: str) -> str | None:
    """The schedule an asset URI belongs to, or ``None`` for any other asset."""
    prefix = f"{ASSET_SCHEME}://"
    return uri[len(prefix) :] if uri.startswith(prefix) else None


def schedule_asset(name: str) -> Any:
    """The (task SDK) asset whose events are the completed fires of schedule ``name``."""
    from airflow.sdk import Asset

    return Asset(name=schedule_tag(name), uri=asset_uri(name), group="tessera-schedule")


def record_of(default_args: dict[str, Any] | None) -> dict[str, Any] | None:
    """The policy record a pipeline DAG carries, if it belongs to a declared schedule."""
    record = (default_args or {}).get(RECORD_KEY)
    return record if isinstance(record, dict) else None
