"""Which run a declared schedule owes next, from what its runs and pauses did: overlap and inactive periods.

The plain catch-up (:mod:`.catch_up`) looks only at the last run and the clock, so it cannot
tell *why* an occurrence has no run. A declared schedule must: a trigger that came while its
runs held every slot (``MAX_CONCURRENT``) is queued, one that came while the schedule was
inactive is replayed or dropped (``CATCHUP``), and one the scheduler slept through is caught up
as usual. The last run ``L`` took its slot at ``W`` (when it came due, or when the run before it
freed the slot, whichever is later); the slot next freed at ``F``. Each due occurrence after
``L`` is classified by when it came due:

* **paused**: in an inactive span. Replayed, oldest first, with ``replay_paused``, else
  dropped (``Suspended``).
* **pending**: by ``W``. It came while ``L`` itself waited for the slot, so a trigger was
  already queued: dropped under ``skip`` and ``buffer_one`` (``BufferFull``), owed under
  ``buffer_all``.
* **withheld**: after ``W``, before ``F``: the slot was taken. ``buffer_one`` owes the first (the
  queued trigger) and drops the rest (``BufferFull``); ``skip`` drops them all
  (``ConcurrencyForbidden``); ``buffer_all`` owes them all.
* **missed**: at or after ``F``. The newest is owed and the rest dropped (``MissedDeadline``), as the
  plain ``Latest`` catch-up does after downtime; if any is owed, it supersedes a queued trigger
  (the current window matters more than a stale one). Under ``buffer_one`` an occurrence due
  within :data:`LATENCY` after ``F`` still counts as withheld: the scheduler creates the queued
  run a moment after the slot frees, and a trigger in that moment queues behind it.

When ``L`` was itself a replayed occurrence, its inactive span's end stands for ``W``: the
replay runs back to back from the moment the schedule became active, and a live trigger
meanwhile waits for it as for any run. ``allow_all`` never withholds (the DAG has no limit) and
a DAG that never ran owes only its newest occurrence, as under the plain catch-up. The next run
is the oldest owed occurrence, or, with none owed, the first one not yet due.

Bounded: every answer costs a few cadence steps per inactive span, whatever the gap.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cadence import Cadence

OVERLAPS = ("skip", "buffer_one", "buffer_all", "allow_all")
LATENCY = 60_000_000
"""Microseconds after a slot frees in which a new trigger still queues behind the queued one."""

REPLAYED, QUEUED, DUE = "replayed", "queued", "due"
"""How an occurrence that ran was treated: replayed after a pause, queued behind a run, or due."""
SUSPENDED, BUFFER_FULL, FORBIDDEN, MISSED = "Suspended", "BufferFull", "ConcurrencyForbidden", "MissedDeadline"
"""Why an occurrence was dropped (the skip reasons the status and the audit log show)."""


@dataclass(frozen=True, slots=True)
class Activity:
    """A DAG's runs and pauses as the scheduler's database holds them, in microseconds since the epoch."""

    last: int | None
    """The occurrence of the newest scheduled run (``None``: it never ran)."""
    freed_before: int | None = None
    """The newest end of a run that ended before the last run was created (``None``: none)."""
    freed_after: int | None = None
    """The newest end of a run that ended after the last run was created (``None``: none yet)."""
    paused: tuple[tuple[int, int], ...] = ()
    """Spans ``[start, end)`` in which the DAG was paused, sorted, each ended (it is active now)."""


class Owed:
    """The overlap and inactive-period rules over one cadence, phase and activity, at ``now``."""

    def __init__(
        self, cadence: Cadence, *, phase: int, activity: Activity, now: int, overlap: str, replay_paused: bool
    ) -> None:
        self.cadence, self.phase, self.activity, self.instant = cadence, phase, activity, now
        self.overlap, self.replay_paused = overlap, replay_paused
        last = activity.last
        self.floor = None if last is None else cadence.following(last)
        self.taken: int | None = None  # W
        self.freed: int | None = None  # F
        if last is not None:
            span = self._span(last + phase)
            self.taken = span[1] if span is not None else max(last + phase, activity.freed_before or last + phase)
            self.freed = None if activity.freed_after is None else max(self.taken, activity.freed_after)
        # A trigger due the instant the slot frees finds it free (a run ending at F no longer holds it).
        grace = LATENCY if overlap == "buffer_one" else -1
        self.missed_from = self.taken if self.freed is None else self.freed + grace

    def _span(self, due: int) -> tuple[int, int] | None:
        return next(((s, e) for s, e in self.activity.paused if s <= due < e), None)

    def _first_after(self, due: int) -> int:
        """The first occurrence after the last run whose run is due strictly after ``due``."""
        first = self.cadence.at_or_after(due - self.phase + 1)
        return first if self.floor is None else max(first, self.floor)

    def first_live(self, after: int | None, until: int) -> int | None:
        """The oldest occurrence after the last run due in ``(after, until]`` and not while paused."""
        occurrence = self._first_after(after) if after is not None else self.floor
        if occurrence is None:
            return self.newest_live(None, until)
        for _ in range(len(self.activity.paused) + 1):
            due = occurrence + self.phase
            if due > until:
                return None
            span = self._span(due)
            if span is None:
                return occurrence
            occurrence = self._first_after(span[1] - 1)
        return None

    def newest_live(self, after: int | None, until: int) -> int | None:
        """The newest occurrence after the last run due in ``(after, until]`` and not while paused."""
        occurrence = self.cadence.at_or_before(until - self.phase)
        for _ in range(len(self.activity.paused) + 1):
            due = occurrence + self.phase
            if (self.floor is not None and occurrence < self.floor) or (after is not None and due <= after):
                return None
            span = self._span(due)
            if span is None:
                return occurrence
            if self.floor is None:
                return None  # never ran: before its inactive span it owes nothing (it may not have existed)
            occurrence = self.cadence.at_or_before(span[0] - 1 - self.phase)
        return None

    def first_paused(self) -> int | None:
        """The oldest occurrence after the last run that came due while the DAG was paused."""
        for start, end in self.activity.paused:
            occurrence = self._first_after(start - 1)
            if occurrence + self.phase < min(end, self.instant + 1):
                return occurrence
        return None

    def owed_live(self) -> int | None:
        """The oldest live (not paused) occurrence the overlap policy owes now."""
        if self.taken is None or self.overlap == "allow_all":
            return self.newest_live(None, self.instant)  # a first run owes only its newest occurrence
        if self.overlap == "buffer_all":
            return self.first_live(None, self.instant)
        missed = self.newest_live(self.missed_from, self.instant)
        if missed is not None or self.overlap == "skip":
            return missed
        return self.first_live(self.taken, min(self.missed_from, self.instant))

    def next(self) -> int:
        """The occurrence to create next: the oldest owed one, else the first one not yet due."""
        owed = [o for o in (self.first_paused() if self.replay_paused else None, self.owed_live()) if o is not None]
        return min(owed) if owed else self._first_after(self.instant)

    def treatment(self, occurrence: int) -> str:
        """How ``occurrence`` (after the last run) is treated: run (how) or dropped (why)."""
        due = occurrence + self.phase
        if due > self.instant:
            return DUE  # created ahead of its time: the first fire not yet due, nothing owed before it
        if self._span(due) is not None:
            return REPLAYED if self.replay_paused else SUSPENDED
        if self.taken is None or self.overlap == "allow_all":
            return DUE if occurrence == self.newest_live(None, self.instant) else MISSED
        if self.overlap == "buffer_all":
            return QUEUED if due <= self.missed_from else DUE
        missed = self.newest_live(self.missed_from, self.instant)
        if due > self.missed_from:
            return DUE if occurrence == missed else MISSED
        if self.overlap == "skip":
            return FORBIDDEN
        if due <= self.taken:
            return BUFFER_FULL
        if missed is not None:
            return MISSED
        if occurrence != self.first_live(self.taken, self.missed_from):
            return BUFFER_FULL
        # Due while the slot was taken: queued; due a moment after it freed: on time.
        return QUEUED if self.freed is not None and due < self.freed else DUE
