"""The plan check: every declared schedule's driver and next fires, and each contradiction in the set.

Contradictions the parser cannot see because they span schedules or DAG files:

- ``unknown_parent`` (error): an AFTER name no schedule declares holds the chain forever;
- ``after_cycle`` (error): schedules behind each other never fire;
- ``no_pipelines`` (error, when the pipelines are known): a schedule no DAG uses;
- ``align_never_meets`` (error): an ``ALIGN WINDOW`` schedule whose parents' fires do not end
  at a common instant (or that waits on an AFTER-driven parent) never fires;
- warnings for policy that does not do what it reads like (a time zone on an
  interval, a retry delay without retries, catch-up runs that overlap).

The result is plain data (``to_dict()`` is JSON-ready) for a REST endpoint or the UI.
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from tessera.timetables.rules import clip, excerpt

from .._airflow import utcnow
from .identity import schedules_in_tags
from .policy import timetable_of
from .schedule import Schedule

MAX_PLAN_COUNT = 1000
"""Fires listed per schedule, as the REST API's plan lists at most 1000 runs per DAG."""


@dataclass(frozen=True)
class Contradiction:
    schedule: str
    kind: str
    severity: Literal["error", "warning"]
    message: str


@dataclass(frozen=True)
class SchedulePlan:
    name: str
    driver: str
    summary: str
    next_fires: list[str]
    """ISO instants (UTC) of the next fires; empty for an AFTER schedule."""
    pipelines: list[str] | None
    """DAG ids using the schedule; ``None`` when they were not given to the check."""


@dataclass(frozen=True)
class PlanReport:
    schedules: list[SchedulePlan]
    contradictions: list[Contradiction] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No error-level contradiction (warnings allowed)."""
        return not any(c.severity == "error" for c in self.contradictions)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, **asdict(self)}


def pipelines_of_dags(dags: Iterable[Any]) -> dict[str, list[str]]:
    """Schedule name -> DAG ids, from DAG objects' tags (e.g. ``DagBag(...).dags.values()``)."""
    found: dict[str, list[str]] = {}
    for dag in dags:
        for name in schedules_in_tags(dag.tags or ()):
            found.setdefault(name, []).append(dag.dag_id)
    return {name: sorted(ids) for name, ids in found.items()}


def _summary(schedule: Schedule) -> str:
    if schedule.driver == "cron":
        return f"cron {' | '.join(repr(text) for text in schedule.crons)} in {schedule.timezone or 'UTC'}"
    if schedule.driver == "interval":
        return f"every {schedule.interval_seconds} s (epoch-aligned)"
    return "after " + ", ".join(schedule.after or ())


def next_fires(schedule: Schedule, *, now: datetime.datetime, count: int) -> list[str]:
    """The next ``count`` fire instants after ``now``, from the plan of the timetable the DAGs get."""
    if schedule.driver == "after":
        return []
    # The timetable's public plan: the runs that start after ``now``, as the scheduler creates them
    # (Airflow's own interface answers "the next run after the last one", not "the fires after now").
    runs = timetable_of(schedule).plan.upcoming(after=now, count=count)
    return [run.run_after.isoformat() for run in runs]


def after_cycles(schedules: Mapping[str, Schedule]) -> list[list[str]]:
    """Each cycle of AFTER references, as the path that closes it (``[a, b, a]``): one per back edge.

    A depth-first walk with its own stack: a chain of thousands of AFTER schedules must not
    reach Python's recursion limit.
    """
    found: list[list[str]] = []
    finished: set[str] = set()
    for root in sorted(schedules):
        if root in finished:
            continue
        path, position = [root], {root: 0}
        parents: list[Iterator[str]] = [iter(schedules[root].after or ())]
        while parents:
            parent = next(parents[-1], None)
            if parent is None:  # every parent of the innermost schedule is explored
                name = path.pop()
                del position[name]
                finished.add(name)
                parents.pop()
            elif parent in position:
                found.append(path[position[parent] :] + [parent])
            elif parent in schedules and parent not in finished:
                position[parent] = len(path)
                path.append(parent)
                parents.append(iter(schedules[parent].after or ()))
    return found


def cycle_text(cycle: list[str]) -> str:
    """``a -> b -> a``, cut short for a cycle of thousands of schedules."""
    return clip(" -> ".join(cycle), 200)


def cycle_refusal(cycle: list[str]) -> str:
    """The refusal of a set of schedules that holds ``cycle``, naming the field ``after``."""
    return (
        f"after: {cycle_text(cycle)} is a cycle of AFTER schedules: each waits for the next, so none ever "
        "fires; drive one of them by cron or interval_seconds, or remove one AFTER name"
    )


