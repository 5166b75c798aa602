"""Business-day cadences in Airflow: counted against the ``holidays`` package, across random years and zones."""

from __future__ import annotations

import datetime
import functools
import sys
import zoneinfo

import holidays
import pendulum
import pytest
import time_machine
from airflow.sdk import DAG
from airflow.timetables.base import DagRunInfo, TimeRestriction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables import Every, between, holidays_of
from tests.compat.airflow_names import DagSerialization

NEW_YORK = "America/New_York"
UTC = datetime.timezone.utc
ZONES = sorted(zoneinfo.available_timezones() - {"localtime", "Factory"})
CALENDARS = {
    "US-NY": {"country": "US", "subdiv": "NY"},
    "GB-ENG": {"country": "GB", "subdiv": "ENG"},
    "DE-BY": {"country": "DE", "subdiv": "BY"},
    "JP": {"country": "JP"},
    "NYSE": {"market": "NYSE"},
}


@functools.cache
def calendar(name: str):
    return holidays_of(**CALENDARS[name])


def package_holidays(name: str, year: int) -> set[datetime.date]:
    """The holidays straight from the package, not through tessera."""
    options = dict(CALENDARS[name])
    if "market" in options:
        return set(holidays.financial_holidays(options.pop("market"), years=year))
    return set(holidays.country_holidays(options.pop("country"), years=year, **options))


def every_run(timetable, earliest: datetime.datetime, latest: datetime.datetime) -> list[DagRunInfo]:
    """What the scheduler creates with catchup=True, stepping ``next_dagrun_info_v2`` as Airflow does."""
    restriction, last, runs = TimeRestriction(earliest, latest, True), None, []
    with time_machine.travel(datetime.datetime(3000, 1, 1, tzinfo=UTC), tick=False):
        while (info := timetable.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction)) is not None:
            runs.append(info)
            last = info
    return runs


def test_2026_new_york_business_days_at_nine_counted_against_the_holidays_package():
    timetable = Every.business_day(at="09:00", timezone=NEW_YORK, calendar=holidays_of("US", subdiv="NY"))
    # Runs whose period starts in 2026: from the last occurrence of 2025 (Wednesday 31 December) on.
    earliest = pendulum.datetime(2025, 12, 31, 9, tz=NEW_YORK)
    latest = pendulum.datetime(2026, 12, 31, 8, tz=NEW_YORK)
    runs = every_run(timetable, earliest, latest)
    local = [info.data_interval.end.in_timezone(NEW_YORK) for info in runs]
    year = [datetime.date(2026, 1, 1) + datetime.timedelta(days=k) for k in range(365)]
    expected = [d for d in year if d.weekday() < 5 and d not in package_holidays("US-NY", 2026)]
    assert [moment.date() for moment in local] == expected
    assert {moment.strftime("%H:%M") for moment in local} == {"09:00"}
    assert len(runs) == 248  # 261 weekdays less 13 New York holidays on weekdays


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    year=st.integers(1971, 2098),
    zone=st.sampled_from(ZONES),
    at=st.builds(datetime.time, st.integers(0, 23), st.sampled_from([0, 15, 30, 59])),
    name=st.sampled_from(sorted(CALENDARS)),
)
def test_no_excluded_date_runs_and_every_other_business_day_does(year, zone, at, name):
    timetable = Every.business_day(at=at, timezone=zone, calendar=calendar(name))
    tz = zoneinfo.ZoneInfo(zone)
    start = datetime.datetime(year, 1, 1, tzinfo=tz)
    runs = timetable.plan.upcoming(after=start, count=300, until=datetime.datetime(year + 1, 1, 1, tzinfo=tz))
    dates = [run.occurrence.astimezone(tz).date() for run in runs]
    excluded = package_holidays(name, year)
    assert not set(dates) & excluded
    assert all(d.weekday() < 5 for d in dates)
    assert len(set(dates)) == len(dates)

    def exists(day: datetime.date) -> bool:  # a date the zone skipped whole (Pacific/Apia 2011-12-30) has no run
        wall = datetime.datetime.combine(day, at, tzinfo=tz)
        return wall.astimezone(UTC).astimezone(tz).date() == day

    first, last = dates[0], dates[-1]
    span = [first + datetime.timedelta(days=k) for k in range((last - first).days + 1)]
    assert dates == [d for d in span if d.weekday() < 5 and d not in excluded and exists(d)]
    for earlier, later in zip(runs, runs[1:]):
        assert later.window_start == earlier.window_end  # windows tile across weekends and holidays


def test_a_monday_run_evaluates_friday_to_monday_and_a_holiday_joins_the_next_window():
    timetable = Every.business_day(at="09:00", timezone=NEW_YORK, calendar=holidays_of("US", subdiv="NY"))
    runs = timetable.plan.upcoming(after=pendulum.datetime(2026, 7, 1, 10, tz=NEW_YORK), count=3)
    windows = [
        (
            r.window_start.in_timezone(NEW_YORK).strftime("%a %m-%d"),
            r.window_end.in_timezone(NEW_YORK).strftime("%a %m-%d"),
        )
        for r in runs
    ]
    # Friday 3 July is Independence Day (observed): Monday's run evaluates Thursday 09:00 -> Monday 09:00.
    assert windows == [("Wed 07-01", "Thu 07-02"), ("Thu 07-02", "Mon 07-06"), ("Mon 07-06", "Tue 07-07")]
    skipped = timetable.plan.excluded(after=pendulum.datetime(2026, 7, 1, tz=NEW_YORK), until=runs[-1].occurrence)
    assert [(s.local_date, s.reasons) for s in skipped] == [
        ("2026-07-03", ("Independence Day (observed) (holidays US-NY)",))
    ]


