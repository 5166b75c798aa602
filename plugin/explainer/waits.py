"""What a run (or an asset-driven DAG) waits for: parent fires and asset events, and the wave gate.

* An asset-driven DAG, an AFTER schedule's pipeline among them, is released once its assets have
  events (AFTER: once every parent schedule completed a fire); which assets had an event since
  its last run, and which did not, is one grouped query over ``asset_event``
  (index ``asset_id, timestamp``).
* A wave-gated pipeline's run holds at its gate task until its wave opens; which wave it is in
  and which is open is the schedule's wave plan (its asset's state store).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.models.asset import AssetEvent, AssetModel, DagScheduleAssetReference
from sqlalchemy import func, select

from tessera.operators.schedules.identity import asset_uri, record_of, schedule_of_uri
from tessera.operators.schedules.runs import schedule_asset_id
from tessera.operators.schedules.state import read_state
from tessera.operators.schedules.waves import GATE_TASK_ID, WAVES_KEY

from ..scoped_reads import Scope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

MAX_ASSETS = 100
"""Assets examined per DAG: an AFTER list or an asset condition longer than this is cut (and says so)."""


@dataclass(frozen=True)
class AssetWait:
    """One asset a DAG waits on, and its events between its last run and T."""

    name: str
    """The parent schedule's name (AFTER), else the asset's URI."""
    events: int
    newest: datetime.datetime | None
    newest_id: int | None
    oldest: datetime.datetime | None
    parent: bool
    """True for an AFTER parent schedule (its events are its completed fires)."""


def asset_waits(
    session: Session,
    dag_id: str,
    default_args: dict[str, Any] | None,
    *,
    since: datetime.datetime | None,
    until: datetime.datetime,
) -> list[AssetWait]:
    """Each asset the DAG is scheduled on, with its events in ``(since, until]`` (two queries at most)."""
    record = record_of(default_args)
    parents = list((record or {}).get("after") or [])[:MAX_ASSETS]
    if parents:
        uris = [asset_uri(parent) for parent in parents]
    else:
        uris = list(
            session.scalars(
                select(AssetModel.uri)
                .join(DagScheduleAssetReference, DagScheduleAssetReference.asset_id == AssetModel.id)
                .where(DagScheduleAssetReference.dag_id == dag_id)
                .order_by(AssetModel.uri)
                .limit(MAX_ASSETS)
            )
        )
    if not uris:
        return []
    window = [AssetModel.uri.in_(uris), AssetEvent.timestamp <= until]
    if since is not None:
        window.append(AssetEvent.timestamp > since)
    rows = session.execute(
        select(
            AssetModel.uri,
            func.count(AssetEvent.id),
            func.max(AssetEvent.timestamp),
            func.max(AssetEvent.id),
            func.min(AssetEvent.timestamp),
        )
        .join(AssetEvent, AssetEvent.asset_id == AssetModel.id)
        .where(*window)
        .group_by(AssetModel.uri)
    )
    seen = {uri: (count, newest, newest_id, oldest) for uri, count, newest, newest_id, oldest in rows}
    found = []
    for uri in uris:
        count, newest, newest_id, oldest = seen.get(uri, (0, None, None, None))
        name = schedule_of_uri(uri) if parents else None
        found.append(AssetWait(name or uri, count, newest, newest_id, oldest, bool(parents)))
    return found


@dataclass(frozen=True)
class WavePlace:
    """Where a run stands in its schedule's wave plan."""

    schedule: str
    wave: int | None
    """The run's wave (None: not in the current plan, so not held)."""
    open: int | None
    waves: list[list[str]]
    """Each wave's pipelines the caller may read."""
    unread: list[int]
    """How many pipelines of each wave the caller may not read: counted, never named."""
    cancelled: str | None


def visible_waves(waves: Any, scope: Scope) -> tuple[list[list[str]], list[int]]:
    """A wave plan's waves (lists of DAG ids) as ``scope`` may see them: the readable ids, and how many others."""
    shown: list[list[str]] = []
    unread: list[int] = []
    for wave in waves if isinstance(waves, list) else []:
        members = [member for member in wave if isinstance(member, str)] if isinstance(wave, list) else []
        shown.append(scope.only(members))
        unread.append(len(set(members)) - len(shown[-1]))
    return shown, unread


def wave_place(
    session: Session, scope: Scope, dag_id: str, run_id: str, default_args: dict[str, Any] | None
) -> WavePlace | None:
    """The run's wave and the open one, from the schedule's wave plan; None if the DAG is not wave-gated."""
    record = record_of(default_args)
    if not record or not record.get("max_wave_concurrent"):
        return None
    name = str(record.get("name"))
    asset_id = schedule_asset_id(name, session)
    plan = None if asset_id is None else read_state(asset_id, WAVES_KEY, session)
    if not isinstance(plan, dict):
        return WavePlace(name, None, None, [], [], None)
    member = f"{dag_id}/{run_id}"
    cancelled = plan.get("cancelled")
    note = cancelled.get("note") if isinstance(cancelled, dict) else None
    waves, unread = visible_waves(plan.get("waves"), scope)
    return WavePlace(name, (plan.get("members") or {}).get(member), plan.get("open"), waves, unread, note)


def is_gate(task_id: str) -> bool:
    return task_id == GATE_TASK_ID
