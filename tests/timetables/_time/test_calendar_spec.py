"""What users may write for a calendar cadence: refusals name the field and the rule; summaries read well."""

from __future__ import annotations

from datetime import time

import pytest

from tessera.timetables._time.calendar_spec import CalendarSpec


def parse(unit: str, *, every: object = 1, on: object = None, at: object = None, timezone: object = None):
    return CalendarSpec.parse(unit, every=every, on=on, at=at, timezone=timezone)


REFUSED = [
    ("hours-every-5", dict(unit="hour", every=5), ValueError, ["every: 5 hours", "1, 2, 3, 4, 6, 8 or 12"]),
    (
        "hours-every-24",
        dict(unit="hour", every=24),
        ValueError,
        ["every: 24 hours", "1, 2, 3, 4, 6, 8 or 12"],
    ),
    ("days-every-0", dict(unit="day", every=0), ValueError, ["every: 0 days", "1 to 30"]),
    ("days-every-31", dict(unit="day", every=31), ValueError, ["every: 31 days", "1 to 30"]),
    ("weeks-every-5", dict(unit="week", every=5), ValueError, ["every: 5 weeks", "1 to 4"]),
    ("months-every-13", dict(unit="month", every=13), ValueError, ["every: 13 months", "1 to 12"]),
    ("every-10-to-the-5000", dict(unit="day", every=10**5000), ValueError, ["every: <integer of about", "1 to 30"]),
    ("every-inf", dict(unit="day", every=float("inf")), TypeError, ["every: inf is a float", "1 to 30"]),
    ("every-as-text", dict(unit="day", every="2"), TypeError, ["every: '2'", "1 to 30"]),
    ("every-as-bool", dict(unit="day", every=True), TypeError, ["every: True"]),
    ("unknown-unit", dict(unit="fortnight"), ValueError, ["unit: 'fortnight'", "'week'"]),
    ("at-25-00", dict(unit="day", at="25:00"), ValueError, ["at: '25:00'", "'00:00' to '23:59'"]),
    ("at-24-00", dict(unit="day", at="24:00"), ValueError, ["at: '24:00'", "'00:00' to '23:59'"]),
    ("at-09-60", dict(unit="day", at="09:60"), ValueError, ["at: '09:60'"]),
    ("at-without-colon", dict(unit="day", at="0900"), ValueError, ["at: '0900'", "'HH:MM'"]),
    ("at-arabic-indic-digits", dict(unit="day", at="\u0660\u0669:00"), ValueError, ["at: '", "ASCII digits"]),
    ("at-fullwidth-digits", dict(unit="day", at="\uff10\uff19:\uff10\uff10"), ValueError, ["ASCII digits"]),
    ("at-huge-string", dict(unit="day", at="9" * 5000 + ":00"), ValueError, ["at: '9999", "...", "'HH:MM'"]),
    ("at-as-int", dict(unit="day", at=9), ValueError, ["at: 9", "'HH:MM'"]),
    ("at-with-seconds", dict(unit="day", at=time(9, 0, 30)), ValueError, ["at: datetime.time(9, 0, 30)"]),
    (
        "unknown-timezone",
        dict(unit="day", at="09:00", timezone="Mars/Olympus_Mons"),
        ValueError,
        ["timezone: 'Mars/Olympus_Mons'", "IANA", "'Europe/Amsterdam'"],
    ),
    ("machine-local-zone", dict(unit="day", at="09:00", timezone="localtime"), ValueError, ["'localtime'"]),
    ("timezone-as-number", dict(unit="day", at="09:00", timezone=1), TypeError, ["timezone: 1"]),
    (
        "timezone-without-at",
        dict(unit="day", timezone="Europe/Amsterdam"),
        ValueError,
        ["at: missing while timezone is given", "at='09:00'"],
    ),
    (
        "weekday-without-time",
        dict(unit="week", on="monday"),
        ValueError,
        ["at: missing (so is timezone)", "on='monday'"],
    ),
    (
        "time-without-weekday",
        dict(unit="week", at="07:00"),
        ValueError,
        ["on: missing (so is timezone)", "on='monday'"],
    ),
    ("month-day-without-time", dict(unit="month", on=31), ValueError, ["at: missing (so is timezone)", "on=31"]),
    # Anchors are all or none: a missing timezone is refused, never read as UTC behind the user's back.
    (
        "daily-time-without-timezone",
        dict(unit="day", at="09:00"),
        ValueError,
        ["timezone: missing while at is given", "all or none", "timezone='UTC'"],
    ),
    (
        "hourly-time-without-timezone",
        dict(unit="hour", every=6, at="03:00"),
        ValueError,
        ["timezone: missing while at is given", "timezone='UTC'"],
    ),
    (
        "weekly-weekday-and-time-without-timezone",
        dict(unit="week", on="monday", at="07:00"),
        ValueError,
        ["timezone: missing while on and at are given", "all three or none", "timezone='UTC'"],
    ),
    (
        "monthly-day-and-time-without-timezone",
        dict(unit="month", on=31, at="06:00"),
        ValueError,
        ["timezone: missing while on and at are given", "all three or none", "timezone='UTC'"],
    ),
    (
        "weekly-weekday-and-timezone-without-time",
        dict(unit="week", on="monday", timezone="Europe/Amsterdam"),
        ValueError,
        ["at: missing while on and timezone are given", "at='07:00'"],
    ),
    (
        "monthly-timezone-only",
        dict(unit="month", timezone="UTC"),
        ValueError,
        ["on: missing (so is at) while timezone is given", "all three or none"],
    ),
    (
        "weekday-name-unknown",
        dict(unit="week", on="funday", at="07:00"),
        ValueError,
        ["on: 'funday'", "0 = Sunday"],
    ),
    ("weekday-number-7", dict(unit="week", on=7, at="07:00"), ValueError, ["on: 7", "0 to 6"]),
    ("month-day-0", dict(unit="month", on=0, at="06:00"), ValueError, ["on: 0", "1 to 31"]),
    ("month-day-32", dict(unit="month", on=32, at="06:00"), ValueError, ["on: 32", "1 to 31"]),
    ("month-day-as-text", dict(unit="month", on="31", at="06:00"), ValueError, ["on: '31'", "1 to 31"]),
    ("day-with-on", dict(unit="day", on=3, at="06:00"), ValueError, ["on: 3", "week and month"]),
]


