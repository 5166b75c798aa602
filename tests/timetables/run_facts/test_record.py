"""Each run carries the schedule facts it was created with (seed 000: "Each run record carries its phase").

A tessera timetable records the run's phase, delay and interval in the run id it generates
(``generate_run_id``, which Airflow calls for every scheduled, backfill and manual run and
stores with the run, and which workers see). Readers (``run_schedule``, the macros, the status
API) read that record, so after a schedule change an old run still reports the phase and
occurrence it ran with; a run created before the record existed is recomputed as before.
"""

from __future__ import annotations

import datetime

import pendulum
import pytest
import time_machine
from airflow.models.dagrun import DagRun
from airflow.sdk import DAG
from airflow.timetables.base import TimeRestriction
from airflow.utils.types import DagRunType

from tessera.plugin import macros
from tessera.plugin.fleet.status import _summary, missed_ticks
from tessera.timetables import Every, Fixed
from tessera.timetables.run_facts.of_task import schedule_of
from tessera.timetables.support import run_info

UTC = datetime.timezone.utc


def at(text: str) -> pendulum.DateTime:
    return pendulum.parse(text, tz="UTC")


def created_run(timetable, *, now: str, last: DagRun | None = None) -> DagRun:
    """The run the scheduler creates at ``now``: its info, and the run id the timetable generates."""
    previous = None
    if last is not None:
        from airflow.timetables.base import DataInterval

        interval = DataInterval(last.data_interval_start, last.data_interval_end)
        previous = run_info(last.run_after, interval)
    with time_machine.travel(at(now), tick=False):
        info = timetable.next_dagrun_info_v2(
            last_dagrun_info=previous, restriction=TimeRestriction(earliest=None, latest=None, catchup=False)
        )
    run_id = timetable.generate_run_id(
        run_type=DagRunType.SCHEDULED, run_after=info.run_after, data_interval=info.data_interval
    )
    return DagRun(
        dag_id="record_probe",
        run_id=run_id,
        logical_date=info.logical_date,
        data_interval=(info.data_interval.start, info.data_interval.end),
        run_after=info.run_after,
        run_type=DagRunType.SCHEDULED,
    )


BEFORE = Every("5m", delay="30s", phase=Fixed("2m10s"))
AFTER = Every("10m", phase=Fixed("1m"))  # the schedule the DAG file says now


def test_an_old_run_reports_the_phase_and_occurrence_it_was_created_with_after_a_schedule_change():
    run = created_run(BEFORE, now="2026-03-01T12:08:00")
    assert run.run_after == at("2026-03-01T12:07:10")  # the seed's worked example
    with DAG("record_probe", schedule=AFTER, start_date=None) as dag:
        pass
    facts = schedule_of(dag, run)
    assert (facts.phase_ms, facts.interval_ms) == (130_000, 300_000)
    assert facts.occurrence == at("2026-03-01T12:05:00")
    assert (facts.window_start, facts.window_end) == (at("2026-03-01T11:59:30"), at("2026-03-01T12:04:30"))
    assert (macros.phase_ms(dag, run), macros.interval_ms(dag, run)) == (130_000, 300_000)
    assert _summary(run, AFTER).occurrence == at("2026-03-01T12:05:00")


def test_missed_ticks_are_judged_on_the_interval_the_runs_were_created_with():
    """Two consecutive 10-minute runs, read after the DAG moved to every 5 minutes: no tick was missed."""
    ten, five = Every("10m", phase=Fixed("0s")), Every("5m", phase=Fixed("0s"))
    first = created_run(ten, now="2026-03-01T12:00:30")
    second = created_run(ten, now="2026-03-01T12:10:30", last=first)
    assert missed_ticks(five, [second, first]) is None
    later = created_run(ten, now="2026-03-01T12:40:30", last=second)
    assert missed_ticks(five, [later, second]) == "MissedTicks"


def test_the_run_id_starts_as_airflows_own_and_ends_with_the_record():
    run = created_run(BEFORE, now="2026-03-01T12:08:00")
    assert run.run_id == "scheduled__2026-03-01T12:07:10+00:00~phase:2m10s~delay:30s~interval:5m"


def test_a_run_created_before_the_record_is_recomputed_from_the_current_schedule():
    run = created_run(BEFORE, now="2026-03-01T12:08:00")
    run.run_id = "scheduled__2026-03-01T12:07:10+00:00"
    with DAG("record_probe", schedule=BEFORE, start_date=None) as dag:
        pass
    assert schedule_of(dag, run).phase_ms == 130_000


def test_a_deployment_whose_run_id_pattern_refuses_the_record_gets_airflows_own_run_id(monkeypatch):
    monkeypatch.setenv("AIRFLOW__SCHEDULER__ALLOWED_RUN_ID_PATTERN", r"^[a-z_]+__[0-9T:+-]+$")
    run = created_run(BEFORE, now="2026-03-01T12:08:00")
    assert run.run_id == "scheduled__2026-03-01T12:07:10+00:00"


@pytest.mark.parametrize("run_type", [DagRunType.MANUAL, DagRunType.BACKFILL_JOB])
def test_manual_and_backfill_runs_are_recorded_too(run_type):
    window = BEFORE.infer_manual_data_interval(run_after=at("2026-03-01T12:06:00"))
    run_id = BEFORE.generate_run_id(run_type=run_type, run_after=at("2026-03-01T12:06:00"), data_interval=window)
    assert run_id.endswith("~phase:2m10s~delay:30s~interval:5m")
    assert BEFORE.generate_run_id(run_type=run_type, run_after=at("2026-03-01T12:06:00"), data_interval=None) == (
        f"{run_type.value}__2026-03-01T12:06:00+00:00"
    )
