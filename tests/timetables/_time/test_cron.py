"""Cron cadences on a local wall clock: CronJob DST semantics, the "once" policy, parsing, brute force."""

from __future__ import annotations

import datetime
import zoneinfo

import pytest
from croniter import croniter
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tessera.timetables._time.cron import CronCadence, CronInvalid, parse_cron
from tessera.timetables._time.durations import US_PER_DAY, US_PER_MINUTE, US_PER_SECOND
from tessera.timetables._time.epoch import days_in_month
from tessera.timetables._time.grid import EpochGrid

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


def cadence(expression: str, zone: str = "America/New_York", dst: str = "cronjob"):
    return parse_cron(expression, zoneinfo.ZoneInfo(zone), dst)


def us(moment: datetime.datetime) -> int:
    return (moment - EPOCH) // datetime.timedelta(microseconds=1)


def local(instant: int, zone: str) -> str:
    return (EPOCH + datetime.timedelta(microseconds=instant)).astimezone(zoneinfo.ZoneInfo(zone)).isoformat()


def between(schedule, start: int, end: int) -> list[int]:
    """Occurrences in ``[start, end)``, stepped with ``following``."""
    found, t = [], schedule.at_or_after(start)
    while t < end:
        found.append(t)
        t = schedule.following(t)
    return found


def on_local_day(expression: str, zone: str, day: str, dst: str = "cronjob") -> list[str]:
    tz = zoneinfo.ZoneInfo(zone)
    date = datetime.date.fromisoformat(day)
    start = datetime.datetime.combine(date, datetime.time(), tz)
    end = datetime.datetime.combine(date + datetime.timedelta(days=1), datetime.time(), tz)
    return [local(t, zone) for t in between(cadence(expression, zone, dst), us(start), us(end))]


# -- the acceptance cases and DST zones with unusual rules -----------------------------------


@pytest.mark.parametrize(
    ("expression", "zone", "day", "expected"),
    [
        pytest.param(
            "30 1 * * *",
            "America/New_York",
            "2026-11-01",
            ["2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00"],
            id="new-york-fall-back-fires-twice",
        ),
        pytest.param("30 2 * * *", "America/New_York", "2026-03-08", [], id="new-york-spring-forward-never"),
        pytest.param(
            "45 1 * * *",
            "Australia/Lord_Howe",
            "2026-04-05",
            ["2026-04-05T01:45:00+11:00", "2026-04-05T01:45:00+10:30"],
            id="lord-howe-half-hour-fold-twice",
        ),
        pytest.param("15 2 * * *", "Australia/Lord_Howe", "2026-10-04", [], id="lord-howe-half-hour-gap-never"),
        pytest.param(
            "30 1 * * *",
            "Europe/Dublin",
            "2026-10-25",
            ["2026-10-25T01:30:00+01:00", "2026-10-25T01:30:00+00:00"],
            id="dublin-negative-dst-fall-back-twice",
        ),
        pytest.param("30 1 * * *", "Europe/Dublin", "2026-03-29", [], id="dublin-spring-forward-never"),
        pytest.param(
            "30 23 * * *",
            "America/Santiago",
            "2026-04-04",
            ["2026-04-04T23:30:00-03:00", "2026-04-04T23:30:00-04:00"],
            id="santiago-midnight-fall-back-repeats-previous-day",
        ),
        pytest.param("30 0 * * *", "America/Santiago", "2026-09-06", [], id="santiago-midnight-gap-never"),
        pytest.param(
            "30 23 * * *",
            "Asia/Beirut",
            "2026-10-24",
            ["2026-10-24T23:30:00+03:00", "2026-10-24T23:30:00+02:00"],
            id="beirut-midnight-fall-back-twice",
        ),
        pytest.param("30 0 * * *", "Asia/Beirut", "2026-03-29", [], id="beirut-midnight-gap-never"),
        pytest.param("0 12 * * *", "Pacific/Apia", "2011-12-30", [], id="apia-skipped-day-never"),
        pytest.param("0 6 * * *", "UTC", "2026-11-01", ["2026-11-01T06:00:00+00:00"], id="utc-daily"),
    ],
)
def test_cronjob_dst_semantics(expression, zone, day, expected):
    assert on_local_day(expression, zone, day) == expected


