"""``exclude=`` on calendar cadences and ``Cron``: what is accepted, what is refused, what the scheduler skips."""

from __future__ import annotations

import datetime

import pendulum
import pytest
import time_machine
from airflow.sdk import DAG
from airflow.timetables.base import DataInterval, TimeRestriction

from tessera.timetables import Calendar, Cron, Every, between, holidays_of
from tessera.timetables.exclusions import MAX_CALENDARS, MAX_ENTRIES
from tessera.timetables.support import run_info
from tests.compat.airflow_names import DagSerialization

LONDON = "Europe/London"
UTC = datetime.timezone.utc


def step(timetable, *, now, last=None, catchup=False):
    with time_machine.travel(now, tick=False):
        info = None if last is None else run_info(last[1], DataInterval(*last))
        return timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=TimeRestriction(None, None, catchup))


def test_the_scheduler_skips_an_excluded_date_and_the_next_window_covers_it():
    timetable = Cron("0 6 * * *", timezone=LONDON, exclude=[datetime.date(2026, 12, 25)])
    last = (pendulum.datetime(2026, 12, 23, 6, tz=LONDON), pendulum.datetime(2026, 12, 24, 6, tz=LONDON))
    info = step(timetable, now=pendulum.datetime(2026, 12, 27, tz=LONDON), last=last, catchup=True)
    assert info.data_interval.start == pendulum.datetime(2026, 12, 24, 6, tz=LONDON)
    assert info.data_interval.end == pendulum.datetime(2026, 12, 26, 6, tz=LONDON)  # 48 hours: 25 Dec included
    # The DAG's first run after downtime owes only the newest due occurrence, excluded dates not counted.
    first = step(timetable, now=pendulum.datetime(2026, 12, 25, 23, tz=LONDON))
    assert first.data_interval.end == pendulum.datetime(2026, 12, 24, 6, tz=LONDON)


@pytest.mark.parametrize(
    "exclude",
    [
        pytest.param(datetime.date(2026, 12, 25), id="date"),
        pytest.param("2026-12-25", id="iso-text"),
        pytest.param(pendulum.date(2026, 12, 25), id="pendulum-date"),
        pytest.param([between("2026-12-25", "2026-12-25")], id="one-day-range"),
        pytest.param({"2026-12-25", datetime.date(2026, 12, 25)}, id="set-of-two-spellings"),
    ],
)
def test_every_spelling_of_a_date_excludes_it(exclude):
    timetable = Every.day(at="06:00", timezone=LONDON, exclude=exclude)
    runs = timetable.plan.upcoming(after=pendulum.datetime(2026, 12, 24, tz=LONDON), count=3)
    assert [r.occurrence.in_timezone(LONDON).day for r in runs] == [24, 26, 27]
    (skipped,) = timetable.plan.excluded(after=pendulum.datetime(2026, 12, 24, tz=LONDON), until=runs[-1].occurrence)
    assert skipped.local_date == "2026-12-25"


def test_dates_are_local_dates_in_the_timetables_zone():
    # 23:30 in Auckland on 25 December is still the 25th there (10:30 UTC on the 25th).
    timetable = Cron("30 23 * * *", timezone="Pacific/Auckland", exclude="2026-12-25")
    runs = timetable.plan.upcoming(after=pendulum.datetime(2026, 12, 24, tz="Pacific/Auckland"), count=2)
    assert [r.occurrence.in_timezone("Pacific/Auckland").day for r in runs] == [24, 26]


def test_reasons_name_the_holiday_and_the_range():
    timetable = Every.day(
        at="09:00",
        timezone="America/New_York",
        exclude=[holidays_of("US", subdiv="NY"), between("2026-12-24", "2026-12-26")],
    )
    skipped = timetable.plan.excluded(
        after=pendulum.datetime(2026, 12, 23, tz="UTC"), until=pendulum.datetime(2026, 12, 31, tz="UTC")
    )
    assert [(s.local_date, s.reasons) for s in skipped] == [
        ("2026-12-24", ("excluded 2026-12-24 to 2026-12-26",)),
        ("2026-12-25", ("excluded 2026-12-24 to 2026-12-26", "Christmas Day (holidays US-NY)")),
        ("2026-12-26", ("excluded 2026-12-24 to 2026-12-26",)),
    ]
    assert timetable.summary == "daily at 09:00 America/New_York except holidays US-NY 1970-2099, 1 range"


