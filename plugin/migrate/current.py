"""The "before" side: what a DAG's Airflow schedule is, and the runs Airflow's own timetable makes of it.

The runs come from the timetable's own ``next_dagrun_info``, asked as the scheduler asks it
with ``catchup=True`` (so it reads no clock) from the run just before the range: never from a
reimplementation of Airflow's rules. What kind of schedule it is comes from the timetable's
class and its ``serialize()`` (the public form Airflow stores), so no private attribute is read.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from .runs import Run, Stepped

UTC = datetime.timezone.utc

NOT_CLOCK = {
    "NullTimetable": "no schedule (schedule=None): runs only when triggered",
    "OnceTimetable": "@once: one run, at the start date",
    "ContinuousTimetable": "@continuous: a new run as soon as the last one ends",
    "AssetTriggeredTimetable": "assets: runs when its assets are updated",
    "PartitionedAssetTimetable": "partitioned assets: runs when its asset partitions are updated",
    "AssetOrTimeSchedule": "assets or a clock: runs when its assets are updated, too",
    "PartitionedAtRuntime": "partitions decided at run time",
}
"""Airflow's timetables that are not a clock schedule, in the words the report uses."""

CRON_KINDS = {
    "CronTriggerTimetable": "cron",
    "CronPartitionTimetable": "cron",
    "CronDataIntervalTimetable": "cron",
    "MultipleCronTriggerTimetable": "crons",
    "DeltaTriggerTimetable": "delta",
    "DeltaDataIntervalTimetable": "delta",
    "EventsTimetable": "events",
}
"""The clock schedules the report reads, by the shape of what they declare."""


@dataclass(frozen=True, slots=True)
class Current:
    """A DAG's schedule as Airflow declares it: its class and what it serializes to."""

    timetable_class: str
    kind: str
    """``cron``, ``crons``, ``delta``, ``events``, ``tessera``, ``not_clock`` or ``custom``."""
    expressions: tuple[str, ...] = ()
    timezone: str = "UTC"
    delta: datetime.timedelta | None = None
    """A ``timedelta`` schedule's step; None for a cron or a ``relativedelta`` (not a fixed length)."""
    interval: datetime.timedelta | None = None
    """A trigger timetable's declared data interval (0: runs without one)."""
    has_windows: bool = True
    """False for trigger timetables without an interval: their runs' data interval is one instant."""
    words: str = ""

    @property
    def is_clock(self) -> bool:
        return self.kind in ("cron", "crons", "delta", "events")


def _interval(encoded: Any) -> datetime.timedelta | None:
    """An encoded interval as a ``timedelta``; None for a ``relativedelta`` (a month is not a fixed length)."""
    if isinstance(encoded, (int, float)):
        return datetime.timedelta(seconds=encoded)
    return None


def read_current(timetable: Any) -> Current:
    """What ``timetable`` (an Airflow core timetable, as the scheduler holds it) declares."""
    from tessera.timetables import TesseraTimetable

    name = type(timetable).__name__
    if isinstance(timetable, TesseraTimetable):
        return Current(name, "tessera", words=f"already tessera: {timetable.summary}")
    if name in NOT_CLOCK:
        return Current(name, "not_clock", words=NOT_CLOCK[name])
    kind = CRON_KINDS.get(name)
    if kind is None:
        return Current(name, "custom", words=f"a custom timetable ({name}): no mapping is known for it")
    data = timetable.serialize()
    zone = data.get("timezone", "UTC")
    zone = zone if isinstance(zone, str) else "UTC"  # a fixed offset has no clock changes to compare across
    if kind == "events":
        return Current(name, kind, timezone=zone, words="a fixed list of instants (EventsTimetable)")
    if kind == "delta":
        delta = _interval(data.get("delta"))
        interval = _interval(data.get("interval", 0.0)) if "interval" in data else None
        trigger = name == "DeltaTriggerTimetable"
        step = str(delta) if delta is not None else "a calendar step (relativedelta)"
        return Current(
            name,
            kind,
            delta=delta,
            interval=interval,
            has_windows=not trigger or bool(interval),
            words=f"every {step} from the start date ({name})",
        )
    expressions = tuple(data["expressions"]) if kind == "crons" else (data["expression"],)
    trigger = name != "CronDataIntervalTimetable"
    interval = _interval(data.get("interval", 0.0)) if trigger else None
    shown = " | ".join(f"{e!r}" for e in expressions)
    return Current(
        name,
        kind,
        expressions=expressions,
        timezone=zone,
        interval=interval,
        has_windows=not trigger or bool(interval),
        words=f"cron {shown} in {zone} ({name}{'' if not trigger or interval else ', no data interval'})",
    )