@pytest.mark.parametrize(
    ("expression", "day", "count"),
    [
        pytest.param("30 * * * *", "2026-11-01", 25, id="hourly-fall-back-25"),
        pytest.param("30 * * * *", "2026-03-08", 23, id="hourly-spring-forward-23"),
        pytest.param("30 * * * *", "2026-07-01", 24, id="hourly-summer-24"),
        pytest.param("*/15 * * * *", "2026-11-01", 100, id="quarter-hourly-fall-back-100"),
        pytest.param("* * * * *", "2026-03-08", 23 * 60, id="minutely-spring-forward"),
    ],
)
def test_hourly_or_finer_sees_the_real_hours(expression, day, count):
    assert len(on_local_day(expression, "America/New_York", day)) == count


@pytest.mark.parametrize(
    ("expression", "zone", "day", "expected"),
    [
        pytest.param(
            "30 1 * * *",
            "America/New_York",
            "2026-11-01",
            ["2026-11-01T01:30:00-04:00"],
            id="fold-first-instance",
        ),
        pytest.param(
            "30 2 * * *",
            "America/New_York",
            "2026-03-08",
            ["2026-03-08T03:00:00-04:00"],
            id="gap-fires-after-gap",
        ),
        pytest.param(
            "15 2 * * *",
            "Australia/Lord_Howe",
            "2026-10-04",
            ["2026-10-04T02:30:00+11:00"],
            id="lord-howe-gap-fires-at-half-past",
        ),
        pytest.param(
            "*/20 2-3 * * *",
            "America/New_York",
            "2026-03-08",
            ["2026-03-08T03:00:00-04:00", "2026-03-08T03:20:00-04:00", "2026-03-08T03:40:00-04:00"],
            id="gap-readings-collapse-into-one",
        ),
    ],
)
def test_once_policy(expression, zone, day, expected):
    assert on_local_day(expression, zone, day, dst="once") == expected


@pytest.mark.parametrize(
    ("day", "count"),
    [
        pytest.param("2026-11-01", 24, id="fall-back-24"),
        pytest.param("2026-03-08", 24, id="spring-forward-24"),
    ],
)
def test_once_policy_hourly_counts(day, count):
    assert len(on_local_day("30 * * * *", "America/New_York", day, dst="once")) == count


@pytest.mark.parametrize(
    ("dst", "expected"),
    [
        pytest.param("cronjob", ["2011-12-29T12:00:00-10:00", "2011-12-31T12:00:00+14:00"], id="cronjob"),
        pytest.param(
            "once",
            ["2011-12-29T12:00:00-10:00", "2011-12-31T00:00:00+14:00", "2011-12-31T12:00:00+14:00"],
            id="once",
        ),
    ],
)
def test_apia_skipped_day(dst, expected):
    schedule = cadence("0 12 * * *", "Pacific/Apia", dst)
    start, end = (
        us(datetime.datetime(2011, 12, 29, 10, tzinfo=UTC)),
        us(datetime.datetime(2011, 12, 31, 12, tzinfo=UTC)),
    )
    assert [local(t, "Pacific/Apia") for t in between(schedule, start, end)] == expected


