"""``Cron`` inside Airflow: restrictions with a frozen clock, DST days, the starting deadline, DAG files."""

from __future__ import annotations

import logging
import shutil
import textwrap
from pathlib import Path

import pendulum
import pytest
import time_machine
from airflow.models.dag import DagModel
from airflow.timetables.base import DagRunInfo, DataInterval, TimeRestriction

from tessera.timetables import Backfill, Cron, Fixed, Latest, Spread
from tessera.timetables.cron import CronInvalid
from tessera.timetables.support import run_info
from tests.compat.airflow_names import DagBag, DagSerialization

EXAMPLES = Path(__file__).resolve().parents[2] / "dags_examples"


def at(text: str) -> pendulum.DateTime:
    return pendulum.parse(text, tz="UTC")


def step(timetable, *, now, last=None, earliest=None, latest=None, catchup=False):
    with time_machine.travel(at(now), tick=False):
        last_info = None
        if last is not None:
            start, end = (at(x) for x in last)
            last_info = run_info(end, DataInterval(start, end))
        restriction = TimeRestriction(earliest and at(earliest), latest and at(latest), catchup)
        return timetable.next_dagrun_info_v2(last_dagrun_info=last_info, restriction=restriction)


def window(info) -> tuple[str, str, str]:
    return (
        info.data_interval.start.isoformat(),
        info.data_interval.end.isoformat(),
        info.run_after.isoformat(),
    )


def enumerate_runs(timetable, earliest: str, latest: str) -> list[DagRunInfo]:
    """What ``airflow backfill create`` does: step with catchup=True until None."""
    restriction = TimeRestriction(at(earliest), at(latest), True)
    infos, info = [], None
    with time_machine.travel(at("2027-06-01T00:00:00"), tick=False):
        while info := timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction):
            infos.append(info)
            assert len(infos) < 10_000, "enumeration does not stop at restriction.latest"
    return infos


LONDON = Cron("0 6 * * *", timezone="Europe/London")


# -- TimeRestriction cases ------------------------------------------------------------------


def test_first_run_is_the_newest_due_occurrence_at_the_cron_time():
    info = step(LONDON, now="2026-03-02T07:00:00", earliest="2026-01-01T00:00:00")
    assert window(info) == (
        "2026-03-01T06:00:00+00:00",
        "2026-03-02T06:00:00+00:00",
        "2026-03-02T06:00:00+00:00",
    )
    assert info.logical_date == at("2026-03-01T06:00:00")


def test_first_run_waits_for_a_future_start_date():
    info = step(LONDON, now="2026-03-02T07:00:00", earliest="2026-03-05T00:00:00")
    # The first run is the one whose period (03-05 06:00 -> 03-06 06:00) starts after the start date.
    assert window(info)[2] == "2026-03-06T06:00:00+00:00"


def test_subsequent_run_tiles_and_follows_summer_time():
    """Summer time starts 2026-03-29: 06:00 London is 06:00Z before, 05:00Z after; the window is 23h."""
    info = step(LONDON, now="2026-03-29T05:00:00", last=("2026-03-27T06:00:00", "2026-03-28T06:00:00"))
    assert window(info) == (
        "2026-03-28T06:00:00+00:00",
        "2026-03-29T05:00:00+00:00",
        "2026-03-29T05:00:00+00:00",
    )


@pytest.mark.parametrize(
    ("catch_up", "first_window_end"),
    [
        pytest.param(Latest(), "2026-03-05T06:00:00", id="latest"),
        # the newest due (03-05) plus the 3 missed before it
        pytest.param(Backfill(limit=3), "2026-03-02T06:00:00", id="backfill-3"),
    ],
)
def test_catch_up_after_downtime(catch_up, first_window_end):
    timetable = Cron("0 6 * * *", timezone="Europe/London", catch_up=catch_up)
    info = step(timetable, now="2026-03-05T07:00:00", last=("2026-02-27T06:00:00", "2026-02-28T06:00:00"))
    assert info.data_interval.end == at(first_window_end)


def test_dag_catchup_true_runs_every_occurrence():
    info = step(LONDON, now="2026-03-05T07:00:00", last=("2026-02-27T06:00:00", "2026-02-28T06:00:00"), catchup=True)
    assert info.data_interval.end == at("2026-03-01T06:00:00")


