"""The load a fleet puts on the scheduler: run starts per minute over the next 24 hours, across every DAG.

Each timetable answers for itself, tessera's and Airflow's built-ins alike: a tessera
timetable through its public plan (``upcoming``, what the scheduler creates), any other
through its own ``next_dagrun_info_v2``, asked repeatedly as the scheduler asks it, with
``catchup=False`` (the scheduler's default) so the first answer is the run it creates next.
Asking is bounded: at most :data:`RUN_CAP` runs per DAG per 24 hours (one a minute); a DAG
that reaches the cap is listed as capped, so the counts say when they are a floor. A tessera
DAG's runs are counted from its lane (a few periodic segments, the page's timeline) by integer
arithmetic, about a microsecond a run; any other timetable is asked once per run, which costs
hundreds of times more. So one answer counts at most
:data:`~tessera.plugin.api.inputs.MAX_FLEET_RUNS` runs of other timetables (the fleet plan's
cap) and :data:`~tessera.plugin.api.inputs.MAX_LANE_RUNS` of tessera's: before any run is
counted, :func:`load_work` estimates the runs of every DAG (a tessera DAG's exactly, from its
lane; any other timetable's from the spacing of its next runs) and refuses a fleet over either
cap, naming the ``minutes`` that fit; while counting, the tallies stop at the caps too, for a
timetable whose runs bunch later in the day than its first ones. Every DAG and every step passes a cancellation
:func:`~tessera.plugin.cancellation.checkpoint`, so the work stops when the caller leaves.

A spike is a minute with at least :data:`SPIKE_FACTOR` times the mean run starts (and at
least 2); the spikes are listed highest first with the DAGs that form them, which is what a
per-DAG phase exists to flatten.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tessera.plugin.api.inputs import MAX_FLEET_RUNS, MAX_LANE_RUNS
from tessera.plugin.cancellation import checkpoint
from tessera.plugin.errors import TooMuchWork
from tessera.timetables.base import TesseraTimetable
from tessera.timetables.instants import to_us
from tessera.timetables.support import next_run_info

MINUTE = datetime.timedelta(minutes=1)
US_PER_MINUTE = 60_000_000
HORIZON_MINUTES = 24 * 60
RUN_CAP = HORIZON_MINUTES
"""Runs counted per DAG per 24 hours: one a minute. Denser cadences are counted up to it and marked capped."""
SPIKE_FACTOR = 3
MAX_SPIKES = 10
MAX_SPIKE_DAGS = 50
"""DAG ids named per spike; the spike's ``dag_count`` says how many there are in all."""


@dataclass(frozen=True)
class FleetDag:
    """One DAG of the fleet: its timetable and the bounds of its runs (the DAG's start and end dates)."""

    dag_id: str
    timetable: Any
    start_date: datetime.datetime | None = None
    end_date: datetime.datetime | None = None
    error: str | None = None


@dataclass
class DagStarts:
    dag_id: str
    starts: list[int]
    """When its runs may start, in microseconds since the Unix epoch."""
    capped: bool
    source: str
    """``tessera`` (its public plan) or ``timetable`` (the timetable's own ``next_dagrun_info_v2``)."""
    error: str | None = None
    phase: int = 0
    """Microseconds after its occurrence each run starts (a tessera phase; Airflow's timetables have none)."""


@dataclass
class Spike:
    minute: datetime.datetime
    runs: int
    dag_ids: list[str]
    dag_count: int


@dataclass
class FleetLoad:
    start: datetime.datetime
    counts: list[int]
    dags: list[DagStarts]
    spikes: list[Spike] = field(default_factory=list)
    counts_without_phases: list[int] = field(default_factory=list)
    """The same runs, each counted at its occurrence: the fleet as it would start with every phase 0."""

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def mean(self) -> float:
        return self.total / len(self.counts)

    @property
    def peak(self) -> int:
        return max(self.counts, default=0)

    @property
    def peak_at(self) -> datetime.datetime | None:
        if not self.total:
            return None
        return self.start + self.counts.index(self.peak) * MINUTE

    @property
    def hours(self) -> list[tuple[datetime.datetime, int]]:
        """The busiest minute of each clock hour the range touches, labelled by the hour's start (UTC).

        Clock hours, as the spikes are named by their minute: a range that starts at 05:46 has
        a first bucket "05:00" (its minutes 05:46 to 05:59) and a last one "05:00" a day later.
        """
        offset = self.start.minute  # minutes of the first clock hour before the range starts
        found = []
        for first in range(-offset, len(self.counts), 60):
            minutes = self.counts[max(first, 0) : first + 60]
            if minutes:
                found.append((self.start + first * MINUTE, max(minutes)))
        return found

    @property
    def peak_to_mean(self) -> float | None:
        """How many times the mean the busiest minute is (1.0 is perfectly flat); None without runs."""
        return round(self.peak / self.mean, 2) if self.total else None

    @property
    def peak_to_mean_without_phases(self) -> float | None:
        """The same ratio with every run counted at its occurrence: what the phases flatten."""
        total = sum(self.counts_without_phases)
        return round(max(self.counts_without_phases) * len(self.counts) / total, 2) if total else None


