"""What one scheduler step of ``Cron`` costs, next to ``CronTriggerTimetable`` for the same expression.

Each case is stepped with ``next_dagrun_info_v2`` and a ``catchup=True``
restriction, the way ``airflow backfill create`` and a catching-up scheduler
call it: a month of ``*/5 * * * *`` (October 2026, whose last Sunday repeats an
hour in London) and a year of ``0 6 * * *``, both in Europe/London. Both run in
one process, interleaved, with the order rotating between repeats; the ratio of
the best times is what carries over between machines. Every repeat steps a
freshly built ``Cron``, so its per-day cache starts cold each time. Before
timing, both sides must fire at the very same instants, so they do the same work.

Run with ``python bench/cron_stepping.py`` or, with every other benchmark, ``make bench``.
"""

from __future__ import annotations

from collections.abc import Callable

import pendulum
from _stepping import compare
from airflow.timetables.base import TimeRestriction, Timetable
from airflow.timetables.trigger import CronTriggerTimetable
from tabulate import tabulate

from tessera.timetables import Cron

ZONE = "Europe/London"

# (case, expression, the restriction stepped through)
CASES: list[tuple[str, str, TimeRestriction]] = [
    (
        "a month of */5 in London",
        "*/5 * * * *",
        TimeRestriction(
            pendulum.datetime(2026, 10, 1, tz="UTC"), pendulum.datetime(2026, 10, 31, 23, 59, tz="UTC"), True
        ),
    ),
    (
        "a year of 06:00 in London",
        "0 6 * * *",
        TimeRestriction(
            pendulum.datetime(2026, 1, 1, tz="UTC"), pendulum.datetime(2026, 12, 31, 23, 59, tz="UTC"), True
        ),
    ),
]


def _cron(expression: str) -> Cron:
    # What the dag policy does in the dag-processor before the scheduler ever steps it.
    return Cron(expression, timezone=ZONE).bind(dag_id="bench", catchup=True, end_date=None)


def _case_rows(case: str, expression: str, restriction: TimeRestriction) -> list[dict[str, object]]:
    contenders: dict[str, Callable[[], Timetable]] = {
        f"Cron({expression!r})": lambda: _cron(expression),
        "CronTrigger": lambda: CronTriggerTimetable(expression, timezone=ZONE),
    }
    return compare("step", case, contenders, restriction, baseline="CronTrigger")


def main() -> list[dict[str, object]]:
    """Measure, and return two rows per case (``bench/run.py`` prints them in one table)."""
    rows: list[dict[str, object]] = []
    for case, expression, restriction in CASES:
        rows += _case_rows(case, expression, restriction)
    return rows


if __name__ == "__main__":
    print(tabulate(main(), headers="keys", tablefmt="github"))
