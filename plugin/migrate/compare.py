"""One DAG compared: its Airflow schedule against each proposed tessera schedule, run by run, over a year.

The year is compared whole when its runs fit :data:`RUN_CAP`; a denser schedule is compared
over its first ``RUN_CAP`` runs and over the two days around every clock change of its zone in
the range (where schedules differ), each of those stepped from its own start: every loop is
bounded by the cap, whatever the DAG file declares.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from tessera.timetables.clock_changes import offset_changes

from ..cancellation import checkpoint
from .current import Current, airflow_runs
from .proposals import VARIANTS, Call, candidates, dst_variant, spread
from .runs import Difference, Run, Stepped, difference

RUN_CAP = 1_000
"""The most runs stepped on either side per range compared (a 2-minute cron's year is 262,800)."""
AROUND_CHANGE = datetime.timedelta(days=1)
"""How far each side of a clock change a dense schedule is compared."""
MAX_RANGES = 8
"""The most ranges compared per DAG: the start and the clock changes (zones change at most a few times a year)."""
IDENTICAL, WINDOWS, DIFFERENT = "identical", "same runs, different windows", "different runs"
_PHASE_ROOM = datetime.timedelta(days=1)
"""How far past a range the tessera side is stepped, so a run whose phase starts it later is still seen."""


@dataclass(slots=True)
class Variant:
    """One proposed schedule and how its runs differ from the current ones."""

    name: str
    call: Call | None
    note: str = ""
    """Why it is not offered, or the error its construction raised (then ``call`` is None)."""
    difference: Difference = field(default_factory=Difference)
    verdict: str = ""
    runs: tuple[Run, ...] = ()
    """Its runs in the first range compared (the folder's start-time histogram counts them)."""


@dataclass(slots=True)
class DagComparison:
    dag_id: str
    current: Current
    reads_windows: bool | None
    """Whether the DAG's file mentions its data interval or logical date; None: unknown (no source read)."""
    variants: list[Variant] = field(default_factory=list)
    ranges: list[tuple[datetime.datetime, datetime.datetime]] = field(default_factory=list)
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    before: tuple[Run, ...] = ()
    """Airflow's runs in the first range (the folder's start-time histogram counts them)."""

    @property
    def verdict(self) -> str:
        return self.variants[0].verdict if self.variants else ""


def verdict(found: Difference, reads_windows: bool | None) -> str:
    """``identical`` unless runs differ, or windows differ and the DAG reads them (or may: unknown)."""
    if not found.same_runs:
        return DIFFERENT
    if found.window and reads_windows is not False:
        return WINDOWS
    return IDENTICAL


def _ranges(
    current: Current, first: Stepped, since: datetime.datetime, until: datetime.datetime
) -> list[tuple[datetime.datetime, datetime.datetime]]:
    """The whole range, or (capped) the stretch the first ``RUN_CAP`` runs cover and each clock change's days."""
    if not first.truncated:
        return [(since, until)]
    reached = first.runs[-1].occurrence
    ranges = [(since, reached)]
    for change in offset_changes(current.timezone, reached, until)[: MAX_RANGES - 1]:
        low, high = max(change.at - AROUND_CHANGE, reached), min(change.at + AROUND_CHANGE, until)
        if low < high:
            ranges.append((low, high))
    return ranges


def _tessera_runs(
    timetable: Any,
    *,
    low: datetime.datetime,
    high: datetime.datetime,
    start_date: datetime.datetime | None,
    end_date: datetime.datetime | None,
) -> tuple[Run, ...]:
    """The runs of ``timetable`` whose occurrence is in ``(low, high]``, from its public plan (at most ``RUN_CAP``)."""
    plan = timetable.plan
    found = plan.upcoming(
        after=low, count=RUN_CAP + 1, until=high + _PHASE_ROOM, start_date=start_date, end_date=end_date
    )
    runs = [
        Run(_utc(r.occurrence), _utc(r.run_after), _utc(r.window_start), _utc(r.window_end))
        for r in found
        if low < r.occurrence <= high
    ]
    return tuple(runs[:RUN_CAP])


def _utc(moment: datetime.datetime) -> datetime.datetime:
    utc = moment.astimezone(datetime.timezone.utc)
    return datetime.datetime(
        utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.microsecond, datetime.timezone.utc
    )


def _runs_differing(found: Difference) -> int:
    return found.appear + found.disappear + found.move


def _spacing(runs: tuple[Run, ...]) -> datetime.timedelta | None:
    gaps = [b.occurrence - a.occurrence for a, b in zip(runs, runs[1:])]
    return min(gaps) if gaps else None


def compare_dag(
    dag_id: str,
    timetable: Any,
    current: Current,
    *,
    start_date: datetime.datetime | None,
    end_date: datetime.datetime | None,
    catchup: bool,
    reads_windows: bool | None,
    since: datetime.datetime,
    until: datetime.datetime,
) -> DagComparison:
    """``timetable`` (Airflow core's, as stored) against each proposed tessera schedule over ``(since, until]``."""
    found = DagComparison(dag_id, current, reads_windows)
    if not current.is_clock:
        return found
    dates = {"start_date": start_date, "end_date": end_date}
    first = airflow_runs(timetable, current, after=since, until=until, cap=RUN_CAP, **dates)
    found.before, found.truncated = first.runs, first.truncated
    found.ranges = _ranges(current, first, since, until)
    stepped = [first] + [
        airflow_runs(timetable, current, after=low, until=high, cap=RUN_CAP, **dates) for low, high in found.ranges[1:]
    ]
    befores = [each.runs for each in stepped]
    for error in dict.fromkeys(each.error for each in stepped if each.error):
        found.notes.append(
            f"Airflow's own timetable stops: {error}; the scheduler stops creating this DAG's runs there "
            "(its later runs are counted as runs tessera adds)"
        )
    if not current.has_windows and reads_windows is not False:
        found.notes.append(
            "Airflow 3 reads this schedule as a trigger timetable: its runs have no data interval "
            "(data_interval_start == data_interval_end == the run's time, and logical_date is that time) "
            + (
                "unless [scheduler] create_cron_data_intervals = True"
                if current.kind != "delta"
                else "unless [scheduler] create_delta_data_intervals = True"
            )
            + "; tessera gives each run the window since the previous occurrence, so templates reading "
            "data_interval_* or ds see that window"
        )

    done: dict[str, Variant] = {}  # by source: the wall-clock and CronJob variants are candidates already stepped

    def compared(name: str, call: Call | str | None) -> Variant:
        if not isinstance(call, Call):
            return Variant(name, None, call or "not offered")
        if (known := done.get(call.source())) is not None:
            return Variant(name, call, known.note, known.difference, known.verdict, known.runs)
        try:
            built = call.build().bind(dag_id=dag_id, catchup=catchup, end_date=end_date)
        except (ValueError, TypeError) as refused:
            return Variant(name, None, f"{call.source()} is refused: {refused}")
        variant = Variant(name, call)
        for (low, high), before in zip(found.ranges, befores):
            checkpoint()  # a caller who left stops the work within one range of one DAG
            after = _tessera_runs(built, low=low, high=high, **dates)
            variant.difference.add(difference(before, after))
            variant.runs = variant.runs or after
        variant.verdict = verdict(variant.difference, reads_windows)
        done[call.source()] = variant
        return variant

    tried = [compared("exact", call) for call in candidates(current, start_date)]
    if not tried:
        found.variants = [Variant("exact", None, f"no tessera schedule keeps these runs: {current.words}")]
        return found
    offered = [v for v in tried if v.call is not None] or tried
    # The closest: identical first, then the fewest runs that differ, then the fewest windows.
    exact = min(offered, key=lambda v: (v.verdict != IDENTICAL, _runs_differing(v.difference), v.difference.window))
    found.variants = [exact]
    if exact.call is None:
        return found
    others = {
        "spread": spread(exact.call, _spacing(first.runs)),
        "wall-clock": dst_variant(current, "once"),
        "cronjob": dst_variant(current, "cronjob"),
    }
    found.variants += [compared(name, others[name]) for name in VARIANTS[1:]]
    return found
