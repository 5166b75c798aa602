"""``overlap=`` and ``pause_after_failures=`` on Every, the calendar cadences and Cron: bounds, summary, round trip."""

from __future__ import annotations

import datetime

import pendulum
import pytest
from airflow.sdk import DAG

from tessera.timetables import Cron, Every
from tessera.timetables.run_policy import MAX_PAUSE_AFTER_FAILURES, OVERLAPS, RunPolicy
from tests.compat.airflow_names import DagSerialization

CONSTRUCTORS = {
    "every": lambda **kw: Every("5m", **kw),
    "day": lambda **kw: Every.day(at="07:00", timezone="Europe/Amsterdam", **kw),
    "hour": lambda **kw: Every.hour(2, **kw),
    "week": lambda **kw: Every.week(on="monday", at="07:00", timezone="UTC", **kw),
    "month": lambda **kw: Every.month(on=31, at="06:00", timezone="UTC", **kw),
    "cron": lambda **kw: Cron("0 6 * * *", timezone="Europe/London", **kw),
}
RULE = "give a whole number of failed runs in a row from 1 to 1000, e.g. pause_after_failures=3, or leave it out"


@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS)
@pytest.mark.parametrize("overlap", OVERLAPS)
def test_every_timetable_takes_each_overlap_and_keeps_it_through_serialization(make, overlap):
    timetable = make(overlap=overlap, pause_after_failures=3)
    assert timetable.run_policy == RunPolicy(overlap, None, 3)
    assert "pause after 3 failures" in timetable.summary
    assert ("overlap " + overlap in timetable.summary) == (overlap != "allow_all"), "the default is not repeated"
    with DAG("round_trip", schedule=timetable, start_date=pendulum.datetime(2026, 1, 1)) as dag:
        pass
    restored = DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
    assert restored == timetable and restored.run_policy == timetable.run_policy
    assert restored.summary == timetable.summary


def test_the_default_is_allow_all_with_no_pause_and_serializes_as_before():
    timetable = Every("5m")
    assert timetable.run_policy == RunPolicy("allow_all", None, None)
    assert "run_policy" not in timetable.serialize(), "older DAGs keep their serialized form"
    assert "overlap" not in timetable.summary and "pause" not in timetable.summary


@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS)
@pytest.mark.parametrize(
    ("kwargs", "kind", "message"),
    [
        pytest.param(
            {"overlap": "Forbid"},
            ValueError,
            "overlap: 'Forbid' is not a policy; use one of skip, buffer_one, buffer_all, cancel_other, allow_all",
            id="unknown-overlap",
        ),
        pytest.param({"overlap": 3}, ValueError, "overlap: 3 is not a policy; use one of skip", id="overlap-number"),
        pytest.param(
            {"pause_after_failures": 0},
            ValueError,
            f"pause_after_failures: 0 is outside 1 to 1000; {RULE}",
            id="zero-failures",
        ),
        pytest.param(
            {"pause_after_failures": MAX_PAUSE_AFTER_FAILURES + 1},
            ValueError,
            f"pause_after_failures: 1001 is outside 1 to 1000; {RULE}",
            id="over-the-bound",
        ),
        pytest.param(
            {"pause_after_failures": True}, TypeError, f"pause_after_failures: True is a bool; {RULE}", id="bool"
        ),
        pytest.param(
            {"pause_after_failures": "3"}, TypeError, f"pause_after_failures: '3' is a str; {RULE}", id="text"
        ),
        pytest.param(
            {"pause_after_failures": 2.0}, TypeError, f"pause_after_failures: 2.0 is a float; {RULE}", id="float"
        ),
        pytest.param(
            {"pause_after_failures": 10**40},
            ValueError,
            "pause_after_failures: 10000000000000000000000000000000000000000 is outside 1 to 1000",
            id="huge",
        ),
    ],
)
def test_bad_values_are_refused_at_parse_time_naming_field_value_and_fix(make, kwargs, kind, message):
    with pytest.raises(kind) as refused:
        make(**kwargs)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("limit", [1, 7, MAX_PAUSE_AFTER_FAILURES])
def test_pause_after_failures_accepts_its_whole_range(limit):
    assert Every("1h", pause_after_failures=limit).run_policy.pause_after_failures == limit


def test_a_pre_existing_serialized_policy_without_the_new_key_still_loads():
    data = Every("5m", overlap="skip").serialize()
    assert data["run_policy"] == {"overlap": "skip", "replay_inactive": None}
    assert Every.deserialize(data).run_policy == RunPolicy("skip", None, None)
    declared = {**data, "run_policy": {"overlap": "buffer_one", "replay_inactive": True}}
    assert Every.deserialize(declared).run_policy == RunPolicy("buffer_one", True, None)


def test_the_summary_names_a_chosen_overlap():
    assert Every(datetime.timedelta(minutes=5), overlap="skip").summary == "every 5m · overlap skip · phase spread"
