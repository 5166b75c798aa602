"""A declared schedule: one named driver plus the operational policy of the pipelines that share it."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, Literal

from tessera.timetables.coverage import COVER, DROPPED
from tessera.timetables.rules import excerpt, not_unicode
from tessera.timetables.run_policy import OVERLAPS
from tessera.timetables.support import SCHEDULE_STATE, require

from . import checks as check
from .checks import ScheduleError

Driver = Literal["cron", "interval", "after"]
_DRIVERS = ("cron", "interval_seconds", "after")


@dataclass(frozen=True)
class Schedule:
    """A named schedule: WHEN its pipelines run and HOW (retries, timeout, concurrency, alerts).

    Pipelines (DAGs) reference it by name through a :class:`~tessera.operators.schedules.schedule_set.ScheduleSet`,
    so one declaration carries the policy of every DAG that shares it.

    Exactly one driver:

    - ``cron`` (five fields) evaluated in ``timezone`` (default UTC); or a list of 2 to 16 such
      expressions, whose union drives the schedule: a fire at every instant any of them gives, once
      when two give the same instant (``cron=["0 9 * * 1-5", "0 17 * * 5"]``);
    - ``interval_seconds``: every *n* seconds on a grid anchored at the Unix epoch, 1 <= *n* <= 31,622,400
      (366 days), unaffected by daylight saving (a ``timezone`` is ignored, as there is no wall-clock field);
    - ``after``: behind other schedules. It fires once every parent has completed a fire it has not
      reacted to yet; completed means every run of that fire reached a terminal state, failed or not.

    Declaring no driver or two is refused here, when the DAG file is parsed. Leaving such a
    schedule silently unarmed would let a typo stop a pipeline with nothing failing to show it;
    refusing puts the mistake in the import errors of the very file that made it. So is a number
    out of its range (:data:`~tessera.operators.schedules.checks.BOUNDS`; ``inf`` and ``nan`` never
    are in range): whatever Airflow later makes of a value, it cannot overflow there.

    :param name: how DAGs and ``after`` lists refer to this schedule.
    :param align_window: (``after`` only) release once per *window* instead of per fire set: the
        schedule fires for an instant when every parent has completed (failed or not) its fire
        ending at that instant, e.g. once an hour behind an hourly and a 30-minute parent
        (see :mod:`tessera.operators.fan_in.aligned`).
    :param parent_freshness: hours, 0 to 8784 (``after`` only; 0 or ``None`` = off). A fire whose
        parents have not all completed a fire within this window still runs; the stale parents are
        named on the run's note, in the scheduler log and in the ``tessera.schedule.stale_parent`` metric.
    :param retries: retries of a failed run of a pipeline, 0 to 100: the whole run (every task that
        did not succeed) is run again, each time a new attempt.
    :param retry_delay: seconds between a failed attempt and the next, 0 to 31,622,400 (366 days).
    :param timeout: seconds one attempt of a pipeline's run may take, all its tasks together
        (Airflow's ``dagrun_timeout``, timed from each attempt's start), 1 to 31,622,400; past it
        the attempt fails, its unfinished tasks are stopped, and it is retried like any failure:
        ``retries=3, timeout=3600`` can take up to four hours in all.
    :param max_concurrent: runs of any ONE pipeline in flight at once (DAG ``max_active_runs``);
        0 = unlimited. The default 1 stops a pipeline overlapping itself.
    :param max_wave_concurrent: how many DIFFERENT pipelines of one fire run at once; 0 = unbounded.
        Waves are gated: wave N+1 starts once every pipeline of wave N is terminal.
    :param priority: higher runs first when fires compete for slots (task ``priority_weight``).
    :param catchup: when the schedule is switched back on (unpaused), run the fires that came due
        while it was off, oldest first, one at a time (``True``), or none of them (``False``, the
        default). Neither needs a DAG ``start_date``; a schedule declared inactive was off since
        its DAG was first parsed.
    :param overlap: what a fire that finds ``max_concurrent`` runs of a pipeline in flight does:
        ``"buffer_one"`` (the default: it is queued and runs as soon as a slot frees; fires that
        come while one is queued are dropped and recorded), ``"skip"`` (dropped and recorded),
        ``"buffer_all"`` (every one queued, run one after another), ``"cancel_other"`` (the run in
        flight is failed, with a note naming the run that replaced it, and the new one starts;
        needs ``max_concurrent=1``) or ``"allow_all"`` (every fire starts at once; needs
        ``max_concurrent=0``). Clock drivers only.
    :param dropped: what happens to the window of a fire that does not run (dropped by ``overlap``,
        or due while paused with ``catchup`` off): ``"cover"`` (the default: the next run that starts
        evaluates it too) or ``"owe"`` (each run keeps its own window; the dropped ones are owed, to
        backfill); see :mod:`tessera.timetables.coverage`.
    :param pause_after_failures: pause each pipeline after this many of its runs failed in a row
        (after their RETRIES), 1 to 1000; ``None`` (the default) never pauses.
    :param target_nodes: ``"ALL"`` (any worker) or node ids (an executor queue only they serve).
    :param notify: email addresses told about failed runs (and successful ones with
        ``notify_on_success``).
    :param webhook: URLs that receive the same notice as a JSON POST.
    :param active: ``False`` creates the pipelines paused.
    """

    name: str
    _: KW_ONLY
    cron: str | tuple[str, ...] | None = None
    timezone: str | None = None
    interval_seconds: int | None = None
    after: tuple[str, ...] | None = None
    align_window: bool = False
    parent_freshness: float | int | None = None
    description: str | None = None
    retries: int | None = None
    retry_delay: int | float | None = None
    timeout: int | float | None = None
    max_concurrent: int = 1
    max_wave_concurrent: int = 0
    priority: int | None = None
    catchup: bool = False
    overlap: str = "buffer_one"
    dropped: str = COVER
    pause_after_failures: int | None = None
    target_nodes: str | tuple[str, ...] | None = None
    notify: tuple[str, ...] = ()
    webhook: tuple[str, ...] = ()
    notify_on_success: bool = False
    active: bool = True

    def __post_init__(self) -> None:
        def put(key: str, value: Any) -> None:
            object.__setattr__(self, key, value)

        check.name("name", self.name)
        self._check_driver()
        if self.timezone is not None:
            put("timezone", check.timezone(self.timezone))
        if self.cron is not None:
            put("cron", check.crons(self.cron, self.timezone))
        numbers = ("interval_seconds", "parent_freshness", "retries", "retry_delay", "timeout", "priority")
        for field in (*numbers, "pause_after_failures"):
            if getattr(self, field) is not None:
                put(field, check.number(field, getattr(self, field)))
        for field in ("max_concurrent", "max_wave_concurrent"):
            put(field, check.number(field, getattr(self, field)))
        if self.after is not None:
            require(SCHEDULE_STATE, "after", self.after)
            put("after", check.after(self.after))
            if self.name in self.after:
                raise ScheduleError("after", f"after: {list(self.after)!r} names the schedule itself; remove it")
        put("align_window", check.flag("align_window", self.align_window))
        if self.align_window and self.after is None:
            raise ScheduleError(
                "align_window",
                "align_window: True needs an AFTER driver (it aligns the parents' windows); "
                "remove it or drive the schedule with after=[...]",
            )
        if self.parent_freshness is not None and self.after is None:
            raise ScheduleError(
                "parent_freshness",
                f"parent_freshness: {self.parent_freshness!r} needs an AFTER driver (it checks the "
                f"parents' fires); remove it or drive the schedule with after=[...]",
            )
        if self.description is not None and not isinstance(self.description, str):
            raise ScheduleError("description", f"description: {excerpt(self.description)} must be a string")
        if self.description is not None and (problem := not_unicode("description", self.description)):
            raise ScheduleError("description", problem)
        put("catchup", check.flag("catchup", self.catchup))
        self._check_overlap()
        self._check_dropped()
        put("target_nodes", check.target_nodes(self.target_nodes))
        put("notify", check.emails(self.notify))
        put("webhook", check.urls(self.webhook))
        put("notify_on_success", check.flag("notify_on_success", self.notify_on_success))
        put("active", check.flag("active", self.active))

    def _check_driver(self) -> None:
        given = [key for key in _DRIVERS if getattr(self, key) is not None]
        if len(given) == 1:
            return
        if not given:
            raise ScheduleError(
                "driver",
                f"schedule {self.name!r}: no driver given; declare exactly one of cron='0 6 * * *', "
                f"interval_seconds=3600 or after=['parent']",
            )
        raise ScheduleError(
            "driver",
            f"schedule {self.name!r}: {' and '.join(given)} are {'both' if len(given) == 2 else 'all'} "
            f"given; a schedule has exactly one driver (cron, interval_seconds or after), so keep one "
            f"and move the other to its own schedule",
        )

    def _check_dropped(self) -> None:
        if not isinstance(self.dropped, str) or self.dropped not in DROPPED:
            raise ScheduleError(
                "dropped",
                f"dropped: {excerpt(self.dropped)} is not a policy; use cover (the next run evaluates the windows "
                f"of the fires that did not run) or owe (each run keeps its own window; the others are owed, to "
                f"backfill)",
            )
        if self.dropped != COVER and self.after is not None:
            raise ScheduleError(
                "dropped",
                f"dropped: {self.dropped!r} applies to a clock driver (cron or interval_seconds); an AFTER "
                f"schedule's fire has no window of its own; remove it",
            )

    def _check_overlap(self) -> None:
        if not isinstance(self.overlap, str) or self.overlap not in OVERLAPS:
            raise ScheduleError(
                "overlap", f"overlap: {excerpt(self.overlap)} is not a policy; use one of {', '.join(OVERLAPS)}"
            )
        if self.overlap == "cancel_other" and self.max_concurrent != 1:
            raise ScheduleError(
                "overlap",
                f"overlap: 'cancel_other' replaces the one run in flight, but max_concurrent is "
                f"{self.max_concurrent}; set max_concurrent=1 or choose buffer_one",
            )
        if self.overlap == "allow_all" and self.max_concurrent != 0:
            raise ScheduleError(
                "overlap",
                f"overlap: 'allow_all' starts every fire at once, but max_concurrent is {self.max_concurrent}; "
                f"set max_concurrent=0 (unlimited) or choose buffer_one",
            )
        if self.overlap != "buffer_one" and self.after is not None:
            raise ScheduleError(
                "overlap",
                f"overlap: {self.overlap!r} applies to a clock driver (cron or interval_seconds); an AFTER "
                f"schedule's fire waits for a free slot with its parents' events merged; remove it",
            )

    @property
    def driver(self) -> Driver:
        """``"cron"``, ``"interval"`` or ``"after"``."""
        if self.cron is not None:
            return "cron"
        return "interval" if self.interval_seconds is not None else "after"

    @property
    def crons(self) -> tuple[str, ...]:
        """The cron expressions that drive the schedule (one, or the members of a union); none for others."""
        return (self.cron,) if isinstance(self.cron, str) else tuple(self.cron or ())

    @property
    def freshness_hours(self) -> float:
        """The parent-freshness window in hours; 0 when the check is off."""
        return float(self.parent_freshness or 0)
