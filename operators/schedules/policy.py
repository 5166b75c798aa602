"""A declared schedule's policy as Airflow DAG arguments.

=======================  =====================================================================
declaration              Airflow 3.3
=======================  =====================================================================
cron + timezone          ``schedule=Cron(expression, timezone=...)`` (tessera timetable)
interval_seconds n       ``schedule=Cron("@every <n>s")``: epoch-aligned, 1 <= n <= 366 days
after [a, b, ...]        ``schedule=AssetAll(<asset of a>, <asset of b>, ...)``; the scheduler-side
                         listener emits a schedule's asset event when a fire completes
retries n                retries of the whole run: a failed (or timed-out) run is cleared and
                         queued again up to n times (:mod:`.run_retries`); tasks keep their own
                         ``retries`` (default 0), which happen inside one attempt
retry_delay s            the re-queued run's next attempt starts s seconds after the failure
timeout s                DAG ``dagrun_timeout=timedelta(seconds=s)``: Airflow fails a run past it
                         and stops its unfinished tasks; timed from each attempt's start, since a
                         re-queued run starts anew, and a timed-out attempt is retried
max_concurrent n         DAG ``max_active_runs=n``; 0 -> 2**31-1 (Airflow has no "unlimited": 0
                         would start nothing)
dropped d                the timetable's ``dropped=``: a dropped fire's window is evaluated by the
                         next run (cover, the default) or left owed, to backfill (owe)
overlap p                the timetable's run policy: a fire due while n runs are in flight is
                         queued (buffer_one: created the moment a slot frees, before newer
                         ones; buffer_all: all of them, in order) or dropped (skip), and the
                         run's note, the audit log and a metric say which; cancel_other
                         (MAX_CONCURRENT 1) gives max_active_runs=2 and the scheduler-side
                         listener fails the run in flight when the new one starts
pause_after_failures n   the timetable's run policy: the scheduler-side listener pauses the
                         DAG once n of its runs failed in a row
max_wave_concurrent n    a deferrable gate task in front of each pipeline (``ScheduleSet.apply``)
priority p               task ``priority_weight=p`` with ``weight_rule="absolute"``
catchup                  the timetable's run policy (the DAG's own ``catchup`` stays False, so
                         no start_date is needed): the fires that came due while the DAG was
                         paused run after it is unpaused, oldest first, one at a time (true),
                         or none of them (false); the pauses are read from Airflow's audit log
target_nodes             one copy of the work per node, each on the node's queue
                         (``ScheduleSet.per_node``; see ``nodes.py``)
notify / webhook         DAG ``on_failure_callback`` notifiers (and ``on_success_callback`` with
                         notify_on_success), added to the DAG's own callbacks
active / inactive        DAG ``is_paused_upon_creation``
description              DAG ``description`` unless the DAG gives its own
=======================  =====================================================================
"""

from __future__ import annotations

import datetime
from typing import Any

from tessera.operators.overlap_slots import REPLACING_SLOTS
from tessera.timetables.rules import excerpt

from .checks import INT32_MAX
from .identity import ALIGN_TAG, RECORD_KEY, schedule_asset, schedule_tag
from .notify import notifiers
from .schedule import Schedule

UNLIMITED_RUNS = INT32_MAX
_OWNED_DAG_ARGS = ("schedule", "catchup", "max_active_runs", "is_paused_upon_creation", "dagrun_timeout")


def timetable_of(schedule: Schedule) -> Any:
    """What the DAG's ``schedule=`` becomes: a tessera ``Cron`` (a ``Union`` of several) or an asset condition."""
    if schedule.after is not None:
        from airflow.sdk import AssetAll

        assets = [schedule_asset(parent) for parent in schedule.after]
        return assets[0] if len(assets) == 1 else AssetAll(*assets)
    from tessera.timetables import Cron, Union
    from tessera.timetables.run_policy import RunPolicy

    zone = schedule.timezone or "UTC"
    if schedule.interval_seconds is not None:
        clock = Cron(f"@every {schedule.interval_seconds}s", dropped=schedule.dropped)
    elif len(schedule.crons) == 1:
        clock = Cron(schedule.crons[0], timezone=zone, dropped=schedule.dropped)
    else:
        clock = Union(*(Cron(text, timezone=zone) for text in schedule.crons), dropped=schedule.dropped)
    policy = RunPolicy(schedule.overlap, schedule.catchup, schedule.pause_after_failures)
    return clock.with_run_policy(policy)