def test_an_every_cron_reads_its_exclusions_in_its_timezone():
    timetable = Cron("@every 6h", timezone="Asia/Tokyo", exclude="2026-05-05")
    runs = timetable.plan.upcoming(after=pendulum.datetime(2026, 5, 4, 12, tz="Asia/Tokyo"), count=4)
    assert [r.occurrence.in_timezone("Asia/Tokyo").strftime("%d %H") for r in runs] == [
        "04 15",
        "04 21",
        "06 03",
        "06 09",
    ]
    assert timetable.summary == "cron @every 6h Asia/Tokyo except 1 date"


@pytest.mark.parametrize(
    ("exclude", "message"),
    [
        pytest.param(
            datetime.datetime(2026, 12, 25, 9),
            "exclude: datetime.datetime(2026, 12, 25, 9, 0) is a datetime",
            id="datetime",
        ),
        pytest.param(pendulum.datetime(2026, 12, 25), "exclude: DateTime(2026, 12, 25", id="pendulum-datetime"),
        pytest.param("25/12/2026", "exclude: '25/12/2026' is not a date written 'YYYY-MM-DD'", id="other-format"),
        pytest.param("2026-02-30", "exclude: '2026-02-30' is not a date written 'YYYY-MM-DD'", id="no-such-day"),
        pytest.param("\u0662026-12-25", "exclude: '\u0662026-12-25' is not a date", id="arabic-indic-digit"),
        pytest.param(datetime.date(1899, 12, 31), "exclude: 1899-12-31 is outside 1900-01-01 to 2999-12-31", id="1899"),
        pytest.param(datetime.date(3000, 1, 1), "exclude: 3000-01-01 is outside", id="3000"),
        pytest.param(20261225, "exclude: 20261225 is a int; give a date", id="int"),
        pytest.param(
            ["2026-12-25", ["2026-12-26"]], "exclude[1]: ['2026-12-26'] is a list inside the list", id="nested"
        ),
        pytest.param(
            [between("2026-01-01", "2027-01-02")],
            "exclude[0]: between('2026-01-01', '2027-01-02') spans 367 days; a range runs forward over 1 to 366 days",
            id="range-of-367-days",
        ),
        pytest.param([between("2026-01-01", "nope")], "exclude[0].last: 'nope' is not a date", id="range-end"),
        pytest.param(
            ["2026-01-01"] * (MAX_ENTRIES + 1),
            f"exclude: {MAX_ENTRIES + 1} dates and ranges and 0 holiday calendars; give at most {MAX_ENTRIES}",
            id="too-many-dates",
        ),
        pytest.param(
            [holidays_of("US")] * (MAX_CALENDARS + 1),
            f"exclude: 0 dates and ranges and {MAX_CALENDARS + 1} holiday calendars",
            id="too-many-calendars",
        ),
    ],
)
def test_bad_exclusions_are_refused_naming_the_field(exclude, message):
    with pytest.raises((ValueError, TypeError)) as refused:
        Every.day(at="09:00", timezone="UTC", exclude=exclude)
    assert str(refused.value).startswith(message), str(refused.value)
    assert "; " in str(refused.value)


def test_a_backwards_range_says_it_runs_forward():
    with pytest.raises(
        ValueError, match=r"^exclude: between\('2026-12-31', '2026-12-25'\) spans -5 days; a range runs forward"
    ):
        Every.day(at="09:00", timezone="UTC", exclude=between("2026-12-31", "2026-12-25"))


