"""A run as the comparison sees it, and the difference between two schedules' runs over one range.

Both sides are reduced to the same facts: the occurrence (the nominal instant; Airflow's
built-in timetables start a run at it), when the run may start, and its data window. A run of
the "after" side is the same run as one of the "before" side when their occurrences are equal:
it *moved* when it starts at another instant (a phase), and its *window changed* when its data
interval did. An occurrence on one side only is a run that disappears or appears.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

SHOWN = 3
"""How many instants of each kind of difference the report quotes (the counts are always whole)."""


@dataclass(frozen=True, slots=True)
class Run:
    occurrence: datetime.datetime
    run_after: datetime.datetime
    window_start: datetime.datetime
    window_end: datetime.datetime


@dataclass(frozen=True, slots=True)
class Stepped:
    """The runs one side made in a range, and whether the run cap stopped the stepping first."""

    runs: tuple[Run, ...]
    truncated: bool
    """The run budget ran out before the range's end: the runs after the last one are unknown."""
    error: str | None = None
    """What the timetable raised when asked for the run after the last one (the scheduler stops there too)."""


@dataclass(slots=True)
class Difference:
    """How the "after" runs differ from the "before" runs: counts, and the first few instants of each."""

    compared: int = 0
    appear: int = 0
    disappear: int = 0
    move: int = 0
    window: int = 0
    first_appear: list[datetime.datetime] = field(default_factory=list)
    first_disappear: list[datetime.datetime] = field(default_factory=list)
    first_move: list[tuple[datetime.datetime, datetime.datetime]] = field(default_factory=list)
    first_window: list[tuple[Run, Run]] = field(default_factory=list)

    @property
    def same_runs(self) -> bool:
        return not (self.appear or self.disappear or self.move)

    def add(self, other: Difference) -> None:
        """Fold a further range's difference in (the year's ranges are compared one by one)."""
        self.compared += other.compared
        for name in ("appear", "disappear", "move", "window"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("first_appear", "first_disappear", "first_move", "first_window"):
            mine = getattr(self, name)
            mine += getattr(other, name)[: SHOWN - len(mine)]

    def add_copies(self, other: Difference, period: datetime.timedelta, copies: int) -> None:
        """Fold in ``copies`` repeats of ``other``, the k-th shifted by k periods (see :mod:`.periods`)."""
        for k in range(1, min(copies, SHOWN) + 1):  # the instants quoted fill within SHOWN copies
            by = k * period
            self.add(
                Difference(
                    first_appear=[at + by for at in other.first_appear],
                    first_disappear=[at + by for at in other.first_disappear],
                    first_move=[(old + by, new + by) for old, new in other.first_move],
                    first_window=[(shifted(old, by), shifted(new, by)) for old, new in other.first_window],
                )
            )
        self.compared += other.compared * copies
        for name in ("appear", "disappear", "move", "window"):
            setattr(self, name, getattr(self, name) + getattr(other, name) * copies)


def shifted(run: Run, by: datetime.timedelta) -> Run:
    return Run(run.occurrence + by, run.run_after + by, run.window_start + by, run.window_end + by)


def repeats(earlier: tuple[Run, ...], later: tuple[Run, ...], period: datetime.timedelta) -> bool:
    """Whether ``later`` is ``earlier`` shifted by ``period``, run for run (the check :mod:`.periods` relies on)."""
    return len(earlier) == len(later) and all(shifted(a, period) == b for a, b in zip(earlier, later))


def difference(before: tuple[Run, ...], after: tuple[Run, ...]) -> Difference:
    """The runs that appear, disappear or move, and the windows that change, from ``before`` to ``after``."""
    theirs = {run.occurrence: run for run in before}
    mine = {run.occurrence: run for run in after}
    found = Difference(compared=len(theirs.keys() | mine.keys()))
    for occurrence in sorted(theirs.keys() | mine.keys()):
        old, new = theirs.get(occurrence), mine.get(occurrence)
        if old is None:
            found.appear += 1
            if len(found.first_appear) < SHOWN:
                found.first_appear.append(occurrence)
        elif new is None:
            found.disappear += 1
            if len(found.first_disappear) < SHOWN:
                found.first_disappear.append(occurrence)
        else:
            if old.run_after != new.run_after:
                found.move += 1
                if len(found.first_move) < SHOWN:
                    found.first_move.append((old.run_after, new.run_after))
            if (old.window_start, old.window_end) != (new.window_start, new.window_end):
                found.window += 1
                if len(found.first_window) < SHOWN:
                    found.first_window.append((old, new))
    return found
