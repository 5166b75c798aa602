"""Which occurrence a schedule owes next: the stepping engine shared by every cadence.

A run of occurrence ``o`` is due once ``o + phase`` has passed. After downtime
the catch-up policy decides how many of the due occurrences still run:
``backlog=1`` runs only the newest, ``backlog=k`` the ``k`` newest, oldest
first, and ``backlog=None`` every one of them (Airflow's ``catchup=True`` and
``airflow backfill create``). A schedule that has never run owes only its
newest due occurrence, whatever the backlog.
"""

from __future__ import annotations

from .cadence import Cadence


def next_occurrence(
    cadence: Cadence,
    *,
    last: int | None,
    earliest: int | None,
    latest: int | None,
    now: int,
    phase: int,
    backlog: int | None,
) -> int | None:
    """The next occurrence to run, or ``None`` when it would fall after ``latest``.

    :param last: the occurrence of the last automated run, or ``None`` before the first.
    :param earliest: inclusive lower bound on the occurrence (the DAG's start date).
    :param latest: inclusive upper bound on the occurrence (the DAG's end date).
    :param now: the current instant.
    :param phase: the schedule's phase; an occurrence is due once ``occurrence + phase <= now``.
    :param backlog: how many due occurrences to run after downtime; ``None`` runs them all.
    """
    if last is not None:
        candidate: int | None = cadence.following(last)
    elif earliest is not None:
        candidate = cadence.at_or_after(earliest)
    else:
        candidate = None

    if backlog is not None or candidate is None:
        newest_due = cadence.at_or_before(now - phase)
        oldest_owed = newest_due if last is None else cadence.back(newest_due, backlog - 1 if backlog else 0)
        if candidate is None or oldest_owed > candidate:
            candidate = oldest_owed

    if earliest is not None and candidate < earliest:
        candidate = cadence.at_or_after(earliest)
    if latest is not None and candidate > latest:
        return None
    return candidate
