"""A schedule's plan: for each occurrence, when its run may start and which window it evaluates.

``delay`` shifts both window bounds back (data still in flight gets time to
land) while the run stays due at the occurrence; ``lookback`` replaces the
window's span (the previous occurrence) by a fixed duration; ``phase`` only
moves when the run starts, never the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .cadence import Cadence
from .catch_up import next_occurrence
from .from_last_run import FromLastRun, first_occurrence, origin_for


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """One fire of a schedule, all instants in microseconds since the Unix epoch."""

    occurrence: int
    run_after: int
    window_start: int
    window_end: int
    interval: int
    """The real spacing of this occurrence from the previous one (23h/25h across DST)."""


@dataclass(frozen=True, slots=True)
class Plan:
    cadence: Cadence
    delay: int = 0
    lookback: int | None = None
    phase: int = 0
    # The scheduler steps a DAG with the same date bounds call after call: remember the last
    # conversion instead of walking the cadence twice more on every step.
    # One element, replaced whole, so concurrent readers never see a key with another's bounds.
    _last_bounds: list = field(default_factory=lambda: [(None, None)], compare=False, repr=False)

    @property
    def from_last_run(self) -> bool:
        """True when occurrences step from the last run (unanchored day, week, month cadences)."""
        return isinstance(self.cadence, FromLastRun)

    def anchored_at(self, occurrence: int | None) -> Plan:
        """This plan stepping from ``occurrence`` when it counts from the last run; else itself unchanged.

        ``occurrence`` is any occurrence of the sequence (a stored or created run's); ``None`` keeps it.
        """
        if occurrence is None or not isinstance(self.cadence, FromLastRun):
            return self
        rebased = self.cadence.rebased(occurrence)
        return self if rebased == self.cadence else replace(self, cadence=rebased, _last_bounds=[(None, None)])

    def run(self, occurrence: int) -> PlannedRun:
        previous = self.cadence.preceding(occurrence)
        end = occurrence - self.delay
        start = (occurrence - self.lookback if self.lookback is not None else previous) - self.delay
        return PlannedRun(occurrence, occurrence + self.phase, start, end, occurrence - previous)

    def period_bounds(self, earliest: int | None, latest: int | None) -> tuple[int | None, int | None]:
        """Date bounds on a run's period turned into inclusive bounds on its occurrence.

        A run belongs to the period from the previous occurrence to its own, and a
        date range (a DAG's start and end date, a backfill's from and to) selects the
        runs whose period starts in it: the logical date before the delay shift. So
        "backfill 2026-01-01" of an hourly schedule with a 5 minute delay makes the 24
        runs whose windows tile that day shifted back by 5 minutes.
        """
        key, bounds = self._last_bounds[0]
        if key == (earliest, latest):
            return bounds
        cadence = self.cadence
        first = None if earliest is None else cadence.following(cadence.at_or_after(earliest))
        last = None if latest is None else cadence.following(cadence.at_or_before(latest))
        self._last_bounds[0] = ((earliest, latest), (first, last))
        return first, last

    def occurrence_of_window_end(self, window_end: int) -> int:
        """Recover the occurrence a run belongs to from its window end (what Airflow stores)."""
        return window_end + self.delay

    def next_run(
        self,
        *,
        last_window_end: int | None,
        earliest: int | None,
        latest: int | None,
        now: int,
        backlog: int | None,
        deadline: int | None = None,
    ) -> PlannedRun | None:
        """The next run after the one whose window ended at ``last_window_end``.

        ``earliest`` and ``latest`` bound the run's period (see :meth:`period_bounds`);
        the rest is :func:`~.catch_up.next_occurrence`.
        """
        last = None if last_window_end is None else self.occurrence_of_window_end(last_window_end)
        # From the last run: step from it (or from the start date, or from the moment a DAG with
        # neither is first scheduled, whose run is then the newest due occurrence: due now).
        plan = self.anchored_at(origin_for(last=last, earliest=earliest, moment=now, phase=self.phase))
        earliest, latest = plan.period_bounds(earliest, latest)
        occurrence = next_occurrence(
            plan.cadence,
            last=last,
            earliest=earliest,
            latest=latest,
            now=now,
            phase=self.phase,
            backlog=backlog,
            deadline=deadline,
        )
        return None if occurrence is None else plan.run(occurrence)

    def upcoming(
        self,
        after: int,
        count: int,
        *,
        earliest: int | None = None,
        latest: int | None = None,
        until: int | None = None,
        anchor: int | None = None,
    ) -> list[PlannedRun]:
        """The next ``count`` runs that may start strictly after ``after``, as the scheduler will create them.

        ``earliest`` and ``latest`` bound each run's period exactly as in :meth:`next_run` (the
        DAG's start and end dates); ``until`` stops at the first run that starts after it.
        Which runs are *due* after downtime is the catch-up policy's business; a run that starts
        after ``after`` is owed under every policy, so the list does not depend on it. The cost is
        ``count`` cadence steps, whatever the bounds. ``anchor`` is the occurrence of a run the
        scheduler created or stored (a plan from the last run steps from it; without one, from
        ``earliest``, else from a first run due at ``after``, as the scheduler would).
        """
        plan = self.anchored_at(origin_for(last=anchor, earliest=earliest, moment=after, phase=self.phase))
        first, last = plan.period_bounds(earliest, latest)
        # A run starts at occurrence + phase: the first one after `after` follows after - phase.
        occurrence = plan.cadence.following(after - self.phase)
        if first is not None and occurrence < first:
            occurrence = first
        runs: list[PlannedRun] = []
        while len(runs) < count and (last is None or occurrence <= last):
            run = plan.run(occurrence)
            if until is not None and run.run_after > until:
                break
            runs.append(run)
            occurrence = plan.cadence.following(occurrence)
        return runs

    def latest_at_or_before(self, t: int) -> PlannedRun:
        """The run of the newest occurrence at or before ``t`` (a manual trigger's window).

        A plan from the last run has no occurrence but its runs: a manual run evaluates the
        period that ends when it is triggered.
        """
        if self.from_last_run:
            return self.run(first_occurrence(t, 0))
        return self.run(self.cadence.at_or_before(t))
