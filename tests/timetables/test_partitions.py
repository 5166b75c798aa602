"""Partitioned tessera timetables: keys name periods, decode back, survive serialization, align stock mappers."""

# ruff: noqa: E402 (Airflow 3.3's partition mappers are imported once the module knows it runs there)
from __future__ import annotations

from tests.compat import PARTITIONS, module_needs

module_needs(PARTITIONS)

import subprocess
import sys

import pendulum
import pytest
import time_machine
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import StartOfDayMapper, StartOfHourMapper
from airflow.partition_mappers.window import DayWindow
from airflow.serialization.encoders import encode_timetable
from airflow.timetables.base import TimeRestriction
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.timetables import Calendar, Cron, Every
from tests.compat.airflow_names import InvalidPartitionKeyError, decode_timetable


def at(text: str) -> pendulum.DateTime:
    return pendulum.parse(text, tz="UTC")


def partitions(timetable, first: str, last: str, *, now: str = "2027-01-01T00:00:00"):
    with time_machine.travel(at(now), tick=False):
        return list(timetable.iter_partition_dagrun_infos(earliest=at(first), latest=at(last)))


def test_a_run_carries_its_window_and_the_key_of_its_period():
    # Hourly with a 5 minute delay: the 13:00 occurrence evaluates 11:55 -> 12:55 and is the 12:00 partition.
    timetable = Every("1h", delay="5m", partitioned=True)
    with time_machine.travel(at("2026-03-10T13:30:00"), tick=False):
        info = timetable.next_dagrun_info_v2(
            last_dagrun_info=None, restriction=TimeRestriction(at("2026-03-10T12:00:00"), None, True)
        )
    assert info.data_interval.start.isoformat() == "2026-03-10T11:55:00+00:00"
    assert info.data_interval.end.isoformat() == "2026-03-10T12:55:00+00:00"
    assert info.partition_key == "2026-03-10T12:00:00"
    assert info.partition_date.isoformat() == "2026-03-10T12:00:00+00:00"
    assert timetable.resolve_partition_date(info.partition_key) == info.partition_date


def test_without_partitioned_no_run_carries_a_key():
    info = partitions(Every("1h", partitioned=True), "2026-03-10T00:00:00", "2026-03-10T00:00:00")[0]
    assert info.partition_key == "2026-03-10T00:00:00"
    plain = Every("1h")
    assert plain.partitioned is False
    with time_machine.travel(at("2026-03-10T13:30:00"), tick=False):
        info = plain.next_dagrun_info_v2(last_dagrun_info=None, restriction=TimeRestriction(None, None, False))
    assert info.partition_key is None and info.partition_date is None


def test_overlapping_lookback_windows_get_the_keys_of_their_tiling_periods():
    infos = partitions(Every("1m", window="5m", partitioned=True), "2026-03-10T12:00:00", "2026-03-10T12:02:00")
    assert [i.partition_key for i in infos] == ["2026-03-10T12:00:00", "2026-03-10T12:01:00", "2026-03-10T12:02:00"]
    # The windows overlap (5 minutes each, one minute apart); the keys do not.
    assert [i.data_interval.start.isoformat() for i in infos] == [
        "2026-03-10T11:56:00+00:00",
        "2026-03-10T11:57:00+00:00",
        "2026-03-10T11:58:00+00:00",
    ]


def test_a_partition_range_holds_exactly_the_periods_starting_in_it_and_none_not_yet_due():
    infos = partitions(Every("1h", delay="5m", partitioned=True), "2026-03-10T00:00:00", "2026-03-10T23:59:59")
    assert [i.partition_key[11:13] for i in infos] == [f"{h:02d}" for h in range(24)]
    # At 05:30 the 05:00 period's occurrence (06:00) is still ahead: its data has not landed.
    early = partitions(
        Every("1h", partitioned=True), "2026-03-10T00:00:00", "2026-03-10T23:00:00", now="2026-03-10T05:30:00"
    )
    assert [i.partition_key for i in early][-1] == "2026-03-10T04:00:00"
    assert len(early) == 5


def test_the_scheduler_and_a_partition_range_give_the_same_runs():
    timetable = Every("30m", delay="1m", partitioned=True)
    ranged = partitions(timetable, "2026-03-10T00:00:00", "2026-03-10T02:00:00")
    stepped, last = [], None
    with time_machine.travel(at("2027-01-01T00:00:00"), tick=False):
        for _ in ranged:
            last = timetable.next_dagrun_info_v2(
                last_dagrun_info=last,
                restriction=TimeRestriction(at("2026-03-10T00:00:00"), at("2026-03-10T02:00:00"), True),
            )
            stepped.append(last)
    assert stepped == ranged


