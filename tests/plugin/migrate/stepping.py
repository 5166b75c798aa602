"""The tests' own stepping: any timetable through a range with ``next_dagrun_info``, as the scheduler steps it.

Independent of :mod:`tessera.plugin.migrate`: it starts at the DAG's start date (no anchor
inference) and asks each timetable, Airflow's or tessera's, the scheduler's question in a loop.
"""

from __future__ import annotations

import datetime
from typing import Any

UTC = datetime.timezone.utc


def plain(moment: datetime.datetime) -> datetime.datetime:
    utc = moment.astimezone(UTC)
    return datetime.datetime(utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.microsecond, UTC)


def step(
    timetable: Any,
    *,
    start_date: datetime.datetime,
    since: datetime.datetime,
    until: datetime.datetime,
    cap: int = 20_000,
) -> list[tuple[datetime.datetime, datetime.datetime, datetime.datetime]]:
    """``(run_after, window start, window end)`` of each run due in ``(since, until]``, stepped from ``start_date``."""
    import pendulum
    from airflow.timetables.base import TimeRestriction

    restriction = TimeRestriction(earliest=pendulum.instance(start_date), latest=None, catchup=True)
    runs, last = [], None
    for _ in range(cap):
        try:
            info = timetable.next_dagrun_info(last_automated_data_interval=last, restriction=restriction)
        except ValueError:  # Airflow's cron intervals on some clock changes: the scheduler stops there too
            return runs
        if info is None or info.run_after > until:
            return runs
        last = info.data_interval
        if info.run_after > since:
            runs.append((plain(info.run_after), plain(last.start), plain(last.end)))
    raise AssertionError(f"more than {cap} runs: a test range too long for {timetable!r}")
