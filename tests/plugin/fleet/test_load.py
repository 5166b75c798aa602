"""The fleet load: run starts per minute over 24 hours, from each timetable's own next-run answers.

Airflow's built-in timetables read the clock when they skip ahead, so the clock is frozen.
"""

from __future__ import annotations

import datetime
import io

import pytest
import time_machine
from airflow.timetables.interval import CronDataIntervalTimetable
from airflow.timetables.simple import AssetTriggeredTimetable, NullTimetable
from airflow.timetables.trigger import CronTriggerTimetable

from tessera.plugin.api.inputs import MAX_FLEET_RUNS, MAX_LANE_RUNS
from tessera.plugin.errors import TooMuchWork
from tessera.plugin.fleet.load import starts as load_module
from tessera.plugin.fleet.load.starts import (
    RUN_CAP,
    FleetDag,
    LoadWork,
    _upcoming_starts,
    count_load,
    dag_starts,
    estimated_starts,
    fleet_load,
    load_work,
)
from tessera.timetables import Cron, Every, Fixed
from tessera.timetables.instants import from_us

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 3, 2, 12, 3, 20, tzinfo=UTC)
START = datetime.datetime(2026, 3, 2, 12, 3, tzinfo=UTC)
LONG_AGO = datetime.datetime(2025, 1, 1, tzinfo=UTC)
FLEET = 1000
"""1,000 DAGs every 15 minutes: 96,000 run starts, counted from their lanes."""


@pytest.fixture(autouse=True)
def frozen():
    with time_machine.travel(NOW, tick=False):
        yield


def _cron(expression: str) -> CronTriggerTimetable:
    return CronTriggerTimetable(expression, timezone="UTC")


def test_a_built_in_cron_counts_each_run_of_the_next_24_hours_from_its_own_answers():
    answer = dag_starts(
        FleetDag("plain", _cron("*/15 * * * *"), start_date=LONG_AGO),
        start=START,
        until=START + datetime.timedelta(days=1),
    )
    assert answer.source == "timetable" and not answer.capped and answer.error is None
    assert len(answer.starts) == 96
    assert from_us(answer.starts[0]) == datetime.datetime(2026, 3, 2, 12, 15, tzinfo=UTC)
    assert all(at.minute % 15 == 0 and at.second == 0 for at in map(from_us, answer.starts))


def test_a_data_interval_cron_starts_at_each_interval_end():
    answer = dag_starts(
        FleetDag("hourly", CronDataIntervalTimetable("0 * * * *", timezone="UTC"), start_date=LONG_AGO),
        start=START,
        until=START + datetime.timedelta(days=1),
    )
    assert from_us(answer.starts[0]) == datetime.datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
    assert len(answer.starts) == 24


def test_asset_driven_and_unscheduled_dags_start_nothing_on_the_clock():
    until = START + datetime.timedelta(days=1)
    assets = AssetTriggeredTimetable([])
    for timetable in (NullTimetable(), assets):
        assert dag_starts(FleetDag("x", timetable), start=START, until=until).starts == []


def test_a_dense_cadence_is_capped_and_says_so():
    answer = dag_starts(
        FleetDag("dense", Every("30s", key="dense")),
        start=START,
        until=START + datetime.timedelta(days=1),
    )
    assert answer.capped and len(answer.starts) == RUN_CAP


def test_a_tessera_dag_starts_at_its_phase_after_each_occurrence():
    answer = dag_starts(
        FleetDag("phased", Every("1h", phase=Fixed("7m"), key="phased")),
        start=START,
        until=START + datetime.timedelta(days=1),
    )
    assert answer.source == "tessera"
    assert [from_us(at) for at in answer.starts[:2]] == [
        datetime.datetime(2026, 3, 2, 12, 7, tzinfo=UTC),  # the 12:00 occurrence, 7 minutes on
        datetime.datetime(2026, 3, 2, 13, 7, tzinfo=UTC),
    ]
    assert len(answer.starts) == 24


def test_a_herd_is_a_spike_that_names_its_dags():
    dags = [FleetDag(f"herd_{i}", _cron("0 * * * *"), start_date=LONG_AGO) for i in range(5)]
    dags.append(FleetDag("alone", Every("1h", phase=Fixed("30m"), key="alone")))
    load = fleet_load(dags, now=NOW)
    assert load.start == START and len(load.counts) == 1440
    assert load.total == 6 * 24 and load.peak == 5
    assert load.peak_at == datetime.datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
    assert load.peak_to_mean == round(5 / (144 / 1440), 2)
    assert len(load.spikes) == 10 and load.spikes[0].runs == 5
    assert load.spikes[0].dag_ids == [f"herd_{i}" for i in range(5)]


def test_a_broken_timetable_is_listed_with_its_error_and_the_rest_still_counts():
    class Broken(NullTimetable):
        def next_dagrun_info_v2(self, **kwargs):  # noqa: ANN003, ANN201
            raise RuntimeError("boom")

    load = fleet_load([FleetDag("broken", Broken()), FleetDag("ok", _cron("0 0 * * *"))], now=NOW)
    errors = {d.dag_id: d.error for d in load.dags}
    assert errors == {"broken": "RuntimeError: boom", "ok": None}
    assert load.total == 1


