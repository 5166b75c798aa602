"""``Every`` inside Airflow: restriction cases with a frozen clock, serialization, the dag policy, import errors."""

from __future__ import annotations

import textwrap
from datetime import datetime, timedelta, timezone

import pendulum
import pytest
import time_machine
from airflow.models.dag import DagModel
from airflow.timetables.base import DataInterval, TimeRestriction

from tessera.plugin.macros import interval_ms, phase_ms
from tessera.timetables import Backfill, Every, Fixed, Latest
from tessera.timetables.support import run_info
from tests.compat.airflow_names import DagBag, DagSerialization

UTC = timezone.utc


def at(text: str) -> pendulum.DateTime:
    return pendulum.parse(text, tz="UTC")


def step(timetable, *, now, last=None, earliest=None, latest=None, catchup=False):
    with time_machine.travel(at(now), tick=False):
        last_info = None
        if last is not None:
            start, end = (at(x) for x in last)
            last_info = run_info(end, DataInterval(start, end))
        return timetable.next_dagrun_info_v2(
            last_dagrun_info=last_info,
            restriction=TimeRestriction(earliest and at(earliest), latest and at(latest), catchup),
        )


def window(info):
    return (
        info.data_interval.start.isoformat(),
        info.data_interval.end.isoformat(),
        info.run_after.isoformat(),
    )


SEED = Every("5m", delay="30s", phase=Fixed("2m10s"))


def test_first_run_is_the_newest_due_occurrence():
    info = step(SEED, now="2026-03-01T12:08:00", earliest="2026-01-01T00:00:00")
    assert window(info) == (
        "2026-03-01T11:59:30+00:00",
        "2026-03-01T12:04:30+00:00",
        "2026-03-01T12:07:10+00:00",
    )
    assert info.logical_date == at("2026-03-01T11:59:30")


def test_first_run_waits_for_a_future_start_date():
    """The first run is the one whose period (previous occurrence -> occurrence) starts at the start date."""
    info = step(SEED, now="2026-03-01T12:08:00", earliest="2026-03-02T00:00:00")
    assert window(info) == ("2026-03-01T23:59:30+00:00", "2026-03-02T00:04:30+00:00", "2026-03-02T00:07:10+00:00")


def test_subsequent_run_tiles_the_previous_window():
    info = step(SEED, now="2026-03-01T12:07:10", last=("2026-03-01T11:59:30", "2026-03-01T12:04:30"))
    assert window(info) == (
        "2026-03-01T12:04:30+00:00",
        "2026-03-01T12:09:30+00:00",
        "2026-03-01T12:12:10+00:00",
    )


@pytest.mark.parametrize(
    ("catch_up", "first_window_end"),
    [
        pytest.param(Latest(), "2026-03-01T11:54:30", id="latest"),
        # Backfill(3): the newest due occurrence (11:55) plus the 3 missed before it: 11:40 first.
        pytest.param(Backfill(limit=3), "2026-03-01T11:39:30", id="backfill-3"),
    ],
)
def test_catch_up_after_downtime(catch_up, first_window_end):
    timetable = Every("5m", delay="30s", phase=Fixed("0s"), catch_up=catch_up)
    info = step(timetable, now="2026-03-01T11:57:00", last=("2026-03-01T09:54:30", "2026-03-01T09:59:30"))
    assert info.data_interval.end == at(first_window_end)


def test_dag_catchup_true_runs_every_occurrence():
    info = step(SEED, now="2026-03-01T11:57:00", last=("2026-03-01T09:54:30", "2026-03-01T09:59:30"), catchup=True)
    assert info.data_interval.start == at("2026-03-01T09:59:30")


def test_latest_bound_stops_enumeration():
    """After the 01:00 occurrence, the 01:05 one has the period 01:00 -> 01:05: allowed iff 01:00 <= latest."""
    last = ("2026-02-01T00:54:30", "2026-02-01T00:59:30")
    assert step(SEED, now="2026-03-01T12:00:00", last=last, latest="2026-02-01T00:59:59", catchup=True) is None
    info = step(SEED, now="2026-03-01T12:00:00", last=last, latest="2026-02-01T01:00:00", catchup=True)
    assert info.data_interval.end == at("2026-02-01T01:04:30")


def test_backfill_enumeration_of_a_day_terminates_and_tiles():
    timetable = Every("1h", delay="5m", phase=Fixed("0s"))
    restriction = TimeRestriction(at("2026-01-01T00:00:00"), at("2026-01-01T23:59:59"), True)
    infos, info = [], None
    with time_machine.travel(at("2026-06-01T00:00:00"), tick=False):
        while info := timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction):
            infos.append(info)
    assert len(infos) == 24
    assert infos[0].data_interval == (at("2025-12-31T23:55:00"), at("2026-01-01T00:55:00"))
    assert infos[-1].data_interval == (at("2026-01-01T22:55:00"), at("2026-01-01T23:55:00"))
    assert all(a.data_interval.end == b.data_interval.start for a, b in zip(infos, infos[1:], strict=False))


def test_manual_run_gets_the_window_of_the_latest_occurrence():
    interval = SEED.infer_manual_data_interval(run_after=at("2026-03-01T12:07:00"))
    assert interval == (at("2026-03-01T11:59:30"), at("2026-03-01T12:04:30"))