@pytest.mark.parametrize(
    ("timetable", "key"),
    [
        pytest.param(Every("1h", partitioned=True), "2026-11-01T05:00:00", id="every-utc"),
        pytest.param(
            Calendar.day(at="06:30", timezone="America/New_York", partitioned=True),
            "2026-11-01T06:30:00",
            id="day-new-york",
        ),
        pytest.param(
            Cron("0 * * * *", timezone="America/New_York", partitioned=True),
            "2026-11-01T01:00:00-0400",
            id="cron-fold-first",
        ),
        pytest.param(
            Cron("0 * * * *", timezone="America/New_York", partitioned=True),
            "2026-11-01T01:00:00-0500",
            id="cron-fold-second",
        ),
    ],
)
def test_keys_decode_to_the_period_they_name(timetable, key):
    decoded = timetable.resolve_partition_date(key)
    assert timetable._partition_of(timetable._plan.cadence.following(int(decoded.timestamp() * 1_000_000)))[1] == key


def test_the_repeated_hour_of_a_fall_back_day_has_two_distinct_keys():
    infos = partitions(
        Cron("0 * * * *", timezone="America/New_York", partitioned=True), "2026-11-01T00:00:00", "2026-11-01T23:00:00"
    )
    keys = [i.partition_key for i in infos]
    assert len(keys) == 25 == len(set(keys))
    assert "2026-11-01T01:00:00-0400" in keys and "2026-11-01T01:00:00-0500" in keys


@pytest.mark.parametrize(
    ("key", "message"),
    [
        pytest.param("2026-03-10", "does not match key_format", id="wrong-format"),
        pytest.param("2026-03-10T12:30:00", "is not the start of a period", id="off-grid"),
    ],
)
def test_a_key_that_names_no_period_is_refused(key, message):
    with pytest.raises(InvalidPartitionKeyError, match=message):
        Every("1h", partitioned=True).resolve_partition_date(key)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        pytest.param({"key_format": "%Y-%m-%d"}, ValueError, "reads back as 1900-01-01T00:00:00", id="too-coarse"),
        pytest.param(
            {"key_format": "%Y%m%dT%H%M%S", "timezone": "Europe/Amsterdam"},
            ValueError,
            "same key '20261025T023000': Europe/Amsterdam shows 2026-10-25T02:30:00 twice .* add the UTC offset %z",
            id="dst-no-offset",
        ),
        pytest.param({"key_format": 7}, TypeError, "give a strftime pattern", id="not-a-string"),
        pytest.param({"partitioned": "yes"}, TypeError, "give True or False", id="partitioned-not-bool"),
        pytest.param({"key_format": "%Y-%m-%dT%H:%M:%S" + "x" * 10**6}, ValueError, "give 1 to 64", id="huge-format"),
        pytest.param({"key_format": ""}, ValueError, "key_format", id="empty-format"),
    ],
)
def test_bad_partition_options_are_refused_with_the_field(kwargs, error, message):
    options = {"partitioned": True, **kwargs}
    with pytest.raises(error, match=message):
        Cron("0 * * * *", **options)


def test_key_format_without_partitioned_is_refused():
    with pytest.raises(ValueError, match="key_format: .*without partitioned=True"):
        Every("1h", key_format="%Y%m%dT%H%M%S")


def test_a_custom_key_format_is_used_and_decoded():
    timetable = Every("1h", partitioned=True, key_format="hour=%Y%m%dT%H%M%S")
    info = partitions(timetable, "2026-03-10T12:00:00", "2026-03-10T12:00:00")[0]
    assert info.partition_key == "hour=20260310T120000"
    assert timetable.resolve_partition_date("hour=20260310T120000") == info.partition_date


@pytest.mark.parametrize(
    "timetable",
    [
        pytest.param(Every("1h", delay="5m", partitioned=True), id="every"),
        pytest.param(Calendar.day(at="07:00", timezone="Europe/Amsterdam", partitioned=True), id="calendar"),
        pytest.param(
            Cron("*/15 * * * *", timezone="Europe/London", partitioned=True, key_format="%Y%m%dT%H%M%S%z"), id="cron"
        ),
        pytest.param(Every("1h"), id="not-partitioned"),
    ],
)
def test_airflow_serialization_keeps_the_partitioning(timetable):
    bound = timetable.bind(dag_id="d", catchup=True, end_date=None)
    restored = decode_timetable(encode_timetable(bound))
    assert restored == bound
    assert restored.partitioned is bound.partitioned
    assert restored.key_format == bound.key_format
    first, last = "2026-06-01T00:00:00", "2026-06-02T00:00:00"
    if bound.partitioned:
        assert partitions(restored, first, last) == partitions(bound, first, last)


