"""What one scheduler step of a calendar cadence costs, next to ``CronTriggerTimetable`` for the same cron.

Each pair (a ``Calendar`` cadence and the cron expression that names the same
times) is stepped through one year with ``next_dagrun_info_v2`` and a
``catchup=True`` restriction, the way ``airflow backfill create`` and a
catching-up scheduler call it. Both run in one process, interleaved, with the
order rotating between repeats; the ratio of the best times is what carries
over between machines. Before timing, each pair must fire at the very same
instants over the year, so both sides do the same work (the New York and
Amsterdam pairs cross both of 2026's clock changes).

Run with ``python bench/calendar_stepping.py`` or, with every other benchmark, ``make bench``.
"""

from __future__ import annotations

import pendulum
from _stepping import compare
from airflow.timetables.base import TimeRestriction
from airflow.timetables.trigger import CronTriggerTimetable
from tabulate import tabulate

from tessera.timetables import Calendar

YEAR = TimeRestriction(
    pendulum.datetime(2026, 1, 1, tz="UTC"), pendulum.datetime(2026, 12, 31, 23, 59, tz="UTC"), catchup=True
)

# (case, the calendar cadence, the equivalent cron expression and zone)
PAIRS: list[tuple[str, Calendar, tuple[str, str]]] = [
    (
        "daily 09:00 New York",
        Calendar.day("09:00", timezone="America/New_York"),
        ("0 9 * * *", "America/New_York"),
    ),
    (
        "weekly Monday 07:00 Amsterdam",
        Calendar.week("monday", "07:00", timezone="Europe/Amsterdam"),
        ("0 7 * * 1", "Europe/Amsterdam"),
    ),
    ("monthly on the 31st (last day) 06:00", Calendar.month(31, "06:00", timezone="UTC"), ("0 6 L * *", "UTC")),
    ("every 6 hours", Calendar.hour(6), ("0 */6 * * *", "UTC")),
]


def _bound(timetable: Calendar) -> Calendar:
    # What the dag policy does in the dag-processor before the scheduler ever steps it.
    return timetable.bind(dag_id="bench", catchup=True, end_date=None)


def _pair_rows(case: str, calendar: Calendar, cron: CronTriggerTimetable) -> list[dict[str, object]]:
    contenders = {"Calendar": lambda: calendar, "CronTrigger": lambda: cron}
    return compare("step a year", case, contenders, YEAR, baseline="CronTrigger")


def main() -> list[dict[str, object]]:
    """Measure, and return two rows per pair (``bench/run.py`` prints them in one table)."""
    rows: list[dict[str, object]] = []
    for case, calendar, (expression, zone) in PAIRS:
        rows += _pair_rows(case, _bound(calendar), CronTriggerTimetable(expression, timezone=zone))
    return rows


if __name__ == "__main__":
    print(tabulate(main(), headers="keys", tablefmt="github"))
