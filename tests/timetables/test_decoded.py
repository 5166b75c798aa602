"""A stored timetable is built once per process, however often Airflow decodes it (``timetables/decoded.py``)."""

from __future__ import annotations

import datetime

import pytest
from airflow.serialization.encoders import encode_timetable

from tessera.timetables import Cron, Every, holidays_of
from tessera.timetables import decoded as decoded_module
from tests.compat.airflow_names import decode_timetable

NEW_YORK = "America/New_York"


@pytest.mark.parametrize(
    "timetable",
    [
        pytest.param(
            Every.month(business_day=-1, at="18:00", timezone=NEW_YORK, calendar=holidays_of("US", subdiv="NY")),
            id="last-business-day-new-york",
        ),
        pytest.param(Cron("0 9 * * 1-5", timezone=NEW_YORK, delay="5m"), id="cron-weekdays"),
        pytest.param(Every("5m") | Cron("30 2 * * *", timezone=NEW_YORK), id="union"),
    ],
)
def test_each_decode_is_a_copy_of_one_build(timetable):
    stored = encode_timetable(timetable.bind(dag_id="decoded", catchup=False, end_date=None))
    first, second = decode_timetable(stored), decode_timetable(stored)
    assert first is not second and first == second
    assert first._plan is second._plan  # the plan, immutable, was built once
    assert first.serialize() == second.serialize() == stored["__var"]
    # A copy's own attributes stay its own: binding one to another DAG leaves the next decode as stored.
    first.bind(dag_id="another", catchup=True, end_date=datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc))
    assert decode_timetable(stored).serialize() == stored["__var"]


def test_a_refused_form_is_refused_on_every_decode():
    stored = encode_timetable(Every("5m"))
    stored["__var"]["interval_us"] = -1
    for _ in range(2):
        with pytest.raises(ValueError, match="every"):
            decode_timetable(stored)


def test_the_timetables_kept_are_bounded_and_the_least_recent_is_built_again():
    forms = [encode_timetable(Every("1h", delay=f"{seconds}s")) for seconds in range(decoded_module.MAX_KEPT + 12)]
    first_plan = decode_timetable(forms[0])._plan
    for form in forms[1:]:
        decode_timetable(form)
    assert len(decoded_module._kept) <= decoded_module.MAX_KEPT
    assert decode_timetable(forms[0])._plan is not first_plan
    assert decode_timetable(forms[-1])._plan is decode_timetable(forms[-1])._plan
