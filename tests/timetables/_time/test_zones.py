"""The one zone rule: IANA names from ``zoneinfo.available_timezones()``, nothing a machine adds."""

from __future__ import annotations

import zoneinfo

import pytest

from tessera.timetables._time.wallclock import load_zone


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("posixrules", id="posixrules"),
        pytest.param("right/UTC", id="leap-second-tree"),
        pytest.param("posix/UTC", id="posix-tree"),
        pytest.param("posix/Europe/Berlin", id="posix-tree-zone"),
        pytest.param("localtime", id="machine-local"),
        pytest.param("Factory", id="placeholder"),
        pytest.param("Europe", id="directory"),
        pytest.param("../zoneinfo/UTC", id="relative-path"),
        pytest.param("Europe/" + "x" * 100, id="too-long"),
        pytest.param("UTC\x00", id="nul"),
        pytest.param("\ud800", id="lone-surrogate"),
    ],
)
def test_a_name_outside_the_iana_list_is_refused_naming_the_field(name):
    with pytest.raises(ValueError) as err:
        load_zone("timezone", name)
    message = str(err.value)
    assert message.startswith(f"timezone: {name!r}"[:40]), message
    assert "is not an IANA timezone name; use a name such as 'Europe/Amsterdam'" in message, message


@pytest.mark.parametrize("name", ["UTC", "Europe/Berlin", "America/New_York", "Etc/GMT+5", "EST5EDT", "US/Pacific"])
def test_iana_names_and_zoneinfo_objects_load(name):
    assert load_zone("timezone", name).key == name
    assert load_zone("timezone", zoneinfo.ZoneInfo(name)).key == name


def test_every_listed_name_but_the_machine_ones_loads():
    names = zoneinfo.available_timezones() - {"localtime", "Factory"}
    assert all(load_zone("timezone", name).key == name for name in names)
