"""Occurrences of Airflow's own timetables around an instant, read through their own ``next_dagrun_info_v2``.

A built-in timetable has no "occurrence at or before T" question, only "the next run after
this one" (``last_dagrun_info``) and "the first run at or after this date"
(``restriction.earliest`` with ``catchup=True``, which never reads the clock). So:

* a clock (cron strings, ``CronTriggerTimetable``, ``CronDataIntervalTimetable``, events): the
  newest run due at or before T is found by bisecting on ``earliest``: the first run at or after
  ``x`` moves forward with ``x``, so a doubling search then a bisection to the second finds it in
  about 50 calls, whatever the cadence (searched back at most :data:`SEARCH_BACK`);
* a relative schedule (a ``timedelta``, ``DeltaTriggerTimetable``): occurrences count from the
  last run, so they are stepped from the newest run at or before T, at most :data:`MAX_STEPS`;
* asset-triggered, ``None`` and continuous schedules have no occurrences: the answer says so.
"""

from __future__ import annotations

import datetime
from typing import Any, NamedTuple

from airflow.timetables.base import DagRunInfo, DataInterval, TimeRestriction
from airflow.timetables.interval import DeltaDataIntervalTimetable
from airflow.timetables.simple import AssetTriggeredTimetable, ContinuousTimetable, NullTimetable, OnceTimetable
from airflow.timetables.trigger import DeltaTriggerTimetable

from tessera.timetables.support import next_run_info, run_info

from .._airflow import coerce_datetime

MAX_STEPS = 64
SEARCH_BACK = datetime.timedelta(days=800)
_FIRST_PROBE = datetime.timedelta(minutes=1)
_RESOLUTION = datetime.timedelta(seconds=1)
_TICK = datetime.timedelta(microseconds=1)

SlotTuple = tuple[datetime.datetime, datetime.datetime, datetime.datetime | None, datetime.datetime | None]


class BuiltinView(NamedTuple):
    kind: str
    summary: str
    timezone: str
    focus: SlotTuple | None = None
    due: bool = False
    previous: SlotTuple | None = None
    following: SlotTuple | None = None
    steps_cut: bool = False


def _slot(info: DagRunInfo) -> SlotTuple:
    interval = info.data_interval
    if interval is None:
        return (info.run_after, info.run_after, None, None)
    return (info.run_after, info.run_after, interval.start, interval.end)


def _zone(timetable: Any) -> str:
    try:
        zone = timetable.serialize().get("timezone")
    except Exception:  # a timetable whose serialize() fails still gets an answer
        return "UTC"
    return zone if isinstance(zone, str) and zone else "UTC"


class _Clock:
    """The first run at or after an instant, and the run after a run, of one timetable within the DAG's bounds."""

    def __init__(self, timetable: Any, start: datetime.datetime | None, end: datetime.datetime | None) -> None:
        self.timetable, self.start, self.end = timetable, start, end

    def first_from(self, moment: datetime.datetime) -> DagRunInfo | None:
        earliest = moment if self.start is None or moment > self.start else self.start
        return next_run_info(
            self.timetable,
            last_dagrun_info=None,
            restriction=TimeRestriction(earliest=earliest, latest=self.end, catchup=True),
        )

    def after(self, info: DagRunInfo) -> DagRunInfo | None:
        return next_run_info(
            self.timetable,
            last_dagrun_info=info,
            restriction=TimeRestriction(earliest=self.start, latest=self.end, catchup=True),
        )

    def newest_due(self, at: datetime.datetime) -> DagRunInfo | None:
        """The run with the newest ``run_after`` at or before ``at`` (None: none within SEARCH_BACK).

        Probes back by the schedule's own spacing (doubling until a run is due), then steps forward
        run by run; only a schedule with bursts (many runs, then a long pause) needs the bisection.
        """

        def due(moment: datetime.datetime) -> DagRunInfo | None:
            info = self.first_from(moment)
            return info if info is not None and info.run_after <= at else None

        ahead = self.first_from(at)
        beyond = None if ahead is None else self.after(ahead)
        back = _FIRST_PROBE
        if ahead is not None and beyond is not None:
            back = max(back, beyond.run_after - ahead.run_after)
        while (found := due(at - back)) is None:
            if back >= SEARCH_BACK:
                return None
            back = min(back * 2, SEARCH_BACK)
        for _ in range(MAX_STEPS):
            following = self.after(found)
            if following is None or following.run_after > at:
                return found
            found = following
        low, high = at - back, at  # due(low) holds; the answer is due(x) for the largest such x
        while high - low > _RESOLUTION:
            middle = low + (high - low) / 2
            if due(middle) is not None:
                low = middle
            else:
                high = middle
        return due(low)


