"""``Every``: epoch-aligned interval schedules whose windows tile time."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from ._time.durations import format_duration, parse_duration
from ._time.grid import EpochGrid, check_interval
from .base import TesseraTimetable
from .calendar import Calendar
from .decoded import decoded_once
from .options import Options, check_options
from .policies import Spread
from .union import Unites

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Every(Unites, TesseraTimetable):
    """Run at every multiple of ``interval`` since the Unix epoch (UTC).

    Every duration (interval, delay, window, phase) is at most 366 days.

    :param interval: a divisor of a day (``"30s"``, ``"5m"``, ``"45m"``, ``"6h"``) or a
        whole number of days (``"2d"``, at most ``"366d"``), as a string or ``timedelta``;
        whole seconds, 1s or more. Units are lowercase: ``"5m"`` is five minutes.
    :param delay: shifts both window bounds back; the run is still due at the occurrence.
    :param window: evaluate this fixed lookback instead of the time since the previous
        occurrence (windows then overlap); occurrence times do not change.

    :param phase: when a run starts after its occurrence: ``Spread(max=...)`` (a stable hash
        of the DAG id) or ``Fixed(...)``. Default: spread below the interval or 15 minutes,
        whichever is shorter. Never moves the window.
    :param catch_up: ``Latest()`` (default) or ``Backfill(limit=N)``.
    :param key: hash this instead of the DAG id to pick the phase.
    :param partitioned: give each run Airflow's ``partition_key`` and ``partition_date``, naming its
        period (see :mod:`tessera.timetables.partitions`): backfill and clear by key, align asset
        consumers on ``PartitionedAssetTimetable``.
    :param key_format: the keys' ``strftime`` pattern (default ``"%Y-%m-%dT%H:%M:%S"``).
    :param overlap: what a run that comes due while ``max_active_runs`` runs are in flight does:
        ``"allow_all"`` (default: it waits and runs, none dropped), ``"buffer_one"``, ``"buffer_all"``,
        ``"skip"`` or ``"cancel_other"`` (see :mod:`tessera.timetables.run_policy`).
    :param pause_after_failures: pause the DAG after this many failed runs in a row (1 to 1000).
    :param dropped: what happens to the window of a fire that does not run (dropped by ``overlap``,
        the catch-up or a deadline): ``"cover"`` (default: the next run that starts evaluates it too)
        or ``"owe"`` (each run keeps its own window; the dropped ones are owed, to backfill; the
        default when ``partitioned``); see :mod:`tessera.timetables.coverage`.

    The 12:05 occurrence of ``Every("5m", delay="30s", phase=Fixed("2m10s"))`` runs at
    12:07:10 and evaluates 11:59:30 -> 12:04:30; the 12:10 one evaluates 12:04:30 -> 12:09:30.
    """

    # Interval cadences spread by default: many DAGs on one interval must not start together.
    default_phase = Spread()

    def __init__(self, interval: str | datetime.timedelta, **options: Unpack[Options]) -> None:
        check_options("Every", options)  # first: a misspelt keyword is named before any other check
        interval_us = parse_duration("every", interval)
        check_interval("every", interval, interval_us)
        self._interval_us = interval_us
        self._configure(EpochGrid(interval_us), **options)

    # Calendar cadences read as sentences: Every.day(at="07:00", timezone="Europe/Amsterdam"). The
    # same methods as Calendar's, so their signatures and docstrings show here too.
    hour = Calendar.hour
    day = Calendar.day
    week = Calendar.week
    month = Calendar.month
    business_day = Calendar.business_day

    @property
    def period(self) -> datetime.timedelta:
        """One interval: the longest a failure backoff waits between retries."""
        return datetime.timedelta(microseconds=self._interval_us)

    def _cadence_summary(self) -> str:
        return f"every {format_duration(self._interval_us)}"

    @property
    def summary(self) -> str:
        # The default phase is part of the schedule too: show it once the DAG id is known.
        text = super().summary
        if self._phase_policy is None and not self._plan.phase and self._key is None:
            text += " · phase spread"
        return text

    def _spec(self) -> dict[str, Any]:
        return {"interval_us": self._interval_us}

    @classmethod
    @decoded_once
    def deserialize(cls, data: dict[str, Any]) -> Every:
        timetable = cls(datetime.timedelta(microseconds=data["interval_us"]), **cls._common_kwargs(data))
        return timetable._restore_binding(data)
