"""A schedule's run policy: what happens to a trigger that finds the slots taken, or the schedule inactive, or failing.

Carried by the timetable (serialized with it) and applied by the scheduler when it creates a
run (see :mod:`tessera.timetables.owed_runs`) and by the plugin's listener:

* ``overlap``: a trigger that comes due while the DAG's runs hold every ``max_active_runs``
  slot is ``"buffer_one"`` (queued: the first such trigger runs as soon as a slot frees, later
  ones while it waits are dropped), ``"skip"`` (dropped), ``"buffer_all"`` (every one queued,
  run in order), ``"allow_all"`` (runs start as they come due, up to the DAG's cap, and wait
  in order past it) or ``"cancel_other"`` (the run in flight is failed when the new one starts);
* ``replay_inactive``: a declared schedule's occurrences that came due while the DAG was paused
  run after it is unpaused, oldest first (``True``), or none of them do (``False``); ``None`` for
  a plain timetable, whose catch-up policy (``Latest``, ``Backfill``) decides them as after downtime;
* ``pause_after_failures``: pause the DAG after this many failed runs in a row (``None``: never).

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
from ._time.owed import OVERLAPS, slot_freed

__all__ = [
    "MAX_PAUSE_AFTER_FAILURES",
    "OVERLAPS",
    "PLAIN_OVERLAP",
    "ActivityReader",
    "RunActivity",
    "RunPolicy",
    "check_pause_after_failures",
    "plain_policy",
    "read_activity",
    "register_activity_reader",
    "slot_freed",
]

PLAIN_OVERLAP = "allow_all"
"""A plain timetable's overlap policy unless it says otherwise: no tick dropped, Airflow's ``max_active_runs`` kept."""
MAX_PAUSE_AFTER_FAILURES = 1000

if TYPE_CHECKING:
    from airflow.models.dag import DagModel

log = logging.getLogger(__name__)


def check_pause_after_failures(value: object) -> int | None:
    """``value`` if it is ``None`` or a whole number of failed runs from 1 to :data:`MAX_PAUSE_AFTER_FAILURES`."""
    if value is None:
        return None
    rule = (
        f"give a whole number of failed runs in a row from 1 to {MAX_PAUSE_AFTER_FAILURES}, e.g. "
        f"pause_after_failures=3, or leave it out to never pause"
    )
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"pause_after_failures: {shown(value)} is a {type(value).__name__}; {rule}")
    if not 1 <= value <= MAX_PAUSE_AFTER_FAILURES:
        raise ValueError(f"pause_after_failures: {shown(value)} is outside 1 to {MAX_PAUSE_AFTER_FAILURES}; {rule}")
    return value


@dataclass(frozen=True)
class RunPolicy:
    """``overlap`` (one of :data:`OVERLAPS`), ``replay_inactive`` and ``pause_after_failures``."""

    overlap: str = "buffer_one"
    replay_inactive: bool | None = False
    pause_after_failures: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.overlap, str) or self.overlap not in OVERLAPS:
            raise ValueError(f"overlap: {shown(self.overlap)} is not a policy; use one of {', '.join(OVERLAPS)}")
        if self.replay_inactive is not None and not isinstance(self.replay_inactive, bool):
            raise TypeError(f"replay_inactive: {shown(self.replay_inactive)} must be True or False")
        check_pause_after_failures(self.pause_after_failures)

    @property
    def declared(self) -> bool:
        """A declared schedule's policy (its CATCHUP decides paused periods), not a plain timetable's."""
        return self.replay_inactive is not None

    def summary_parts(self) -> list[str]:
        """What a timetable's summary adds: an overlap other than its surface's default, a pause after failures."""
        parts = []
        if self.overlap != ("buffer_one" if self.declared else PLAIN_OVERLAP):
            parts.append(f"overlap {self.overlap}")
        if self.pause_after_failures is not None:
            parts.append(f"pause after {self.pause_after_failures} failures")
        return parts

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"overlap": self.overlap, "replay_inactive": self.replay_inactive}
        if self.pause_after_failures is not None:  # added keys only when set: older DAGs serialize as before
            data["pause_after_failures"] = self.pause_after_failures
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> RunPolicy | None:
        if data is None:
            return None
        replay = data.get("replay_inactive")
        return cls(str(data["overlap"]), None if replay is None else bool(replay), data.get("pause_after_failures"))


def plain_policy(overlap: object, pause_after_failures: object) -> RunPolicy | None:
    """A plain timetable's ``overlap=`` and ``pause_after_failures=``; ``None`` when both are the defaults."""
    policy = RunPolicy(
        PLAIN_OVERLAP if overlap is None else overlap,  # type: ignore[arg-type]  # checked by RunPolicy
        replay_inactive=None,
        pause_after_failures=pause_after_failures,  # type: ignore[arg-type]
    )
    return None if policy == RunPolicy(PLAIN_OVERLAP, None) else policy


@dataclass(frozen=True)
class RunActivity:
    """What the metadata database says a DAG's runs and pauses did (aware datetimes)."""

    last_window_end: datetime.datetime | None
    """The window end of the DAG's newest scheduled run (``None``: it never ran)."""
    freed_before: datetime.datetime | None = None
    """The newest end of any of its runs that ended before the newest scheduled run was created."""
    freed_after: datetime.datetime | None = None
    """When a ``max_active_runs`` slot freed after the newest scheduled run took one (its due instant, if free)."""
    paused: tuple[tuple[datetime.datetime, datetime.datetime], ...] = ()
    """Spans ``[paused, unpaused)`` since the newest scheduled run was due (or since the DAG was created)."""
    down: tuple[tuple[datetime.datetime, datetime.datetime], ...] = ()
    """Spans in which no scheduler was heartbeating, since the newest scheduled run was due (empty: none known)."""


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
