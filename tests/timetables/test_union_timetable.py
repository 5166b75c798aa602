"""``Union`` (``a | b``) in Airflow: the merge of its members, brute-forced over random pairs and zones."""

from __future__ import annotations

import datetime
import zoneinfo

import pendulum
import pytest
import time_machine
from airflow.sdk import DAG
from airflow.timetables.base import DataInterval, TimeRestriction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables import Backfill, Calendar, Cron, Every, Fixed, Spread, Union, between, holidays_of
from tessera.timetables.support import run_info
from tests.compat.airflow_names import DagSerialization

UTC = datetime.timezone.utc
ZONES = sorted(zoneinfo.available_timezones() - {"localtime", "Factory"})
AMSTERDAM = "Europe/Amsterdam"


def members(zone: str) -> st.SearchStrategy:
    times = st.builds(lambda h, m: f"{h:02d}:{m:02d}", st.integers(0, 23), st.sampled_from([0, 15, 30, 45]))
    return st.one_of(
        st.builds(lambda at: Every.day(at=at, timezone=zone), times),
        st.builds(lambda at, n: Every.hour(n, at=at, timezone=zone), times, st.sampled_from([1, 2, 6, 12])),
        st.builds(lambda on, at: Every.week(on=on, at=at, timezone=zone), st.integers(0, 6), times),
        st.builds(lambda on, at: Every.month(on=on, at=at, timezone=zone), st.integers(1, 31), times),
        st.builds(lambda at: Every.business_day(at=at, timezone=zone), times),
        st.builds(
            lambda text, dst: Cron(text, timezone=zone, dst=dst),
            st.sampled_from(["0 17 * * 5", "30 1 * * *", "*/20 * * * *", "0 9 1,15 * *", "15 2 * 3,10,11 0"]),
            st.sampled_from(["cronjob", "once"]),
        ),
        st.sampled_from(["1h", "6h", "1d"]).map(Every),
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), zone=st.sampled_from(ZONES), year=st.integers(1971, 2098), month=st.integers(1, 12))
def test_a_union_runs_the_merge_of_its_members_own_occurrences(data, zone, year, month):
    a, b = data.draw(members(zone)), data.draw(members(zone))
    union = a | b
    after = datetime.datetime(year, month, 1, tzinfo=UTC)
    own = [[run.occurrence for run in member.plan.upcoming(after=after, count=40)] for member in (a, b)]
    horizon = min(occurrences[-1] for occurrences in own)
    expected = sorted({o for occurrences in own for o in occurrences if o <= horizon})
    runs = union.plan.upcoming(after=after, count=len(expected))
    assert [run.occurrence for run in runs] == expected
    for earlier, later in zip(runs, runs[1:]):
        assert later.window_start == earlier.window_end, "windows tile across the union"
        assert later.interval_ms == round((later.occurrence - earlier.occurrence).total_seconds() * 1000)
    # The scheduler, stepping next_dagrun_info_v2 as a backfill does, creates the same runs.
    restriction = TimeRestriction(runs[0].window_start, None, True)
    last, stepped = None, []
    with time_machine.travel(datetime.datetime(2999, 1, 1, tzinfo=UTC), tick=False):
        for _ in runs:
            last = union.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction)
            stepped.append(last.data_interval.end)
    assert stepped == [run.window_end for run in runs]


def test_equal_instants_run_once_and_windows_tile_across_members():
    union = Every.day(at="09:00", timezone=AMSTERDAM) | Cron("0 9,17 * * 5", timezone=AMSTERDAM)
    runs = union.plan.upcoming(after=pendulum.datetime(2026, 3, 5, 12, tz=AMSTERDAM), count=4)
    local = [
        (
            r.window_start.in_timezone(AMSTERDAM).strftime("%a %H:%M"),
            r.occurrence.in_timezone(AMSTERDAM).strftime("%a %H:%M"),
        )
        for r in runs
    ]
    assert local == [
        ("Thu 09:00", "Fri 09:00"),
        ("Fri 09:00", "Fri 17:00"),
        ("Fri 17:00", "Sat 09:00"),
        ("Sat 09:00", "Sun 09:00"),
    ]