# -- parsing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "after", "expected"),
    [
        pytest.param("@yearly", "2026-03-01T00:00", "2027-01-01T00:00", id="yearly"),
        pytest.param("@annually", "2026-03-01T00:00", "2027-01-01T00:00", id="annually"),
        pytest.param("@monthly", "2026-03-01T00:00", "2026-04-01T00:00", id="monthly"),
        pytest.param("@weekly", "2026-03-04T00:00", "2026-03-08T00:00", id="weekly-sunday"),
        pytest.param("@daily", "2026-03-04T00:00", "2026-03-05T00:00", id="daily"),
        pytest.param("@midnight", "2026-03-04T00:00", "2026-03-05T00:00", id="midnight"),
        pytest.param("@hourly", "2026-03-04T00:00", "2026-03-04T01:00", id="hourly"),
        pytest.param("0 6 * * 0", "2026-03-04T00:00", "2026-03-08T06:00", id="zero-is-sunday"),
        pytest.param("0 6 * * sun", "2026-03-04T00:00", "2026-03-08T06:00", id="day-name"),
        pytest.param("0 6 1 feb,mar *", "2026-01-04T00:00", "2026-02-01T06:00", id="month-names"),
        pytest.param("0 0 13 * 5", "2026-03-01T00:00", "2026-03-06T00:00", id="both-days-restricted-or-friday"),
        pytest.param("0 0 13 * 5", "2026-03-06T00:00", "2026-03-13T00:00", id="both-days-restricted-or-13th"),
        pytest.param("0 0 * * 5", "2026-03-01T00:00", "2026-03-06T00:00", id="star-day-of-month-and"),
        pytest.param("0 0 ? * 5", "2026-03-01T00:00", "2026-03-06T00:00", id="question-mark-is-star"),
        pytest.param("0 0 */2 * 1", "2026-03-01T00:00", "2026-03-02T00:00", id="stepped-star-is-restricted-or"),
        pytest.param("0 0 1-1 jan-jan *", "2026-03-01T00:00", "2027-01-01T00:00", id="equal-range-is-one-value"),
        pytest.param("0 0 29 2 *", "2026-03-01T00:00", "2028-02-29T00:00", id="leap-day"),
        pytest.param("  0   6 * *  * ", "2026-03-04T00:00", "2026-03-04T06:00", id="extra-whitespace"),
    ],
)
def test_fields_and_descriptors(expression, after, expected):
    schedule = cadence(expression, "UTC")
    after_us = us(datetime.datetime.fromisoformat(after).replace(tzinfo=UTC))
    assert local(schedule.following(after_us), "UTC") == expected + ":00+00:00"


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        pytest.param("61 * * * *", "61 is out of range (the highest minute is 59)", id="minute-out-of-range"),
        pytest.param("* * * *", "has 4 fields", id="four-fields"),
        pytest.param("0 * * * * *", "has 6 fields", id="seconds-field"),
        pytest.param("0 0 L * *", "invalid day-of-month field 'L'", id="last-day-L"),
        pytest.param("0 0 15W * *", "invalid day-of-month field '15W'", id="nearest-weekday-W"),
        pytest.param("0 0 * * 5#2", "invalid day-of-week field '5#2'", id="nth-weekday-hash"),
        pytest.param("0 0 * * 5L", "invalid day-of-week field '5L'", id="last-weekday"),
        pytest.param("H * * * *", "invalid minute field 'H'", id="hashed-H"),
        pytest.param("0 0 * foo *", "invalid month field 'foo'", id="unknown-month-name"),
        pytest.param("*/0 * * * *", "the step of '*/0' is 0", id="zero-step"),
        pytest.param("0 0 30 2 *", "never fires", id="february-30th"),
        pytest.param("CRON_TZ=UTC 0 6 * * *", "timezone inside", id="cron-tz-prefix"),
        pytest.param("@reboot", "not a known descriptor", id="reboot"),
        pytest.param("@every", "must be spelled exactly", id="every-without-duration"),
        pytest.param("@every 0s", "needs a duration after @every", id="every-zero"),
        pytest.param("@every 5x", "needs a duration after @every", id="every-bad-unit"),
        pytest.param("   ", "is empty", id="empty"),
    ],
)
def test_invalid_expressions_are_refused_naming_the_expression(expression, problem):
    with pytest.raises(CronInvalid) as caught:
        cadence(expression)
    message = str(caught.value)
    assert message.startswith(f"expression: {expression!r} ")
    assert problem in message
    assert "'0 6 * * *'" in message  # the fix names a valid form
    assert isinstance(caught.value, ValueError)


def test_expression_must_be_text():
    with pytest.raises(TypeError, match="expression: 5 is a int"):
        parse_cron(5, zoneinfo.ZoneInfo("UTC"), "cronjob")


# -- @every ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "interval"),
    [
        pytest.param("@every 5m", 5 * US_PER_MINUTE, id="five-minutes"),
        pytest.param("@every 7m", 7 * US_PER_MINUTE, id="seven-minutes-need-not-divide-a-day"),
        pytest.param("@every 1h30m", 90 * US_PER_MINUTE, id="compound"),
    ],
)
def test_every_is_anchored_at_the_epoch(expression, interval):
    schedule = cadence(expression, "Asia/Kathmandu")  # the timezone plays no part
    assert schedule == EpochGrid(interval)
    t = us(datetime.datetime(2026, 3, 8, 6, 59, 59, tzinfo=UTC))
    assert schedule.following(t) % interval == 0
    assert schedule.following(t) - interval <= t < schedule.following(t)


# -- properties against a brute force -------------------------------------------------------

# A field drawn as (text, values, unrestricted) so the model never parses cron text itself.
FieldDraw = tuple[str, frozenset[int], bool]


