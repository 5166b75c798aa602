"""The operators layer's one door to Airflow's private names (DESIGN.md, "One door to Airflow per layer").

Every private or version-sensitive Airflow name the operators use is named here and nowhere
else, each with a contract test in ``tests/test_airflow_doors.py``: an Airflow upgrade that
moves or renames one fails that test and is ported in this file.
"""

from __future__ import annotations

from typing import Any

# Airflow core's "now" (no public home): the scheduler-side clock, which time_machine freezes in tests.
from airflow._shared.timezones.timezone import utcnow

# The Task SDK's copy of the same clock: what task code (the cursor function operator) reads in a worker.
from airflow.sdk._shared.timezones.timezone import utcnow as task_utcnow


def asset_scope(asset_id: int) -> Any:
    """Airflow's ``AssetScope`` for ``asset_id``: the key of an asset's state store on the server side.

    ``airflow._shared.state.AssetScope`` has no public home; imported on call, as the state store is.
    """
    from airflow._shared.state import AssetScope

    return AssetScope(asset_id=asset_id)


__all__ = ["asset_scope", "task_utcnow", "utcnow"]
