"""One DAG compared: its Airflow schedule against each proposed tessera schedule, run by run, over a year.

Every run of the range is accounted for: a schedule with a period is stepped around each
boundary (the range's ends, every clock change of its zone, the DAG's start and end dates) and
for two periods of each stretch between them, the stretch's other whole periods counted as
copies of the second (the argument, and its check, are in :mod:`.periods`); any other schedule
is stepped through the whole range. Each side of a DAG steps at most :data:`RUN_BUDGET` runs,
a constant no caller can raise: a DAG that needs more gets the verdict :data:`NOT_CONFIRMED`,
never "identical".
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from tessera.timetables.clock_changes import offset_changes

from ..cancellation import checkpoint
from .current import Current, airflow_runs
from .periods import Span, margin, period_of, spans
from .proposals import MAX_SPREAD, VARIANTS, Call, candidates, dst_variant, spread
from .runs import Difference, Run, difference, repeats

RUN_BUDGET = 60_000
"""The most runs stepped on each side of one DAG's comparison (Airflow's, and each proposal's).

A year of a minutely cron in a zone with two clock changes steps about 30,000 (its periods are
counted, :mod:`.periods`); a DAG that needs more (a schedule with no period and more runs, a step
of seconds) is reported :data:`NOT_CONFIRMED`.
"""
IDENTICAL, WINDOWS, DIFFERENT = "identical", "same runs, different windows", "different runs"
NOT_CONFIRMED = "not confirmed: more runs than the comparison steps"
_PHASE_ROOM = MAX_SPREAD
"""How far past a span the tessera side is stepped, so a run whose phase starts it later is still seen."""


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
    """Its runs in the first span compared (the folder's start-time histogram counts them)."""


@dataclass(slots=True)
class DagComparison:
    dag_id: str
    current: Current
    reads_windows: bool | None
    """Whether the DAG's file mentions its data interval or logical date; None: unknown (no source read)."""
    variants: list[Variant] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    period: datetime.timedelta | None = None
    truncated: bool = False
    """A side ran out of :data:`RUN_BUDGET` before the range's end: the verdicts say not confirmed."""
    notes: list[str] = field(default_factory=list)
    before: tuple[Run, ...] = ()
    """Airflow's runs in the first span (the folder's start-time histogram counts them)."""

    @property
    def verdict(self) -> str:
        return self.variants[0].verdict if self.variants else ""

    @property
    def ranges(self) -> list[tuple[datetime.datetime, datetime.datetime]]:
        """The spans stepped run by run."""
        return [(span.low, span.high) for span in self.spans]

    @property
    def repeated(self) -> list[tuple[datetime.datetime, datetime.datetime]]:
        """The stretches counted as copies of the period before them (:mod:`.periods`)."""
        period = self.period or datetime.timedelta(0)
        return [(span.high, span.high + span.copies * period) for span in self.spans if span.copies]


def verdict(found: Difference, reads_windows: bool | None) -> str:
    """``identical`` unless runs differ, or windows differ and the DAG reads them (or may: unknown)."""
    if not found.same_runs:
        return DIFFERENT
    if found.window and reads_windows is not False:
        return WINDOWS
    return IDENTICAL


@dataclass(slots=True)
class _Airflow:
    """The "before" side: Airflow's runs of a span, each span stepped once, within :data:`RUN_BUDGET` in all."""

    timetable: Any
    current: Current
    dates: dict[str, datetime.datetime | None]
    left: int = RUN_BUDGET
    spent: bool = False
    """The budget ran out: no span is stepped any more."""
    stopped: datetime.datetime | None = None
    """Where the timetable raised: the scheduler creates none of this DAG's runs after it."""
    errors: list[str] = field(default_factory=list)
    stepped: dict[tuple[datetime.datetime, datetime.datetime], tuple[Run, ...]] = field(default_factory=dict)

    def runs(self, low: datetime.datetime, high: datetime.datetime) -> tuple[Run, ...] | None:
        """Runs with occurrence in ``(low, high]``; None when the budget runs out first."""
        if (low, high) in self.stepped:
            return self.stepped[low, high]
        if self.stopped is not None and low >= self.stopped:
            return ()
        if self.spent:
            return None
        found = airflow_runs(self.timetable, self.current, after=low, until=high, cap=self.left, **self.dates)
        self.left -= len(found.runs)
        if found.truncated:
            self.spent = True
            return None
        if found.error:
            self.errors.append(found.error)
            at = found.runs[-1].occurrence if found.runs else low
            self.stopped = at if self.stopped is None else min(self.stopped, at)
        self.stepped[low, high] = found.runs
        return found.runs


def _tessera_runs(
    timetable: Any,
    *,
    low: datetime.datetime,
    high: datetime.datetime,
    left: int,
    start_date: datetime.datetime | None,
    end_date: datetime.datetime | None,
) -> tuple[tuple[Run, ...], int]:
    """The runs of ``timetable`` whose occurrence is in ``(low, high]``, from its public plan, and the steps taken.

    More than ``left`` steps needed: the runs are cut short (the caller reads the steps as truncation).
    """
    plan = timetable.plan
    found = plan.upcoming(after=low, count=left + 1, until=high + _PHASE_ROOM, start_date=start_date, end_date=end_date)
    runs = [
        Run(_utc(r.occurrence), _utc(r.run_after), _utc(r.window_start), _utc(r.window_end))
        for r in found
        if low < r.occurrence <= high
    ]
    return tuple(runs), len(found)


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


def _boundaries(
    current: Current,
    since: datetime.datetime,
    until: datetime.datetime,
    dates: dict[str, datetime.datetime | None],
) -> list[datetime.datetime]:
    """Where a schedule stops repeating: its zone's clock changes, the DAG's start and end dates."""
    found = [moment for moment in dates.values() if moment is not None]
    if current.kind in ("cron", "crons"):
        found += [change.at for change in offset_changes(current.timezone, since, until)]
    return found


def _walk(
    found: DagComparison, before: _Airflow, built: Any, dates: dict[str, datetime.datetime | None]
) -> tuple[Difference, tuple[Run, ...]] | None:
    """The difference over every span (copies counted), and the first span's runs; None: a budget ran out."""
    total, first, left = Difference(), None, RUN_BUDGET
    previous: tuple[tuple[Run, ...], tuple[Run, ...]] | None = None

    def compared(low: datetime.datetime, high: datetime.datetime) -> tuple[tuple[Run, ...], tuple[Run, ...]] | None:
        nonlocal left
        checkpoint()  # a caller who left stops the work within one span of one DAG
        theirs = before.runs(low, high)
        if theirs is None:
            return None  # Airflow's side ran out: stepping tessera's would not make it confirmed
        mine, steps = _tessera_runs(built, low=low, high=high, left=left, **dates)
        left -= steps
        return None if left < 0 else (theirs, mine)

    for span in found.spans:
        pair = compared(span.low, span.high)
        if pair is None:
            return None
        first = pair[1] if first is None else first
        step = difference(*pair)
        total.add(step)
        if span.copies and found.period is not None:
            end = span.high + span.copies * found.period
            if previous is not None and all(repeats(old, new, found.period) for old, new in zip(previous, pair)):
                total.add_copies(step, found.period, span.copies)
            else:  # the assumption of :mod:`.periods` failed here: step the stretch instead of counting it
                note = (
                    f"the runs of {span.low.isoformat()}..{span.high.isoformat()} are not the period before them "
                    "shifted; the stretch after them is stepped run by run"
                )
                found.notes += [] if note in found.notes else [note]
                rest = compared(span.high, end)
                if rest is None:
                    return None
                total.add(difference(*rest))
        previous = pair
    return total, first or ()


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
    found.period = period_of(current)
    around = margin(found.period, current.interval) if found.period is not None else datetime.timedelta(0)
    boundaries = _boundaries(current, since, until, dates)
    planned = spans(since, until, period=found.period, boundaries=boundaries, around=around)
    found.spans = planned
    # A timedelta with no start date counts from the first question: from `since`, for every span alike.
    grid = since if current.kind == "delta" and start_date is None else start_date
    before = _Airflow(timetable, current, {"start_date": grid, "end_date": end_date})
    first = before.runs(planned[0].low, planned[0].high)
    found.before = first or ()
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
        walked = _walk(found, before, built, dates)
        if walked is None:
            found.truncated = True
            variant.verdict = NOT_CONFIRMED
        else:
            variant.difference, variant.runs = walked
            variant.verdict = verdict(variant.difference, reads_windows)
        done[call.source()] = variant
        return variant

    tried = [compared("exact", call) for call in candidates(current, start_date)]
    _note_errors(found, before)
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
        "spread": spread(exact.call, _spacing(found.before)),
        "wall-clock": dst_variant(current, "once"),
        "cronjob": dst_variant(current, "cronjob"),
    }
    found.variants += [compared(name, others[name]) for name in VARIANTS[1:]]
    _note_errors(found, before)
    return found


def _note_errors(found: DagComparison, before: _Airflow) -> None:
    """Say where Airflow's own timetable raised (once each), and that the budget ran out, if it did."""
    for error in dict.fromkeys(before.errors):
        note = (
            f"Airflow's own timetable stops: {error}; the scheduler stops creating this DAG's runs there "
            "(its later runs are counted as runs tessera adds)"
        )
        if note not in found.notes:
            found.notes.append(note)
    if found.truncated and not any(n.startswith("not confirmed") for n in found.notes):
        found.notes.append(
            f"not confirmed: comparing the range whole needs more than {RUN_BUDGET:,} runs on a side "
            "(a schedule with no daily or weekly period, or a step of seconds); compare a shorter range"
        )
