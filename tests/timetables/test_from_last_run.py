"""Unanchored day / week / month cadences run a plain interval from the last run (seed 002).

"Without an anchor a cadence falls back to a plain interval from the last run: plus one day,
plus seven days, plus thirty days." The first run's period starts at the DAG's start date
(without one, the first run is due the moment the DAG is first scheduled); every later
occurrence is the previous scheduled run's occurrence plus one period. ``Every("1d")`` keeps
its epoch grid. The scheduler is driven as Airflow drives it: time frozen, each answer fed back.
"""

from __future__ import annotations

import datetime

import pendulum
import pytest
import time_machine
from airflow.timetables.base import DataInterval, TimeRestriction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables import Backfill, Calendar, Every, Fixed, Latest
from tessera.timetables.support import run_info

UTC = datetime.timezone.utc
DAY = datetime.timedelta(days=1)


def at(text: str) -> pendulum.DateTime:
    return pendulum.parse(text, tz="UTC")


def step(timetable, *, now, last=None, earliest=None, latest=None, catchup=False):
    with time_machine.travel(now, tick=False):
        return timetable.next_dagrun_info_v2(
            last_dagrun_info=last, restriction=TimeRestriction(earliest, latest, catchup)
        )


def test_without_a_start_date_the_first_daily_run_is_due_when_first_scheduled_not_at_midnight():
    """Deployed at 14:23: the first run is due at once, the next one a day later, not at 00:00 UTC."""
    daily = Every.day()
    first = step(daily, now=at("2026-03-10T14:23:17.250"))
    assert first.run_after == at("2026-03-10T14:23:17")
    assert first.data_interval == DataInterval(at("2026-03-09T14:23:17"), at("2026-03-10T14:23:17"))
    # The scheduler restarts, a day passes: the next run is the last one plus a day, whatever "now" is.
    second = step(Calendar.deserialize(daily.serialize()), now=at("2026-03-11T09:00"), last=first)
    assert second.run_after == at("2026-03-11T14:23:17")
    assert second.data_interval.start == first.data_interval.end


def test_the_flat_30_day_cadence_starts_at_the_start_date_not_before_it():
    """The first run's period starts at the start date; no occurrence from before deployment."""
    monthly = Every.month()
    first = step(monthly, now=at("2026-03-01T15:00"), earliest=at("2026-03-01T14:23"))
    assert first.data_interval == DataInterval(at("2026-03-01T14:23"), at("2026-03-31T14:23"))
    assert first.run_after == at("2026-03-31T14:23")
    second = step(monthly, now=at("2026-03-31T15:00"), earliest=at("2026-03-01T14:23"), last=first)
    assert second.data_interval == DataInterval(at("2026-03-31T14:23"), at("2026-04-30T14:23"))


def test_every_1d_keeps_its_epoch_grid():
    first = step(Every("1d", phase=Fixed("0s")), now=at("2026-03-10T14:23"), earliest=at("2026-03-01T14:23"))
    assert first.data_interval == DataInterval(at("2026-03-09T00:00"), at("2026-03-10T00:00"))


def test_weekly_after_downtime_runs_the_newest_due_occurrence_of_its_own_sequence():
    """Down for 50 days: Latest() runs the newest occurrence last + k*7d, found by arithmetic."""
    weekly = Every.week(delay="1h")
    last_end = at("2026-01-07T09:30") - datetime.timedelta(hours=1)
    last = run_info(at("2026-01-07T09:30"), DataInterval(last_end - 7 * DAY, last_end))
    info = step(weekly, now=at("2026-02-26T10:00"), last=last)
    assert info.run_after == at("2026-02-25T09:30")  # 2026-01-07 + 7 weeks
    assert info.data_interval == DataInterval(last_end, at("2026-02-25T08:30"))  # covering the weeks passed over


def test_summary_and_description_say_from_the_last_run():
    assert Every.day().summary == "every 1d from the last run"
    assert Every.week(every=2).summary == "every 14d from the last run"
    assert Every.month().summary == "every 30d from the last run"
    assert "from the last run" in Every.month().description
    assert "first" in Every.month().description
    assert Every.hour(6).summary == "every 6h on absolute time (UTC epoch grid)"  # hourly keeps the clean grid


def test_a_manual_run_evaluates_the_period_that_ends_when_it_is_triggered():
    window = Every.day().infer_manual_data_interval(run_after=at("2026-03-10T14:23:17.5"))
    assert window == DataInterval(at("2026-03-09T14:23:17"), at("2026-03-10T14:23:17"))


# -- against a brute-force model: walk the sequence one period at a time -------------------------