def _tessera_starts(
    timetable: TesseraTimetable, dag: FleetDag, *, start: datetime.datetime, until: datetime.datetime, cap: int
) -> tuple[list[int], bool]:
    # The lane lists the runs that start after `after` through `until`, as `upcoming` does: a run due
    # exactly at `start` counts, one due at `until` does not (the range is [start, until)).
    lane = timetable.plan.lane(
        after=start - datetime.timedelta(microseconds=1), until=until, start_date=dag.start_date, end_date=dag.end_date
    )
    if lane.through is not None:  # a cadence that does not repeat, stepped run by run and not to `until`
        return _upcoming_starts(timetable, dag, start=start, until=until, cap=cap)
    low, high, starts = to_us(start), to_us(until), []
    for segment in lane.segments:
        j = segment.before(low - lane.phase)  # the first occurrence whose run starts at or after `start`
        while j < segment.count:
            at = segment.at(j) + lane.phase
            if at >= high:
                break
            if len(starts) == cap:
                return starts, True
            starts.append(at)
            j += 1
    return starts, False


def _upcoming_starts(
    timetable: TesseraTimetable, dag: FleetDag, *, start: datetime.datetime, until: datetime.datetime, cap: int
) -> tuple[list[int], bool]:
    runs = timetable.plan.upcoming(
        after=start - datetime.timedelta(microseconds=1),
        count=cap + 1,
        until=until,
        start_date=dag.start_date,
        end_date=dag.end_date,
    )
    starts = [to_us(run.run_after) for run in runs if start <= run.run_after < until]
    return starts[:cap], len(starts) > cap


def _timetable_starts(
    timetable: Any, dag: FleetDag, *, start: datetime.datetime, until: datetime.datetime, cap: int
) -> tuple[list[int], bool]:
    from airflow.timetables.base import TimeRestriction

    from tessera.plugin._airflow import coerce_datetime

    # Airflow's timetables expect its own (pendulum) instants, as the scheduler passes them.
    earliest, latest = coerce_datetime(dag.start_date), coerce_datetime(dag.end_date)
    restriction = TimeRestriction(earliest=earliest, latest=latest, catchup=False)
    starts: list[datetime.datetime] = []
    info = None
    # One question per run plus the ones before `start`: bounded by the cap, whatever the timetable answers.
    for _ in range(cap + 2):
        checkpoint()  # a cron of one run a minute is 1,440 questions
        info = next_run_info(timetable, last_dagrun_info=info, restriction=restriction)
        if info is None or info.run_after >= until:
            return [to_us(at) for at in starts], False
        if starts and info.run_after <= starts[-1]:
            return [to_us(at) for at in starts], False  # a timetable that does not move on (continuous): counted once
        if info.run_after >= start:
            starts.append(info.run_after)
        if len(starts) > cap:
            return [to_us(at) for at in starts[:cap]], True
    return [to_us(at) for at in starts[:cap]], True


def dag_starts(dag: FleetDag, *, start: datetime.datetime, until: datetime.datetime, cap: int = RUN_CAP) -> DagStarts:
    """When ``dag``'s runs may start in ``[start, until)``, as its timetable answers (at most ``cap``)."""
    timetable = dag.timetable
    source = "tessera" if isinstance(timetable, TesseraTimetable) else "timetable"
    if dag.error is not None or timetable is None:
        return DagStarts(dag.dag_id, [], False, source, dag.error or "no timetable")
    try:
        if isinstance(timetable, TesseraTimetable):
            starts, capped = _tessera_starts(timetable, dag, start=start, until=until, cap=cap)
        else:
            starts, capped = _timetable_starts(timetable, dag, start=start, until=until, cap=cap)
    except Exception as error:  # one DAG's timetable must not hide the fleet's load
        return DagStarts(dag.dag_id, [], False, source, f"{type(error).__name__}: {error}")
    phase = timetable.plan.phase if isinstance(timetable, TesseraTimetable) else datetime.timedelta(0)
    phase_us = (phase.days * 86_400 + phase.seconds) * 1_000_000 + phase.microseconds  # exact, for pendulum's too
    return DagStarts(dag.dag_id, starts, capped, source, phase=phase_us)


def estimated_starts(dag: FleetDag, *, start: datetime.datetime, until: datetime.datetime, cap: int = RUN_CAP) -> int:
    """About how many runs of ``dag`` start in ``[start, until)`` (at most ``cap``), without stepping them all.

    A tessera timetable: the runs of its lane over the range, exactly, in a few segments. Any
    other: the range over the spacing of its next two runs, which underestimates a timetable whose
    runs come closer together later (``0 6,12-18 * * *`` asked at night); the count then stops at
    the cap as it goes.
    """
    timetable = dag.timetable
    if dag.error is not None or timetable is None:
        return 0
    try:
        if isinstance(timetable, TesseraTimetable):
            lane = timetable.plan.lane(after=start, until=until, start_date=dag.start_date, end_date=dag.end_date)
            return min(cap, sum(segment.count for segment in lane.segments))
        starts, more = _timetable_starts(timetable, dag, start=start, until=until, cap=2)
    except Exception:  # counted as the error it is when the load steps it: no runs
        return 0
    if not more:
        return len(starts)
    spacing = (starts[-1] - starts[0]) / (len(starts) - 1)
    if spacing <= 0:
        return cap
    return min(cap, math.ceil((to_us(until) - starts[0]) / spacing))