@pytest.mark.parametrize(("given", "error", "says"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_invalid_cadences_are_refused_naming_field_value_and_rule(given, error, says):
    with pytest.raises(error) as refused:
        parse(**given)
    for fragment in says:
        assert fragment in str(refused.value)


@pytest.mark.parametrize(
    ("given", "on"),
    [("monday", 1), ("Monday", 1), ("MON", 1), ("sunday", 0), ("sun", 0), (0, 0), (6, 6), ("saturday", 6)],
    ids=[
        "monday",
        "capitalised",
        "abbreviated",
        "sunday",
        "sun",
        "zero-is-sunday",
        "six-is-saturday",
        "saturday",
    ],
)
def test_weekdays_by_name_or_number_with_sunday_zero(given, on):
    assert parse("week", on=given, at="07:00", timezone="UTC").on == on


ACCEPTED = [
    (
        "daily-new-york",
        dict(unit="day", at="09:00", timezone="America/New_York"),
        "daily at 09:00 America/New_York",
    ),
    ("daily-utc-explicit", dict(unit="day", at=time(9, 30), timezone="UTC"), "daily at 09:30 UTC"),
    ("every-3-days", dict(unit="day", every=3, at="09:00", timezone="UTC"), "every 3 days at 09:00 UTC"),
    (
        "biweekly",
        dict(unit="week", every=2, on="monday", at="07:00", timezone="Europe/Amsterdam"),
        "every 2 weeks on Monday at 07:00 Europe/Amsterdam",
    ),
    ("month-end", dict(unit="month", on=31, at="06:00", timezone="UTC"), "monthly on the last day at 06:00 UTC"),
    (
        "month-30th",
        dict(unit="month", on=30, at="06:00", timezone="UTC"),
        "monthly on the 30th (or the month's last day) at 06:00 UTC",
    ),
    (
        "month-2nd",
        dict(unit="month", on=2, at="06:00", every=3, timezone="UTC"),
        "every 3 months on the 2nd at 06:00 UTC",
    ),
    ("hourly-at-15", dict(unit="hour", at="00:15", timezone="UTC"), "hourly at :15 UTC"),
    (
        "6-hourly",
        dict(unit="hour", every=6, at="09:00", timezone="UTC"),
        "every 6 hours at 03:00, 09:00, 15:00, 21:00 UTC",
    ),
    (
        "2-hourly",
        dict(unit="hour", every=2, at="01:30", timezone="UTC"),
        "every 2 hours at 01:30, 03:30, ... 23:30 UTC",
    ),
    ("unanchored-day", dict(unit="day"), "every 1d from the last run"),
    ("unanchored-hours", dict(unit="hour", every=6), "every 6h on absolute time (UTC epoch grid)"),
    ("unanchored-week", dict(unit="week", every=2), "every 14d from the last run"),
    ("unanchored-month-is-30-days", dict(unit="month"), "every 30d from the last run"),
]


@pytest.mark.parametrize(("given", "summary"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_summaries_read_as_sentences(given, summary):
    assert parse(**given).describe() == summary


@pytest.mark.parametrize(
    ("given", "hours"),
    [
        (dict(unit="hour", every=6), 6),
        (dict(unit="day", every=2, at="09:00", timezone="UTC"), 48),
        (dict(unit="week", every=2), 14 * 24),
        (dict(unit="month", on=31, at="06:00", timezone="UTC"), 30 * 24),
    ],
    ids=["6-hours", "2-days", "2-weeks", "month-nominal-30-days"],
)
def test_nominal_period(given, hours):
    assert parse(**given).period_us == hours * 3_600_000_000