def test_a_holidays_package_object_is_refused_with_the_fix():
    import holidays

    with pytest.raises(TypeError, match=r"^exclude: .* is an object of the holidays package; pass the same arguments"):
        Every.day(at="09:00", timezone="UTC", exclude=holidays.US(subdiv="NY"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"country": "XX"}, "holidays_of.country: the holidays package refused 'XX'", id="unknown-country"),
        pytest.param(
            {"country": "US", "subdiv": "ZZ"}, "holidays_of.country: the holidays package refused", id="subdiv"
        ),
        pytest.param({"market": "NOPE"}, "holidays_of.market: the holidays package refused 'NOPE'", id="market"),
        pytest.param({"country": "US", "market": "NYSE"}, "holidays_of.country: 'US' with market 'NYSE'", id="both"),
        pytest.param({}, "holidays_of.country: None with market None; give exactly one", id="neither"),
        pytest.param({"country": "US" * 20}, "holidays_of.country: 'USUSUS", id="long-code"),
        pytest.param({"country": 1}, "holidays_of.country: 1 is a int", id="int-code"),
        pytest.param({"country": "US", "years": (1800, 1900)}, "holidays_of.years: (1800, 1900)", id="1800"),
        pytest.param(
            {"country": "US", "years": (2000, 2300)}, "holidays_of.years: (2000, 2300) is not a span", id="300y"
        ),
        pytest.param({"country": "US", "years": 2026}, "holidays_of.years: 2026 is not (first, last)", id="one-year"),
        pytest.param({"country": "US", "categories": ["nope"]}, "holidays_of.country: the holidays package", id="cat"),
        pytest.param({"country": "US", "categories": []}, "holidays_of.categories: [] is not 1 to 8", id="no-cat"),
        pytest.param({"country": "US", "observed": "yes"}, "holidays_of.observed: 'yes' is a str", id="observed"),
    ],
)
def test_holidays_of_refuses_naming_the_field(kwargs, message):
    with pytest.raises((ValueError, TypeError)) as refused:
        holidays_of(**kwargs)
    assert str(refused.value).startswith(message), str(refused.value)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(
            lambda: Cron("0 0 1 1 *", timezone="UTC", exclude=holidays_of("GB", subdiv="ENG")),
            "exclude: 'holidays GB-ENG 1970-2099' hides every occurrence from 1975-01-01T00:00:00+00:00 to "
            "2099-01-01T00:00:00+00:00; exclusions may hide a schedule for at most 366 days in a row",
            id="yearly-on-a-holiday",
        ),
        pytest.param(
            lambda: Every.week(
                on="monday",
                at="09:00",
                timezone="UTC",
                exclude=[between("2026-01-01", "2026-12-31"), between("2027-01-01", "2027-03-01")],
            ),
            "exclude: '2 ranges' hides every occurrence from 2026-01-05T09:00:00+00:00 to 2027-03-01T09:00:00+00:00",
            id="adjacent-ranges",
        ),
        pytest.param(
            lambda: Every.day(exclude="2026-12-25"),
            "exclude: '1 date' given for a cadence without a wall clock",
            id="unanchored",
        ),
    ],
)
def test_exclusions_that_would_stop_a_schedule_or_mean_nothing_are_refused(build, message):
    with pytest.raises(ValueError) as refused:
        build()
    assert str(refused.value).startswith(message), str(refused.value)


@pytest.mark.parametrize(
    "timetable",
    [
        pytest.param(
            Every.day(at="09:00", timezone="UTC", exclude=["2026-12-25", between("2026-12-28", "2027-01-01")]),
            id="daily",
        ),
        pytest.param(Every.hour(6, at="03:00", timezone="Europe/Amsterdam", exclude=holidays_of("NL")), id="hourly-nl"),
        pytest.param(
            Every.week("friday", "17:00", timezone=LONDON, exclude=holidays_of("GB", subdiv="ENG")), id="weekly"
        ),
        pytest.param(Every.month(31, "06:00", timezone="UTC", exclude="2026-12-31"), id="month-end"),
        pytest.param(
            Cron("*/15 9-17 * * 1-5", timezone="America/New_York", exclude=holidays_of(market="NYSE")), id="cron"
        ),
    ],
)
def test_serialization_round_trip_through_airflow(timetable):
    with DAG("exclusions", schedule=timetable, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        pass
    restored = DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
    assert type(restored) is type(timetable)
    assert restored.serialize() == timetable.serialize()
    assert (restored.summary, restored.description) == (timetable.summary, timetable.description)
    after = pendulum.datetime(2026, 11, 1, tz="UTC")
    assert restored.plan.upcoming(after=after, count=40) == timetable.plan.upcoming(after=after, count=40)
    until = pendulum.datetime(2027, 1, 10, tz="UTC")
    assert restored.plan.excluded(after=after, until=until) == timetable.plan.excluded(after=after, until=until)


def test_a_dag_serialized_before_exclusions_still_loads():
    data = Calendar.day("09:00", timezone="UTC").serialize()
    for added in ("exclude", "calendar", "business_day"):
        data.pop(added)
    assert Calendar.deserialize(data).summary == "daily at 09:00 UTC"
    cron = Cron("0 6 * * *").serialize()
    cron.pop("exclude")
    assert Cron.deserialize(cron).summary == "cron 0 6 * * * UTC"


def test_excluded_is_bounded_and_checks_its_count():
    timetable = Cron("* * * * *", timezone="UTC", exclude=between("2026-01-01", "2026-12-31"))
    after, until = pendulum.datetime(2025, 12, 31, tz="UTC"), pendulum.datetime(2027, 1, 1, tz="UTC")
    assert len(timetable.plan.excluded(after=after, until=until, count=1000)) == 1000
    with pytest.raises(ValueError, match="^count: 1001 is not 1 to 1000"):
        timetable.plan.excluded(after=after, until=until, count=1001)
    assert timetable.plan.excluded(after=until, until=after) == []