@pytest.mark.parametrize(
    ("latest", "has_run"),
    [
        pytest.param("2026-02-28T05:59:59", False, id="just-before-period-start"),
        pytest.param("2026-02-28T06:00:00", True, id="on-period-start-inclusive"),
    ],
)
def test_latest_bound(latest, has_run):
    last = ("2026-02-27T06:00:00", "2026-02-28T06:00:00")
    info = step(LONDON, now="2026-06-01T00:00:00", last=last, latest=latest, catchup=True)
    assert (info is not None) == has_run


def test_backfill_of_a_fall_back_day_runs_the_repeated_hour_twice():
    """``30 * * * *`` in New York on 2026-11-01: 25 runs, tiling windows, distinct logical dates."""
    timetable = Cron("30 * * * *", timezone="America/New_York")
    infos = enumerate_runs(timetable, "2026-11-01T04:00:00", "2026-11-02T04:59:59")  # local midnight to midnight
    assert len(infos) == 25
    assert len({info.logical_date for info in infos}) == 25
    assert all(a.data_interval.end == b.data_interval.start for a, b in zip(infos, infos[1:], strict=False))
    twice = [info.run_after.in_timezone("America/New_York").isoformat() for info in infos[0:2]]
    assert twice == ["2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00"]


@pytest.mark.parametrize(
    ("expression", "day_start", "day_end", "count"),
    [
        pytest.param("30 1 * * *", "2026-11-01T04:00:00", "2026-11-02T04:59:59", 2, id="fall-back-daily-twice"),
        pytest.param("30 2 * * *", "2026-03-08T05:00:00", "2026-03-09T03:59:59", 0, id="spring-forward-daily-never"),
        pytest.param("30 * * * *", "2026-03-08T05:00:00", "2026-03-09T03:59:59", 23, id="spring-forward-hourly-23"),
    ],
)
def test_acceptance_counts_through_airflow(expression, day_start, day_end, count):
    timetable = Cron(expression, timezone="America/New_York")
    assert len(enumerate_runs(timetable, day_start, day_end)) == count


def test_every_enumerates_epoch_aligned_windows():
    infos = enumerate_runs(Cron("@every 7m"), "2026-03-01T00:00:00", "2026-03-01T01:00:00")
    # 2026-03-01 00:00Z is not a multiple of 7m: the first period starts at 00:06, so runs at 00:13.
    assert [info.run_after.minute for info in infos][:3] == [13, 20, 27]
    assert all((info.run_after - at("1970-01-01T00:00:00")).total_seconds() % 420 == 0 for info in infos)


def test_manual_run_gets_the_window_of_the_latest_occurrence():
    interval = LONDON.infer_manual_data_interval(run_after=at("2026-03-02T09:00:00"))
    assert interval == (at("2026-03-01T06:00:00"), at("2026-03-02T06:00:00"))


def test_delay_window_and_phase():
    timetable = Cron("0 * * * *", delay="5m", window="3h", phase=Fixed("2m"))
    info = step(timetable, now="2026-03-02T07:01:00", last=("2026-03-02T02:55:00", "2026-03-02T05:55:00"))
    assert window(info) == (
        "2026-03-02T03:55:00+00:00",
        "2026-03-02T06:55:00+00:00",
        "2026-03-02T07:02:00+00:00",
    )


# -- the starting deadline ------------------------------------------------------------------

HOURLY_DEADLINE = Cron("0 * * * *", starting_deadline="10m")


@pytest.mark.parametrize(
    ("now", "catchup", "expected_end"),
    [
        pytest.param("2026-03-02T12:05:00", False, "2026-03-02T12:00:00", id="within-deadline-runs"),
        pytest.param("2026-03-02T12:20:00", False, "2026-03-02T13:00:00", id="missed-deadline-resumes-next-tick"),
        pytest.param("2026-03-02T12:20:00", True, "2026-03-02T10:00:00", id="catchup-true-runs-every-occurrence"),
    ],
)
def test_starting_deadline_when_stepping(now, catchup, expected_end):
    info = step(HOURLY_DEADLINE, now=now, last=("2026-03-02T08:00:00", "2026-03-02T09:00:00"), catchup=catchup)
    assert info.data_interval.end == at(expected_end)


