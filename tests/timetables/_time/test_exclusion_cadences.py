"""Excluded days, business days and unions in the pure core, against brute-force models.

Each model knows nothing of the stepping: it lists the inner cadence's occurrences one by
one, reads each one's local date with the standard library, and keeps or drops it.
"""

from __future__ import annotations

import zoneinfo
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables._time.business_days import BusinessMonths, Weekdays, first_month_without_business_day
from tessera.timetables._time.calendar import daily, hourly, monthly, weekly
from tessera.timetables._time.cron import parse_cron
from tessera.timetables._time.durations import US_PER_DAY, US_PER_HOUR, US_PER_MINUTE
from tessera.timetables._time.excluded_days import ExcludedDays, ExcludedSpan, day_number
from tessera.timetables._time.excluding import ExcludingCadence
from tessera.timetables._time.grid import EpochGrid
from tessera.timetables._time.horizon import MAX_HIDDEN_STRETCH, longest_hidden_stretch
from tessera.timetables._time.union import UnionCadence
from tessera.timetables._time.wallclock import WallClock

from .counting import CountingCadence

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
ZONES = sorted(zoneinfo.available_timezones() - {"localtime", "Factory"})
DST_ZONES = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "Pacific/Apia"]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def local_date(zone: ZoneInfo, instant: int) -> date:
    return (_EPOCH + timedelta(microseconds=instant)).astimezone(zone).date()


