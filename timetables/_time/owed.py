"""Which run a schedule owes next, from what its runs and pauses did: overlap and inactive periods.

The plain catch-up (:mod:`.catch_up`) looks only at the last run and the clock, so it cannot
tell *why* an occurrence has no run. The overlap policy must: a trigger that came while the
DAG's runs held every slot (``max_active_runs``, a declared schedule's ``MAX_CONCURRENT``) is
queued or dropped, one that came while the schedule was inactive is replayed or dropped
(``CATCHUP``), and one the scheduler slept through is caught up as usual. The last run ``L``
took its slot at ``W`` (when it came due, or when a slot freed for it, whichever is later);
``F`` is when a slot next freed (the reader computes it from the runs in flight when ``L`` was
created: ``W`` itself if one was free then). Each due occurrence after ``L`` is classified by
when it came due:

* **paused**: in an inactive span. Replayed, oldest first, with ``replay_paused``, else
  dropped (``Suspended``).
* **pending**: by ``W``. It came while ``L`` itself waited for a slot, so a trigger was
  already queued: dropped under ``skip`` and ``buffer_one`` (``BufferFull``), owed under
  ``buffer_all`` and ``allow_all``.
* **withheld**: after ``W``, before ``F``: every slot was taken. ``buffer_one`` owes the first
  (the queued trigger) and drops the rest (``BufferFull``); ``skip`` drops them all
  (``ConcurrencyForbidden``); ``buffer_all`` and ``allow_all`` owe them all, oldest first, at
  most :data:`QUEUE_LIMIT` (older ones ``BufferFull``); ``cancel_other`` drops them
  (``Superseded``: the newest trigger replaces the run in flight, see the listener).
* **missed**: at or after ``F``. The catch-up owes the newest ``backlog`` of them (``Latest``:
  the newest; ``Backfill(limit=N)``: N + 1) and drops the rest (``MissedDeadline``), as after
  downtime; under ``buffer_one`` one owed supersedes the queued trigger (the current window
  matters more than a stale one), and an occurrence due within :data:`LATENCY` after ``F``
  still counts as withheld: the scheduler creates the queued run a moment after the slot
  frees, and a trigger in that moment queues behind it.

**Downtime is downtime**: an occurrence that came due while no scheduler was heartbeating (a
span of :attr:`Activity.down`) is missed, whatever held the slots when the scheduler died, and
so is every one after it: a run in flight when a downtime began lost its tasks with the
scheduler, so its slot counts as freed then (:func:`slot_freed`), even if Airflow ran it again
after the restart. Without downtime spans (the scheduler's job rows were cleaned) a run that
held the slot across the downtime is taken for overlap, as before.

A starting ``deadline`` drops every occurrence due longer ago than it (``MissedDeadline``).
When ``L`` was itself a replayed occurrence, its inactive span's end stands for ``W``: the
replay runs back to back from the moment the schedule became active, and a live trigger
meanwhile waits for it as for any run. A DAG that never ran owes only its newest occurrence,
as under the plain catch-up. The next run is the oldest owed occurrence, or, with none owed,
the first one not yet due.

Bounded: every answer costs a few cadence steps per inactive span, plus at most
``QUEUE_LIMIT`` (queue) and ``backlog`` (catch-up) steps, whatever the gap.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cadence import Cadence
from .catch_up import step_back_to, within_deadline

OVERLAPS = ("skip", "buffer_one", "buffer_all", "cancel_other", "allow_all")
LATENCY = 60_000_000
"""Microseconds after a slot frees in which a new trigger still queues behind the queued one."""
QUEUE_LIMIT = 1000
"""The most withheld triggers ``buffer_all`` and ``allow_all`` keep queued; older ones are dropped (``BufferFull``)."""

REPLAYED, QUEUED, DUE = "replayed", "queued", "due"
"""How an occurrence that ran was treated: replayed after a pause, queued behind a run, or due."""
SUSPENDED, BUFFER_FULL, FORBIDDEN, MISSED = "Suspended", "BufferFull", "ConcurrencyForbidden", "MissedDeadline"
SUPERSEDED = "Superseded"
"""Why an occurrence was dropped (the skip reasons the status and the audit log show)."""


@dataclass(frozen=True, slots=True)
class Activity:
    """A DAG's runs and pauses as the scheduler's database holds them, in microseconds since the epoch."""

    last: int | None
    """The occurrence of the newest scheduled run (``None``: it never ran)."""
    freed_before: int | None = None
    """The newest end of a run that ended before the last run was created (``None``: none)."""
    freed_after: int | None = None
    """When a slot freed after the last run took its slot (when it came due, if one was free; ``None``: not yet)."""
    paused: tuple[tuple[int, int], ...] = ()
    """Spans ``[start, end)`` in which the DAG was paused, sorted, each ended (it is active now)."""
    down: tuple[tuple[int, int], ...] = ()
    """Spans ``[start, end)`` in which no scheduler was heartbeating, sorted, each ended (one runs now)."""


def slot_freed(
    created: int,
    ends: list[int | None],
    slots: int,
    down: tuple[tuple[int, int], ...] = (),
    *,
    came_due: int | None = None,
) -> int | None:
    """When a slot freed after a run was created (``created``), or ``None`` when none has yet.

    ``ends`` are the ends of the runs in flight at ``created`` (that run included; ``None``: not
    ended). With fewer of them than ``slots`` a slot was free at once, and had been since the run
    ``came_due`` (given): the runs in flight before it was created are among ``ends``, or ended
    before it took its slot, so a tick due while the scheduler had yet to create it (after a
    restart, or a slow loop) found a slot free and is not held. Otherwise the run that freed one
    is the ``len(ends) - slots + 1``-th to end. A run still in flight when a span of ``down``
    began ended there: its tasks died with the scheduler (LocalExecutor's workers are the
    scheduler's children), and a rerun after the restart is not a run the ticks waited for.
    """
    if len(ends) < slots:
        return created if came_due is None else min(created, came_due)
    died = next((start for start, _ in down if start > created), None)
    if died is not None:
        ends = [died if end is None or end > died else end for end in ends]
    ended = sorted(end for end in ends if end is not None)
    extra = len(ends) - slots
    return ended[extra] if len(ended) > extra else None


class Owed:
    """The overlap and inactive-period rules over one cadence, phase and activity, at ``now``.

    ``backlog`` and ``deadline`` are the catch-up policy applied to occurrences missed while
    a slot was free (the scheduler was down): the newest ``backlog`` run, none due longer
    ago than ``deadline``.
    """

    def __init__(
        self,
        cadence: Cadence,
        *,
        phase: int,
        activity: Activity,
        now: int,
        overlap: str,
        replay_paused: bool,
        backlog: int = 1,
        deadline: int | None = None,
    ) -> None:
        self.cadence, self.phase, self.activity, self.instant = cadence, phase, activity, now
        self.overlap, self.replay_paused, self.backlog, self.deadline = overlap, replay_paused, backlog, deadline
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
        if last is not None:
            # Due while no scheduler ran: the catch-up's, and so is every later one (the slot freed then).
            down = next((start for start, end in activity.down if end > last + phase), None)
            if down is not None:
                self.missed_from = min(self.missed_from, max(down, last + phase) - 1)

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

    def missed(self) -> int | None:
        """The oldest occurrence the catch-up owes among those due after the slot freed (``None``: none due)."""
        newest = self.newest_live(self.missed_from, self.instant)
        if newest is None or self.backlog <= 1:
            return newest
        return step_back_to(self.cadence, newest, self.backlog - 1, self._first_after(self.missed_from))

    def queue_after(self) -> int | None:
        """``buffer_all`` / ``allow_all``: the due instant at or before which a withheld trigger is dropped."""
        newest = self.cadence.at_or_before(min(self.missed_from, self.instant) - self.phase)
        if self.floor is None or newest < self.floor:
            return None
        oldest = step_back_to(self.cadence, newest, QUEUE_LIMIT - 1, self.floor)
        return None if oldest <= self.floor else oldest + self.phase - 1

    def owed_live(self) -> int | None:
        """The oldest live (not paused) occurrence the overlap policy owes now."""
        if self.taken is None:
            return self.newest_live(None, self.instant)  # a first run owes only its newest occurrence
        missed = self.missed()
        if self.overlap in ("skip", "cancel_other"):
            return missed
        until = min(self.missed_from, self.instant)
        if self.overlap == "buffer_one":
            return missed if missed is not None else self.first_live(self.taken, until)
        queued = self.first_live(self.queue_after(), until)  # buffer_all, allow_all: every withheld one
        return queued if queued is not None else missed

    def next(self) -> int:
        """The occurrence to create next: the oldest owed one, else the first one not yet due."""
        owed = [o for o in (self.first_paused() if self.replay_paused else None, self.owed_live()) if o is not None]
        occurrence = min(owed) if owed else self._first_after(self.instant)
        if self.deadline is not None and occurrence + self.phase <= self.instant:
            occurrence = within_deadline(
                self.cadence, occurrence, now=self.instant, phase=self.phase, deadline=self.deadline
            )
        return occurrence

    def treatment(self, occurrence: int) -> str:
        """How ``occurrence`` (after the last run) is treated: run (how) or dropped (why)."""
        due = occurrence + self.phase
        if due > self.instant:
            return DUE  # created ahead of its time: the first fire not yet due, nothing owed before it
        if self._span(due) is not None:
            return REPLAYED if self.replay_paused else SUSPENDED
        if self.deadline is not None and due < self.instant - self.deadline:
            return MISSED
        if self.taken is None:
            return DUE if occurrence == self.newest_live(None, self.instant) else MISSED
        if due > self.missed_from:
            missed = self.missed()
            return DUE if missed is not None and occurrence >= missed else MISSED
        if self.overlap == "skip":
            return FORBIDDEN
        if self.overlap == "cancel_other":
            return SUPERSEDED
        queued = QUEUED if due <= self.taken or (self.freed is not None and due < self.freed) else DUE
        if self.overlap in ("buffer_all", "allow_all"):
            dropped_until = self.queue_after()
            return BUFFER_FULL if dropped_until is not None and due <= dropped_until else queued
        if due <= self.taken or self.missed() is not None:
            return BUFFER_FULL if due <= self.taken else MISSED
        if occurrence != self.first_live(self.taken, self.missed_from):
            return BUFFER_FULL
        # Due while the slot was taken: queued; due a moment after it freed: on time.
        return queued