def test_backfill_ignores_the_starting_deadline():
    infos = enumerate_runs(HOURLY_DEADLINE, "2026-03-01T00:00:00", "2026-03-01T23:59:59")
    assert len(infos) == 24


def stored_model(start: str, end: str) -> DagModel:
    model = DagModel(dag_id="d")
    model.next_dagrun = at(start)
    model.next_dagrun_data_interval = (at(start), at(end))
    model.next_dagrun_create_after = at(end)
    return model


def test_stale_stored_run_is_skipped_for_missed_deadline(caplog):
    """The scheduler stored 10:00 and went down; at 12:20 the 12:00 tick is 20 minutes old: wait for 13:00.

    Its window reaches back to the stored run's start: the ticks the deadline skipped are covered.
    """
    timetable = Cron("0 * * * *", starting_deadline="10m").bind(dag_id="d", catchup=False, end_date=None)
    model = stored_model("2026-03-02T09:00:00", "2026-03-02T10:00:00")
    with caplog.at_level(logging.INFO), time_machine.travel(at("2026-03-02T12:20:00"), tick=False):
        info = timetable.next_run_info_from_dag_model(dag_model=model)
    assert window(info) == (
        "2026-03-02T09:00:00+00:00",
        "2026-03-02T13:00:00+00:00",
        "2026-03-02T13:00:00+00:00",
    )
    assert "MissedDeadline" in caplog.text
    with time_machine.travel(at("2026-03-02T12:05:00"), tick=False):
        info = timetable.next_run_info_from_dag_model(dag_model=model)
    assert window(info)[1] == "2026-03-02T12:00:00+00:00"
    with time_machine.travel(at("2026-03-02T10:00:30"), tick=False):
        info = timetable.next_run_info_from_dag_model(dag_model=model)
    assert window(info)[1] == "2026-03-02T10:00:00+00:00"


def test_stored_run_of_a_catchup_dag_is_kept():
    timetable = Cron("0 * * * *", starting_deadline="10m").bind(dag_id="d", catchup=True, end_date=None)
    model = stored_model("2026-03-02T09:00:00", "2026-03-02T10:00:00")
    with time_machine.travel(at("2026-03-02T12:20:00"), tick=False):
        info = timetable.next_run_info_from_dag_model(dag_model=model)
    assert window(info)[1] == "2026-03-02T10:00:00+00:00"


# -- what users see -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timetable", "summary"),
    [
        pytest.param(LONDON, "cron 0 6 * * * Europe/London", id="daily"),
        pytest.param(Cron("@every 5m"), "every 5m", id="every"),
        pytest.param(Cron("@every 3600s"), "every 1h", id="every-in-seconds"),
        pytest.param(
            Cron("30 1 * * *", timezone="America/New_York", dst="once", starting_deadline="5m"),
            "cron 30 1 * * * America/New_York · dst once · deadline 5m",
            id="dst-once-deadline",
        ),
        pytest.param(
            Cron("0 * * * *", delay="5m", catch_up=Backfill(limit=3)),
            "cron 0 * * * * UTC · delay 5m · catch-up backfill 3",
            id="delay-backfill",
        ),
    ],
)
def test_summary(timetable, summary):
    assert timetable.summary == summary


def test_description_is_human():
    assert LONDON.description.startswith("At 06:00, Europe/London time")
    assert "fires twice" in LONDON.description
    assert Cron("@every 5m").description.startswith("Every 5m, counted from 1970-01-01 00:00 UTC.")