def test_phase_and_catch_up_apply_to_the_union():
    union = Union(
        Every.day(at="09:00", timezone=AMSTERDAM),
        Cron("0 17 * * 5", timezone=AMSTERDAM),
        phase=Fixed("2m"),
        catch_up=Backfill(limit=2),
    ).bind(dag_id="u", catchup=False, end_date=None)
    last = (pendulum.datetime(2026, 3, 4, 9, tz=AMSTERDAM), pendulum.datetime(2026, 3, 5, 9, tz=AMSTERDAM))
    with time_machine.travel(pendulum.datetime(2026, 3, 8, 12, tz=AMSTERDAM), tick=False):
        info = union.next_dagrun_info_v2(
            last_dagrun_info=run_info(last[1], DataInterval(*last)),
            restriction=TimeRestriction(None, None, False),
        )
    # Down since Thursday: of the union's due occurrences (Fri 09:00, Fri 17:00, Sat 09:00, Sun 09:00) the
    # newest and the 2 missed before it run, oldest first: Friday 17:00 (its window from Friday 09:00), 2
    # minutes after its occurrence; its window reaches back to the last run's end over Friday 09:00.
    assert info.data_interval.start.in_timezone(AMSTERDAM) == pendulum.datetime(2026, 3, 5, 9, tz=AMSTERDAM)
    assert info.data_interval.end.in_timezone(AMSTERDAM) == pendulum.datetime(2026, 3, 6, 17, tz=AMSTERDAM)
    assert info.run_after == info.data_interval.end + datetime.timedelta(minutes=2)
    assert union.summary.endswith("· phase 2m · catch-up backfill 2")


def test_partition_keys_stay_one_to_one_across_a_fall_back():
    # A cron firing in the repeated hour and a calendar cadence: keys carry the offset, and each decodes back.
    union = Union(
        Cron("30 2 * * *", timezone="Europe/Berlin"), Every.day(at="12:00", timezone="Europe/Berlin"), partitioned=True
    )
    runs = union.plan.upcoming(after=pendulum.datetime(2026, 10, 24, tz="Europe/Berlin"), count=8)
    keys = [run.partition_key for run in runs]
    assert len(set(keys)) == len(keys)
    assert "2026-10-25T02:30:00+0200" in keys and "2026-10-25T02:30:00+0100" in keys
    for run in runs:
        assert union._decode_partition_date(run.partition_key) == run.window_start


def test_exclusions_of_the_union_and_of_a_member():
    ny = "America/New_York"
    union = Union(
        Every.business_day(at="09:00", timezone=ny, calendar=holidays_of("US", subdiv="NY")),
        Cron("0 17 * * 5", timezone=ny),
        exclude=between("2026-12-24", "2026-12-24"),
    )
    after, until = pendulum.datetime(2026, 7, 1, tz=ny), pendulum.datetime(2026, 7, 8, tz=ny)
    days = [(r.occurrence.in_timezone(ny).strftime("%a %d %H")) for r in union.plan.upcoming(after=after, count=5)]
    # Friday 3 July: the member's holiday skips 09:00, the Friday member still runs at 17:00.
    assert days == ["Wed 01 09", "Thu 02 09", "Fri 03 17", "Mon 06 09", "Tue 07 09"]
    assert [s.local_date for s in union.plan.excluded(after=after, until=until)] == ["2026-07-03"]
    christmas_eve = union.plan.excluded(
        after=pendulum.datetime(2026, 12, 23, tz=ny), until=pendulum.datetime(2026, 12, 26, tz=ny)
    )
    assert [(s.occurrence.in_timezone(ny).strftime("%d %H"), s.reasons) for s in christmas_eve] == [
        ("24 09", ("excluded 2026-12-24 to 2026-12-24",)),
        ("25 09", ("Christmas Day (holidays US-NY)",)),
    ]