def core_timetable(timetable: Any) -> Any:
    """The scheduler's form of a DAG file's timetable (the task SDK's classes are stored as Airflow core's)."""
    from airflow.serialization.encoders import encode_timetable

    from .._airflow import decode_timetable

    return decode_timetable(encode_timetable(timetable))


def _anchor(current: Current, start_date: datetime.datetime | None, after: datetime.datetime) -> Any:
    """The data interval of the run Airflow made just before ``after``, from which it steps on.

    A ``timedelta`` schedule counts from its start date, so that run ends on the start date's grid
    (found by division, not by stepping from a start date years back); a cron's ends at the
    cron's last time at or before ``after`` (the timetable's own ``infer_manual_data_interval``).
    """
    from airflow.timetables.base import DataInterval

    from .._airflow import coerce_datetime

    if current.kind == "delta":
        if current.delta is None or start_date is None or start_date > after:
            return None  # stepped from the start date itself (bounded by the run cap)
        start = _plain(start_date)  # pendulum's intervals do not divide by a timedelta
        end = start + current.delta * ((_plain(after) - start) // current.delta)
        return DataInterval(coerce_datetime(end - current.delta), coerce_datetime(end))
    return None


def airflow_runs(
    timetable: Any,
    current: Current,
    *,
    start_date: datetime.datetime | None,
    end_date: datetime.datetime | None,
    after: datetime.datetime,
    until: datetime.datetime,
    cap: int,
) -> Stepped:
    """The runs ``timetable`` makes due in ``(after, until]``, at most ``cap``, from its own ``next_dagrun_info``.

    Asked with ``catchup=True`` from the run just before ``after`` (so the answers never read the
    clock), bounded by the DAG's start and end dates as the scheduler bounds them.
    """
    from airflow.timetables.base import TimeRestriction

    from .._airflow import coerce_datetime

    earliest = coerce_datetime(start_date) if start_date is not None else None
    restriction = TimeRestriction(earliest=earliest, latest=coerce_datetime(end_date), catchup=True)
    last = _anchor(current, start_date, after)
    if last is None and current.kind != "delta":
        # The run due at or before `after`: a cron steps on from its end (each kind's own inference).
        last = timetable.infer_manual_data_interval(run_after=coerce_datetime(after))
    if last is None and earliest is None:
        # A timedelta without a start date counts from the first question; start it at `after`.
        restriction = TimeRestriction(earliest=coerce_datetime(after), latest=restriction.latest, catchup=True)
    runs: list[Run] = []
    # One question per run, and a few before `after` (a start date's grid, a cron's inference).
    for _ in range(cap + 3):
        try:
            info = timetable.next_dagrun_info(last_automated_data_interval=last, restriction=restriction)
        except Exception as error:  # Airflow's own timetables raise on some clock changes: say where, go on
            at = "the first run" if last is None else f"the run after {_plain(last.end).isoformat()}"
            return Stepped(tuple(runs), truncated=False, error=f"asked for {at}, it raised {error!r:.300}")
        if info is None or info.run_after > until:
            return Stepped(tuple(runs), truncated=False)
        if runs and info.run_after <= runs[-1].run_after:
            return Stepped(tuple(runs), truncated=False)  # a timetable that does not move on
        last = info.data_interval
        if info.run_after > after:
            start, end = _plain(last.start), _plain(last.end)
            runs.append(Run(_plain(info.run_after), _plain(info.run_after), start, end))
            if len(runs) >= cap:
                return Stepped(tuple(runs), truncated=True)
    return Stepped(tuple(runs), truncated=True)


def _plain(moment: datetime.datetime) -> datetime.datetime:
    """A pendulum instant as a plain UTC ``datetime`` (what the tessera side answers in)."""
    utc = moment.astimezone(UTC)
    return datetime.datetime(utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.microsecond, UTC)
