"""Calendar cadences, labelled cases: DST gaps and repeats, odd zones, month ends, multi-period alignment."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from tessera.timetables._time.calendar_spec import CalendarSpec
from tessera.timetables._time.plan import Plan

HOUR = 3_600_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def us(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


def local(t: int, zone: str) -> datetime:
    return (_EPOCH + timedelta(microseconds=t)).astimezone(ZoneInfo(zone))


def cadence(unit: str, *, every: int = 1, on: object = None, at: object = None, timezone: str | None = None):
    return CalendarSpec.parse(unit, every=every, on=on, at=at, timezone=timezone).cadence()


def walk(c, start: datetime, count: int) -> list[int]:
    """``count`` occurrences from the first at or after ``start``."""
    out = [c.at_or_after(us(start))]
    while len(out) < count:
        out.append(c.following(out[-1]))
    return out


def wall(times: list[int], zone: str) -> list[str]:
    return [local(t, zone).strftime("%Y-%m-%d %H:%M %z") for t in times]


# (label, cadence spec, zone, first local instant to look at, expected occurrences in local time)
CASES = [
    (
        "new-york-spring-forward-daily-0900",
        dict(unit="day", at="09:00"),
        "America/New_York",
        datetime(2026, 3, 7),
        ["2026-03-07 09:00 -0500", "2026-03-08 09:00 -0400", "2026-03-09 09:00 -0400"],
    ),
    (
        "new-york-fall-back-daily-0900",
        dict(unit="day", at="09:00"),
        "America/New_York",
        datetime(2026, 10, 31),
        ["2026-10-31 09:00 -0400", "2026-11-01 09:00 -0500", "2026-11-02 09:00 -0500"],
    ),
    (
        "new-york-gap-time-runs-when-the-gap-ends",
        dict(unit="day", at="02:30"),
        "America/New_York",
        datetime(2026, 3, 7),
        ["2026-03-07 02:30 -0500", "2026-03-08 03:00 -0400", "2026-03-09 02:30 -0400"],
    ),
    (
        "new-york-repeated-time-runs-once-at-its-first-instance",
        dict(unit="day", at="01:30"),
        "America/New_York",
        datetime(2026, 10, 31),
        ["2026-10-31 01:30 -0400", "2026-11-01 01:30 -0400", "2026-11-02 01:30 -0500"],
    ),
    (
        "new-york-hourly-fall-back-the-repeated-hour-runs-once",
        dict(unit="hour", at="00:30"),
        "America/New_York",
        datetime(2026, 11, 1, 0, 30),
        ["2026-11-01 00:30 -0400", "2026-11-01 01:30 -0400", "2026-11-01 02:30 -0500"],
    ),
    (
        "new-york-hourly-spring-forward-the-skipped-hour-runs-at-the-gap-end",
        dict(unit="hour", at="00:30"),
        "America/New_York",
        datetime(2026, 3, 8, 1, 30),
        ["2026-03-08 01:30 -0500", "2026-03-08 03:00 -0400", "2026-03-08 03:30 -0400"],
    ),
    (
        "lord-howe-30-minute-gap",
        dict(unit="day", at="02:15"),
        "Australia/Lord_Howe",
        datetime(2026, 10, 3),
        ["2026-10-03 02:15 +1030", "2026-10-04 02:30 +1100", "2026-10-05 02:15 +1100"],
    ),
    (
        "lord-howe-30-minute-repeat",
        dict(unit="day", at="01:45"),
        "Australia/Lord_Howe",
        datetime(2026, 4, 4),
        ["2026-04-04 01:45 +1100", "2026-04-05 01:45 +1100", "2026-04-06 01:45 +1030"],
    ),
    (
        "santiago-midnight-does-not-exist",
        dict(unit="day", at="00:00"),
        "America/Santiago",
        datetime(2026, 9, 5),
        ["2026-09-05 00:00 -0400", "2026-09-06 01:00 -0300", "2026-09-07 00:00 -0300"],
    ),
    (
        "santiago-repeat-before-midnight",
        dict(unit="day", at="23:30"),
        "America/Santiago",
        datetime(2026, 4, 3),
        ["2026-04-03 23:30 -0300", "2026-04-04 23:30 -0300", "2026-04-05 23:30 -0400"],
    ),
    (
        "beirut-midnight-does-not-exist",
        dict(unit="day", at="00:00"),
        "Asia/Beirut",
        datetime(2026, 3, 28),
        ["2026-03-28 00:00 +0200", "2026-03-29 01:00 +0300", "2026-03-30 00:00 +0300"],
    ),
    (
        "apia-skipped-2011-12-30-daily",
        dict(unit="day", at="09:00"),
        "Pacific/Apia",
        datetime(2011, 12, 29),
        ["2011-12-29 09:00 -1000", "2011-12-31 09:00 +1400", "2012-01-01 09:00 +1400"],
    ),
    (
        "apia-skipped-2011-12-30-hourly",
        dict(unit="hour", at="00:30"),
        "Pacific/Apia",
        datetime(2011, 12, 29, 22, 30),
        ["2011-12-29 22:30 -1000", "2011-12-29 23:30 -1000", "2011-12-31 00:30 +1400"],
    ),
    (
        "dublin-negative-dst-spring",
        dict(unit="day", at="09:00"),
        "Europe/Dublin",
        datetime(2026, 3, 28),
        ["2026-03-28 09:00 +0000", "2026-03-29 09:00 +0100", "2026-03-30 09:00 +0100"],
    ),
    (
        "dublin-negative-dst-repeat",
        dict(unit="day", at="01:30"),
        "Europe/Dublin",
        datetime(2026, 10, 24),
        ["2026-10-24 01:30 +0100", "2026-10-25 01:30 +0100", "2026-10-26 01:30 +0000"],
    ),
    (
        "month-on-31-leap-year-clamps-to-29-february",
        dict(unit="month", on=31, at="06:00"),
        "UTC",
        datetime(2024, 1, 1),
        [
            "2024-01-31 06:00 +0000",
            "2024-02-29 06:00 +0000",
            "2024-03-31 06:00 +0000",
            "2024-04-30 06:00 +0000",
        ],
    ),
    (
        "month-on-31-common-year-clamps-to-28-february",
        dict(unit="month", on=31, at="06:00"),
        "Europe/Amsterdam",
        datetime(2026, 1, 1),
        ["2026-01-31 06:00 +0100", "2026-02-28 06:00 +0100", "2026-03-31 06:00 +0200"],
    ),
    (
        "month-on-29-leap-february",
        dict(unit="month", on=29, at="12:00"),
        "UTC",
        datetime(2024, 2, 1),
        ["2024-02-29 12:00 +0000", "2024-03-29 12:00 +0000"],
    ),
    (
        "month-on-29-common-february-clamps-to-28",
        dict(unit="month", on=29, at="12:00"),
        "UTC",
        datetime(2025, 2, 1),
        ["2025-02-28 12:00 +0000", "2025-03-29 12:00 +0000"],
    ),
    (
        "every-2-weeks-monday-counted-from-1970-01-05",
        dict(unit="week", on="monday", at="07:00", every=2),
        "Europe/Amsterdam",
        datetime(2026, 3, 17),
        ["2026-03-30 07:00 +0200", "2026-04-13 07:00 +0200", "2026-04-27 07:00 +0200"],
    ),
    (
        "every-3-days-counted-from-1970-01-01",
        dict(unit="day", at="09:00", every=3),
        "UTC",
        datetime(2026, 1, 1),
        ["2026-01-01 09:00 +0000", "2026-01-04 09:00 +0000", "2026-01-07 09:00 +0000"],
    ),
    (
        "every-2-months-counted-from-january-1970",
        dict(unit="month", on=1, at="00:00", every=2),
        "UTC",
        datetime(2026, 2, 1),
        ["2026-03-01 00:00 +0000", "2026-05-01 00:00 +0000", "2026-07-01 00:00 +0000"],
    ),
    (
        "every-6-hours-anchored-at-0300-amsterdam",
        dict(unit="hour", every=6, at="03:00"),
        "Europe/Amsterdam",
        datetime(2026, 3, 28, 20),
        ["2026-03-28 21:00 +0100", "2026-03-29 03:00 +0200", "2026-03-29 09:00 +0200"],
    ),
    (
        "sunday-is-weekday-0",
        dict(unit="week", on=0, at="10:00"),
        "UTC",
        datetime(2026, 5, 1),
        ["2026-05-03 10:00 +0000", "2026-05-10 10:00 +0000"],
    ),
]


@pytest.mark.parametrize(
    ("spec", "zone", "start", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_occurrences_in_local_time(spec, zone, start, expected):
    c = cadence(**spec, timezone=zone)
    got = walk(c, start.replace(tzinfo=ZoneInfo(zone)), len(expected))
    assert wall(got, zone) == expected
    for earlier, later in zip(got, got[1:], strict=False):
        assert c.preceding(later) == earlier
        assert c.at_or_before(later - 1) == earlier


def test_new_york_daily_0900_through_2026_one_run_per_local_day_and_23h_25h_windows():
    """Acceptance: every local day once at 09:00, the transition days' windows 23h and 25h, tiling exact."""
    zone = "America/New_York"
    plan = Plan(cadence("day", at="09:00", timezone=zone), delay=0)
    runs = [plan.run(o) for o in walk(plan.cadence, datetime(2026, 1, 1, tzinfo=ZoneInfo(zone)), 365)]
    days = [local(run.occurrence, zone) for run in runs]
    assert [d.date() for d in days] == [date(2026, 1, 1) + timedelta(days=i) for i in range(365)]
    assert {(d.hour, d.minute) for d in days} == {(9, 0)}
    spans = {local(run.occurrence, zone).date(): run.window_end - run.window_start for run in runs}
    assert spans[date(2026, 3, 8)] == 23 * HOUR
    assert spans[date(2026, 11, 1)] == 25 * HOUR
    assert {span for day, span in spans.items() if day not in (date(2026, 3, 8), date(2026, 11, 1))} == {24 * HOUR}
    assert all(a.window_end == b.window_start for a, b in zip(runs, runs[1:], strict=False))
    assert all(run.interval == run.window_end - run.window_start for run in runs)


