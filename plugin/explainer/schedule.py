"""Part 1 of "why": what the timetable decided for the occurrence at or around an instant T.

A tessera timetable is read only through its public plan (``due_at_or_before``, ``upcoming``,
``clock_changes``, ``dst_rule``, ``catch_up_limit``): the same answers the scheduler steps
through. Airflow's own timetables are read through their own ``next_dagrun_info_v2``
(:mod:`~tessera.plugin.explainer.builtin`). Either way the answer is a :class:`ScheduleView`:
the occurrence the question is about (the newest one due at or before T, else the first one
after it), the ones around it, the DAG's date bounds, and the catch-up rule in force.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from tessera.timetables.base import TesseraTimetable
from tessera.timetables.clock_changes import ClockChange
from tessera.timetables.exclusion_plan import MAX_EXCLUDED, ExcludedOccurrence
from tessera.timetables.run_facts.of_task import RunSchedule

from ..fleet.schedules import duration_text
from .builtin import builtin_view


@dataclass(frozen=True)
class Slot:
    """One occurrence: its nominal instant, when its run may start, and the window it evaluates."""

    nominal: datetime.datetime
    run_after: datetime.datetime
    window_start: datetime.datetime | None = None
    window_end: datetime.datetime | None = None


@dataclass(frozen=True)
class ScheduleView:
    """What the timetable in force at T planned around T."""

    kind: str
    """tessera, clock (Airflow's cron/events), relative (a timedelta from the last run), assets, none, other."""
    summary: str
    timezone: str = "UTC"
    focus: Slot | None = None
    """The newest occurrence due at or before T; else the first one after T (then ``due`` is False)."""
    due: bool = False
    previous: Slot | None = None
    following: Slot | None = None
    """The occurrence after ``focus`` (None: the end date, or nothing planned)."""
    start: datetime.datetime | None = None
    end: datetime.datetime | None = None
    catchup: bool = False
    """The DAG's own ``catchup``: every occurrence since the start date runs."""
    limit: int = 1
    """How many due occurrences run after downtime when ``catchup`` is False (1: only the newest)."""
    deadline: datetime.timedelta | None = None
    phase: datetime.timedelta | None = None
    dst_rule: str | None = None
    clock_changes: list[ClockChange] = field(default_factory=list)
    steps_cut: bool = False
    """Airflow's relative timetables are stepped a bounded number of times; True when that bound was hit."""
    excluded: list[ExcludedOccurrence] = field(default_factory=list)
    """The newest occurrence after ``focus`` and at or before T that the schedule's exclusions skipped."""

    def policy_words(self) -> str:
        """The catch-up rule in force, in words."""
        if self.kind in ("assets", "none", "other"):
            return "no clock: nothing is owed after downtime"
        if self.catchup:
            return "the DAG's catchup=True: every occurrence since the start date runs, oldest first"
        if self.limit == 1:
            rule = "catch-up Latest" if self.kind == "tessera" else "catchup=False"
            words = f"only the newest due occurrence runs after downtime ({rule})"
        else:
            words = (
                f"the {self.limit} newest due occurrences run after downtime "
                f"(catch-up Backfill(limit={self.limit - 1}): the newest and the {self.limit - 1} missed before it)"
            )
        if self.deadline is not None:
            words += f"; one due longer than {duration_text(self.deadline)} when the scheduler gets to it is skipped"
        return words


def _slot(run: RunSchedule) -> Slot:
    return Slot(run.occurrence, run.run_after, run.window_start, run.window_end)


def tessera_view(
    timetable: TesseraTimetable,
    *,
    at: datetime.datetime,
    start: datetime.datetime | None,
    end: datetime.datetime | None,
    catchup: bool,
    anchor: datetime.datetime | None,
) -> ScheduleView:
    """The public plan around ``at``; ``anchor``: the window end of the newest scheduled run at or before it."""
    plan, bounds = timetable.plan, {"start_date": start, "end_date": end, "anchor": anchor}
    due = plan.due_at_or_before(at, **bounds)
    if due is None:
        ahead = plan.upcoming(after=at, count=2, **bounds)
        focus = ahead[0] if ahead else None
        following = ahead[1] if len(ahead) > 1 else None
    else:
        focus = due
        after = plan.upcoming(after=due.run_after, count=1, **bounds)
        following = after[0] if after else None
    previous = None
    if focus is not None:
        back = plan.due_at_or_before(focus.run_after - datetime.timedelta(microseconds=1), **bounds)
        previous = None if back is None else back
    low = previous.occurrence if previous is not None else (focus.occurrence if focus is not None else at)
    high = following.occurrence if following is not None else max(at, low)
    return ScheduleView(
        kind="tessera",
        summary=timetable.summary,
        timezone=plan.timezone,
        focus=None if focus is None else _slot(focus),
        due=due is not None,
        previous=None if previous is None else _slot(previous),
        following=None if following is None else _slot(following),
        start=start,
        end=end,
        catchup=catchup,
        limit=plan.catch_up_limit,
        deadline=timetable.starting_deadline,
        phase=plan.phase,
        dst_rule=plan.dst_rule,
        clock_changes=plan.clock_changes(low, max(high, at)),
        excluded=_newest_excluded(timetable, after=due.occurrence, until=at) if due is not None else [],
    )


EXCLUDED_LOOKBACK = (datetime.timedelta(hours=1), datetime.timedelta(days=1), datetime.timedelta(days=367))
"""How far back from T skipped occurrences are listed, widening until one is found (exclusions hide a year at most)."""


def _newest_excluded(timetable: TesseraTimetable, *, after: datetime.datetime, until: datetime.datetime) -> list:
    """The newest occurrence in ``(after, until]`` the exclusions skipped: the one at T, not the day's first.

    Between the newest occurrence due and T there are only skipped ones; listing them from T back
    (an hour, a day, a year) finds the newest in a few bounded calls, however dense the cadence.
    """
    for lookback in EXCLUDED_LOOKBACK:
        low = max(after, until - lookback)
        found = timetable.plan.excluded(after=low, until=until, count=MAX_EXCLUDED)
        if found or low == after:
            return found[-1:]
    return []


def schedule_view(
    timetable: Any,
    *,
    at: datetime.datetime,
    start: datetime.datetime | None,
    end: datetime.datetime | None,
    catchup: bool,
    anchor: Any,
) -> ScheduleView:
    """Part 1 for any timetable; ``anchor``: the newest automated run at or before ``at`` (or None)."""
    if isinstance(timetable, TesseraTimetable):
        window_end = None if anchor is None else anchor.data_interval_end
        return tessera_view(timetable, at=at, start=start, end=end, catchup=catchup, anchor=window_end)
    found = builtin_view(timetable, at=at, start=start, end=end, anchor=anchor)
    return ScheduleView(
        kind=found.kind,
        summary=found.summary,
        timezone=found.timezone,
        focus=None if found.focus is None else Slot(*found.focus),
        due=found.due,
        previous=None if found.previous is None else Slot(*found.previous),
        following=None if found.following is None else Slot(*found.following),
        start=start,
        end=end,
        catchup=catchup,
        steps_cut=found.steps_cut,
    )


def newer_due(timetable: Any, view: ScheduleView, until: datetime.datetime) -> int:
    """How many occurrences after the focus were due by ``until``, counted up to the catch-up limit.

    With that many or more, the catch-up policy no longer owed the focus when the scheduler got
    to the DAG at ``until`` (Latest owes only the newest; Backfill(limit=N) the newest and the N missed before it).
    """
    focus, following = view.focus, view.following
    if focus is None or following is None or following.run_after > until:
        return 0
    if view.limit <= 1 or not isinstance(timetable, TesseraTimetable):
        return 1
    runs = timetable.plan.upcoming(
        after=focus.run_after, count=view.limit, until=until, start_date=view.start, end_date=view.end
    )
    return len(runs)
