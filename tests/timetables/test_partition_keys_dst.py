"""Partition keys stay one to one across daylight saving, for every cadence, and key_format is checked by use.

Regressions: a pattern that writes keys it cannot read back was accepted (substring checks);
a daily cron firing twice in a fall-back fold gave both runs one key; a spring-forward day
had no key at all; zones whose offset changed only before 1970 were taken as fixed.
"""

from __future__ import annotations

import datetime
import zoneinfo

import pendulum
import pytest
import time_machine

from tessera.timetables import Calendar, Cron, Every


def keys_between(timetable, first: str, last: str) -> list[tuple[str, str]]:
    """(key, partition_date) of each period starting in [first, last] (UTC)."""
    with time_machine.travel(pendulum.datetime(2999, 1, 1), tick=False):
        infos = timetable.iter_partition_dagrun_infos(
            earliest=pendulum.parse(first, tz="UTC"), latest=pendulum.parse(last, tz="UTC")
        )
        return [(info.partition_key, info.partition_date.isoformat()) for info in infos]


def assert_one_to_one(timetable, pairs: list[tuple[str, str]]) -> None:
    assert len({key for key, _ in pairs}) == len(pairs), pairs
    for key, date in pairs:
        assert timetable.resolve_partition_date(key).isoformat() == date, key


# -- issue 22: key_format is checked by a round trip, not by substrings ------------------------------------------
@pytest.mark.parametrize(
    ("key_format", "words"),
    [
        pytest.param("%%Y%%m%%d%%H%%M%%S", "writes '%Y%m%d%H%M%S' for", id="escaped-fields"),
        pytest.param("%Y\x00%m%d%H%M%S", "has a control character", id="nul-cuts-the-key"),
        pytest.param("%Y%m%d%H%M%S%", "stray %", id="trailing-percent"),
        pytest.param("%Y%m%d%H%M%S%:z", "bad directive", id="colon-z"),
        pytest.param("%Y%m%d%H%M%S%z%z", "cannot write or read back", id="offset-twice"),
        pytest.param("%Y%m%d%H%M%S%Y", "cannot write or read back", id="field-twice"),
        pytest.param("%y-%m-%dT%H:%M:%S", "reads back as 2000-", id="two-digit-year"),
        pytest.param("%Y-%m-%dT%I:%M:%S", "reads back as", id="twelve-hour-without-am-pm"),
        pytest.param("%c", "uses %c, which each machine's locale spells", id="locale-date-time"),
        pytest.param("%Y-%b-%dT%H:%M:%S", "uses %b", id="locale-month-name"),
        pytest.param("%Y-%m-%dT%H:%M:%S\ud800", "not valid text", id="lone-surrogate"),
        pytest.param("%Y-%m-%dT%H:%M:%S\n", "control character", id="newline"),
    ],
)
def test_a_key_format_whose_keys_do_not_read_back_one_to_one_is_refused(key_format, words):
    with pytest.raises(ValueError) as err:
        Every("1h", partitioned=True, key_format=key_format)
    message = str(err.value)
    assert message.startswith(f"key_format: {key_format!r}"[:40]), message
    assert words in message, message
    assert "e.g. '%Y-%m-%dT%H:%M:%S'" in message, message


@pytest.mark.parametrize(
    ("key_format", "key"),
    [
        pytest.param("hour=%Y%m%dT%H%M%S", "hour=20260310T120000", id="prefix-no-separators"),
        pytest.param("%Y-%jT%H:%M:%S", "2026-069T12:00:00", id="day-of-year"),
        pytest.param("%G-W%V-%u %H:%M:%S", "2026-W11-2 12:00:00", id="iso-week"),
        pytest.param("%Y-%m-%dT%H:%M:%S%%", "2026-03-10T12:00:00%", id="escaped-percent-literal"),
        pytest.param("%Y/%m/%d %H.%M.%S UTC", "2026/03/10 12.00.00 UTC", id="literal-suffix"),
    ],
)
def test_any_pattern_that_reads_back_one_to_one_is_taken(key_format, key):
    timetable = Every("1h", partitioned=True, key_format=key_format)
    assert keys_between(timetable, "2026-03-10T12:00:00", "2026-03-10T12:00:00") == [(key, "2026-03-10T12:00:00+00:00")]
    assert timetable.resolve_partition_date(key).isoformat() == "2026-03-10T12:00:00+00:00"


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "Pacific/Kwajalein", "Australia/Lord_Howe", "Asia/Tokyo"])
def test_the_round_trip_checks_a_fixed_handful_of_instants(zone):
    # Bounded by construction: about fifty samples whatever the zone and cadence.
    from tessera.timetables.key_format import _samples

    samples = list(_samples(zoneinfo.ZoneInfo(zone), repeats=True))
    assert 40 <= len(samples) <= 56
    assert len(set(samples)) == len(samples)