def _one_cadence(make):  # noqa: ANN001, ANN202
    return fleet_load([FleetDag(f"dag_{i:04}", make(f"dag_{i:04}")) for i in range(FLEET)], now=NOW)


def test_default_phases_flatten_a_herd_of_1000_dags_on_one_cadence():
    """1,000 DAGs every 15 minutes: all at the quarter hour without phases; spread by their default phases."""
    herd = _one_cadence(lambda key: Every("15m", phase=Fixed("0s"), key=key))
    phased = _one_cadence(lambda key: Every("15m", key=key))
    print(
        f"1,000 DAGs every 15 minutes: peak-to-mean {herd.peak_to_mean} without phases, "
        f"{phased.peak_to_mean} with default phases"
    )
    assert herd.peak_to_mean == 15.0  # every run of the fleet in one minute of each fifteen
    assert phased.peak_to_mean < 2.0
    # The load view's "without phases" figure of the phased fleet is the herd's, but for the edges of the
    # 24 hours (a run that starts just after the first minute has its occurrence just before it).
    assert herd.peak_to_mean_without_phases == 15.0
    assert abs(phased.peak_to_mean_without_phases - 15.0) < 0.5


def test_without_phases_counts_each_run_at_its_occurrence():
    load = fleet_load([FleetDag("phased", Every("1h", phase=Fixed("7m30s"), key="phased"))], now=NOW)
    assert load.counts.index(1) == 4  # 12:07:30, in the minute starting 12:07 (4 after 12:03)
    assert load.counts_without_phases.index(1) == 57  # its occurrence 13:00 (12:00's is before the start)


def test_the_hourly_profile_is_labelled_by_clock_hours_as_the_spikes_are():
    """From 12:03, the hours are 12:00 (its minutes 12:03-12:59), 13:00, ..., and 12:00 next day (to 12:02)."""
    dags = [FleetDag(f"herd_{i}", _cron("0 6 * * *"), start_date=LONG_AGO) for i in range(3)]
    dags.append(FleetDag("quarter", _cron("*/15 * * * *"), start_date=LONG_AGO))
    load = fleet_load(dags, now=NOW)
    hours = dict(load.hours)
    assert len(hours) == 25 and all(hour.minute == 0 for hour in hours)
    assert min(hours) == datetime.datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    assert max(hours) == datetime.datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
    six = datetime.datetime(2026, 3, 3, 6, 0, tzinfo=UTC)
    assert load.spikes[0].minute == six and hours[six] == 4  # the spike's hour is where its peak shows
    assert hours[datetime.datetime(2026, 3, 3, 12, 0, tzinfo=UTC)] == 1  # 12:00 next day, before 12:03


def test_the_load_as_text_names_hours_and_spikes_by_the_same_clock():
    from tessera.plugin.cli.previews import render_load
    from tessera.plugin.fleet.load.models import load_response

    dags = [FleetDag(f"herd_{i}", _cron("0 6 * * *"), start_date=LONG_AGO) for i in range(3)]
    body = load_response(fleet_load(dags, now=NOW), paused_left_out=0).model_dump(mode="json")
    out = io.StringIO()
    render_load(body, out)
    text = out.getvalue()
    assert "  06:00     3 runs  herd_0, herd_1, herd_2" in text
    profile = text.split("Busiest minute of each hour:\n")[1].splitlines()[:25]
    assert [line[2:7] for line in profile[:3]] == ["12:00", "13:00", "14:00"]
    assert all(line[4:7] == ":00" for line in profile)
    assert any(line.startswith("  06:00  ") and line.endswith(" 3") for line in profile)


def test_the_estimate_is_a_tessera_dags_lane_count_and_a_built_in_timetables_next_runs_spacing():
    until = START + datetime.timedelta(days=1)
    assert estimated_starts(FleetDag("every_5m", Every("5m", key="every_5m")), start=START, until=until) == 288
    assert estimated_starts(FleetDag("every_1s", Every("1s", key="every_1s")), start=START, until=until) == RUN_CAP
    quarter = FleetDag("quarter", _cron("*/15 * * * *"), start_date=LONG_AGO)
    assert estimated_starts(quarter, start=START, until=until) == 96
    assert estimated_starts(FleetDag("assets", AssetTriggeredTimetable([])), start=START, until=until) == 0


def test_a_fleet_over_the_cap_is_refused_before_a_single_dag_is_stepped(monkeypatch):
    """Another timetable is asked once per run (hundreds of times a lane's cost): 50,000 runs is its cap."""
    stepped = []
    monkeypatch.setattr(load_module, "dag_starts", lambda dag, **_: stepped.append(dag) or dag_starts(dag, **_))
    dags = [FleetDag(f"minutely_{i:02d}", _cron("* * * * *"), start_date=LONG_AGO) for i in range(40)]
    with pytest.raises(TooMuchWork) as refused:
        fleet_load(dags, now=NOW)
    assert refused.value.detail == (
        "`minutes`: 1440 minutes of 40 DAGs hold about 57,600 run starts of other timetables (each asked for "
        "separately); one load counts at most 50,000: ask for minutes=1250 or fewer, or count fewer DAGs"
    )
    assert stepped == []


