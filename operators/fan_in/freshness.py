"""Parent freshness: which AFTER parents have not completed a fire within the window, and the run's note.

Freshness warns and never blocks. A child whose fire is held back by a quiet
parent stops updating with nothing failing to show it; a fan-in step is usually
a rebuild that corrects itself on its next fire. So a stale parent is named (on
the run note, in the scheduler log, in a metric) and the fire proceeds.

Pure functions: the scheduler-side listener reads the facts and acts on the answer.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..run_notes import CUT, NOTE_LIMIT, at


@dataclass(frozen=True, slots=True)
class ParentFire:
    """One completed parent fire a child run consumed."""

    schedule: str
    completed_at: datetime.datetime
    runs: tuple[str, ...] = ()
    """``dag_id/run_id (state)`` of the runs that made up the fire."""


STALE_NOTE = "Stale parents"
"""How the release note's stale-parent block begins (the explainer finds the block by it)."""


def stale_parents(
    parents: Sequence[str],
    last_completed: Mapping[str, datetime.datetime | None],
    *,
    now: datetime.datetime,
    hours: float,
) -> list[str]:
    """The parents whose newest completed fire is older than ``hours`` before ``now`` (or never happened).

    ``hours`` 0 turns the check off. The window is closed at its old end: a fire exactly
    ``hours`` ago is still fresh.
    """
    if not hours:
        return []
    oldest_fresh = now - datetime.timedelta(hours=hours)
    return [name for name in parents if (last_completed.get(name) is None or last_completed[name] < oldest_fresh)]


@dataclass(frozen=True, slots=True)
class StaleParent:
    """A parent outside the freshness window, as the schedule row shows it."""

    schedule: str
    last_completed: datetime.datetime | None
    """``None``: it never completed a fire."""
    age_seconds: float | None
    bound_hours: float


def stale_parent_ages(
    parents: Sequence[str],
    last_completed: Mapping[str, datetime.datetime | None],
    *,
    now: datetime.datetime,
    hours: float,
) -> list[StaleParent]:
    """The stale parents (:func:`stale_parents`) with how long ago each completed a fire, and the bound."""
    found = []
    for name in stale_parents(parents, last_completed, now=now, hours=hours):
        then = last_completed.get(name)
        found.append(StaleParent(name, then, None if then is None else (now - then).total_seconds(), hours))
    return found


def _age(now: datetime.datetime, then: datetime.datetime | None) -> str:
    if then is None:
        return "never completed a fire"
    seconds = (now - then).total_seconds()
    ago = (
        f"{seconds:.0f} s"
        if seconds < 120
        else f"{seconds / 60:.0f} min"
        if seconds < 7200
        else f"{seconds / 3600:.1f} h"
    )
    return f"last completed {at(then)}, {ago} ago"


def release_note(
    released_by: Sequence[ParentFire],
    stale: Sequence[str],
    last_completed: Mapping[str, datetime.datetime | None],
    *,
    now: datetime.datetime,
    hours: float,
) -> str:
    """The run note of a child run: any stale parent, then the parent fires that released it."""
    # Stale parents first: a long list of releasing fires is what gets cut at the column limit (the
    # note writer keeps a run's newest lines; within this block, its first ones matter most).
    lines = []
    if stale:
        lines.append(f"{STALE_NOTE} (no completed fire within {hours:g} h); this run proceeded anyway:")
        lines.extend(f"- {name}: {_age(now, last_completed.get(name))}" for name in stale)
    if released_by:
        lines.append("Released by parent fires:")
        for fire in sorted(released_by, key=lambda f: (f.schedule, f.completed_at)):
            runs = f" ({', '.join(fire.runs)})" if fire.runs else ""
            lines.append(f"- {fire.schedule} completed {at(fire.completed_at)}{runs}")
    note = "\n".join(lines)
    return note if len(note) <= NOTE_LIMIT else note[: NOTE_LIMIT - len(CUT)] + CUT
