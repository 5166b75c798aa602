"""``Cron``: cron expressions in a timezone, with the semantics Kubernetes CronJob users know."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from cron_descriptor import (
    CasingTypeEnum,
    ExpressionDescriptor,
    FormatException,
    MissingFieldException,
    WrongArgumentException,
)

from ._time.cron import CronCadence, CronInvalid, parse_cron
from ._time.cron_fields import plain_text
from ._time.durations import format_duration, parse_duration
from ._time.excluding import ExcludingCadence
from ._time.grid import EpochGrid
from ._time.wallclock import check_dst_policy, load_zone
from .base import TesseraTimetable
from .decoded import decoded_once
from .exclusion_plan import with_exclusions
from .exclusions import Exclusions, parse_exclusions
from .options import Options, check_options
from .union import Unites

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Cron", "CronInvalid"]


class Cron(Unites, TesseraTimetable):
    """Run whenever the wall clock in ``timezone`` matches a cron expression.

    :param expression: exactly what a Kubernetes CronJob's ``schedule`` accepts: five fields
        ``minute hour day-of-month month day-of-week`` (0 is Sunday, 7 is refused; names
        ``jan``-``dec`` and ``sun``-``sat`` in any case; ``*``, ``?``, ranges, steps and
        lists), or ``@yearly``, ``@annually``, ``@monthly``, ``@weekly``, ``@daily``,
        ``@midnight``, ``@hourly`` (lowercase), or ``@every <duration>`` (``"@every 5m"``,
        whole seconds up to 366 days). An expression that can never fire is refused.
    :param timezone: the IANA timezone whose wall clock the fields are read on.
    :param starting_deadline: skip an occurrence whose run has been due longer than this when
        the scheduler gets to it (reason ``MissedDeadline``) and resume at the next one,
        instead of running ticks the scheduler slept through. It applies to what the scheduler
        catches up on by itself; a DAG with ``catchup=True`` and ``airflow backfill create``
        run every occurrence in range.
    :param dst: ``"cronjob"`` (default) or ``"once"``; see below.
    :param exclude: local dates (in ``timezone``) on which nothing runs: dates, ``between(...)`` ranges and
        ``holidays_of(...)`` calendars (see :mod:`tessera.timetables.exclusions`). The run after an excluded
        day evaluates the time since the last run, excluded day included, so windows still tile.
    :param delay: shifts both window bounds back; the run is still due at the occurrence.
    :param window: evaluate this fixed lookback instead of the time since the previous occurrence.
    :param phase: when a run starts after its occurrence (``Spread(...)`` or ``Fixed(...)``).
        Default: none, runs start at the cron time, as a CronJob's do.
    :param catch_up: ``Latest()`` (default) or ``Backfill(limit=N)``.
    :param key: hash this instead of the DAG id to pick a ``Spread`` phase.
    :param partitioned: give each run Airflow's ``partition_key`` (its period's start on this
        schedule's wall clock) and ``partition_date``; see :mod:`tessera.timetables.partitions`.
    :param key_format: the keys' ``strftime`` pattern (default ``"%Y-%m-%dT%H:%M:%S"``, plus ``%z``
        when two periods can start at one wall-clock reading: a sub-daily schedule in a zone whose
        offset changes, or a time a fall-back repeats).
    :param overlap: what a run that comes due while ``max_active_runs`` runs are in flight does:
        ``"allow_all"`` (default: it waits and runs, none dropped), ``"buffer_one"``, ``"buffer_all"``,
        ``"skip"`` or ``"cancel_other"`` (see :mod:`tessera.timetables.run_policy`).
    :param pause_after_failures: pause the DAG after this many failed runs in a row (1 to 1000).
    :param dropped: what happens to the window of a fire that does not run (dropped by ``overlap``,
        the catch-up or a deadline): ``"cover"`` (default: the next run that starts evaluates it too)
        or ``"owe"`` (each run keeps its own window; the dropped ones are owed, to backfill; the
        default when ``partitioned``); see :mod:`tessera.timetables.coverage`.

    **Daylight saving time.** An occurrence is every instant at which the local wall clock
    reads a matching time, exactly as for a Kubernetes CronJob. On a fall-back day a time in
    the repeated hour happens twice, so it fires twice (``"30 1 * * *"`` in America/New_York
    fires at 01:30 EDT and 01:30 EST on 2026-11-01); on a spring-forward day a time in the
    skipped hour never happens, so it does not fire (``"30 2 * * *"`` on 2026-03-08). No
    special case hides this, because for hourly-or-finer schedules the repeated hour is a
    genuine extra hour of data (``"30 * * * *"`` fires 25 times on the fall-back day and 23 on
    the spring-forward day). Each run's window ends at its own occurrence, so the second
    01:30 run evaluates the hour between the two. Make side effects idempotent per window,
    use UTC, or pass ``dst="once"``: every wall-clock time then fires exactly once, a
    repeated one at its first instance and a skipped one at the first instant after the gap.
    A partitioned cron under ``"cronjob"`` differs on one point, so every matching day has a
    partition: a day whose every time a spring-forward skips runs once when the gap ends.

    ``@every`` counts whole multiples of the duration from 1970-01-01 00:00 UTC, whatever the
    timezone: unlike a CronJob, which counts from its last schedule time, every scheduler
    instance, restart and machine then computes the same instants.
    """

    def __init__(
        self,
        expression: str,
        *,
        timezone: str = "UTC",
        starting_deadline: str | datetime.timedelta | None = None,
        dst: str = "cronjob",
        exclude: object = None,
        **options: Unpack[Options],
    ) -> None:
        check_options("Cron", options)  # first: a misspelt keyword is named before any other check
        zone = load_zone("timezone", timezone)
        self._dst = check_dst_policy(dst)
        # Partitioned, a day whose every time a spring-forward skips still runs once: its partition exists.
        keyed = options.get("partitioned") is True and self._dst == "cronjob"
        cadence = parse_cron(expression, zone, "cronjob-partitioned" if keyed else self._dst)
        self._expression = " ".join(expression.split())
        self._timezone = zone.key
        self._starting_deadline_us = (
            None if starting_deadline is None else parse_duration("starting_deadline", starting_deadline)
        )
        self._every_us = cadence.interval if isinstance(cadence, EpochGrid) else None
        self._wall_clock = self._every_us is None  # @every is counted on absolute time
        self._exclude = parse_exclusions("exclude", exclude)
        self._configure(with_exclusions("exclude", cadence, self._exclude, zone.key), **options)

    # -- what the UI shows --------------------------------------------------------------------

    def _cadence_summary(self) -> str:
        if self._every_us is not None and self._exclude is None:
            # The same epoch grid as Every, so the same words (a declared INTERVAL_SECONDS 3600 reads
            # "every 1h", not "cron @every 3600s"); the timezone plays no part in it.
            return f"every {format_duration(self._every_us)}"
        text = f"cron {self._expression} {self._timezone}"  # the zone also reads an @every's exclusions
        return text if self._exclude is None else f"{text} except {self._exclude.describe()}"

    @property
    def summary(self) -> str:
        parts = [super().summary]
        if self._dst != "cronjob":
            parts.append(f"dst {self._dst}")
        if self._starting_deadline_us is not None:
            parts.append(f"deadline {format_duration(self._starting_deadline_us)}")
        return " · ".join(parts)

    def _when(self) -> str:
        """The schedule in words, with what it does on DST days."""
        if self._every_us is not None:
            return f"Every {format_duration(self._every_us)}, counted from 1970-01-01 00:00 UTC."
        cadence = self._plan.cadence
        cadence = cadence.inner if isinstance(cadence, ExcludingCadence) else cadence
        assert isinstance(cadence, CronCadence)
        try:
            # Worded from the parsed values: the describer does not read every form as a CronJob does.
            describe = ExpressionDescriptor(
                plain_text(cadence.fields), casing_type=CasingTypeEnum.Sentence, use_24hour_time_format=True
            )
            human = describe.get_description()
        except (FormatException, MissingFieldException, WrongArgumentException):
            human = f"At {self._expression}"  # the UI must still get a description
        if self._timezone == "UTC" or self._timezone.startswith("Etc/"):
            return f"{human}, {self._timezone} time."  # no daylight saving time to explain
        if self._dst == "once":
            return f"{human}, {self._timezone} time (each wall-clock time fires once, across DST changes too)."
        dst = "a time repeated by a DST fall-back fires twice, one skipped by a spring-forward never"
        if self.partitioned:
            dst += " (a day with no other time runs once when the clock jumps, so it has its partition)"
        return f"{human}, {self._timezone} time ({dst})."

    @property
    def description(self) -> str:  # type: ignore[override]
        deadline = self._starting_deadline_us
        skipped = "" if deadline is None else f" Runs due longer ago than {format_duration(deadline)} are skipped."
        return f"{self._when()} {super().description}{skipped}"

    # -- serialization ------------------------------------------------------------------------

    def _spec(self) -> dict[str, Any]:
        return {
            "expression": self._expression,
            "timezone": self._timezone,
            "dst": self._dst,
            "starting_deadline_us": self._starting_deadline_us,
            "exclude": None if self._exclude is None else self._exclude.to_list(),  # added: None before exclusions
        }

    @classmethod
    @decoded_once
    def deserialize(cls, data: dict[str, Any]) -> Cron:
        deadline_us = data.get("starting_deadline_us")
        timetable = cls(
            data["expression"],
            timezone=data.get("timezone", "UTC"),
            starting_deadline=None if deadline_us is None else datetime.timedelta(microseconds=deadline_us),
            dst=data.get("dst", "cronjob"),
            exclude=Exclusions.from_list("exclude", data.get("exclude")),
            **cls._common_kwargs(data),
        )
        return timetable._restore_binding(data)