@st.composite
def cron_field(draw, low: int, high: int, star_weight: int) -> FieldDraw:
    kind = draw(st.sampled_from(["star"] * star_weight + ["value", "list", "range", "step", "range_step", "from"]))
    if kind == "star":
        return "*", frozenset(range(low, high + 1)), True
    if kind == "value":
        value = draw(st.integers(low, high))
        return str(value), frozenset({value}), False
    if kind == "list":
        values = draw(st.sets(st.integers(low, high), min_size=2, max_size=4))
        return ",".join(map(str, sorted(values))), frozenset(values), False
    start = draw(st.integers(low, high - 1))
    if kind == "range":
        end = draw(st.integers(start + 1, high))
        return f"{start}-{end}", frozenset(range(start, end + 1)), False
    step = draw(st.integers(2, high - low))
    if kind == "step":
        return f"*/{step}", frozenset(range(low, high + 1, step)), False
    if kind == "range_step":
        end = draw(st.integers(start + 1, high))
        return f"{start}-{end}/{step}", frozenset(range(start, end + 1, step)), False
    return f"{start}/{step}", frozenset(range(start, high + 1, step)), False


@st.composite
def cron_expressions(draw) -> tuple[str, list[FieldDraw]]:
    fields = [
        draw(cron_field(0, 59, star_weight=1)),
        draw(cron_field(0, 23, star_weight=3)),
        draw(cron_field(1, 31, star_weight=6)),
        draw(cron_field(1, 12, star_weight=8)),
        draw(
            st.one_of(
                cron_field(0, 6, star_weight=6),
                st.sampled_from([("sun", frozenset({0}), False), ("mon-fri", frozenset(range(1, 6)), False)]),
            )
        ),
    ]
    (_, _, _), (_, _, _), (_, days, days_star), (_, months, _), (_, _, weekdays_star) = fields
    # An expression whose date fields can never agree is refused at parse time (a test of its own).
    assume(not (days_star or weekdays_star) or any(day <= days_in_month(None, m) for m in months for day in days))
    return " ".join(text for text, _, _ in fields), fields


def model_matches(fields: list[FieldDraw], reading: datetime.datetime) -> bool:
    (_, minutes, _), (_, hours, _), (_, days, days_star), (_, months, _), (_, weekdays, weekdays_star) = fields
    if reading.second or reading.minute not in minutes or reading.hour not in hours or reading.month not in months:
        return False
    day, weekday = reading.day in days, reading.isoweekday() % 7 in weekdays
    return (day and weekday) if days_star or weekdays_star else (day or weekday)


def reading_at(seconds: int, zone: zoneinfo.ZoneInfo) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, zone)


def brute_force(fields, zone, low: int, high: int, dst: str) -> list[int]:
    """Every instant in ``[low, high]`` (seconds) whose local reading matches, by trying them all.

    Local minutes start at UTC seconds congruent to minus the offset, so each distinct
    offset remainder is walked minute by minute.
    """
    remainders = {int(reading_at(s, zone).utcoffset().total_seconds()) % 60 for s in range(low, high + 1, 600)}
    found = set()
    for remainder in remainders:
        first = low + (-remainder - low) % 60
        previous = reading_at(first - 60, zone).replace(tzinfo=None)
        for s in range(first, high + 1, 60):
            reading = reading_at(s, zone)
            naive = reading.replace(tzinfo=None)
            if dst == "cronjob":
                if model_matches(fields, reading):
                    found.add(s)
            else:
                if model_matches(fields, reading) and reading.fold == 0:
                    found.add(s)
                skipped = previous + datetime.timedelta(minutes=1)
                while skipped < naive:  # the clock jumped over these readings: the first instant after fires
                    if model_matches(fields, skipped):
                        found.add(s)
                        break
                    skipped += datetime.timedelta(minutes=1)
            previous = naive
    return sorted(s * US_PER_SECOND for s in found)


SPECIAL_DAYS = [
    ("Australia/Lord_Howe", datetime.date(2026, 4, 5)),
    ("Australia/Lord_Howe", datetime.date(2026, 10, 4)),
    ("Europe/Dublin", datetime.date(2026, 10, 25)),
    ("America/Santiago", datetime.date(2026, 4, 5)),
    ("America/Santiago", datetime.date(2026, 9, 6)),
    ("Asia/Beirut", datetime.date(2026, 10, 25)),
    ("Pacific/Apia", datetime.date(2011, 12, 30)),
    ("America/New_York", datetime.date(2026, 11, 1)),
]
ZONES = sorted(zoneinfo.available_timezones())


def offset_changes(zone: zoneinfo.ZoneInfo, year: int) -> list[datetime.date]:
    days, previous = [], None
    for ordinal in range(datetime.date(year, 1, 1).toordinal(), datetime.date(year, 12, 31).toordinal() + 1):
        date = datetime.date.fromordinal(ordinal)
        offset = datetime.datetime.combine(date, datetime.time(12), UTC).astimezone(zone).utcoffset()
        if previous is not None and offset != previous:
            days.append(date)
        previous = offset
    return days


