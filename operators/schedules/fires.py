"""Fires of a declared schedule: which fire a pipeline run belongs to, and when a fire is complete.

A fire of a schedule is one run of each of its pipelines. A clock-driven fire is
recognised by its occurrence (the runs' shared ``data_interval_end``; phases move
``run_after`` per DAG but never the window), an AFTER-driven fire by the newest
parent event it consumed (every pipeline of the fire consumed the same events).
Both are encoded as strings that sort in fire order.

A fire is complete when every pipeline has finished it, whatever the outcome:
no run of that fire or an older one is still unfinished, and a run of that fire
or a newer one (which absorbed it, e.g. after a skipped occurrence) is terminal.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

TERMINAL_STATES = frozenset({"success", "failed"})
FIRE_RUN_TYPES = frozenset({"scheduled", "asset_triggered"})
"""Manual and backfill runs re-run a pipeline on request; they are not fires of its schedule."""


@dataclass(frozen=True, slots=True)
class PipelineRun:
    """What completion needs to know of one pipeline run."""

    dag_id: str
    run_id: str
    state: str
    fire: str

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL_STATES


def time_fire(moment: datetime.datetime) -> str:
    """The key of a clock-driven fire: its occurrence in UTC, fixed width so strings sort as instants."""
    utc = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return "t:" + utc.isoformat(timespec="microseconds") + "Z"


def event_fire(event_ids: Iterable[int]) -> str | None:
    """The key of an AFTER-driven fire: the newest parent event it consumed, zero-padded to sort."""
    newest = max(event_ids, default=None)
    return None if newest is None else f"e:{newest:020d}"


def fire_of(
    run_type: str,
    *,
    data_interval_end: datetime.datetime | None,
    logical_date: datetime.datetime | None,
    run_after: datetime.datetime | None,
    event_ids: Callable[[], Iterable[int]],
) -> str | None:
    """The fire a run belongs to, or ``None`` when the run is not a fire of its schedule.

    ``event_ids`` is called only for an AFTER-driven run (reading them costs a query).
    """
    if run_type == "scheduled":
        moment = data_interval_end or logical_date or run_after
        return None if moment is None else time_fire(moment)
    if run_type == "asset_triggered":
        return event_fire(event_ids())
    return None


def fire_complete(fire: str, runs_by_pipeline: Mapping[str, Sequence[PipelineRun]]) -> bool:
    """Whether every pipeline has finished ``fire`` (in any terminal state).

    :param runs_by_pipeline: every pipeline of the schedule, each with its recent runs.
    """
    if not runs_by_pipeline:
        return False
    for runs in runs_by_pipeline.values():
        if any(run.fire <= fire and not run.finished for run in runs):
            return False
        if not any(run.fire >= fire and run.finished for run in runs):
            return False
    return True


def runs_of_fire(fire: str, runs_by_pipeline: Mapping[str, Sequence[PipelineRun]]) -> list[PipelineRun]:
    """Each pipeline's run that finished ``fire``: its own, or the oldest newer one that absorbed it."""
    found = []
    for runs in runs_by_pipeline.values():
        covering = sorted((run for run in runs if run.fire >= fire and run.finished), key=lambda r: r.fire)
        if covering:
            found.append(covering[0])
    return sorted(found, key=lambda run: run.dag_id)