def check_count(count: object) -> int:
    """``count`` fires per schedule, 0 to :data:`MAX_PLAN_COUNT`; ``ValueError``/``TypeError`` naming it."""
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"count: {excerpt(count)}; give a whole number from 0 to {MAX_PLAN_COUNT}")
    if not 0 <= count <= MAX_PLAN_COUNT:
        raise ValueError(f"count: {excerpt(count)}; give a whole number from 0 to {MAX_PLAN_COUNT}")
    return count


def _warnings(schedule: Schedule) -> Iterable[Contradiction]:
    name = schedule.name
    if schedule.timezone is not None and schedule.driver != "cron":
        yield Contradiction(
            name, "timezone_ignored", "warning", f"{name}: TIMEZONE {schedule.timezone!r} is ignored by a "
            f"{schedule.driver.upper()} schedule (no wall-clock field to interpret); remove it",
        )  # fmt: skip
    if schedule.retry_delay is not None and not schedule.retries:
        yield Contradiction(
            name, "retry_delay_without_retries", "warning",
            f"{name}: RETRY_DELAY {schedule.retry_delay} has no effect without RETRIES; add RETRIES n",
        )  # fmt: skip
    if schedule.catchup and schedule.max_concurrent != 1:
        yield Contradiction(
            name, "catchup_overlaps", "warning", f"{name}: CATCHUP with MAX_CONCURRENT "
            f"{schedule.max_concurrent} runs missed fires side by side, not one after another; use 1",
        )  # fmt: skip


def _aligned_problems(schedule: Schedule, schedules: Mapping[str, Schedule], now: datetime.datetime) -> list[str]:
    """Why an ALIGN WINDOW schedule would never fire: reasons, empty when its parents' windows meet.

    A window completes at an instant where every parent's fire ends; the slowest parent's next
    three fire ends are the candidates (three timetable steps per parent each, whatever the cadence).
    """
    parents = [schedules[name] for name in schedule.after or () if name in schedules]
    chained = [p.name for p in parents if p.driver == "after"]
    if chained:
        return [f"its parents {chained} are AFTER-driven: their fires are named by events, not by instants"]
    if len(parents) < 2:
        return []
    plans = {p.name: timetable_of(p).plan for p in parents}
    ends = {name: [run.window_end for run in plan.upcoming(after=now, count=2)] for name, plan in plans.items()}
    slowest = max(ends, key=lambda name: ends[name][1] - ends[name][0])
    candidates = [run.window_end for run in plans[slowest].upcoming(after=now, count=3)]
    tiny = datetime.timedelta(microseconds=1)
    for end in candidates:
        if all(plan.upcoming(after=end - plan.phase - tiny, count=1)[0].window_end == end for plan in plans.values()):
            return []
    listed = ", ".join(end.isoformat() for end in candidates)
    return [f"none of {slowest}'s next fires ({listed}) ends when every parent's does"]


def check_plan(
    schedules: Mapping[str, Schedule],
    *,
    pipelines: Mapping[str, Iterable[str]] | None = None,
    now: datetime.datetime | None = None,
    count: int = 3,
) -> PlanReport:
    """Check a set of declared schedules as a whole.

    :param pipelines: schedule name -> DAG ids using it (see :func:`pipelines_of_dags`);
        without it, schedules with no pipelines cannot be detected.
    :param now: fires are listed after this instant (default: the current time).
    :param count: fires listed per schedule, 0 to :data:`MAX_PLAN_COUNT` (1000).
    """
    count = check_count(count)
    now = now or utcnow()
    plans, problems = [], []
    for name in sorted(schedules):
        schedule = schedules[name]
        used = None if pipelines is None else sorted(pipelines.get(name, ()))
        plans.append(
            SchedulePlan(name, schedule.driver, _summary(schedule), next_fires(schedule, now=now, count=count), used)
        )
        for parent in schedule.after or ():
            if parent not in schedules:
                close = difflib.get_close_matches(parent, list(schedules), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else "; declare it or remove it from AFTER"
                problems.append(Contradiction(
                    name, "unknown_parent", "error",
                    f"{name}: AFTER {parent!r} names no declared schedule, so {name} would never fire{hint}",
                ))  # fmt: skip
        if used is not None and not used:
            problems.append(Contradiction(
                name, "no_pipelines", "error",
                f"{name}: no DAG uses this schedule; pass **schedules.dag_kwargs({name!r}) to a DAG "
                "or remove it",
            ))  # fmt: skip
        problems.extend(_warnings(schedule))
        if schedule.align_window:
            problems.extend(
                Contradiction(name, "align_never_meets", "error", f"{name}: ALIGN WINDOW never fires: {reason}; "
                              "align parents whose fires end together (e.g. every 3600 s and every 1800 s)")
                for reason in _aligned_problems(schedule, schedules, now)
            )  # fmt: skip
    for cycle in after_cycles(schedules):
        problems.append(Contradiction(
            cycle[0], "after_cycle", "error",
            f"AFTER cycle {cycle_text(cycle)}: each waits for the next, so none ever fires; break the cycle",
        ))  # fmt: skip
    return PlanReport(plans, problems)
