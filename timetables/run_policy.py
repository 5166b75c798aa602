"""A declared schedule's run policy: what happens to a trigger that finds the slot taken, or the schedule inactive.

Two choices, carried by the timetable (serialized with it) and applied by the scheduler
when it creates a run (see :mod:`tessera.timetables.owed_runs`):

* ``overlap``: a trigger that comes due while the DAG's runs hold every ``max_active_runs``
  slot is ``"buffer_one"`` (queued: the first such trigger runs as soon as a slot frees, later
  ones while it waits are dropped), ``"skip"`` (dropped), ``"buffer_all"`` (every one queued,
  run one after another) or ``"allow_all"`` (never withheld: for an unlimited DAG);
* ``replay_inactive``: the occurrences that came due while the DAG was paused run after it is
  unpaused, oldest first (``True``), or none of them do (``False``).

Deciding needs the DAG's history (its newest run, when the slot freed, when it was paused),
which a timetable does not read itself: a reader that does is registered by the plugin
(:func:`register_activity_reader`) in the scheduler. Without one, the scheduler falls back
to the plain catch-up policy.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._time.durations import shown
from ._time.owed import OVERLAPS

__all__ = ["OVERLAPS", "ActivityReader", "RunActivity", "RunPolicy", "read_activity", "register_activity_reader"]

if TYPE_CHECKING:
    from airflow.models.dag import DagModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunPolicy:
    """``overlap`` (one of ``skip``, ``buffer_one``, ``buffer_all``, ``allow_all``) and ``replay_inactive``."""

    overlap: str = "buffer_one"
    replay_inactive: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.overlap, str) or self.overlap not in OVERLAPS:
            raise ValueError(f"overlap: {shown(self.overlap)} is not a policy; use one of {', '.join(OVERLAPS)}")
        if not isinstance(self.replay_inactive, bool):
            raise TypeError(f"replay_inactive: {shown(self.replay_inactive)} must be True or False")

    def to_dict(self) -> dict[str, Any]:
        return {"overlap": self.overlap, "replay_inactive": self.replay_inactive}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> RunPolicy | None:
        return None if data is None else cls(str(data["overlap"]), bool(data["replay_inactive"]))


@dataclass(frozen=True)
class RunActivity:
    """What the metadata database says a DAG's runs and pauses did (aware datetimes)."""

    last_window_end: datetime.datetime | None
    """The window end of the DAG's newest scheduled run (``None``: it never ran)."""
    freed_before: datetime.datetime | None = None
    """The newest end of any of its runs that ended before the newest scheduled run was created."""
    freed_after: datetime.datetime | None = None
    """The newest end of any of its runs that ended after the newest scheduled run was created."""
    paused: tuple[tuple[datetime.datetime, datetime.datetime], ...] = ()
    """Spans ``[paused, unpaused)`` since the newest scheduled run was due (or since the DAG was created)."""


ActivityReader = Callable[["DagModel"], RunActivity | None]
_readers: list[ActivityReader] = []


def register_activity_reader(reader: ActivityReader) -> None:
    """Install the reader the scheduler asks (the plugin's, which reads the metadata database)."""
    _readers[:] = [reader]


def read_activity(dag_model: DagModel) -> RunActivity | None:
    """The DAG's activity from the registered reader; ``None`` without one, or if it failed (logged)."""
    if not _readers:
        return None
    try:
        return _readers[0](dag_model)
    except Exception:
        log.exception("tessera: could not read the run history of %s; the plain catch-up decides", dag_model.dag_id)
        return None
