"""The comparison against the tests' own stepping: random crons, intervals and zones, around their clock changes.

For each schedule the report's difference (Airflow's runs from its anchor, tessera's from its
public plan, the stretches of a schedule that repeats counted as copies of one period) must equal
the difference of both timetables stepped run by run by the scheduler's own question,
``next_dagrun_info``, from the DAG's start date: the counts and the instants quoted; and
"identical" must mean the two step through the same run times. Over seven weeks around the
spring changes, and over whole years (dense crons too: every minute, every five, in DST zones).
"""

from __future__ import annotations

import datetime

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tessera.plugin.migrate import IDENTICAL, NOT_CONFIRMED, RUN_BUDGET, compare_dag
from tessera.plugin.migrate.current import core_timetable, read_current
from tessera.plugin.migrate.runs import Run, difference

from ...fuzz_depth import DEEP, cases
from .stepping import UTC, step

ZONES = ["UTC", "Europe/Amsterdam", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "Asia/Kolkata"]
START = datetime.datetime(2026, 2, 1, 0, 7, tzinfo=UTC)
SINCE = datetime.datetime(2026, 2, 20, tzinfo=UTC)
UNTIL = datetime.datetime(2026, 4, 20, tzinfo=UTC)
"""Seven weeks holding March and April's clock changes in every DST zone listed (north and south)."""

minutes = st.one_of(st.integers(0, 59).map(str), st.sampled_from(["*/15", "*/30", "0,30", "5-10/5"]))
hours = st.one_of(st.integers(0, 23).map(str), st.sampled_from(["*", "*/6", "2", "1-3", "9-17"]))
weekdays = st.sampled_from(["*", "1-5", "0", "6", "1,3,5"])
crons = st.builds(lambda m, h, d: f"{m} {h} * * {d}", minutes, hours, weekdays)
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
"""A failing schedule is shown as drawn: shrinking one steps two timetables through weeks per try (minutes)."""
deltas = st.sampled_from([datetime.timedelta(hours=h) for h in (1, 2, 3, 6, 8, 12, 24, 48, 168)])
STEPPED_MOST = 600_000
"""The brute force's own bound: a minutely cron's year, and the weeks from the start date before it."""
YEAR = datetime.timedelta(days=365)
days_into_2026 = st.integers(0, 330).map(
    lambda days: datetime.datetime(2026, 1, 1, tzinfo=UTC) + datetime.timedelta(days)
)
DST_ZONES = ["Europe/Amsterdam", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "America/Sao_Paulo"]
hourly_at_most = st.builds(
    lambda m, h, d: f"{m} {h} * * {d}",
    st.one_of(st.integers(0, 59).map(str), st.sampled_from(["0,30", "15,45"])),
    hours,
    weekdays,
)
"""Crons of at most two runs an hour, so stepping their year run by run takes seconds."""
every_few_minutes = st.builds(
    lambda m, h, d: f"{m} {h} * * {d}",
    st.sampled_from(["*/5", "*/10", "2-59/5", "*/15"]),
    st.sampled_from(["*", "*", "1-3", "9-17", "*/2"]),
    weekdays,
)


def _airflow_timetable(kind: str, value: object, zone: str, start: datetime.datetime = START) -> object:
    from airflow.sdk import DAG
    from airflow.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable
    from airflow.timetables.trigger import CronTriggerTimetable

    made = {
        "cron string": lambda: value,
        "trigger": lambda: CronTriggerTimetable(value, timezone=zone),
        "intervals": lambda: CronDataIntervalTimetable(value, timezone=zone),
        "delta": lambda: value,
        "delta intervals": lambda: DeltaDataIntervalTimetable(value),
    }[kind]()
    return core_timetable(DAG("property", schedule=made, start_date=start).timetable)


def _runs(stepped: list) -> tuple[Run, ...]:
    # Airflow's built-ins and the exact proposals start each run at its occurrence.
    return tuple(Run(at, at, start, end) for at, start, end in stepped)