def us(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


def walk(cadence, start: int, count: int) -> list[int]:
    found, t = [], start
    for _ in range(count):
        t = cadence.following(t)
        found.append(t)
    return found


def spans(days: list[int], reason: str = "excluded date") -> ExcludedDays:
    return ExcludedDays(ExcludedSpan(day, day, reason) for day in days)


def inner_cadences(zone: ZoneInfo) -> st.SearchStrategy:
    clock = WallClock(zone)
    minutes = st.integers(0, 24 * 60 - 1).map(lambda m: m * US_PER_MINUTE)
    return st.one_of(
        st.builds(lambda t: daily(clock, t, 1), minutes),
        st.builds(lambda t, n: hourly(clock, t, n), minutes, st.sampled_from([1, 3, 6])),
        st.builds(lambda t, wd: weekly(clock, t, 1, wd), minutes, st.integers(0, 6)),
        st.builds(lambda t: Weekdays(clock, t), minutes),
        st.sampled_from(["30 1 * * *", "0 */4 * * *", "15 9 * * 1-5", "0 0 1 * *"]).map(
            lambda text: parse_cron(text, zone, "cronjob")
        ),
        st.sampled_from([US_PER_HOUR, 6 * US_PER_HOUR, US_PER_DAY]).map(EpochGrid),
    )


# -- excluded days ---------------------------------------------------------------------------------


def test_runs_merge_overlapping_and_adjacent_spans_and_keep_every_reason():
    days = ExcludedDays(
        [
            ExcludedSpan(10, 12, "range"),
            ExcludedSpan(13, 13, "holiday"),
            ExcludedSpan(12, 12, "date"),
            ExcludedSpan(20, 20, "x"),
        ]
    )
    assert list(zip(days.firsts, days.lasts)) == [(10, 13), (20, 20)]
    assert days.reasons(12) == ["range", "date"]  # in the order the spans start
    assert days.reasons(14) == [] and 14 not in days and 13 in days


@PROPERTY
@given(data=st.data(), zone_name=st.sampled_from(DST_ZONES + ["UTC", "Asia/Kathmandu"]))
def test_excluding_steps_as_filtering_the_inner_occurrences(data, zone_name):
    zone = ZoneInfo(zone_name)
    inner = data.draw(inner_cadences(zone))
    start = us(datetime(data.draw(st.integers(1971, 2098)), 1, 1, tzinfo=timezone.utc))
    first_day = start // US_PER_DAY
    excluded = sorted(set(data.draw(st.lists(st.integers(first_day - 2, first_day + 40), max_size=15))))
    cadence = ExcludingCadence(inner, spans(excluded), WallClock(zone))
    expected = [o for o in walk(inner, start, 400) if day_number(local_date(zone, o)) not in excluded]
    got = walk(cadence, start, len(expected) // 2)
    assert got == expected[: len(got)]
    # Backwards, each occurrence's predecessor is the one before it in the filtered list.
    for earlier, later in zip(got, got[1:]):
        assert cadence.preceding(later) == earlier
        assert cadence.at_or_before(later - 1) == earlier
        assert cadence.at_or_after(earlier + 1) == later


# -- the horizon -------------------------------------------------------------------------------------


def _stretch(text: str, excluded: list[tuple[date, date]], zone: str = "America/New_York"):
    clock = WallClock(ZoneInfo(zone))
    days = ExcludedDays(ExcludedSpan(day_number(a), day_number(b), "x") for a, b in excluded)
    return longest_hidden_stretch(parse_cron(text, ZoneInfo(zone), "cronjob"), days, clock)


@pytest.mark.parametrize(
    ("text", "excluded", "refused"),
    [
        pytest.param("0 0 1 1 *", [(date(2027, 1, 1), date(2027, 1, 1))], False, id="yearly-one-year-hidden"),
        pytest.param(
            "0 0 1 1 *", [(date(y, 1, 1), date(y, 1, 1)) for y in (2027, 2028)], False, id="yearly-two-hidden-365d"
        ),
        pytest.param(
            "0 0 1 1 *", [(date(y, 1, 1), date(y, 1, 1)) for y in (2027, 2028, 2029)], True, id="yearly-three-hidden"
        ),
        pytest.param(
            "0 9 * * *",
            [(date(2027, 1, 1), date(2027, 12, 31)), (date(2028, 1, 1), date(2028, 1, 3))],  # 367 days
            True,
            id="daily-adjacent-ranges-over-a-year",
        ),
        pytest.param(
            "0 9 * * *",
            [(date(2027, 1, 1), date(2027, 12, 31)), (date(2028, 1, 3), date(2028, 6, 1))],
            False,
            id="daily-one-surviving-day-between-ranges",
        ),
        pytest.param("*/5 * * * *", [(date(2027, 1, 1), date(2028, 1, 1))], False, id="dense-cron-a-366-day-range"),
        pytest.param(
            "0 9 * * *",
            [(date(2027, 1, 1), date(2027, 12, 31)), (date(2028, 1, 1), date(2028, 1, 2))],
            False,
            id="daily-hidden-exactly-366-days",
        ),
    ],
)
def test_exclusions_may_hide_a_schedule_for_at_most_366_days(text, excluded, refused):
    found = _stretch(text, excluded)
    assert (found is not None) == refused
    if found is not None:
        assert found[1] - found[0] > MAX_HIDDEN_STRETCH


def test_a_step_across_an_accepted_stretch_costs_one_inner_step_per_run():
    # 366 excluded days in single-day runs, every second one a weekday: the stretch of a weekday cadence is
    # under a year, so it is accepted, and one step across it costs at most a few inner steps per run.
    zone = ZoneInfo("Europe/Berlin")
    clock = WallClock(zone)
    first = day_number(date(2027, 1, 1))
    days = spans(list(range(first, first + 366)))
    inner = CountingCadence(Weekdays(clock, 9 * US_PER_HOUR))
    assert longest_hidden_stretch(Weekdays(clock, 9 * US_PER_HOUR), days, clock) is None
    cadence = ExcludingCadence(inner, days, clock)
    after = us(datetime(2026, 12, 31, 12, tzinfo=timezone.utc))
    assert local_date(zone, cadence.following(after)) == date(2028, 1, 3)  # the Monday after
    assert inner.steps <= 3


# -- business days -----------------------------------------------------------------------------------


@PROPERTY
@given(zone_name=st.sampled_from(ZONES), year=st.integers(1901, 2998), hour=st.integers(6, 20))
def test_weekdays_are_every_monday_to_friday_at_the_wall_time(zone_name, year, hour):
    zone = ZoneInfo(zone_name)
    cadence = Weekdays(WallClock(zone), hour * US_PER_HOUR)
    start = us(datetime(year, 3, 1, tzinfo=timezone.utc))
    got = walk(cadence, start, 30)
    dates = [local_date(zone, o) for o in got]
    assert all(d.weekday() < 5 for d in dates)
    assert len(set(dates)) == len(dates)
    first, last = dates[0], dates[-1]
    weekdays = [first + timedelta(days=k) for k in range((last - first).days + 1)]
    expected = [d for d in weekdays if d.weekday() < 5]
    # A date a zone skipped whole (Pacific/Apia 2011-12-30) has no run; none other is missing.
    assert set(expected) - set(dates) <= {date(2011, 12, 30), date(1993, 8, 20), date(1993, 8, 21)}


def brute_nth(year: int, month: int, nth: int, holidays: set[date]) -> date:
    days = [date(year, month, d) for d in range(1, 32) if _valid(year, month, d)]
    business = [d for d in days if d.weekday() < 5 and d not in holidays]
    return business[min(nth, len(business)) - 1] if nth > 0 else business[max(nth, -len(business))]


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


@PROPERTY
@given(
    zone_name=st.sampled_from(DST_ZONES),
    year=st.integers(1971, 2098),
    nth=st.one_of(st.integers(1, 23), st.integers(-23, -1)),
    every=st.sampled_from([1, 1, 2, 3, 12]),
    holiday_days=st.lists(st.integers(0, 400), max_size=30),
)
def test_nth_business_day_of_a_month(zone_name, year, nth, every, holiday_days):
    zone = ZoneInfo(zone_name)
    holidays = {date(year, 1, 1) + timedelta(days=k) for k in holiday_days}
    days = spans(sorted(day_number(d) for d in holidays))
    assert first_month_without_business_day(days, every) is None
    cadence = BusinessMonths(WallClock(zone), every, nth, 10 * US_PER_HOUR, days)
    got = walk(cadence, us(datetime(year, 1, 1, tzinfo=timezone.utc)) - 2 * US_PER_DAY, 12 // every + 1)
    for occurrence in got:
        local = local_date(zone, occurrence)
        assert ((local.year - 1970) * 12 + local.month - 1) % every == 0
        assert local == brute_nth(local.year, local.month, nth, holidays)


def test_a_month_whose_weekdays_are_all_holidays_is_found():
    february = [day_number(date(2026, 2, 1)) + k for k in range(28)]
    assert first_month_without_business_day(spans(february), 1) == (2026, 2)
    assert first_month_without_business_day(spans(february), 12) is None  # every 12 months meets only January


# -- unions -----------------------------------------------------------------------------------------


@PROPERTY
@given(data=st.data(), zone_name=st.sampled_from(ZONES), year=st.integers(1971, 2098))
def test_a_union_is_the_merge_of_its_members_occurrences(data, zone_name, year):
    zone = ZoneInfo(zone_name)
    members = [data.draw(inner_cadences(zone)) for _ in range(data.draw(st.integers(2, 3)))]
    union = UnionCadence(members)
    start = us(datetime(year, data.draw(st.integers(1, 12)), 1, tzinfo=timezone.utc))
    merged = sorted({o for member in members for o in walk(member, start, 60)})
    horizon = min(walk(member, start, 60)[-1] for member in members)
    expected = [o for o in merged if o <= horizon]
    assert walk(union, start, len(expected)) == expected
    for earlier, later in zip(expected, expected[1:]):
        assert union.preceding(later) == earlier


def test_equal_instants_of_two_members_are_one_occurrence():
    zone = ZoneInfo("America/New_York")
    union = UnionCadence([daily(WallClock(zone), 9 * US_PER_HOUR, 1), parse_cron("0 9 * * *", zone, "cronjob")])
    start = us(datetime(2026, 3, 1, tzinfo=timezone.utc))
    assert walk(union, start, 5) == walk(daily(WallClock(zone), 9 * US_PER_HOUR, 1), start, 5)


def test_the_shortest_gap_of_a_union_counts_the_members_times_of_day():
    zone = ZoneInfo("Europe/Amsterdam")
    clock = WallClock(zone)
    union = UnionCadence([daily(clock, 9 * US_PER_HOUR, 1), parse_cron("0 17 * * 5", zone, "cronjob")])
    assert union.shortest_gap == 8 * US_PER_HOUR
    assert UnionCadence([monthly(clock, 0, 1, 31), EpochGrid(US_PER_DAY)]).shortest_gap == 1_000_000
