"""The run the scheduler creates next, decided when it is about to create one.

Airflow stores a DAG's next run when the previous one is created (and again at every
parse) and creates it once it is due and a ``max_active_runs`` slot is free. By then the
stored run can be stale: after downtime, after a pause, or after a run held the slot past
one or more occurrences. The scheduler asks the timetable once more, right before creating
it (``next_run_info_from_dag_model``), and this module answers:

* a DAG with a declared schedule's run policy (:mod:`~tessera.timetables.run_policy`) gets
  the oldest occurrence that policy owes, decided from the DAG's run history
  (:mod:`~tessera.timetables._time.owed`): a queued trigger, a replayed inactive period;
* any other tessera DAG gets the oldest occurrence its overlap policy owes (a tick that came
  while every ``max_active_runs`` slot was taken: queued, or dropped under ``skip``), and
  otherwise the plain catch-up: the stored occurrence moved forward to the oldest one
  ``Latest`` / ``Backfill`` still owes, and past any whose run has been due longer than the
  starting deadline (possibly to the next, not yet due, occurrence: Airflow queues that run
  and starts it at its ``run_after``). Its history is read at every run it creates (a few
  indexed queries): a tick may have been held even when the stored run is the newest due one,
  since Airflow stepped to it from a run created late; the policy decides only when a tick may
  have been held (:func:`_held`) or it is ``skip``. Without a reader, the plain catch-up decides.

Either way the run's window is the coverage rule's (:func:`~tessera.timetables.coverage.covering_run`):
under ``dropped="cover"`` it reaches back over every occurrence since the newest scheduled run.

The stored run only has to wake the scheduler early enough: it is due whenever anything is
owed, since the plain stepping stores the newest due occurrence.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from typing import TYPE_CHECKING

from ._time.catch_up import MISSED_DEADLINE, step_back_to, within_deadline
from ._time.durations import format_duration
from ._time.owed import Activity, Owed
from .instants import from_us, to_us
from .run_policy import RunActivity, RunPolicy, read_activity

if TYPE_CHECKING:
    from airflow.models.dag import DagModel
    from airflow.timetables.base import DagRunInfo

    from ._time.cadence import Cadence
    from ._time.plan import Plan
    from .base import TesseraTimetable

log = logging.getLogger(__name__)


def owed_run(timetable: TesseraTimetable, dag_model: DagModel, stored: DagRunInfo, now: int) -> DagRunInfo:
    """The run to create instead of ``stored`` (a stored run with a data interval, of a DAG that does not catch up)."""
    assert stored.data_interval is not None
    occurrence = timetable._plan.occurrence_of_window_end(to_us(stored.data_interval.end))
    plan = timetable._plan.anchored_at(occurrence)  # a plan from the last run steps from the stored one
    policy = timetable.run_policy
    history = read_activity(dag_model)
    activity = history
    if activity is not None and not policy.declared and not _held(plan, policy, activity, occurrence, now):
        activity = None  # nothing was held: the plain catch-up decides, as for a DAG without a policy
    if activity is None:
        owed = _caught_up(timetable, plan, occurrence, now)
    else:
        owed = _owed(timetable, policy, activity, now, cadence=plan.cadence).next()
    first_allowed, last_allowed = plan.period_bounds(None, timetable._dag_end_us)
    if last_allowed is not None and owed > last_allowed:
        return stored
    if first_allowed is not None and owed < first_allowed:
        owed = first_allowed
    if history is not None:
        end = history.last_window_end
        last = None if end is None else timetable._plan.occurrence_of_window_end(to_us(end))
    elif owed == occurrence:
        return stored  # stepped from the last run, its window already reaching back over what it passed
    else:
        last = plan.cadence.preceding(occurrence)  # without the history, the stored run was the one after it
    return timetable._info(timetable._covering(plan.run(owed), last, None))


def _held(plan: Plan, policy: RunPolicy, activity: RunActivity, occurrence: int, now: int) -> bool:
    """Whether a tick may have been held behind a run, so the overlap policy, not the catch-up, decides.

    Either the stored ``occurrence`` is older than the newest due one (it waited for a slot), or
    it is not the one right after the DAG's newest run: Airflow stored it stepping from that run
    when it was created, and a run created late (it waited for a slot itself) steps past the
    ticks that came due meanwhile, which the policy may owe (queued, oldest first).
    """
    if policy.overlap == "skip" or occurrence < plan.cadence.at_or_before(now - plan.phase):
        return True
    last = activity.last_window_end
    return last is not None and plan.cadence.following(plan.occurrence_of_window_end(to_us(last))) < occurrence


def _owed(timetable: TesseraTimetable, policy: RunPolicy, activity: RunActivity, now: int, *, cadence: Cadence) -> Owed:
    """The run policy's rules over the DAG's history (``cadence``: the plan's, anchored at the stored run)."""
    plan = timetable._plan
    # A plain timetable's paused periods are caught up as after downtime: its catch-up decides them.
    state = _in_us(plan, activity if policy.declared else dataclasses.replace(activity, paused=()))
    return Owed(
        cadence,
        phase=plan.phase,
        activity=state,
        now=now,
        overlap=policy.overlap,
        replay_paused=bool(policy.replay_inactive),
        backlog=1 if policy.declared else timetable._catch_up.backlog,
        deadline=None if policy.declared else timetable._starting_deadline_us,
    )


def _caught_up(timetable: TesseraTimetable, plan: Plan, occurrence: int, now: int) -> int:
    """The stored ``occurrence`` moved forward past what the plain catch-up and the deadline skip."""
    cadence, phase = plan.cadence, plan.phase
    newest_due = cadence.at_or_before(now - phase)
    # Walk back from the newest due occurrence, stopping at the stored one: a schedule that
    # keeps up costs a constant number of steps, one back from downtime at most the limit.
    owed = step_back_to(cadence, newest_due, timetable._catch_up.backlog - 1, occurrence)
    deadline = timetable._starting_deadline_us
    if deadline is not None:
        resumed = within_deadline(cadence, owed, now=now, phase=phase, deadline=deadline)
        if resumed != owed:
            log.info(
                "%s: skipped the occurrences from %s up to %s (due longer ago than the %s deadline)",
                MISSED_DEADLINE,
                from_us(owed),
                from_us(resumed),
                format_duration(deadline),
            )
        owed = resumed
    return owed


def _in_us(plan: Plan, activity: RunActivity) -> Activity:
    end = activity.last_window_end
    return Activity(
        last=None if end is None else plan.occurrence_of_window_end(to_us(end)),
        freed_before=None if activity.freed_before is None else to_us(activity.freed_before),
        freed_after=None if activity.freed_after is None else to_us(activity.freed_after),
        paused=tuple(sorted((to_us(start), to_us(stop)) for start, stop in activity.paused if start < stop)),
        down=tuple(sorted((to_us(start), to_us(stop)) for start, stop in activity.down if start < stop)),
    )


def policy_of(timetable: object) -> RunPolicy | None:
    """The run policy a tessera timetable applies (a plain default if none was given); ``None`` for Airflow's."""
    policy = getattr(timetable, "run_policy", None)
    return policy if isinstance(policy, RunPolicy) else None


def treatments(
    timetable: TesseraTimetable,
    activity: RunActivity,
    *,
    now: datetime.datetime,
    through: datetime.datetime,
    limit: int,
) -> tuple[list[tuple[datetime.datetime, str]], bool]:
    """How each occurrence after ``activity``'s last run, up to the run whose window ends ``through``, was treated.

    ``activity`` and ``now`` are what the scheduler knew when it created that run. Each
    occurrence (its due instant, ``run_after``) comes with how it was run (``replayed``,
    ``queued``, ``due``) or why it was dropped (``BufferFull``, ``ConcurrencyForbidden``,
    ``Superseded``, ``Suspended``, ``MissedDeadline``); at most ``limit`` are listed, and whether more were left out.
    """
    policy = policy_of(timetable)
    plan = timetable._plan
    if policy is None:
        return [], False
    owed = _owed(timetable, policy, activity, to_us(now), cadence=plan.cadence)
    state = owed.activity
    last = plan.occurrence_of_window_end(to_us(through))
    if state.last is not None:
        occurrence = plan.cadence.following(state.last)
    elif state.paused:  # a first run: what came due since the DAG was created inactive
        occurrence = plan.cadence.at_or_after(state.paused[0][0] - plan.phase)
    else:
        occurrence = last
    found: list[tuple[datetime.datetime, str]] = []
    while occurrence <= last and len(found) < limit:
        found.append((from_us(occurrence + plan.phase), owed.treatment(occurrence)))
        occurrence = plan.cadence.following(occurrence)
    return found, occurrence <= last
