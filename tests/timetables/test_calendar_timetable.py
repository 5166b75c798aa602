"""``Calendar`` in Airflow: frozen-clock restrictions, DST windows, serialization, examples, import errors."""

from __future__ import annotations

import textwrap
from datetime import timedelta
from pathlib import Path

import pendulum
import pytest
import time_machine
from airflow.models.dagrun import DagRun
from airflow.sdk import DAG
from airflow.timetables.base import DataInterval, TimeRestriction

from tessera.timetables import Backfill, Calendar, Every, Fixed, Spread, anti_herd
from tessera.timetables.run_facts.of_task import schedule_of
from tessera.timetables.support import run_info
from tests.compat import examples_refused, reason
from tests.compat.airflow_names import DagBag, DagSerialization

EXAMPLES = Path(__file__).resolve().parents[2] / "dags_examples"
NEW_YORK = "America/New_York"
DAILY_NY = Calendar.day("09:00", timezone=NEW_YORK)


def at(text: str, tz: str = "UTC") -> pendulum.DateTime:
    return pendulum.parse(text, tz=tz)


def ny(text: str) -> pendulum.DateTime:
    return at(text, NEW_YORK)


def step(timetable, *, now, last=None, earliest=None, latest=None, catchup=False):
    with time_machine.travel(now, tick=False):
        last_info = None if last is None else run_info(last[1], DataInterval(*last))
        return timetable.next_dagrun_info_v2(
            last_dagrun_info=last_info, restriction=TimeRestriction(earliest, latest, catchup)
        )


def hours_of(interval: DataInterval) -> float:
    return (interval.end - interval.start).total_seconds() / 3600


def local_window(info) -> tuple[str, str, str]:
    return tuple(
        t.in_timezone(NEW_YORK).strftime("%m-%d %H:%M")
        for t in (info.data_interval.start, info.data_interval.end, info.run_after)
    )


# -- the scheduler's questions, with a frozen clock ---------------------------------------------


def test_first_run_is_the_newest_due_occurrence():
    info = step(DAILY_NY, now=ny("2026-03-10T08:00"), earliest=at("2026-01-01T00:00"))
    assert local_window(info) == ("03-08 09:00", "03-09 09:00", "03-09 09:00")
    assert info.logical_date == ny("2026-03-08T09:00")


def test_first_run_waits_for_a_future_start_date():
    info = step(DAILY_NY, now=ny("2026-03-10T08:00"), earliest=ny("2026-03-12T10:00"))
    # The first run is the one whose period starts at or after the start date.
    assert local_window(info) == ("03-13 09:00", "03-14 09:00", "03-14 09:00")


def test_subsequent_run_follows_the_previous_window_across_spring_forward():
    info = step(DAILY_NY, now=ny("2026-03-08T09:00"), last=(ny("2026-03-06T09:00"), ny("2026-03-07T09:00")))
    assert local_window(info) == ("03-07 09:00", "03-08 09:00", "03-08 09:00")
    assert hours_of(info.data_interval) == 23


@pytest.mark.parametrize(
    ("catch_up", "first_window_end"),
    [
        pytest.param(None, "03-09 09:00", id="latest"),
        # the newest due (03-09) plus the 3 missed before it
        pytest.param(Backfill(limit=3), "03-06 09:00", id="backfill-3"),
    ],
)
def test_catch_up_after_downtime(catch_up, first_window_end):
    timetable = Calendar.day("09:00", timezone=NEW_YORK, catch_up=catch_up)
    last = (ny("2026-02-28T09:00"), ny("2026-03-01T09:00"))
    info = step(timetable, now=ny("2026-03-10T08:00"), last=last)
    assert local_window(info)[1] == first_window_end


def test_dag_catchup_true_runs_every_occurrence():
    last = (ny("2026-02-28T09:00"), ny("2026-03-01T09:00"))
    info = step(DAILY_NY, now=ny("2026-03-10T08:00"), last=last, catchup=True)
    assert local_window(info)[:2] == ("03-01 09:00", "03-02 09:00")


def test_latest_bound_stops_enumeration():
    last = (ny("2026-03-04T09:00"), ny("2026-03-05T09:00"))
    now = ny("2026-04-01T00:00")
    # The next run's period starts 03-05 09:00: it runs iff that is at or before the bound.
    assert step(DAILY_NY, now=now, last=last, latest=ny("2026-03-05T08:59"), catchup=True) is None
    assert step(DAILY_NY, now=now, last=last, latest=ny("2026-03-05T09:00"), catchup=True) is not None