def test_tessera_dags_are_counted_from_their_lanes_up_to_their_own_cap(monkeypatch):
    stepped = []
    monkeypatch.setattr(load_module, "dag_starts", lambda dag, **_: stepped.append(dag) or dag_starts(dag, **_))
    dags = [FleetDag(f"minutely_{i:02d}", Every("1m", key=f"minutely_{i:02d}")) for i in range(40)]
    assert fleet_load(dags, now=NOW).total == 40 * 1440  # 57,600: far within the cap of lane-counted runs
    stepped.clear()
    with pytest.raises(TooMuchWork) as refused:
        load_work(dags, now=NOW, most_lane=50_000)  # as if the cap were 50,000
    assert refused.value.detail == (
        "`minutes`: 1440 minutes of 40 DAGs hold about 57,600 run starts of tessera's timetables; one load counts "
        "at most 50,000: ask for minutes=1250 or fewer, or count fewer DAGs"
    )
    assert stepped == []
    assert count_load(load_work(dags, now=NOW, minutes=1250, most_lane=50_000)).total == 40 * 1250
    assert MAX_LANE_RUNS >= 2000 * 1440  # 2,000 DAGs running every minute fit


def test_the_count_stops_at_the_cap_when_the_estimate_fell_short():
    """A timetable whose runs bunch later than its first ones is estimated low: the count itself stops."""
    dags = [FleetDag(f"minutely_{i}", Every("1m", key=f"minutely_{i}")) for i in range(3)]
    work = LoadWork(dags=dags, start=START, minutes=1440, most_lane=2000)  # as if the estimate had said 2,000
    with pytest.raises(TooMuchWork, match="more than 2,000 run starts of tessera's timetables \\(counted so far\\)"):
        count_load(work)
    crons = [FleetDag(f"cron_{i}", _cron("* * * * *"), start_date=LONG_AGO) for i in range(3)]
    with pytest.raises(TooMuchWork, match="more than 2,000 run starts of other timetables"):
        count_load(LoadWork(dags=crons, start=START, minutes=1440, most=2000))
    assert MAX_FLEET_RUNS == 50_000  # the fleet plan's cap, one constant


LANE_CASES = {
    "every-45m-phase": lambda: Every("45m", phase=Fixed("3m20s"), key="a"),
    "every-10s-capped": lambda: Every("10s", key="dense"),
    "every-1h-delay-spread": lambda: Every("1h", delay="30s", key="spread"),
    "daily-amsterdam": lambda: Every.day(at="02:30", timezone="Europe/Amsterdam", key="d"),
    "cron-new-york": lambda: Cron("30 1 * * *", timezone="America/New_York", key="c"),
    "cron-dates": lambda: Cron("*/10 9-17 29 2 *", timezone="UTC", key="leap"),
    "union": lambda: Every.day(at="09:00", timezone="Europe/London") | Cron("*/20 * * * 5", timezone="Europe/London"),
    "weekly-excluded": lambda: Every.week(on="monday", at="07:00", timezone="Europe/Berlin", exclude=["2026-03-30"]),
}
DAYS = [
    datetime.datetime(2026, 3, 28, 23, 17, tzinfo=UTC),  # Europe's spring forward
    datetime.datetime(2026, 11, 1, 4, 59, tzinfo=UTC),  # America's fall back
    datetime.datetime(2028, 2, 28, 12, 0, tzinfo=UTC),  # a leap day ahead
    datetime.datetime(2026, 3, 30, 0, 0, tzinfo=UTC),  # an excluded Monday
]


@pytest.mark.parametrize("start", DAYS, ids=lambda day: day.strftime("%Y-%m-%d"))
@pytest.mark.parametrize("make", LANE_CASES.values(), ids=LANE_CASES.keys())
def test_a_lane_counts_exactly_the_runs_the_plan_lists(make, start):
    """The load counts a tessera DAG from its lane; the runs are those ``plan.upcoming`` lists, one by one."""
    dag = FleetDag("lane", make(), start_date=LONG_AGO)
    until = start + datetime.timedelta(days=1)
    answer = dag_starts(dag, start=start, until=until)
    assert (answer.starts, answer.capped) == _upcoming_starts(dag.timetable, dag, start=start, until=until, cap=RUN_CAP)


def test_tessera_plan_load_is_refused_as_the_api_refuses_it(tmp_path, capsys):
    """``tessera plan <files> --load`` counts through the same ``fleet_load``: the same cap, the same words."""
    from tessera.plugin.cli import EXIT_USAGE, main

    (tmp_path / "minutely.py").write_text(
        "from airflow.sdk import DAG\n"
        "for n in range(40):\n"
        "    with DAG(f'cli_minutely_{n:02d}', schedule='* * * * *', start_date=None):\n"
        "        pass\n"
    )
    assert main(["plan", str(tmp_path), "--load"]) == EXIT_USAGE
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.startswith("tessera plan: `minutes`: 1440 minutes of 40 DAGs hold about 57,600 run starts of other"), (
        said
    )
