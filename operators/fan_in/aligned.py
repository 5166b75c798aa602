"""Window-aligned AFTER (``AFTER ... ALIGN WINDOW``): release a child once per window every parent completed.

Today's AFTER releases on a *fire set*: once every parent has completed some fire the
child has not reacted to, whichever fires those are. A child aligned on windows instead
waits for the *same* window of every parent. A parent's clock-driven fire is named by its
window's end (the runs' shared ``data_interval_end``), so the rule is:

    the child fires for instant E once every parent has completed (success or failure, as
    AFTER always counts completion) its fire whose window ends at E.

Behind an hourly and a 30-minute parent, E is every hour: at 12:30 only the 30-minute
parent has a fire ending there, at 13:00 both do. The child's window is from the previous
such E to this one; its run note names the parents' runs of it. Parents whose fires never
end at a common instant (cron at :15 and at :00, or an AFTER-driven parent, whose fires
are named by events, not instants) never release the child; the plan check and the
freshness warning are what show it.

How it is released: the child's DAG is still scheduled on ``AssetAll`` of its parents'
assets, but ``release.run_finished`` does not queue it on each parent event (it carries
:data:`~tessera.operators.schedules.identity.ALIGN_TAG`). When a parent completes the fire
ending at E, :func:`release_aligned` checks every parent for that fire and, if all have
it, queues the child on every parent asset at once, in the same transaction: Airflow then
creates one asset-triggered run that consumes those events.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tessera.operators.schedules.identity import ALIGN_TAG, schedule_of_uri

from .queue import queue_children

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

RECENT_EVENTS = 64
"""How far back, in completed fires, a parent's fire ending at E is looked for (bounds each check)."""


def aligned_consumers(asset_id: int, session: Session) -> list[str]:
    """The unpaused DAGs scheduled on ``asset_id`` whose schedule aligns windows."""
    from airflow.models.asset import DagScheduleAssetReference
    from airflow.models.dag import DagModel, DagTag
    from sqlalchemy import select

    return list(
        session.scalars(
            select(DagScheduleAssetReference.dag_id)
            .join(DagModel, DagModel.dag_id == DagScheduleAssetReference.dag_id)
            .join(DagTag, DagTag.dag_id == DagModel.dag_id)
            .where(
                DagScheduleAssetReference.asset_id == asset_id,
                DagModel.is_paused.is_(False),
                DagTag.name == ALIGN_TAG,
            )
        )
    )


def _parent_assets(dag_id: str, session: Session) -> list[int]:
    from airflow.models.asset import DagScheduleAssetReference
    from sqlalchemy import select

    query = select(DagScheduleAssetReference.asset_id).where(DagScheduleAssetReference.dag_id == dag_id)
    return sorted(session.scalars(query))


def _completed(asset_id: int, fire: str, session: Session) -> bool:
    """Whether the parent of ``asset_id`` has recorded ``fire`` among its recent completed fires."""
    from airflow.models.asset import AssetEvent
    from sqlalchemy import select

    recent = session.scalars(
        select(AssetEvent.extra)
        .where(AssetEvent.asset_id == asset_id)
        .order_by(AssetEvent.id.desc())
        .limit(RECENT_EVENTS)
    )
    return any((extra or {}).get("tessera", {}).get("fire") == fire for extra in recent)


def release_aligned(asset_id: int, fire: str, session: Session) -> list[str]:
    """Queue each aligned child of this parent whose every parent has completed ``fire``; return them.

    Only clock-driven fires (``t:<window end>``) align; the events of this transaction are
    already flushed, so the parent that completes a window last is the one that releases it.
    """
    if not fire.startswith("t:"):
        return []
    released = []
    for child in aligned_consumers(asset_id, session):
        parents = _parent_assets(child, session)
        if parents and all(_completed(parent, fire, session) for parent in parents):
            queue_children([(parent, child) for parent in parents], session)
            released.append(child)
    return released


def window_line(consumed: Iterable[tuple[str, str]], parents: Iterable[str]) -> str | None:
    """The run note's first line: the window end every parent completed, from (asset uri, fire) pairs consumed."""
    fires: dict[str, set[str]] = {}
    for uri, fire in consumed:
        if (parent := schedule_of_uri(uri)) is not None:
            fires.setdefault(parent, set()).add(fire)
    names = list(parents)
    common = set.intersection(*(fires.get(name, set()) for name in names)) if names else set()
    timed = sorted(fire for fire in common if fire.startswith("t:"))
    if not timed:
        return None
    end = timed[-1][2:].replace("T", " ").removesuffix("Z")[:19]
    return f"Aligned window ending {end} UTC: every parent ({', '.join(names)}) completed it."