def test_acceptance_daily_0900_new_york_through_both_2026_transitions():
    """Backfill-style enumeration: one run per local day at 09:00; 23h and 25h windows; exact tiling."""
    restriction = TimeRestriction(ny("2026-03-01T00:00"), ny("2026-11-30T23:59"), True)
    infos, info = [], None
    with time_machine.travel(at("2027-01-01T00:00"), tick=False):
        while info := DAILY_NY.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction):
            infos.append(info)
    ends = [i.data_interval.end.in_timezone(NEW_YORK) for i in infos]
    assert [e.date() for e in ends] == [ends[0].date() + timedelta(days=n) for n in range(len(ends))]
    # Periods starting 03-01 09:00 ... 11-30 09:00: the runs at their ends.
    assert (ends[0].date().isoformat(), ends[-1].date().isoformat()) == ("2026-03-02", "2026-12-01")
    assert {(e.hour, e.minute) for e in ends} == {(9, 0)}
    hours = {e.date().isoformat(): hours_of(i.data_interval) for e, i in zip(ends, infos, strict=True)}
    assert (hours.pop("2026-03-08"), hours.pop("2026-11-01")) == (23, 25)
    assert set(hours.values()) == {24}
    assert all(a.data_interval.end == b.data_interval.start for a, b in zip(infos, infos[1:], strict=False))


def test_manual_run_gets_the_25h_window_of_the_fall_back_day():
    interval = DAILY_NY.infer_manual_data_interval(run_after=ny("2026-11-01T10:00"))
    assert interval == (ny("2026-10-31T09:00"), ny("2026-11-01T09:00"))
    assert hours_of(interval) == 25


def test_anti_herd_moves_only_run_after():
    timetable = Calendar.day("09:00", timezone=NEW_YORK, phase=anti_herd()).bind(
        dag_id="warehouse_refresh", catchup=False, end_date=None
    )
    info = step(timetable, now=ny("2026-03-10T12:00"), last=(ny("2026-03-08T09:00"), ny("2026-03-09T09:00")))
    phase = info.run_after - info.data_interval.end
    assert info.data_interval == (ny("2026-03-09T09:00"), ny("2026-03-10T09:00"))
    assert phase == timedelta(milliseconds=timetable.phase_ms)
    assert 0 <= phase.total_seconds() < 15 * 60 and phase.total_seconds() % 60 == 0


def test_spread_on_a_calendar_cadence_stays_below_15_minutes_and_none_means_on_time():
    spread = Calendar.day("09:00", timezone="UTC", phase=Spread()).bind(dag_id="some_dag", catchup=False, end_date=None)
    plain = Calendar.day("09:00", timezone="UTC").bind(dag_id="some_dag", catchup=False, end_date=None)
    assert 0 < spread.phase_ms < 15 * 60_000
    assert plain.phase_ms == 0


def test_each_run_pins_its_real_spacing_for_tasks():
    dag = DAG(dag_id="spacing", schedule=DAILY_NY, start_date=None)
    for day, hours in (("2026-03-08", 23), ("2026-03-09", 24), ("2026-11-01", 25)):
        end = ny(f"{day}T09:00")
        run = DagRun(dag_id="spacing", run_id=day, logical_date=end, data_interval=(end, end))
        assert schedule_of(dag, run).interval_ms == hours * 3_600_000


def test_delay_shifts_the_window_and_a_lookback_is_a_fixed_duration():
    """The lookback counts absolute hours, so across spring-forward 48h back is 07:30 local, not 08:30."""
    timetable = Calendar.day("09:00", timezone=NEW_YORK, delay="30m", window="2d", phase=Fixed("0s"))
    info = step(timetable, now=ny("2026-03-09T09:30"), last=(ny("2026-03-06T08:30"), ny("2026-03-08T08:30")))
    assert local_window(info) == ("03-07 07:30", "03-09 08:30", "03-09 09:00")


def test_summaries_read_well():
    assert DAILY_NY.summary == "daily at 09:00 America/New_York"
    assert Calendar.week("monday", "07:00", every=2, timezone="Europe/Amsterdam").summary == (
        "every 2 weeks on Monday at 07:00 Europe/Amsterdam"
    )
    assert Calendar.day().summary == "every 1d from the last run"
    assert Calendar.month(31, "06:00", timezone="UTC", catch_up=Backfill(limit=2), delay="1h").summary == (
        "monthly on the last day at 06:00 UTC · delay 1h · catch-up backfill 2"
    )
    assert DAILY_NY.description.startswith("Runs daily at 09:00 America/New_York; each run evaluates")