@pytest.mark.parametrize(
    "timetable",
    [
        pytest.param(Every.day(at="09:00", timezone=AMSTERDAM) | Cron("0 17 * * 5", timezone=AMSTERDAM), id="operator"),
        pytest.param(
            Union(
                Every("6h"),
                Cron("30 1 * * *", timezone="America/New_York"),
                Every.month(31, "06:00", timezone="America/New_York"),
                delay="5m",
                window="1d",
                phase=Spread(max="10m"),
                partitioned=True,
                exclude=holidays_of("US"),
            ),
            id="three-members-every-option",
        ),
    ],
)
def test_serialization_round_trip_through_airflow(timetable):
    with DAG("union", schedule=timetable, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        pass
    restored = DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
    assert type(restored) is Union
    assert restored.serialize() == timetable.serialize()
    assert (restored.summary, restored.description) == (timetable.summary, timetable.description)
    after = pendulum.datetime(2026, 6, 1, tz="UTC")
    assert restored.plan.upcoming(after=after, count=30) == timetable.plan.upcoming(after=after, count=30)


def test_a_union_of_unions_is_flattened():
    a, b, c = (Cron(f"0 {h} * * *", timezone="UTC") for h in (6, 12, 18))
    assert (a | b | c).members == (a, b, c)
    assert len((a | b).members) == 2
    assert Union(a | b, c).serialize() == (a | (b | c)).serialize()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(
            lambda: Every("1h") | "0 6 * * *",
            "members[1]: '0 6 * * *' is a str; a union joins tessera timetables",
            id="text",
        ),
        pytest.param(lambda: Union(Every("1h")), "members: 1 timetables; a union merges 2 to 16", id="one"),
        pytest.param(
            lambda: Union(*(Cron(f"{m} * * * *") for m in range(17))),
            "members: 17 timetables; a union merges 2 to 16",
            id="17",
        ),
        pytest.param(
            lambda: Every.day(at="09:00", timezone="UTC", phase=Fixed("1m")) | Every("1h"),
            "members[0]: <Calendar daily at 09:00 UTC · phase 1m> sets phase; a member says only when it fires",
            id="member-phase",
        ),
        pytest.param(
            lambda: Cron("0 6 * * *", starting_deadline="5m", delay="1m") | Every("1h"),
            "members[0]: <Cron cron 0 6 * * * UTC · delay 1m · deadline 5m> sets delay, starting_deadline",
            id="member-delay-deadline",
        ),
        pytest.param(
            lambda: Cron("0 9 * * *", pause_after_failures=3) | Cron("0 17 * * *"),
            "members[0]: <Cron cron 0 9 * * * UTC · pause after 3 failures> sets pause_after_failures; a member",
            id="member-pause-after-failures",
        ),
        pytest.param(
            lambda: Every("1h") | Cron("0 17 * * *", overlap="skip", pause_after_failures=2),
            "members[1]: <Cron cron 0 17 * * * UTC · overlap skip · pause after 2 ... sets overlap, "
            "pause_after_failures; a member says only when it fires: give overlap=, pause_after_failures= to the union",
            id="member-overlap",
        ),
        pytest.param(
            lambda: Union(Every("1h"), Every("2h"), partitioned=True) | Every("3h"),
            "members[0]: ",
            id="nested-union-with-options",
        ),
        pytest.param(
            lambda: Every.day() | Every("1h"),
            "members[0]: <Calendar every 1d from the last run> counts from the last run",
            id="from-last-run",
        ),
        pytest.param(
            lambda: Every.day(at="09:00", timezone=AMSTERDAM) | Every.day(at="09:00", timezone="Europe/London"),
            "members: ['Europe/Amsterdam', 'Europe/London'] are read on different wall clocks",
            id="two-zones",
        ),
    ],
)
def test_refusals_name_the_member(build, message):
    with pytest.raises((ValueError, TypeError)) as refused:
        build()
    assert str(refused.value).startswith(message), str(refused.value)
    assert "; " in str(refused.value)


def test_a_calendar_member_keeps_its_own_serialized_class():
    union = Calendar.week("monday", "07:00", timezone=AMSTERDAM) | Every("12h")
    assert [item["class"] for item in union.serialize()["members"]] == ["Calendar", "Every"]