def test_unanchored_hours_are_absolute_and_ignore_dst():
    c = cadence("hour", every=6)
    got = walk(c, datetime(2026, 3, 8, tzinfo=timezone.utc), 6)
    assert {b - a for a, b in zip(got, got[1:], strict=False)} == {6 * HOUR}
    assert wall(got[:2], "UTC") == ["2026-03-08 00:00 +0000", "2026-03-08 06:00 +0000"]


@pytest.mark.parametrize(
    ("unit", "every", "days"),
    [("day", 1, 1), ("day", 3, 3), ("week", 1, 7), ("week", 2, 14), ("month", 1, 30), ("month", 2, 60)],
    ids=["day", "3-days", "week", "2-weeks", "month-flat-30d", "2-months-flat-60d"],
)
def test_unanchored_calendar_cadences_are_flat_intervals_from_the_epoch(unit, every, days):
    c = cadence(unit, every=every)
    start = us(datetime(2026, 3, 1, 12, 34, tzinfo=timezone.utc))
    first = c.following(start)
    assert first % (days * 24 * HOUR) == 0
    assert c.following(first) - first == days * 24 * HOUR
    assert c.preceding(first) == first - days * 24 * HOUR


def test_at_or_before_inside_the_repeated_hour_sees_the_first_instance():
    """At 01:10 EST (the second 01:10), the 01:00 run already happened, an hour earlier, at 01:00 EDT."""
    zone = ZoneInfo("America/New_York")
    c = cadence("hour", at="00:00", timezone="America/New_York")
    second_pass = us(datetime(2026, 11, 1, 1, 10, fold=1, tzinfo=zone))
    assert wall([c.at_or_before(second_pass)], "America/New_York") == ["2026-11-01 01:00 -0400"]
    assert wall([c.following(second_pass)], "America/New_York") == ["2026-11-01 02:00 -0500"]