def _relative(clock: _Clock, at: datetime.datetime, anchor: Any) -> tuple[Any, ...]:
    """Step a relative schedule from the newest run at or before ``at``: (previous, focus, following, cut)."""
    if anchor is not None and anchor.data_interval_end is not None:
        interval = DataInterval(anchor.data_interval_start, anchor.data_interval_end)
        focus: DagRunInfo | None = run_info(anchor.run_after, interval)
        following = clock.after(focus)  # type: ignore[arg-type]
    else:
        focus, following = None, clock.first_from(clock.start) if clock.start is not None else None
    previous, steps = None, 0
    while following is not None and following.run_after <= at and steps < MAX_STEPS:
        previous, focus, following, steps = focus, following, clock.after(following), steps + 1
    if focus is None:
        focus, following = following, None if following is None else clock.after(following)
    return previous, focus, following, steps >= MAX_STEPS


def builtin_view(
    timetable: Any,
    *,
    at: datetime.datetime,
    start: datetime.datetime | None,
    end: datetime.datetime | None,
    anchor: Any,
) -> BuiltinView:
    """Part 1 for a timetable that is not tessera's; ``anchor``: the newest automated run at or before ``at``."""
    summary = str(getattr(timetable, "summary", "") or type(timetable).__name__)
    # Airflow's timetables step pendulum instants; the caller may hand plain aware datetimes.
    at, start, end = coerce_datetime(at), coerce_datetime(start), coerce_datetime(end)
    zone = _zone(timetable)
    if isinstance(timetable, AssetTriggeredTimetable) and not timetable.periodic:
        return BuiltinView("assets", summary, zone)
    if isinstance(timetable, NullTimetable):
        return BuiltinView("none", summary, zone)
    if isinstance(timetable, ContinuousTimetable) or not (timetable.periodic or isinstance(timetable, OnceTimetable)):
        return BuiltinView("other", summary, zone)
    clock = _Clock(timetable, start, end)
    if isinstance(timetable, (DeltaDataIntervalTimetable, DeltaTriggerTimetable)):
        previous, focus, following, cut = _relative(clock, at, anchor)
        return BuiltinView(
            "relative",
            summary,
            zone,
            None if focus is None else _slot(focus),
            focus is not None and focus.run_after <= at,
            None if previous is None else _slot(previous),
            None if following is None else _slot(following),
            cut,
        )
    if isinstance(timetable, OnceTimetable):
        once = clock.first_from(start) if start is not None else None
        slot = None if once is None else _slot(once)
        return BuiltinView("clock", summary, zone, slot, once is not None and once.run_after <= at)
    focus = clock.newest_due(at)
    due = focus is not None
    if focus is None:
        focus = clock.first_from(at)
    following = None if focus is None else clock.after(focus)
    previous = None if focus is None else clock.newest_due(focus.run_after - _TICK)
    return BuiltinView(
        "clock",
        summary,
        zone,
        None if focus is None else _slot(focus),
        due,
        None if previous is None else _slot(previous),
        None if following is None else _slot(following),
    )
