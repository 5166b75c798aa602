"""A declared schedule's state store (its asset's): the scheduler writes it, gates and triggers read it.

The scheduler-side listener reads and writes through the dag run's session; a trigger in the
triggerer has no database access and reads through the supervisor instead.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._airflow import asset_scope, asset_state_accessor, asset_state_backend
from .identity import asset_uri

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def read_state(asset_id: int, key: str, session: Session) -> Any:
    """A JSON value from the schedule asset's state store (``None`` if absent)."""
    stored = asset_state_backend().get(asset_scope(asset_id), key, session=session)
    return None if stored is None else json.loads(stored)


def write_state(asset_id: int, key: str, value: Any, session: Session) -> None:
    """Store a JSON value in the schedule asset's state store (what triggers read)."""
    asset_state_backend().set(asset_scope(asset_id), key, json.dumps(value), session=session)


async def schedule_state(name: str, key: str) -> Any:
    """A JSON value from schedule ``name``'s asset state store, or ``None`` before anything was recorded."""
    from asgiref.sync import sync_to_async

    # The synchronous request in a worker thread, as Airflow's own triggers do: every supervisor
    # (the triggerer's, and dag.test()'s in-process one) answers it, not all answer async ones.
    store = asset_state_accessor(asset_uri(name))
    return await sync_to_async(store.get)(key, default=None)
