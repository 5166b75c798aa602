"""One zone rule everywhere: a timetable and a declared schedule accept and refuse the same names, alike."""

from __future__ import annotations

import pytest

from tessera.operators.schedules.checks import ScheduleError
from tessera.operators.schedules.schedule import Schedule
from tessera.timetables import Calendar, Cron

REFUSED = ["posixrules", "right/UTC", "posix/UTC", "localtime", "Factory", "America", "UTC\x00", "\ud800", "x" * 65]


@pytest.mark.parametrize("name", REFUSED, ids=lambda n: repr(n)[:20])
def test_timetables_and_declared_schedules_refuse_the_same_names_in_the_same_words(name):
    with pytest.raises(ValueError) as cron:
        Cron("0 6 * * *", timezone=name)
    with pytest.raises(ValueError) as calendar:
        Calendar.day(at="06:00", timezone=name)
    with pytest.raises(ScheduleError) as declared:
        Schedule("x", cron="0 6 * * *", timezone=name)
    assert declared.value.field == "timezone"
    assert str(cron.value) == str(calendar.value) == str(declared.value)
    assert str(cron.value).startswith("timezone: ") and "is not an IANA timezone name" in str(cron.value)


@pytest.mark.parametrize("name", ["UTC", "Europe/Berlin", "Australia/Lord_Howe", "EST5EDT"])
def test_they_accept_the_same_names(name):
    assert Cron("0 6 * * *", timezone=name).plan.timezone == name
    assert Schedule("x", cron="0 6 * * *", timezone=name).timezone == name
