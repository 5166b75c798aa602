"""The shared keywords (``timetables/options.py``): one declaration, taken alike by every constructor."""

from __future__ import annotations

import datetime

import pytest

from tessera.timetables import Backfill, Calendar, Cron, Every, Fixed, Union
from tessera.timetables.options import OPTION_NAMES

CONSTRUCTORS = {
    "Every": lambda **o: Every("5m", **o),
    "Every.day": lambda **o: Every.day(at="07:00", timezone="Europe/Amsterdam", **o),
    "Calendar.week": lambda **o: Calendar.week(on="monday", at="07:00", timezone="UTC", **o),
    "Calendar.month": lambda **o: Calendar.month(on=31, at="06:00", timezone="UTC", **o),
    "Calendar.business_day": lambda **o: Calendar.business_day(at="09:00", timezone="UTC", **o),
    "Cron": lambda **o: Cron("0 6 * * *", timezone="Europe/London", **o),
    "Union": lambda **o: Union(Every("1h"), Cron("30 6 * * *"), **o),
}
EVERY_OPTION = {
    "delay": "30s",
    "window": "2h",
    "phase": Fixed("2m"),
    "catch_up": Backfill(limit=3),
    "key": "shared-key",
    "partitioned": True,
    "key_format": "%Y%m%dT%H%M%S",
    "overlap": "skip",
    "pause_after_failures": 3,
    "dropped": "owe",
}
OWNER = {"Every": "Every", "Every.day": "Calendar", "Cron": "Cron", "Union": "Union"}


def test_the_example_values_cover_every_shared_keyword():
    assert sorted(EVERY_OPTION) == sorted(OPTION_NAMES)


@pytest.mark.parametrize("build", CONSTRUCTORS.values(), ids=CONSTRUCTORS)
def test_each_constructor_takes_every_shared_keyword_and_serializes_it(build):
    timetable = build(**EVERY_OPTION)
    data = timetable.serialize()
    assert data["delay_us"] == 30_000_000
    assert data["window_us"] == 2 * 3600 * 1_000_000
    assert data["key"] == "shared-key"
    assert data["catch_up"] == {"kind": "backfill", "limit": 3}
    assert timetable.key_format == "%Y%m%dT%H%M%S"
    assert timetable.run_policy.overlap == "skip"
    assert timetable.run_policy.pause_after_failures == 3
    assert timetable.dropped == "owe"
    assert type(timetable).deserialize(data) == timetable
    assert build(delay=datetime.timedelta(seconds=30)).serialize()["delay_us"] == 30_000_000


@pytest.mark.parametrize("name", ["Every", "Every.day", "Cron", "Union"])
def test_a_misspelt_keyword_names_the_constructor_and_the_keywords_it_could_mean(name):
    # Named before any other check: the bad anchor below would otherwise be reported first.
    with pytest.raises(TypeError, match=rf"^{OWNER[name]}: 'dela' is not a keyword it takes; .* delay, window, phase"):
        CONSTRUCTORS[name](dela="30s", timezon="Mars/Base")