def test_keys_are_identical_in_another_process():
    code = (
        "import pendulum, time_machine\n"
        "from tessera.timetables import Cron\n"
        "t = Cron('0 * * * *', timezone='America/New_York', partitioned=True)\n"
        "with time_machine.travel(pendulum.datetime(2027, 1, 1), tick=False):\n"
        "    print(','.join(i.partition_key for i in t.iter_partition_dagrun_infos("
        "earliest=pendulum.datetime(2026, 11, 1), latest=pendulum.datetime(2026, 11, 1, 23))))\n"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    other = output.strip().splitlines()[-1]
    here = partitions(
        Cron("0 * * * *", timezone="America/New_York", partitioned=True), "2026-11-01T00:00:00", "2026-11-01T23:00:00"
    )
    assert other.split(",") == [i.partition_key for i in here]


def test_the_public_plan_shows_each_runs_key():
    timetable = Every("1h", delay="5m", partitioned=True)
    runs = timetable.plan.upcoming(after=at("2026-03-10T12:30:00"), count=2)
    assert [r.partition_key for r in runs] == ["2026-03-10T12:00:00", "2026-03-10T13:00:00"]
    assert Every("1h").plan.upcoming(after=at("2026-03-10T12:30:00"), count=1)[0].partition_key is None


def test_two_hourly_producers_map_to_one_consumer_key_per_hour():
    mapper = StartOfHourMapper()
    a = partitions(Every("1h", delay="5m", partitioned=True), "2026-03-10T00:00:00", "2026-03-10T05:00:00")
    b = partitions(Cron("0 * * * *", partitioned=True), "2026-03-10T00:00:00", "2026-03-10T05:00:00")
    assert [mapper.to_downstream(i.partition_key) for i in a] == [mapper.to_downstream(i.partition_key) for i in b]
    assert len({mapper.to_downstream(i.partition_key) for i in a}) == 6


@pytest.mark.parametrize(
    "day", ["2026-03-29", "2026-10-25", "2026-06-01"], ids=["spring-forward", "fall-back", "summer"]
)
def test_an_hourly_cron_in_a_dst_zone_completes_a_stock_daily_rollup(day):
    rollup = RollupMapper(
        upstream_mapper=StartOfDayMapper(timezone="Europe/Amsterdam", input_format="%Y-%m-%dT%H:%M:%S%z"),
        window=DayWindow(),
    )
    timetable = Cron("0 * * * *", timezone="Europe/Amsterdam", partitioned=True)
    keys = {i.partition_key for i in partitions(timetable, f"{day}T00:00:00", f"{day}T23:59:59")}
    assert {rollup.to_downstream(k) for k in keys} == {day}
    assert rollup.to_upstream(day) <= keys


_ZONES = ["UTC", "Europe/Amsterdam", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"]


@settings(max_examples=40, deadline=None)
@given(
    minutes=st.sampled_from([1, 5, 15, 30, 60, 90, 120, 360]),
    zone=st.sampled_from(_ZONES),
    start_hours=st.integers(min_value=0, max_value=24 * 365 * 3),
)
def test_keys_are_unique_and_decode_to_their_own_period(minutes, zone, start_hours):
    # Cron in a zone (DST folds and gaps included) when the minutes fit a cron field, else Every.
    expression = f"*/{minutes} * * * *" if minutes < 60 else f"0 */{minutes // 60} * * *" if minutes % 60 == 0 else None
    timetable = (
        Cron(expression, timezone=zone, partitioned=True)
        if expression is not None
        else Every(f"{minutes}m", partitioned=True)
    )
    first = pendulum.datetime(2024, 1, 1).add(hours=start_hours)
    with time_machine.travel(pendulum.datetime(2030, 1, 1), tick=False):
        infos = list(timetable.iter_partition_dagrun_infos(earliest=first, latest=first.add(hours=26)))
    keys = [info.partition_key for info in infos]
    assert len(keys) == len(set(keys))
    for info in infos:
        assert timetable.resolve_partition_date(info.partition_key) == info.partition_date