def test_every_delegates_to_calendar():
    assert Every.day("09:00", timezone=NEW_YORK) == DAILY_NY
    assert Every.hour(6) == Calendar.hour(every=6)
    assert Every.week(on=1, at="07:00", timezone="UTC") == Calendar.week("monday", "07:00", timezone="UTC")
    assert Every.month(on=31, at="06:00", timezone="UTC") == Calendar.month(31, "06:00", timezone="UTC")


# -- serialization, examples and import errors --------------------------------------------------

ROUND_TRIP = [
    pytest.param(DAILY_NY, id="daily-new-york"),
    pytest.param(Calendar.week("monday", "07:00", every=2, timezone="Europe/Amsterdam"), id="biweekly"),
    pytest.param(
        Calendar.month(31, "06:00", timezone="UTC", every=3, delay="1h", window="2d"), id="quarterly-month-end"
    ),
    pytest.param(Calendar.hour(6, at="03:00", timezone="Australia/Lord_Howe", phase=Spread()), id="6-hours"),
    pytest.param(Calendar.day(every=3, catch_up=Backfill(limit=4), key="team"), id="unanchored-3-days"),
    pytest.param(Calendar.day("09:00", timezone="UTC", phase=anti_herd()), id="anti-herd"),
]


@pytest.mark.parametrize("timetable", ROUND_TRIP)
def test_serialization_round_trip_through_airflow(timetable):
    dag = DAG(dag_id="round_trip", schedule=timetable.bind(dag_id="round_trip", catchup=False, end_date=None))
    restored = DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
    assert type(restored) is Calendar
    assert restored == dag.timetable
    assert restored.serialize()["version"] == 1
    assert (restored.summary, restored.phase_ms, restored.period) == (
        dag.timetable.summary,
        dag.timetable.phase_ms,
        dag.timetable.period,
    )
    now = at("2026-03-10T12:00")
    assert step(restored, now=now) == step(dag.timetable, now=now)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("calendar_*.py")), ids=lambda p: p.stem)
def test_example_dags_load_without_import_errors(path):
    if path.name in examples_refused():
        pytest.skip(reason(examples_refused()[path.name]))
    bag = DagBag(str(path))
    assert bag.import_errors == {}
    assert bag.dags, f"{path.name} declares no DAG"
    for dag in bag.dags.values():  # a file may show a cadence beside its variant (business days, month end)
        assert isinstance(dag.timetable, Calendar)
        assert dag.timetable.key == dag.dag_id  # the dag policy bound it
        restored = DagSerialization.from_dict(DagSerialization.to_dict(dag))
        assert restored.timetable == dag.timetable


INVALID = [
    pytest.param("Every.hour(5)", "every: 5 hours is not allowed", id="hours-every-5"),
    pytest.param('Every.month(on=1, at="06:00", timezone="UTC", every=13)', "every: 13 months", id="months-every-13"),
    pytest.param(
        'Every.week(on="monday")', "at: missing (so is timezone) while on is given", id="weekday-without-time"
    ),
    pytest.param(
        'Every.week(on="monday", at="07:00")',
        "timezone: missing while on and at are given",
        id="weekday-and-time-without-timezone",
    ),
    pytest.param('Every.day(at="25:00")', "at: '25:00' is not a wall-clock time", id="at-25-00"),
    pytest.param('Every.day(at="09:00", timezone="Europe/Atlantis")', "timezone: 'Europe/Atlantis'", id="tz"),
    pytest.param('Every.month(on=32, at="06:00", timezone="UTC")', "on: 32 is not a day of the month", id="day-32"),
    pytest.param(
        'Every.day(at="09:00", timezone="UTC", every=0)', "every: 0 days is not allowed; use 1 to 30", id="day-0"
    ),
]


@pytest.mark.parametrize(("schedule", "message"), INVALID)
def test_invalid_schedule_is_an_import_error_naming_the_field(tmp_path, schedule, message):
    (tmp_path / "bad_calendar.py").write_text(
        textwrap.dedent(
            f"""
            from airflow.sdk import DAG
            from tessera.timetables import Every

            with DAG(dag_id="bad_calendar", schedule={schedule}):
                pass
            """
        )
    )
    bag = DagBag(str(tmp_path))
    assert not bag.dags
    (error,) = bag.import_errors.values()
    assert message in error
