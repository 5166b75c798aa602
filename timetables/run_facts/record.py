"""The schedule facts a run was created with, recorded at the end of its run id.

Seed 000: "Each run record carries its phase." Recomputing a run's phase, occurrence and
interval from the DAG's *current* timetable gives wrong answers once the schedule changes,
so the timetable records them when Airflow asks it for the run's id
(``Timetable.generate_run_id``), which Airflow calls for scheduled, backfill and manual runs
and stores with the run:

    scheduled__2026-03-01T12:07:10+00:00~phase:2m10s~delay:30s~interval:5m

Why the run id and not another place: it is persisted with the run and immutable, every
process sees it (the scheduler, the API server, and workers, which have no database access
but get the run id with their context), and it is the hook Airflow gives a timetable for
exactly this. The alternatives each fail one test: ``conf`` is the user's (it is merged into
params and shown as the trigger's input), ``note`` is the user's and editable,
``partition_key``/``partition_date`` drive asset partitioning, and the timetable of the DAG
version a run was created with lives in the database, which workers cannot read. Airflow's
own id stays the prefix, so the id is still unique per run and reads as before; the
durations are written as tessera writes them, exactly (to the microsecond), in characters
Airflow's default ``allowed_run_id_pattern`` accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._time.durations import format_duration, parse_duration
from ..instants import to_us

if TYPE_CHECKING:
    from airflow.timetables.base import DataInterval
    from airflow.utils.types import DagRunType
    from pendulum import DateTime

    from .._time.plan import Plan

_RECORD = re.compile(r"~phase:([0-9a-z.]+)~delay:([0-9a-z.]+)~interval:([0-9a-z.]+)\Z")


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run's phase, delay and interval in microseconds, as the timetable that created it planned them."""

    phase: int
    delay: int
    interval: int

    def suffix(self) -> str:
        return (
            f"~phase:{format_duration(self.phase)}~delay:{format_duration(self.delay)}"
            f"~interval:{format_duration(self.interval)}"
        )

    @classmethod
    def of(cls, run_id: str | None) -> RunRecord | None:
        """The record at the end of ``run_id``; ``None`` for a run created without one (or a user's id)."""
        match = _RECORD.search(run_id) if isinstance(run_id, str) else None
        if match is None:
            return None
        try:
            phase, delay, interval = (parse_duration("run_id", text, allow_zero=True) for text in match.groups())
        except ValueError:  # a user's own id that merely looks like a record
            return None
        return cls(phase, delay, interval)


def _run_id_allowed(run_id: str) -> bool:
    """Whether Airflow's run-id validation (``DagRun.validate_run_id``) accepts ``run_id``."""
    from airflow.configuration import conf

    pattern = conf.get("scheduler", "allowed_run_id_pattern", fallback="").strip()
    return bool(pattern) and re.match(pattern, run_id) is not None and ".." not in run_id


class RecordsRuns:
    """Mixed into :class:`~tessera.timetables.base.TesseraTimetable`: records each run's facts in its id."""

    _plan: Plan

    def generate_run_id(
        self, *, run_type: DagRunType, run_after: DateTime, data_interval: DataInterval | None, **extra: Any
    ) -> str:
        """Airflow's own run id, with the run's phase, delay and interval recorded at its end.

        A deployment whose ``allowed_run_id_pattern`` refuses the longer id gets Airflow's own:
        a run whose id the database refuses would never be created.
        """
        run_id = super().generate_run_id(  # type: ignore[misc]
            run_type=run_type, run_after=run_after, data_interval=data_interval, **extra
        )
        if data_interval is None:
            return run_id
        run = self._plan.run(self._plan.occurrence_of_window_end(to_us(data_interval.end)))
        recorded = run_id + RunRecord(self._plan.phase, self._plan.delay, run.interval).suffix()
        return recorded if _run_id_allowed(recorded) else run_id