@pytest.mark.parametrize(
    ("nth", "expected"),
    [
        pytest.param(1, ["01-02", "02-02", "03-02", "04-01", "05-01", "06-01"], id="first"),
        pytest.param(-1, ["01-30", "02-27", "03-31", "04-30", "05-29", "06-30"], id="last"),
        pytest.param(23, ["01-30", "02-27", "03-31", "04-30", "05-29", "06-30"], id="23rd-is-the-last-when-fewer"),
        pytest.param(-23, ["01-02", "02-02", "03-02", "04-01", "05-01", "06-01"], id="23rd-last-is-the-first"),
    ],
)
def test_nth_business_day_of_each_month(nth, expected):
    timetable = Every.month(business_day=nth, at="18:00", timezone=NEW_YORK, calendar=holidays_of("US", subdiv="NY"))
    runs = timetable.plan.upcoming(after=pendulum.datetime(2026, 1, 1, tz=NEW_YORK), count=6)
    assert [r.occurrence.in_timezone(NEW_YORK).strftime("%m-%d") for r in runs] == expected
    assert {r.occurrence.in_timezone(NEW_YORK).strftime("%H:%M") for r in runs} == {"18:00"}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(
            lambda: Every.month(
                business_day=1, at="09:00", timezone="UTC", calendar=between("2026-02-01", "2026-02-28")
            ),
            "calendar: '1 range' leaves no business day in 2026-02; every month a business-day cadence meets needs one",
            id="month-without-business-day",
        ),
        pytest.param(
            lambda: Every.month(business_day=0, at="09:00", timezone="UTC"),
            "business_day: 0 is not a business day of a month; use 1 to 23",
            id="business-day-0",
        ),
        pytest.param(
            lambda: Every.month(business_day=24, at="09:00", timezone="UTC"),
            "business_day: 24 is not a business day of a month",
            id="business-day-24",
        ),
        pytest.param(
            lambda: Every.month(business_day=True, at="09:00", timezone="UTC"),
            "business_day: True is a bool; give a whole number",
            id="business-day-bool",
        ),
        pytest.param(
            lambda: Every.month(on=1, business_day=1, at="09:00", timezone="UTC"),
            "on: 1 given with business_day=",
            id="on-and-business-day",
        ),
        pytest.param(
            lambda: Every.business_day(timezone=NEW_YORK),
            "at: missing; a business day is a local date",
            id="business-day-without-at",
        ),
        pytest.param(
            lambda: Every.business_day(at="09:00"),
            "timezone: missing; a business day is a local date",
            id="business-day-without-timezone",
        ),
        pytest.param(
            lambda: Every.day(at="09:00", timezone="UTC", calendar=holidays_of("US")),
            "calendar: <HolidayCalendar holidays US 1970-2099",
            id="calendar-on-a-daily-cadence",
        ),
    ],
)
def test_refusals_name_the_field(build, message):
    with pytest.raises((ValueError, TypeError)) as refused:
        build()
    assert str(refused.value).startswith(message), str(refused.value)


def _dag_round_trip(timetable):
    with DAG("business_days", schedule=timetable, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        pass
    return DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable


@pytest.mark.parametrize(
    "timetable",
    [
        pytest.param(
            Every.business_day(at="09:00", timezone=NEW_YORK, calendar=holidays_of("US", subdiv="NY")), id="daily"
        ),
        pytest.param(
            Every.month(business_day=-2, at="18:00", timezone=NEW_YORK, every=3, calendar=holidays_of(market="NYSE")),
            id="quarterly-2nd-last",
        ),
        pytest.param(
            Every.business_day(
                at="07:30", timezone="Europe/London", exclude=["2026-08-31", between("2026-12-24", "2027-01-01")]
            ),
            id="weekdays-with-exclusions",
        ),
    ],
)
def test_serialization_round_trip_through_airflow(timetable):
    restored = _dag_round_trip(timetable)
    assert type(restored) is type(timetable)
    assert restored.serialize() == timetable.serialize()
    assert restored.summary == timetable.summary
    after = pendulum.datetime(2026, 6, 1, tz="UTC")
    assert restored.plan.upcoming(after=after, count=50) == timetable.plan.upcoming(after=after, count=50)


def test_a_stored_calendar_needs_no_holidays_package(monkeypatch):
    """The scheduler and API server read the dates stored with the DAG: another (or no) package version agrees."""
    timetable = Every.business_day(at="09:00", timezone=NEW_YORK, calendar=holidays_of("US", subdiv="NY"))
    data = timetable.serialize()
    assert data["calendar"][0]["package"] == holidays.__version__
    monkeypatch.setitem(sys.modules, "holidays", None)  # `import holidays` now fails
    restored = type(timetable).deserialize(data)
    after = pendulum.datetime(2026, 1, 1, tz="UTC")
    assert restored.plan.upcoming(after=after, count=260) == timetable.plan.upcoming(after=after, count=260)
    with pytest.raises(ImportError):
        holidays_of("US")