def task_defaults(schedule: Schedule) -> dict[str, Any]:
    """The ``default_args`` a schedule sets on every task of its pipelines."""
    defaults: dict[str, Any] = {}
    if schedule.priority is not None:
        defaults["priority_weight"] = schedule.priority
        defaults["weight_rule"] = "absolute"
    return defaults


def policy_record(schedule: Schedule) -> dict[str, Any]:
    """What the scheduler-side listener reads back from the serialized DAG."""
    return {
        "name": schedule.name,
        "after": list(schedule.after or ()),
        "parent_freshness_hours": schedule.freshness_hours,
        "max_wave_concurrent": schedule.max_wave_concurrent,
        "retries": schedule.retries or 0,
        "retry_delay": schedule.retry_delay or 0,
        **({"align_window": True} if schedule.align_window else {}),
        # An AFTER schedule's timetable is an asset condition: the listener reads the limit here.
        **({"pause_after_failures": schedule.pause_after_failures} if schedule.pause_after_failures else {}),
    }


def dag_kwargs(schedule: Schedule, /, **dag_args: Any) -> dict[str, Any]:
    """Keyword arguments for ``DAG(...)`` that apply ``schedule`` to a pipeline.

    ``dag_args`` are the DAG's own arguments: tags and callbacks are combined with the
    schedule's, ``description`` is kept, and an argument the schedule decides
    (``schedule``, ``catchup``, ``max_active_runs``, ``is_paused_upon_creation``,
    ``dagrun_timeout`` or a task default it sets) is refused, so a pipeline cannot silently drift from the
    policy it claims to share.
    """
    for key in _OWNED_DAG_ARGS:
        if key in dag_args:
            raise ValueError(
                f"{key}: {excerpt(dag_args[key])} is decided by schedule {schedule.name!r}; remove it from the DAG "
                f"or change the schedule"
            )
    defaults = task_defaults(schedule)
    own_defaults = dict(dag_args.pop("default_args", None) or {})
    for key in sorted(set(own_defaults) & set(defaults)):
        raise ValueError(
            f"default_args[{key!r}]: {excerpt(own_defaults[key])} conflicts with schedule {schedule.name!r} "
            f"({defaults[key]!r}); remove it from the DAG or change the schedule"
        )
    kwargs = dict(dag_args)
    kwargs["schedule"] = timetable_of(schedule)
    kwargs["catchup"] = False  # CATCHUP replays the paused periods through the run policy, never from start_date
    kwargs["max_active_runs"] = schedule.max_concurrent or UNLIMITED_RUNS
    if schedule.overlap == "cancel_other":  # the run in flight and the one replacing it, for a moment
        kwargs["max_active_runs"] = REPLACING_SLOTS
    kwargs["is_paused_upon_creation"] = not schedule.active
    if schedule.timeout is not None:
        kwargs["dagrun_timeout"] = datetime.timedelta(seconds=schedule.timeout)
    kwargs["default_args"] = {**own_defaults, **defaults, RECORD_KEY: policy_record(schedule)}
    kwargs["tags"] = [*(dag_args.get("tags") or ()), schedule_tag(schedule.name)]
    if schedule.align_window:
        kwargs["tags"].append(ALIGN_TAG)
    if schedule.description is not None and not dag_args.get("description"):
        kwargs["description"] = schedule.description
    emails, urls = schedule.notify, schedule.webhook
    kwargs["on_failure_callback"] = _combined(
        dag_args.get("on_failure_callback"), notifiers(schedule.name, emails, urls, event="failure")
    )
    if schedule.notify_on_success:
        kwargs["on_success_callback"] = _combined(
            dag_args.get("on_success_callback"), notifiers(schedule.name, emails, urls, event="success")
        )
    return {key: value for key, value in kwargs.items() if value is not None}


def _combined(own: Any, added: list[Any]) -> list[Any] | None:
    mine = [] if own is None else (list(own) if isinstance(own, list | tuple) else [own])
    combined = mine + added
    return combined or None