def test_daylight_saving_before_1970_counts():
    # Tokyo kept summer time only from 1948 to 1951: the offset must still tell its hours apart.
    timetable = Cron("0 * * * *", timezone="Asia/Tokyo", partitioned=True)
    assert timetable.key_format == "%Y-%m-%dT%H:%M:%S%z"
    pairs = keys_between(timetable, "1948-09-11T23:00:00", "1948-09-12T01:00:00")  # bounds read on Tokyo's clock
    assert pairs == [
        ("1948-09-11T23:00:00+1000", "1948-09-11T13:00:00+00:00"),
        ("1948-09-12T00:00:00+1000", "1948-09-11T14:00:00+00:00"),
        ("1948-09-12T00:00:00+0900", "1948-09-11T15:00:00+00:00"),  # the clock went back: midnight again
        ("1948-09-12T01:00:00+0900", "1948-09-11T16:00:00+00:00"),
    ]
    assert_one_to_one(timetable, pairs)


# -- issue 24: a daily-or-longer cron in a fold or gap ----------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "zone", "fall_back_keys"),
    [
        pytest.param(
            "30 2 * * *",
            "Europe/Berlin",
            ["2026-10-25T02:30:00+0200", "2026-10-25T02:30:00+0100"],
            id="berlin-30-2",
        ),
        pytest.param(
            "30 1 * * *",
            "Australia/Lord_Howe",
            ["2026-04-05T01:30:00+1100", "2026-04-05T01:30:00+1030"],
            id="lord-howe-30-1",
        ),
        pytest.param(
            "30 1 * * *",
            "America/New_York",
            ["2026-11-01T01:30:00-0400", "2026-11-01T01:30:00-0500"],
            id="new-york-30-1",
        ),
        pytest.param(
            "0 1 * * *", "Europe/London", ["2026-10-25T01:00:00+0100", "2026-10-25T01:00:00+0000"], id="london-0-1"
        ),
        pytest.param(
            "30 1 * * 0",
            "America/New_York",
            ["2026-11-01T01:30:00-0400", "2026-11-01T01:30:00-0500"],
            id="new-york-weekly",
        ),
    ],
)
def test_a_cron_firing_twice_in_a_fall_back_fold_gives_two_keys(expression, zone, fall_back_keys):
    timetable = Cron(expression, timezone=zone, partitioned=True)
    assert timetable.key_format == "%Y-%m-%dT%H:%M:%S%z"
    pairs = keys_between(timetable, "2026-01-01T00:00:00", "2026-12-31T00:00:00")
    assert [key for key, _ in pairs if key[:16] == fall_back_keys[0][:16]] == fall_back_keys
    assert_one_to_one(timetable, pairs)


@pytest.mark.parametrize(
    ("expression", "zone", "key"),
    [
        pytest.param("30 2 * * *", "Europe/Berlin", "2026-03-29T03:00:00+0200", id="berlin-30-2"),
        pytest.param("0 1 * * *", "Europe/London", "2026-03-29T02:00:00+0100", id="london-0-1"),
        pytest.param("30 2 * * *", "America/New_York", "2026-03-08T03:00:00", id="new-york-30-2"),
        pytest.param("15 2 * * 0", "Australia/Lord_Howe", "2026-10-04T02:30:00", id="lord-howe-weekly"),
    ],
)
def test_a_day_whose_only_time_a_spring_forward_skips_is_keyed_when_the_gap_ends(expression, zone, key):
    timetable = Cron(expression, timezone=zone, partitioned=True)
    pairs = keys_between(timetable, "2026-01-01T00:00:00", "2026-12-31T00:00:00")
    assert key in [k for k, _ in pairs]
    days = {k[:10] for k, _ in pairs}
    assert key[:10] in days
    assert_one_to_one(timetable, pairs)