def _check(
    kind: str,
    value: object,
    zone: str,
    *,
    start: datetime.datetime = START,
    since: datetime.datetime = SINCE,
    until: datetime.datetime = UNTIL,
) -> None:
    """The report's difference of the exact variant is the brute-force one, stepped run by run through the range."""
    timetable = _airflow_timetable(kind, value, zone, start)
    current = read_current(timetable)
    found = compare_dag(
        "property",
        timetable,
        current,
        start_date=start,
        end_date=None,
        catchup=False,
        reads_windows=True,
        since=since,
        until=until,
    )
    exact = found.variants[0]
    if exact.call is None:  # a cron tessera refuses is reported, not compared
        assert "is refused" in exact.note
        return
    assert exact.verdict != NOT_CONFIRMED, (kind, value, zone, found.notes)
    tessera = exact.call.build().bind(dag_id="property", catchup=True, end_date=None)
    before = step(timetable, start_date=start, since=since, until=until, cap=STEPPED_MOST)
    after = step(tessera, start_date=start, since=since, until=until, cap=STEPPED_MOST)
    expected = difference(_runs(before), _runs(after))
    reported = exact.difference
    shown = (kind, value, zone, exact.call.source(), found.repeated)
    assert reported == expected, shown
    if exact.verdict == IDENTICAL:
        assert [r[0] for r in before] == [r[0] for r in after], shown


@settings(
    max_examples=40, deadline=None, phases=NO_SHRINK, derandomize=not DEEP, suppress_health_check=[HealthCheck.too_slow]
)
@given(kind=st.sampled_from(["cron string", "trigger", "intervals"]), cron=crons, zone=st.sampled_from(ZONES))
def test_the_reported_difference_of_a_cron_is_what_both_timetables_step_through(kind, cron, zone):
    _check(kind, cron, zone)


def test_an_airflow_timetable_that_raises_on_a_clock_change_is_a_note_not_a_failure():
    """Airflow's ``CronDataIntervalTimetable`` of ``0 * * * *`` on Lord Howe's half-hour change raises ValueError."""
    _check("intervals", "0 * * * *", "Australia/Lord_Howe")
    timetable = _airflow_timetable("intervals", "0 * * * *", "Australia/Lord_Howe")
    found = compare_dag(
        "lord_howe",
        timetable,
        read_current(timetable),
        start_date=START,
        end_date=None,
        catchup=False,
        reads_windows=True,
        since=SINCE,
        until=UNTIL,
    )
    assert any("Airflow's own timetable stops: asked for the run after 2026-04-04" in n for n in found.notes), (
        found.notes
    )


@settings(
    max_examples=20, deadline=None, phases=NO_SHRINK, derandomize=not DEEP, suppress_health_check=[HealthCheck.too_slow]
)
@given(kind=st.sampled_from(["delta", "delta intervals"]), delta=deltas)
def test_the_reported_difference_of_a_timedelta_is_what_both_timetables_step_through(kind, delta):
    _check(kind, delta, "UTC")


@settings(
    max_examples=6, deadline=None, phases=NO_SHRINK, derandomize=not DEEP, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    kind=st.sampled_from(["cron string", "trigger", "intervals"]),
    cron=hourly_at_most,
    zone=st.sampled_from(ZONES),
    since=days_into_2026,
)
def test_a_year_counted_by_its_periods_is_the_year_stepped_run_by_run(kind, cron, zone, since):
    _check(kind, cron, zone, start=since - datetime.timedelta(days=3), since=since, until=since + YEAR)


