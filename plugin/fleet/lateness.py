"""When a run is late, judged from the plan and the runs: one rule for the status, the page and the CLI.

When is a run late? A run is late when it has not started (not created yet, or
created but still queued) and its *late-after* instant has passed:

* calendar and cron cadences (a wall-clock time in a timezone): 20 minutes after the
  nominal occurrence, or 5 minutes after the phase-shifted start if that is later.
  A phase of up to 15 minutes plus the scheduler's own latency is healthy, so a run
  10 minutes past its nominal time is not called late;
* interval cadences (an epoch grid, ``@every``): after the phase-shifted start plus a
  margin of one interval, at least 1 minute and at most 5 minutes.

A paused DAG is never late, and neither is one with nothing scheduled.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from tessera.timetables.run_facts.of_task import RunSchedule

from .models import Lateness

_UTC = datetime.timezone.utc
WALL_CLOCK_GRACE = datetime.timedelta(minutes=20)
START_GRACE = datetime.timedelta(minutes=5)
INTERVAL_MARGIN_MIN = datetime.timedelta(minutes=1)
INTERVAL_MARGIN_MAX = datetime.timedelta(minutes=5)
RULES = {
    "wall_clock": "late when not started 20 min after the nominal time (or 5 min after its phase, if later)",
    "interval": "late when not started one interval (1 to 5 min) after its phase-shifted start",
}


def _plain(moment: datetime.datetime) -> datetime.datetime:
    """The same instant as a plain UTC ``datetime``: pendulum's arithmetic costs ten times as much.

    A naive ``moment`` is read as UTC (Airflow's convention); any other offset is taken off first.
    """
    if moment.utcoffset():
        moment = moment.astimezone(_UTC)  # not ``moment - offset``: pendulum shifts a fixed offset twice
    return datetime.datetime(
        moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second, moment.microsecond, _UTC
    )


def late_after(run: RunSchedule, *, wall_clock: bool) -> datetime.datetime:
    """The instant after which ``run`` is late if it has not started."""
    if wall_clock:
        return max(_plain(run.occurrence) + WALL_CLOCK_GRACE, _plain(run.run_after) + START_GRACE)
    interval = datetime.timedelta(milliseconds=run.interval_ms)
    return _plain(run.run_after) + min(max(interval, INTERVAL_MARGIN_MIN), INTERVAL_MARGIN_MAX)


def _not_judged(state: str, reason: str) -> Lateness:
    return Lateness(
        state=state, late=False, occurrence=None, late_after=None, late_by_seconds=None, reason=reason, rule=""
    )


@dataclass(frozen=True)
class _Judge:
    """What judging one pair of runs (the pending one, the queued one) takes that no instant changes.

    Each candidate's nominal instant and deadline (the queued run first), and the answer while none
    is late: the same for every instant before the first deadline.
    """

    pending: RunSchedule
    queued: RunSchedule | None
    wall_clock: bool
    candidates: tuple[tuple[datetime.datetime, datetime.datetime, str], ...]
    """(the run's nominal instant, its :func:`late_after`, why it is late), in the order judged."""
    on_time: Lateness


MAX_JUDGES = 20_000
"""The pairs of runs whose :class:`_Judge` is kept (a few per DAG of a fleet of 10,000); then it starts over."""
_judges: dict[tuple[int, int, bool], _Judge] = {}


def _judge(pending: RunSchedule, queued: RunSchedule | None, wall_clock: bool) -> _Judge:
    """The :class:`_Judge` of these runs: computed once per pair of run objects.

    The lists judge every DAG on every load, and a DAG's runs are the same objects from one load to
    the next (its stored version's memo keeps them: :mod:`.memo`), so the deadlines are computed once
    per run, not per load. Keyed by the objects' identities, each entry holding the objects it was
    computed for (an identity is never reused while they are held): a changed run is another object,
    so another entry, and the answer is a pure function of the runs, the same for every caller.
    """
    key = (id(pending), id(queued), wall_clock)
    found = _judges.get(key)
    if found is not None and found.pending is pending and found.queued is queued:
        return found
    candidates = []
    for run, why in ((queued, "its run is queued but has not started"), (pending, "")):
        if run is not None:
            candidates.append((_plain(run.occurrence), late_after(run, wall_clock=wall_clock), why))
    on_time = Lateness(
        state="on_time",
        late=False,
        occurrence=candidates[-1][0],
        late_after=candidates[-1][1],  # the pending run's, judged last
        late_by_seconds=None,
        reason="",
        rule=RULES["wall_clock" if wall_clock else "interval"],
    )
    if len(_judges) >= MAX_JUDGES:
        _judges.clear()
    found = _judges[key] = _Judge(pending, queued, wall_clock, tuple(candidates), on_time)
    return found


def assess_lateness(
    *,
    wall_clock: bool,
    paused: bool,
    pending: RunSchedule | None,
    queued: RunSchedule | None,
    now: datetime.datetime,
) -> Lateness:
    """Judge the run the scheduler owes next (``pending``) and the newest scheduled run still queued.

    The answer while neither is late is one object per pair of runs (:func:`_judge`): read it, never change it.
    """
    if paused:
        return _not_judged("paused", "the DAG is paused")
    if pending is None:
        return _not_judged("not_scheduled", "no clock-driven run is scheduled")
    judge = _judge(pending, queued, wall_clock)
    now = _plain(now)
    for occurrence, deadline, why in judge.candidates:
        if now > deadline:
            return Lateness(
                state="late",
                late=True,
                occurrence=occurrence,
                late_after=deadline,
                late_by_seconds=(now - occurrence).total_seconds(),
                reason=why or "the scheduler has not created its run yet",
                rule=judge.on_time.rule,
            )
    return judge.on_time
