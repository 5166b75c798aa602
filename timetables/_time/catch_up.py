"""Which occurrence a schedule owes next: the stepping engine shared by every cadence.

A run of occurrence ``o`` is due once ``o + phase`` has passed. After downtime
the catch-up policy decides how many of the due occurrences still run:
``backlog=1`` runs only the newest, ``backlog=k`` the ``k`` newest, oldest
first (``Backfill(limit=N)`` is ``backlog=N + 1``: the newest plus ``N`` missed
ones), and ``backlog=None`` every one of them (Airflow's ``catchup=True`` and
``airflow backfill create``). A schedule that has never run owes only its
newest due occurrence, whatever the backlog.

A starting deadline (a CronJob's ``startingDeadlineSeconds``) skips every owed
occurrence whose run has been due for longer than the deadline: the schedule
resumes at the first occurrence still within it (possibly the next, not yet due,
one) instead of storming through the ticks it slept past. Each occurrence
skipped that way is skipped for the reason :data:`MISSED_DEADLINE`.
"""

from __future__ import annotations

from .cadence import Cadence

MISSED_DEADLINE = "MissedDeadline"
"""Why an occurrence was skipped: its run was due longer ago than the starting deadline."""


def step_back_to(cadence: Cadence, occurrence: int, steps: int, floor: int) -> int:
    """``steps`` occurrences before ``occurrence``, but never below ``floor``: at most ``steps`` cadence steps.

    The walk stops as soon as it reaches ``floor``, so when ``floor`` is the occurrence
    after the last run the cost is the number of occurrences missed, not ``steps``.
    """
    for _ in range(steps):
        if occurrence <= floor:
            break
        occurrence = cadence.preceding(occurrence)
    return max(occurrence, floor)


def past_deadline(due: int, now: int, deadline: int | None) -> bool:
    """Whether a run due at ``due`` and not started by ``now`` is skipped: it waited longer than ``deadline``.

    The one statement of the starting-deadline rule: the catch-up (:func:`within_deadline`), the
    function dispatch's admission and the explainer all ask it. A run due exactly ``deadline``
    ago still starts; ``None`` waits forever.
    """
    return deadline is not None and now - due > deadline


def within_deadline(cadence: Cadence, occurrence: int, *, now: int, phase: int, deadline: int) -> int:
    """``occurrence``, or the first occurrence whose run is due at most ``deadline`` before ``now``."""
    # A run is due at occurrence + phase; the phase is a chosen start offset, not lateness.
    if not past_deadline(occurrence + phase, now, deadline):
        return occurrence
    return cadence.at_or_after(now - phase - deadline)  # the first whose run is not past it


def next_occurrence(
    cadence: Cadence,
    *,
    last: int | None,
    earliest: int | None,
    latest: int | None,
    now: int,
    phase: int,
    backlog: int | None,
    deadline: int | None = None,
) -> int | None:
    """The next occurrence to run, or ``None`` when it would fall after ``latest``.

    :param last: the occurrence of the last automated run, or ``None`` before the first.
    :param earliest: inclusive lower bound on the occurrence (the DAG's start date).
    :param latest: inclusive upper bound on the occurrence (the DAG's end date).
    :param now: the current instant.
    :param phase: the schedule's phase; an occurrence is due once ``occurrence + phase <= now``.
    :param backlog: how many due occurrences to run after downtime; ``None`` runs them all.
    :param deadline: skip occurrences whose run has been due longer than this; ``None`` skips none.
    """
    if last is not None:
        candidate: int | None = cadence.following(last)
    elif earliest is not None:
        candidate = cadence.at_or_after(earliest)
    else:
        candidate = None

    if candidate is None:
        candidate = cadence.at_or_before(now - phase)
    elif backlog is not None:
        newest_due = cadence.at_or_before(now - phase)
        if last is None:  # a first run owes only the newest due occurrence
            candidate = max(candidate, newest_due)
        else:
            candidate = step_back_to(cadence, newest_due, backlog - 1, candidate)

    if deadline is not None:
        candidate = within_deadline(cadence, candidate, now=now, phase=phase, deadline=deadline)
    if earliest is not None and candidate < earliest:
        candidate = cadence.at_or_after(earliest)
    if latest is not None and candidate > latest:
        return None
    return candidate