@st.composite
def zone_and_day(draw) -> tuple[str, datetime.date]:
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(SPECIAL_DAYS))
    name = draw(st.sampled_from(ZONES))
    year = draw(st.integers(1900, 2100))
    changes = offset_changes(zoneinfo.ZoneInfo(name), year)
    if changes and draw(st.booleans()):  # most draws land on a day the offset changes
        return name, draw(st.sampled_from(changes))
    return name, datetime.date(year, 1, 1) + datetime.timedelta(days=draw(st.integers(0, 364)))


def check_against_brute_force(expression, fields, name, day, dst, probes):
    zone = zoneinfo.ZoneInfo(name)
    centre = (datetime.datetime.combine(day, datetime.time(), UTC) - EPOCH) // datetime.timedelta(seconds=1)
    low, high = centre - 30 * 3600, centre + 30 * 3600
    if dst == "once":
        # The model finds a gap's first instant by minute steps: whole-minute offsets only.
        assume(all(reading_at(s, zone).utcoffset().total_seconds() % 60 == 0 for s in range(low, high, 3600)))
    expected = brute_force(fields, zone, low, high, dst)
    schedule = parse_cron(expression, zone, dst)
    assert isinstance(schedule, CronCadence)
    low_us, high_us = low * US_PER_SECOND, high * US_PER_SECOND

    assert between(schedule, low_us, high_us + 1) == expected  # strictly increasing, none missed
    for fraction in probes:
        t = low_us + int((high_us - low_us) * fraction)
        after = [o for o in expected if o > t]
        at_or_after = [o for o in expected if o >= t]
        at_or_before = [o for o in expected if o <= t]
        assert schedule.following(t) == after[0] if after else schedule.following(t) > high_us
        assert schedule.at_or_after(t) == at_or_after[0] if at_or_after else schedule.at_or_after(t) > high_us
        assert schedule.at_or_before(t) == at_or_before[-1] if at_or_before else schedule.at_or_before(t) < low_us
    for index, occurrence in enumerate(expected):
        if index:
            assert schedule.preceding(occurrence) == expected[index - 1]
        else:
            assert schedule.preceding(occurrence) < low_us


PROBES = st.lists(st.floats(0, 1), min_size=1, max_size=5)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cron_expressions(), zone_and_day(), PROBES)
def test_cronjob_policy_matches_brute_force(expression_and_fields, place, probes):
    expression, fields = expression_and_fields
    check_against_brute_force(expression, fields, *place, "cronjob", probes)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cron_expressions(), zone_and_day(), PROBES)
def test_once_policy_matches_brute_force(expression_and_fields, place, probes):
    expression, fields = expression_and_fields
    check_against_brute_force(expression, fields, *place, "once", probes)


@settings(max_examples=100, deadline=None)
@given(cron_expressions(), st.integers(0, 40 * 365 * US_PER_DAY))
def test_utc_agrees_with_croniter(expression_and_fields, start):
    """Without DST the wall clock is UTC, and croniter's own matcher must agree with ours."""
    expression, _ = expression_and_fields
    schedule = cadence(expression, "UTC")
    reference = croniter(expression, start_time=EPOCH + datetime.timedelta(microseconds=start))
    t = start
    for _ in range(20):
        t = schedule.following(t)
        assert t == us(reference.get_next(datetime.datetime))


_DAY_FIELDS = st.sampled_from(["*", "1", "13", "29", "31", "1-7", "*/3", "15,31", "?"])
_MONTH_FIELDS = st.sampled_from(["*", "2", "2,4", "*/5", "jan-mar", "dec"])
_WEEKDAY_FIELDS = st.sampled_from(["*", "0", "5", "1-5", "sat,sun", "*/2", "?"])


@settings(max_examples=300, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    days=_DAY_FIELDS,
    months=_MONTH_FIELDS,
    weekdays=_WEEKDAY_FIELDS,
    year=st.integers(min_value=1, max_value=9999),
    month=st.integers(min_value=1, max_value=12),
)
def test_the_days_of_a_month_stepped_by_arithmetic_are_the_days_a_date_matches(days, months, weekdays, year, month):
    from tessera.timetables._time.cron_fields import parse_fields

    text = f"0 0 {days} {months} {weekdays}"
    try:
        fields = parse_fields(text, text)
    except CronInvalid:
        assume(False)
    one_by_one = [d for d in range(1, days_in_month(year, month) + 1) if fields.matches(datetime.date(year, month, d))]
    assert fields.days_matching(year, month) == one_by_one