@settings(
    max_examples=cases(deep=5, least=1),
    deadline=None,
    phases=NO_SHRINK,
    derandomize=not DEEP,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(kind=st.sampled_from(["trigger", "intervals"]), cron=every_few_minutes, zone=st.sampled_from(DST_ZONES))
def test_a_dense_cron_in_a_dst_zone_over_a_year_is_its_year_stepped_run_by_run(kind, cron, zone):
    since = datetime.datetime(2026, 1, 5, 12, tzinfo=UTC)
    _check(kind, cron, zone, start=since - datetime.timedelta(days=1), since=since, until=since + YEAR)


@pytest.mark.skipif(
    not DEEP, reason="a year of minutes stepped by both timetables (a minute of CPU): make fuzz runs it"
)
def test_a_minutely_cron_across_both_of_amsterdams_changes_is_its_year_stepped_run_by_run():
    since = datetime.datetime(2026, 1, 5, 12, tzinfo=UTC)
    _check("trigger", "* * * * *", "Europe/Amsterdam", start=since, since=since, until=since + YEAR)


@settings(
    max_examples=6, deadline=None, phases=NO_SHRINK, derandomize=not DEEP, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    kind=st.sampled_from(["delta", "delta intervals"]),
    delta=st.sampled_from([datetime.timedelta(minutes=m) for m in (30, 61, 90, 420, 1440, 2880)]),
    since=days_into_2026,
)
def test_a_timedelta_over_a_year_is_its_year_stepped_run_by_run(kind, delta, since):
    _check(kind, delta, "UTC", start=since - datetime.timedelta(days=2, minutes=7), since=since, until=since + YEAR)


def test_a_schedule_with_no_period_and_more_runs_than_the_budget_is_not_confirmed():
    """Every minute of the first twenty days of each month: no daily or weekly period, 28,800 runs a month."""
    timetable = _airflow_timetable("trigger", "* * 1-20 * *", "Europe/Amsterdam")
    found = compare_dag(
        "dense",
        timetable,
        read_current(timetable),
        start_date=START,
        end_date=None,
        catchup=False,
        reads_windows=False,
        since=SINCE,
        until=SINCE + YEAR,
    )
    assert found.truncated and found.period is None
    assert {v.verdict for v in found.variants if v.call is not None} == {NOT_CONFIRMED}
    assert any(f"more than {RUN_BUDGET:,} runs" in note for note in found.notes), found.notes


@pytest.mark.parametrize(
    ("cron", "zone", "verdict", "says"),
    [
        pytest.param("0 6 * * *", "Europe/London", IDENTICAL, "", id="london-daily"),
        # Airflow runs 02:30 on the spring-forward Sunday at 03:30 and on the fall-back one at the
        # second 02:30; no tessera DST rule does both, and the report says which runs move.
        pytest.param("30 2 * * 0", "Europe/Amsterdam", "different runs", "2026-03-29", id="amsterdam-0230-sunday"),
        pytest.param("15 * * * *", "America/New_York", IDENTICAL, "", id="new-york-hourly-fold"),
    ],
)
def test_dst_days_are_compared_for_what_airflow_does_on_them(cron, zone, verdict, says):
    timetable = _airflow_timetable("trigger", cron, zone)
    found = compare_dag(
        "dst",
        timetable,
        read_current(timetable),
        start_date=START,
        end_date=None,
        catchup=False,
        reads_windows=False,
        since=SINCE,
        until=SINCE + datetime.timedelta(days=365),
    )
    assert found.verdict == verdict
    shown = found.variants[0].difference
    assert says in " ".join(str(t) for t in [*shown.first_appear, *shown.first_disappear])


@pytest.mark.parametrize("delta", [datetime.timedelta(minutes=30), datetime.timedelta(days=2)])
def test_a_timedelta_with_no_start_date_counts_from_the_range_start_in_every_span(delta):
    """Airflow's grid starts at the first question; each span stepped or counted must keep that one grid."""
    timetable = _airflow_timetable("delta", delta, "UTC")
    since, until = SINCE, SINCE + YEAR
    common = {"end_date": None, "catchup": False, "reads_windows": True, "since": since, "until": until}
    found = compare_dag("no_start", timetable, read_current(timetable), start_date=None, **common)
    assert found.repeated  # the year is counted in periods, not stepped whole
    exact = found.variants[0]
    tessera = exact.call.build().bind(dag_id="no_start", catchup=True, end_date=None)
    before = step(timetable, start_date=since, since=since, until=until, cap=STEPPED_MOST)
    after = step(tessera, start_date=since - YEAR, since=since, until=until, cap=STEPPED_MOST)
    assert exact.difference == difference(_runs(before), _runs(after)), exact.call.source()


def test_a_stretch_that_does_not_repeat_its_period_is_stepped_run_by_run_instead(monkeypatch):
    """The check :mod:`.periods` relies on: given a wrong period (36 h for a daily cron), no copy is counted."""
    import tessera.plugin.migrate.compare as compare

    monkeypatch.setattr(compare, "period_of", lambda current: datetime.timedelta(hours=36))
    timetable = _airflow_timetable("trigger", "0 6 * * *", "Europe/Amsterdam")
    found = compare_dag(
        "wrong_period",
        timetable,
        read_current(timetable),
        start_date=START,
        end_date=None,
        catchup=False,
        reads_windows=True,
        since=SINCE,
        until=UNTIL,
    )
    assert found.repeated and any("are not the period before them shifted" in note for note in found.notes)
    exact = found.variants[0]
    tessera = exact.call.build().bind(dag_id="wrong_period", catchup=True, end_date=None)
    before = step(timetable, start_date=START, since=SINCE, until=UNTIL)
    after = step(tessera, start_date=START, since=SINCE, until=UNTIL)
    assert exact.difference == difference(_runs(before), _runs(after))