@pytest.mark.parametrize(
    ("expression", "start"),
    [
        pytest.param("*/90 * * * *", "Every hour, UTC time.", id="step-beyond-range-is-hourly"),
        pytest.param("0 0 *,1 * *", "At 00:00, UTC time.", id="star-item-is-daily"),
        pytest.param("0 0 , * 1", "At 00:00, only on Monday, UTC time.", id="empty-day-of-month-mondays"),
        pytest.param("@weekly", "At 00:00, only on Sunday, UTC time.", id="descriptor"),
    ],
)
def test_description_words_what_a_cronjob_runs(expression, start):
    assert Cron(expression).description.startswith(start)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "fragment"),
    [
        pytest.param(("61 * * * *",), {}, CronInvalid, "expression: '61 * * * *' has an invalid", id="bad-minute"),
        pytest.param(("0 0 L * *",), {}, CronInvalid, "expression: '0 0 L * *' has an invalid day-of-month", id="L"),
        pytest.param(("0 6 * * *",), {"timezone": "Mars/Olympus"}, ValueError, "timezone: 'Mars/Olympus'", id="tz"),
        pytest.param(("0 6 * * *",), {"dst": "never"}, ValueError, "dst: 'never' is not a DST policy", id="dst"),
        pytest.param(
            ("0 6 * * *",),
            {"starting_deadline": "soon"},
            ValueError,
            "starting_deadline: 'soon'",
            id="deadline",
        ),
        pytest.param(("0 6 * * *",), {"phase": "2m"}, TypeError, "phase: '2m' is not a phase", id="phase"),
        pytest.param((6,), {}, TypeError, "expression: 6 is a int", id="not-text"),
    ],
)
def test_invalid_arguments_name_the_field(args, kwargs, error, fragment):
    with pytest.raises(error, match=fragment.replace("*", r"\*")):
        Cron(*args, **kwargs)


# -- DAG files: examples, import errors, serialization ---------------------------------------


def test_examples_load_and_round_trip_through_serialization(tmp_path):
    for example in sorted(EXAMPLES.glob("cron_*.py")):
        shutil.copy(example, tmp_path)
    bag = DagBag(str(tmp_path))
    assert bag.import_errors == {}
    assert len(bag.dags) == 3
    for dag in bag.dags.values():
        assert isinstance(dag.timetable, Cron)
        assert dag.timetable.key == dag.dag_id  # bound by the dag policy
        data = DagSerialization.to_dict(dag)
        restored = DagSerialization.from_dict(data)
        assert type(restored.timetable) is Cron
        assert restored.timetable == dag.timetable
        assert restored.timetable.summary == dag.timetable.summary
    assert bag.dags["tessera_cron_starting_deadline"].timetable._starting_deadline_us == 600_000_000


@pytest.mark.parametrize(
    "timetable",
    [
        pytest.param(Cron("30 1 * * *", timezone="America/New_York", dst="once"), id="once"),
        pytest.param(Cron("@every 90s", phase=Spread(max="30s"), key="team"), id="every-spread"),
        pytest.param(Cron("0 6 * * 1-5", window="1d", delay="10m", catch_up=Backfill(limit=2)), id="window"),
    ],
)
def test_serialize_round_trip(timetable):
    data = timetable.serialize()
    assert data["version"] == 1
    restored = Cron.deserialize(data)
    assert restored == timetable
    assert restored.serialize() == data
    assert restored.phase_ms == timetable.phase_ms


def write_dag(folder, name: str, schedule_src: str) -> None:
    source = f"""
        from airflow.sdk import DAG
        from airflow.providers.standard.operators.empty import EmptyOperator
        from tessera.timetables import Cron

        with DAG(dag_id="{name}", schedule={schedule_src}):
            EmptyOperator(task_id="t")
        """
    (folder / f"{name}.py").write_text(textwrap.dedent(source))


@pytest.mark.parametrize(
    ("schedule_src", "fragment"),
    [
        pytest.param('Cron("61 6 * * *")', "expression: '61 6 * * *' has an invalid minute", id="bad-expression"),
        pytest.param('Cron("@fortnightly")', "expression: '@fortnightly' is not a known descriptor", id="descriptor"),
        pytest.param('Cron("0 6 * * *", timezone="Europe/Londn")', "timezone: 'Europe/Londn'", id="bad-timezone"),
    ],
)
def test_invalid_cron_is_an_import_error_naming_the_expression(tmp_path, schedule_src, fragment):
    write_dag(tmp_path, "bad_cron", schedule_src)
    bag = DagBag(str(tmp_path))
    assert not bag.dags
    (message,) = bag.import_errors.values()
    assert fragment in message