def model_next(*, last, origin, interval, now, phase, backlog, earliest):
    """The occurrence the scheduler should create next, found by walking: last + k * interval."""
    if last is None:
        if earliest is None:
            return origin  # the first run, due now
        occurrence = earliest + interval  # the run whose period starts at the start date
        if backlog is not None:
            while occurrence + interval + phase <= now:  # a first run owes only the newest due one
                occurrence += interval
        return occurrence
    due = []
    occurrence = last + interval
    while occurrence + phase <= now:
        due.append(occurrence)
        occurrence += interval
    if backlog is None or not due:
        return last + interval
    return due[max(0, len(due) - backlog)]


CADENCES = st.sampled_from(
    [(Every.day, 1), (Every.week, 7), (Every.month, 30), (lambda **kw: Calendar.day(every=3, **kw), 3)]
)


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    cadence=CADENCES,
    delay=st.sampled_from([None, "30s", "1h"]),
    phase=st.sampled_from([None, Fixed("0s"), Fixed("2m10s")]),
    catch_up=st.sampled_from([Latest(), Backfill(limit=3)]),
    start_offset=st.one_of(st.none(), st.integers(-40 * 86400, 5 * 86400)),
    gaps=st.lists(st.integers(1, 90 * 86400), min_size=1, max_size=8),
)
def test_the_scheduler_follows_the_brute_force_model(cadence, delay, phase, catch_up, start_offset, gaps):
    build, days = cadence
    timetable = build(delay=delay, phase=phase, catch_up=catch_up)
    interval = days * DAY
    delay_td = datetime.timedelta(0) if delay is None else _seconds(delay)
    phase_td = timetable.plan.phase
    now = at("2026-03-01T14:23:17")
    earliest = None if start_offset is None else now + datetime.timedelta(seconds=start_offset)
    last, origin = None, now.replace(microsecond=0) - phase_td
    for gap in [0, *gaps]:
        now = now + datetime.timedelta(seconds=gap)
        info = step(timetable, now=now, last=last, earliest=earliest)
        last_occurrence = None if last is None else last.data_interval.end + delay_td
        expected = model_next(
            last=last_occurrence,
            origin=origin,
            interval=interval,
            now=now,
            phase=phase_td,
            backlog=catch_up.backlog,
            earliest=earliest,
        )
        occurrence = info.data_interval.end + delay_td
        assert occurrence == expected
        assert info.run_after == occurrence + phase_td
        # Windows tile: a first run's is one period long; a later one's starts at the last run's window end,
        # covering the occurrences the catch-up passed over (every one follows the last run: none is before
        # the start date).
        own_start = occurrence - interval - delay_td
        assert info.data_interval.start == (own_start if last is None else last.data_interval.end)
        if last is not None:
            assert (occurrence - last_occurrence).total_seconds() % interval.total_seconds() == 0
        last = info


def _seconds(text: str) -> datetime.timedelta:
    return {"30s": datetime.timedelta(seconds=30), "1h": datetime.timedelta(hours=1)}[text]


@pytest.mark.parametrize("build", [Every.day, Every.week, Every.month], ids=["day", "week", "month"])
def test_a_backfill_tiles_its_range_and_terminates(build):
    """``airflow backfill create`` steps with catchup=True until None: a coherent sequence that ends."""
    timetable = build(delay="5m")
    start, end = at("2025-01-01T06:00"), at("2025-07-01T00:00")
    restriction = TimeRestriction(earliest=start, latest=end, catchup=True)
    infos, info = [], None
    with time_machine.travel(at("2026-03-01"), tick=False):
        for _ in range(400):
            info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction)
            if info is None:
                break
            infos.append(info)
    assert info is None, "the backfill did not terminate"
    assert infos[0].data_interval.start == start - datetime.timedelta(minutes=5)
    period = (infos[0].data_interval.end - infos[0].data_interval.start).total_seconds()
    for before, after in zip(infos, infos[1:]):
        assert after.data_interval.start == before.data_interval.end
        assert (after.data_interval.end - after.data_interval.start).total_seconds() == period
    assert infos[-1].data_interval.start + datetime.timedelta(minutes=5) <= end


def test_a_run_stored_before_downtime_moves_to_the_newest_due_occurrence_of_its_own_sequence():
    """Paused 50 days with a run stored for 2026-01-07 14:23: the scheduler creates 2026-02-25 14:23 (+7 weeks)."""
    from airflow.models.dag import DagModel

    weekly = Every.week().bind(dag_id="stored_weekly", catchup=False, end_date=None)
    model = DagModel(dag_id="stored_weekly")
    model.next_dagrun = at("2025-12-31T14:23")
    model.next_dagrun_data_interval = (at("2025-12-31T14:23"), at("2026-01-07T14:23"))
    model.next_dagrun_create_after = at("2026-01-07T14:23")
    with time_machine.travel(at("2026-02-26T10:00"), tick=False):
        info = weekly.next_run_info_from_dag_model(dag_model=model)
    assert info.data_interval == DataInterval(at("2025-12-31T14:23"), at("2026-02-25T14:23"))  # covering