def test_stale_stored_run_moves_forward_after_downtime():
    """The scheduler stored 10:00 before going down; at 11:57 Latest() owes only 11:55, covering since 09:55."""
    timetable = Every("5m", phase=Fixed("0s")).bind(dag_id="d", catchup=False, end_date=None)
    model = DagModel(dag_id="d")
    model.next_dagrun = at("2026-03-01T09:55:00")
    model.next_dagrun_data_interval = (at("2026-03-01T09:55:00"), at("2026-03-01T10:00:00"))
    model.next_dagrun_create_after = at("2026-03-01T10:00:00")
    with time_machine.travel(at("2026-03-01T11:57:00"), tick=False):
        info = timetable.next_run_info_from_dag_model(dag_model=model)
    assert info.data_interval == (at("2026-03-01T09:55:00"), at("2026-03-01T11:55:00"))
    with time_machine.travel(at("2026-03-01T10:00:30"), tick=False):
        assert timetable.next_run_info_from_dag_model(dag_model=model).data_interval.end == at("2026-03-01T10:00:00")


def test_summary_reads_well():
    assert SEED.summary == "every 5m · delay 30s · phase 2m10s"
    assert Every("1m", window="5m", delay="30s", phase=Fixed("0s"), catch_up=Backfill(limit=12)).summary == (
        "every 1m · window 5m · delay 30s · phase 0s · catch-up backfill 12"
    )


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        pytest.param({"interval": "7m"}, "every: '7m' does not divide a day evenly", id="7m"),
        pytest.param({"interval": "36h"}, "every: '36h'", id="36h"),
        pytest.param({"interval": "0s"}, "every: '0s' must be more than zero", id="zero"),
        pytest.param({"interval": "5m", "delay": "soon"}, "delay: 'soon' is not a duration", id="bad-delay"),
        pytest.param({"interval": "5m", "window": "0m"}, "window: '0m' must be more than zero", id="zero-window"),
        pytest.param({"interval": "5m", "key": ""}, "key: ''", id="empty-key"),
    ],
)
def test_invalid_arguments_name_the_field(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        Every(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        pytest.param({"phase": "2m"}, "phase: '2m' is not a phase", id="phase-string"),
        pytest.param({"catch_up": 12}, "catch_up: 12 is not a catch-up policy", id="catch-up-int"),
    ],
)
def test_wrong_types_name_the_field(kwargs, fragment):
    with pytest.raises(TypeError, match=fragment):
        Every("5m", **kwargs)


def write_dag(folder, name, schedule_src):
    (folder / f"{name}.py").write_text(
        textwrap.dedent(
            f"""
            from airflow.sdk import DAG
            from airflow.providers.standard.operators.empty import EmptyOperator
            from tessera.timetables import Every, Fixed, Spread, Backfill

            SHARED = Every("5m")
            with DAG(dag_id="{name}", schedule={schedule_src}):
                EmptyOperator(task_id="t")
            """
        )
    )


def test_invalid_schedule_is_an_import_error_naming_the_field(tmp_path):
    write_dag(tmp_path, "bad_every", 'Every("7m")')
    bag = DagBag(str(tmp_path))
    assert not bag.dags
    (message,) = bag.import_errors.values()
    assert "every: '7m' does not divide a day evenly" in message


def test_policy_gives_each_dag_its_own_phase_and_serialization_round_trips(tmp_path):
    write_dag(tmp_path, "shared_a", "SHARED")
    write_dag(tmp_path, "shared_b", "SHARED")
    write_dag(
        tmp_path,
        "keyed",
        'Every("1h", delay="5m", window="3h", phase=Spread(max="10m"), key="team-x", catch_up=Backfill(limit=4))',
    )
    bag = DagBag(str(tmp_path))
    assert bag.import_errors == {}
    a, b, keyed = (bag.dags[d].timetable for d in ("shared_a", "shared_b", "keyed"))
    assert (a.key, b.key, keyed.key) == ("shared_a", "shared_b", "team-x")
    assert a.phase_ms != b.phase_ms  # pinned by the hash of each DAG id
    assert 0 <= a.phase_ms < 5 * 60_000 and 0 <= keyed.phase_ms < 10 * 60_000
    for dag in bag.dags.values():
        restored = DagSerialization.from_dict(DagSerialization.to_dict(dag))
        assert restored.timetable == dag.timetable
        assert restored.timetable.phase_ms == dag.timetable.phase_ms
        assert restored.timetable.summary == dag.timetable.summary
        assert type(restored.timetable) is Every


def test_macros_expose_the_run_phase_and_interval(tmp_path):
    write_dag(tmp_path, "macro_dag", 'Every("5m", delay="30s", phase=Fixed("2m10s"))')
    dag = DagBag(str(tmp_path)).dags["macro_dag"]

    class Run:
        data_interval_end = at("2026-03-01T12:04:30")

    assert phase_ms(dag, Run) == 130_000
    assert interval_ms(dag, Run) == 300_000


def test_timedelta_arguments_are_accepted():
    assert Every(timedelta(minutes=5), delay=timedelta(seconds=30)).summary.startswith("every 5m · delay 30s")
    assert datetime(2026, 1, 1, tzinfo=UTC)  # the module works with stdlib datetimes too