def test_the_skipped_day_runs_only_when_partitioned():
    # Unpartitioned, the same cron keeps a CronJob's rule: a skipped time does not fire.
    plain = Cron("30 2 * * *", timezone="Europe/Berlin")
    after = pendulum.datetime(2026, 3, 28, 12, tz="UTC")
    assert [r.occurrence.isoformat() for r in plain.plan.upcoming(after=after, count=2)] == [
        "2026-03-30T00:30:00+00:00",
        "2026-03-31T00:30:00+00:00",
    ]
    keyed = Cron("30 2 * * *", timezone="Europe/Berlin", partitioned=True)
    assert [r.occurrence.isoformat() for r in keyed.plan.upcoming(after=after, count=2)] == [
        "2026-03-29T01:00:00+00:00",
        "2026-03-30T00:30:00+00:00",
    ]


def test_a_key_format_without_the_offset_for_such_a_cron_is_refused_naming_the_fix():
    with pytest.raises(ValueError) as err:
        Cron("30 2 * * *", timezone="Europe/Berlin", partitioned=True, key_format="%Y-%m-%dT%H:%M:%S")
    assert str(err.value) == (
        "key_format: '%Y-%m-%dT%H:%M:%S' gives two periods the same key '2026-10-25T02:30:00': Europe/Berlin "
        "shows 2026-10-25T02:30:00 twice when its clocks go back, and this schedule runs at both; add the UTC "
        "offset %z, e.g. '%Y-%m-%dT%H:%M:%S%z'"
    )


@pytest.mark.parametrize(
    "timetable",
    [
        pytest.param(Cron("0 6 * * *", timezone="Europe/Berlin", partitioned=True), id="cron-outside-the-fold"),
        pytest.param(Cron("30 2 * * *", timezone="Europe/Berlin", dst="once", partitioned=True), id="cron-once"),
        pytest.param(Calendar.day(at="02:30", timezone="Europe/Berlin", partitioned=True), id="calendar-day"),
        pytest.param(Cron("@every 1d", timezone="Pacific/Kwajalein", partitioned=True), id="every-day-deepest-fold"),
    ],
)
def test_a_cadence_that_never_repeats_a_reading_keeps_the_plain_default(timetable):
    assert timetable.key_format == "%Y-%m-%dT%H:%M:%S"
    assert_one_to_one(timetable, keys_between(timetable, "2026-01-01T00:00:00", "2026-12-31T00:00:00"))


def test_a_cron_in_kwajaleins_23_hour_fold_of_1969_needs_the_offset():
    timetable = Cron("0 12 * * *", timezone="Pacific/Kwajalein", partitioned=True)
    assert timetable.key_format == "%Y-%m-%dT%H:%M:%S%z"
    pairs = keys_between(timetable, "1969-09-28T00:00:00", "1969-10-03T00:00:00")
    assert len(pairs) == 6  # five days, one of them read twice
    assert_one_to_one(timetable, pairs)
    assert datetime.date(1969, 10, 1).isoformat() in {key[:10] for key, _ in pairs}


# -- dates at the edges of what datetime holds ------------------------------------------------------------------
def test_a_partition_range_outside_the_supported_years_is_empty_not_an_overflow():
    # Airflow reads range bounds on the timetable's wall clock; year 1 in UTC+1 is before datetime's first day.
    timetable = Cron("0 * * * *", timezone="Europe/Berlin", partitioned=True)
    assert keys_between(timetable, "0001-01-01T00:00:00", "0001-01-01T01:00:00") == []
    assert keys_between(timetable, "9999-12-31T00:00:00", "9999-12-31T23:00:00") == []
    # Airflow's clear-by-date filters with the same reading: it must not overflow either.
    assert timetable.localize_partition_datetime(datetime.datetime(1, 1, 1)).year == 1
    assert timetable.localize_partition_datetime(datetime.datetime(9999, 12, 31, 23)).year == 9999


@pytest.mark.parametrize("key", ["0001-01-01T00:00:00+0100", "9999-12-31T23:00:00-0100"])
def test_a_key_beyond_datetimes_years_is_refused_as_a_key(key):
    from tests.compat.airflow_names import InvalidPartitionKeyError

    timetable = Cron("0 * * * *", timezone="Europe/Berlin", partitioned=True)
    with pytest.raises(InvalidPartitionKeyError, match="partition_key: .* outside the supported years 1900-2999"):
        timetable.resolve_partition_date(key)
