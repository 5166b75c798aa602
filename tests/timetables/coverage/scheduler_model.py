"""A brute-force model of the scheduler's ticks that drives the REAL timetable code.

Only time passing is modelled here: when the scheduler is up, when the DAG is paused, when a
run starts and ends, when a DAG file is parsed. Every decision is the timetable's own: which
run to create (``next_run_info_from_dag_model``, through the run policy and the catch-up) and
which run to store next (``next_dagrun_info_v2``, as Airflow's ``calculate_dagrun_date_fields``
asks it after each run and at each parse). The activity reader the plugin registers in the
scheduler is replaced by one that reads this model's run table the way
``operators/schedules/activity.py`` reads Airflow's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import time_machine
from airflow.models.dag import DagModel
from airflow.timetables.base import DagRunInfo, TimeRestriction

from tessera.timetables import run_policy
from tessera.timetables.base import TesseraTimetable
from tessera.timetables.instants import from_us, to_us
from tessera.timetables.run_policy import RunActivity, slot_freed

SECOND = 1_000_000
HEARTBEAT = SECOND
"""The scheduler loop: after creating a run it looks again a second later."""
MAX_EVENTS = 20_000


@dataclass
class Run:
    window: tuple[int, int]
    created: int
    began: int
    ended: int
    info: DagRunInfo


@dataclass
class World:
    """What happens to one DAG over ``[start, horizon)``, in microseconds since the epoch."""

    timetable: TesseraTimetable
    slots: int
    durations: Iterator[int]
    start: int
    horizon: int
    outages: list[tuple[int, int]] = field(default_factory=list)
    pauses: list[tuple[int, int]] = field(default_factory=list)
    parse_every: int | None = None
    """How often the dag-processor re-stores the next run from the last one (None: never)."""
    lag: int = 0
    """How long after a change the scheduler's loop notices it (a busy scheduler, a slow database)."""
    runs: list[Run] = field(default_factory=list)
    now: int = 0

    def _down(self, t: int) -> bool:
        return any(a <= t < b for a, b in self.outages)

    def _paused(self, t: int) -> bool:
        return any(a <= t < b for a, b in self.pauses)

    def _active(self, t: int) -> int:
        return sum(1 for run in self.runs if run.created <= t < run.ended)

    def activity(self, dag_model: DagModel) -> RunActivity:
        """What ``operators/schedules/activity.py`` would read from this run table at ``self.now``."""
        now = self.now
        ended_spans = [(a, b) for a, b in self.pauses if b <= now]
        if not self.runs:
            return RunActivity(None, paused=tuple((from_us(a), from_us(b)) for a, b in ended_spans))
        newest = max(self.runs, key=lambda run: run.window[1])
        created, due = newest.created, to_us(newest.info.run_after)
        ends = [run.ended for run in self.runs if run.ended <= created]
        in_flight = [
            run.ended if run.ended <= now else None
            for run in self.runs
            if run.created <= created and run.ended > created
        ]
        freed = slot_freed(created, in_flight, self.slots)
        since = min(due, created)
        return RunActivity(
            last_window_end=from_us(newest.window[1]),
            freed_before=from_us(max(ends)) if ends else None,
            freed_after=None if freed is None else from_us(freed),
            paused=tuple((from_us(max(a, since)), from_us(b)) for a, b in ended_spans if b > since),
        )

    def _store(self, model: DagModel, info: DagRunInfo | None) -> None:
        assert info is not None and info.data_interval is not None
        model.next_dagrun = info.data_interval.start
        model.next_dagrun_data_interval = (info.data_interval.start, info.data_interval.end)
        model.next_dagrun_create_after = info.run_after

    def _step(self, last: DagRunInfo | None) -> DagRunInfo | None:
        return self.timetable.next_dagrun_info_v2(
            last_dagrun_info=last, restriction=TimeRestriction(None, None, catchup=False)
        )

    def run(self) -> list[Run]:
        """Let time pass from ``start`` to ``horizon``; the runs the scheduler created, oldest first."""
        run_policy._readers[:] = [self.activity]
        model = DagModel(dag_id="modelled")
        with time_machine.travel(from_us(self.start), tick=False) as clock:
            self.now = self.start
            self._store(model, self._step(None))
            next_parse = None if self.parse_every is None else self.start + self.parse_every
            t = self.start
            for _ in range(MAX_EVENTS):
                if t >= self.horizon:
                    break
                self.now = t
                clock.move_to(from_us(t))
                if next_parse is not None and t >= next_parse and not self._down(t):
                    last = self.runs[-1].info if self.runs else None
                    self._store(model, self._step(last))  # a parse re-stores the next run from the last one
                    next_parse = t + self.parse_every
                due = to_us(model.next_dagrun_create_after) <= t
                if due and not (self._down(t) or self._paused(t)) and self._active(t) < self.slots:
                    self._create(model, t)
                t = self._next_event(model, next_parse)
            else:
                raise AssertionError("the model did not reach its horizon")
        return self.runs

    def _create(self, model: DagModel, t: int) -> None:
        info = self.timetable.next_run_info_from_dag_model(dag_model=model)
        assert info is not None and info.data_interval is not None
        began = max(t, to_us(info.run_after))
        if self.timetable.run_policy.overlap == "cancel_other":
            for other in self.runs:  # the listener fails the run in flight when its replacement starts
                if other.ended > began:
                    other.ended = began
        window = (to_us(info.data_interval.start), to_us(info.data_interval.end))
        run = Run(window, created=t, began=began, ended=began + next(self.durations), info=info)
        self.runs.append(run)
        self._store(model, self._step(info))

    def _next_event(self, model: DagModel, next_parse: int | None) -> int:
        """The next instant anything can change: a run due or ending, an outage or pause ending, a parse."""
        now = self.now
        candidates = [to_us(model.next_dagrun_create_after), *(end for _, end in [*self.outages, *self.pauses])]
        candidates += [run.ended for run in self.runs]
        if next_parse is not None:
            candidates.append(next_parse)
        later = [c + self.lag for c in candidates if c + self.lag > now]
        soonest = min(later, default=self.horizon)
        if self.runs and self.runs[-1].created == now:
            soonest = min(soonest, now + HEARTBEAT)  # one run per loop: look again at the next heartbeat
        return max(soonest, now + 1)
