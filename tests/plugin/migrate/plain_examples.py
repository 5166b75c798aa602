"""The project's ``dags_examples/`` as a team would have written them before tessera: plain Airflow schedules.

One file per example, the schedule the example replaces written the way Airflow users write it
(a cron string, a ``timedelta``, Airflow's own timetables), with the same DAG ids and the same
task reading ``data_interval_*`` where the example's does.
"""

from __future__ import annotations

from pathlib import Path

HEADER = """from __future__ import annotations

import datetime

from airflow.sdk import DAG, task
from airflow.timetables.events import EventsTimetable
from airflow.timetables.interval import CronDataIntervalTimetable
from airflow.timetables.trigger import CronPartitionTimetable, CronTriggerTimetable, MultipleCronTriggerTimetable
from dateutil.relativedelta import relativedelta

START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
"""

READS = """
    @task
    def work(data_interval_start=None, data_interval_end=None):
        print(data_interval_start, data_interval_end)

    work()
"""
QUIET = """
    @task
    def work():
        print("done")

    work()
"""

EXAMPLES = {
    "calendar_daily_new_york": ('CronTriggerTimetable("0 9 * * *", timezone="America/New_York")', READS),
    "cron_daily_london": ('CronTriggerTimetable("0 6 * * *", timezone="Europe/London")', READS),
    "cron_every_5m": ('"*/5 * * * *"', QUIET),
    "cron_starting_deadline": ('CronTriggerTimetable("0 * * * *", timezone="America/New_York")', QUIET),
    "every_5m_delay": ("datetime.timedelta(minutes=5)", READS),
    "calendar_every_6_hours": ('"0 */6 * * *"', QUIET),
    "calendar_biweekly_amsterdam": ("datetime.timedelta(weeks=2)", QUIET),
    "calendar_month_end": ('"0 6 L * *"', QUIET),
    "calendar_business_days_new_york": ('CronTriggerTimetable("0 9 * * 1-5", timezone="America/New_York")', READS),
    "calendar_from_last_run": ("relativedelta(months=1)", QUIET),
    "calendar_anti_herd": ('"@daily"', QUIET),
    "refresh_dashboard": ('CronDataIntervalTimetable("0 9 * * *", timezone="America/New_York")', READS),
    "union_mornings_and_friday_close": (
        'MultipleCronTriggerTimetable("0 9 * * *", "0 17 * * 5", timezone="Europe/Amsterdam")',
        QUIET,
    ),
    "partitioned_clicks": ('CronPartitionTimetable("0 * * * *", timezone="UTC")', QUIET),
    "partitioned_amsterdam_rollup": ('"0 * * * *"', QUIET),
    "declared_python": ("None", QUIET),
    "once_backfill": ('"@once"', QUIET),
    "events_quarter_close": (
        "EventsTimetable(event_dates=[datetime.datetime(2026, 3, 31, 18, tzinfo=datetime.timezone.utc)])",
        QUIET,
    ),
}

COMPUTED = (
    HEADER
    + """
import os

SCHEDULE = os.environ.get("DIGEST_SCHEDULE", "0 6 * * *")  # chosen when the file is parsed

with DAG(dag_id="tessera_cursor_digest", schedule=SCHEDULE, start_date=START, catchup=False):
"""
    + QUIET
)

HERD = (
    HEADER
    + """
for i in range(6):  # dynamic DAGs: one file, six DAGs, ids computed when the file is parsed
    with DAG(dag_id=f"tessera_herd_cron_{i}", schedule="*/15 * * * *", start_date=START, catchup=False):
"""
    + QUIET.replace("\n    ", "\n        ")
)


def write_plain_examples(folder: Path) -> list[str]:
    """Write the plain-Airflow examples into ``folder``; their DAG ids, sorted."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = []
    for name, (schedule, body) in EXAMPLES.items():
        dag_id = f"tessera_{name}"
        ids.append(dag_id)
        source = f"{HEADER}\nwith DAG(dag_id={dag_id!r}, schedule={schedule}, start_date=START, catchup=False):\n{body}"
        (folder / f"{name}.py").write_text(source)
    (folder / "cursor_digest.py").write_text(COMPUTED)
    (folder / "load_herd.py").write_text(HERD)
    ids += ["tessera_cursor_digest", *(f"tessera_herd_cron_{i}" for i in range(6))]
    return sorted(ids)
