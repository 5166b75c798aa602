"""The zone history lists every offset change zoneinfo knows, 1900-2999, and nothing else."""

from __future__ import annotations

import bisect
import datetime
import random
import zoneinfo

import pytest

from tessera.timetables._time.zone_history import zone_history

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
FIRST = int((datetime.datetime(1900, 1, 1, tzinfo=UTC) - EPOCH).total_seconds()) * 1_000_000
END = int((datetime.datetime(3000, 1, 1, tzinfo=UTC) - EPOCH).total_seconds()) * 1_000_000
HOUR = 3_600_000_000
ZONES = sorted(zoneinfo.available_timezones() - {"localtime", "Factory"})


def offset(zone: zoneinfo.ZoneInfo, instant: int) -> int:
    moment = (EPOCH + datetime.timedelta(microseconds=instant)).astimezone(zone)
    return moment.utcoffset() // datetime.timedelta(microseconds=1)


def check_against_zoneinfo(key: str, samples: int) -> None:
    zone, history = zoneinfo.ZoneInfo(key), zone_history(key)
    assert history is not None
    for change in history:
        assert offset(zone, change.at - 1) == change.before != change.after == offset(zone, change.at), change
    # Between two listed changes the offset is constant: random instants find no change the list missed.
    instants = [change.at for change in history]
    start = offset(zone, FIRST)
    rng = random.Random(key)
    for instant in (rng.randrange(FIRST, END) for _ in range(samples)):
        index = bisect.bisect_right(instants, instant)
        assert offset(zone, instant) == (history[index - 1].after if index else start), (key, instant)


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("Europe/Berlin", id="berlin-eu-rule"),
        pytest.param("America/New_York", id="new-york-us-rule"),
        pytest.param("Australia/Lord_Howe", id="lord-howe-half-hour-dst"),
        pytest.param("America/Santiago", id="santiago-southern-midnight"),
        pytest.param("Africa/Casablanca", id="casablanca-ramadan-time"),
        pytest.param("Asia/Tokyo", id="tokyo-1948-1951-summers"),
        pytest.param("Pacific/Kwajalein", id="kwajalein-23-hour-fold"),
        pytest.param("Pacific/Apia", id="apia-skipped-day"),
        pytest.param("Europe/Dublin", id="dublin-negative-dst"),
        pytest.param("Antarctica/Troll", id="troll-two-hour-dst"),
        pytest.param("America/Havana", id="havana-midnight-changes"),
        pytest.param("Pacific/Chatham", id="chatham-quarter-hours"),
        pytest.param("Asia/Tehran", id="tehran-no-dst-since-2022"),
        pytest.param("Europe/London", id="london-double-summer-time"),
    ],
)
def test_the_history_of_a_zone_is_every_change_zoneinfo_knows(key):
    check_against_zoneinfo(key, samples=2_000)


def test_a_derandomized_sample_of_all_zones_agrees_with_zoneinfo():
    # All ~600 zones (400k changes) take tens of seconds; this fixed sample keeps the run short.
    for key in random.Random(0).sample(ZONES, 25):
        check_against_zoneinfo(key, samples=200)


def test_the_rule_years_reach_the_end_of_the_supported_range():
    history = zone_history("Europe/Berlin")
    # The last listed change is the autumn of 2999 (fall back at 01:00 UTC on the last Sunday of October).
    assert datetime.datetime.fromtimestamp(history[-1].at / 1e6, UTC) == datetime.datetime(2999, 10, 27, 1, tzinfo=UTC)
    assert (history[-1].before, history[-1].after) == (2 * HOUR, HOUR)
    assert len(history) > 2 * (2999 - 1980)


@pytest.mark.parametrize("key", ["UTC", "Etc/GMT+5", "EST", "Africa/Kinshasa"])
def test_a_zone_whose_offset_never_changes_from_1900_has_no_history(key):
    assert zone_history(key) == ()


def test_an_unknown_zone_has_an_unknown_history():
    assert zone_history("Mars/Olympus_Mons") is None