@dataclass(frozen=True)
class LoadWork:
    """A load whose cost was estimated and found within the cap: the DAGs, the range and the runs expected."""

    dags: list[FleetDag]
    start: datetime.datetime
    minutes: int
    cap: int = RUN_CAP
    most: int = MAX_FLEET_RUNS
    """The most runs of timetables other than tessera's, each a question to the timetable."""
    most_lane: int = MAX_LANE_RUNS
    """The most runs of tessera's timetables, counted from their lanes."""


def _too_much(minutes: int, dags: int, runs: int, most: int, *, counted: bool, lanes: bool) -> TooMuchWork:
    fits = minutes * most // max(runs, 1)
    how = f"ask for minutes={fits} or fewer, or count fewer DAGs" if fits >= 1 else "count fewer DAGs"
    kind = "of tessera's timetables" if lanes else "of other timetables (each asked for separately)"
    found = f"more than {most:,} run starts {kind} (counted so far)" if counted else f"about {runs:,} run starts {kind}"
    return TooMuchWork(
        f"`minutes`: {minutes} minutes of {dags:,} DAGs hold {found}; one load counts at most {most:,}: {how}"
    )


def load_work(
    dags: list[FleetDag],
    *,
    now: datetime.datetime,
    minutes: int = HORIZON_MINUTES,
    most: int = MAX_FLEET_RUNS,
    most_lane: int = MAX_LANE_RUNS,
) -> LoadWork:
    """The load of ``dags`` over ``minutes`` from the minute of ``now``, refused before any run is counted when
    its estimated run starts pass ``most`` (other timetables') or ``most_lane`` (tessera's)."""
    start = now.replace(second=0, microsecond=0)
    until = start + minutes * MINUTE
    asked = counted = 0
    for dag in dags:
        checkpoint()
        runs = estimated_starts(dag, start=start, until=until)
        if isinstance(dag.timetable, TesseraTimetable):
            counted += runs
        else:
            asked += runs
    if asked > most:
        raise _too_much(minutes, len(dags), asked, most, counted=False, lanes=False)
    if counted > most_lane:
        raise _too_much(minutes, len(dags), counted, most_lane, counted=False, lanes=True)
    return LoadWork(dags=dags, start=start, minutes=minutes, most=most, most_lane=most_lane)


def count_load(work: LoadWork) -> FleetLoad:
    """Run starts per minute over the work's range, and the spikes; stops at the work's cap of run starts."""
    start, minutes = work.start, work.minutes
    until, low = start + minutes * MINUTE, to_us(start)
    counts = [0] * minutes
    unphased = [0] * minutes
    who: dict[int, set[str]] = {}
    found = []
    asked = counted = 0
    for dag in work.dags:
        checkpoint()
        answer = dag_starts(dag, start=start, until=until, cap=work.cap)
        found.append(answer)
        for at in answer.starts:
            index = (at - low) // US_PER_MINUTE
            counts[index] += 1
            who.setdefault(index, set()).add(dag.dag_id)
            nominal = (at - answer.phase - low) // US_PER_MINUTE
            if 0 <= nominal < minutes:
                unphased[nominal] += 1
        if answer.source == "tessera":
            counted += len(answer.starts)
        else:
            asked += len(answer.starts)
        if asked > work.most:
            raise _too_much(minutes, len(work.dags), asked, work.most, counted=True, lanes=False)
        if counted > work.most_lane:
            raise _too_much(minutes, len(work.dags), counted, work.most_lane, counted=True, lanes=True)
    load = FleetLoad(start=start, counts=counts, dags=found, counts_without_phases=unphased)
    threshold = max(2, math.ceil(SPIKE_FACTOR * load.mean))
    busiest = sorted((i for i, n in enumerate(counts) if n >= threshold), key=lambda i: (-counts[i], i))
    load.spikes = [
        Spike(
            minute=start + index * MINUTE,
            runs=counts[index],
            dag_ids=sorted(who[index])[:MAX_SPIKE_DAGS],
            dag_count=len(who[index]),
        )
        for index in busiest[:MAX_SPIKES]
    ]
    return load


def fleet_load(dags: Iterable[FleetDag], *, now: datetime.datetime, minutes: int = HORIZON_MINUTES) -> FleetLoad:
    """Run starts per minute from the minute of ``now`` on, for ``minutes`` minutes, and the spikes.

    Refused (:class:`~tessera.plugin.errors.TooMuchWork`) when the fleet holds more run starts
    than one load counts; what ``GET /api/v1/load`` and ``tessera plan --load`` both answer.
    """
    return count_load(load_work(list(dags), now=now, minutes=minutes))
