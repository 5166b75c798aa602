"""The timetables layer's one door to Airflow's private names (DESIGN.md, "One door to Airflow per layer").

Every private or version-sensitive Airflow name the timetables use is named here and nowhere
else, each with a contract test in ``tests/test_airflow_doors.py``: an Airflow upgrade that
moves or renames one fails that test and is ported in this file.
"""

from __future__ import annotations

# Airflow's "now" (no public home in core): the clock the scheduler reads and time_machine freezes.
from airflow._shared.timezones.timezone import utcnow
from airflow.timetables.base import Timetable

# Timetable._decode_partition_date: how Airflow turns a run's partition_key into its partition_date;
# PartitionPlan overrides it (under this name) to decode tessera's key formats.
DECODE_PARTITION_DATE = "_decode_partition_date"

OVERRIDDEN: tuple[tuple[type, str], ...] = ((Timetable, DECODE_PARTITION_DATE),)
"""The private Airflow methods this layer overrides, with the Airflow class that defines each."""

__all__ = ["DECODE_PARTITION_DATE", "OVERRIDDEN", "utcnow"]
