"""User-given numbers have maximums enforced at parse time; no date in the supported range makes a timetable raise.

The refused inputs are the ones the "Scheduler safety" issue reproduced on Airflow 3.3.2:
each parsed, then hung the scheduler or raised OverflowError inside next_dagrun_info.
"""

from __future__ import annotations

import textwrap
from datetime import datetime, timedelta, timezone

import pendulum
import pytest
import time_machine
from airflow.exceptions import AirflowClusterPolicyViolation
from airflow.models.dag import DagModel
from airflow.sdk import DAG
from airflow.timetables.base import TimeRestriction

from tessera.plugin.policy import dag_policy
from tessera.timetables import Backfill, Calendar, Cron, Every, Fixed, Spread
from tessera.timetables.limits import SUPPORTED_FROM, SUPPORTED_UNTIL, check_supported_instant
from tests.compat.airflow_names import DagBag

UTC = timezone.utc
REFUSED = [
    pytest.param(lambda: Cron("* * * * *", catch_up=Backfill(limit=10**12)), "catch_up.backfill.limit", "1 to 1000"),
    pytest.param(lambda: Every("5m", phase=Fixed("3000000d")), "phase.fixed", "at most 366d"),
    pytest.param(lambda: Every("99999999999d"), "every", "at most 366d"),
    pytest.param(lambda: Every("5m", delay="999999999d"), "delay", "at most 366d"),
    pytest.param(lambda: Every("5m", window=timedelta(days=367)), "window", "at most 366d"),
    pytest.param(lambda: Every("5m", phase=Spread(max="100000000d")), "phase.spread.max", "at most 366d"),
    pytest.param(lambda: Every("5m", phase=Spread(step="400d")), "phase.spread.step", "at most 366d"),
    pytest.param(lambda: Every("5M"), "every", "'M' is not months"),
    pytest.param(lambda: Every("\u0665m"), "every", "ASCII digits"),
    pytest.param(lambda: Every.day(at="\u0660\u0669:00"), "at", "ASCII digits"),
    pytest.param(lambda: Every("1ms"), "every", "whole number of seconds, 1s or more"),
    pytest.param(lambda: Every("0.5s"), "every", "whole number of seconds, 1s or more"),
    pytest.param(lambda: Every(timedelta(days=400)), "every", "at most 366d"),
    pytest.param(lambda: Calendar.day(delay="367d"), "delay", "at most 366d"),
    pytest.param(lambda: Cron("0 6 * * *", starting_deadline="367d"), "starting_deadline", "at most 366d"),
    pytest.param(lambda: Cron("0 6 * * *", window="999999999d"), "window", "at most 366d"),
    pytest.param(lambda: Every("5m", key="\ud800"), "key", "UTF-8"),
]


@pytest.mark.parametrize(("make", "field", "rule"), REFUSED)
def test_out_of_bounds_input_is_refused_at_parse_time_naming_field_and_limit(make, field, rule):
    with pytest.raises(ValueError) as refused:
        make()
    assert str(refused.value).startswith(f"{field}: ")
    assert rule in str(refused.value)


def test_the_limits_themselves_are_accepted():
    Every("366d", delay="366d", window="366d", phase=Fixed("366d"), catch_up=Backfill(limit=1000))
    Every("1s", phase=Spread(max="366d", step="366d"))
    Cron("0 6 * * *", starting_deadline="366d", catch_up=Backfill(limit=1))


def write_dag(folder, name: str, schedule: str, dates: str = "") -> None:
    (folder / f"{name}.py").write_text(
        textwrap.dedent(
            f"""
            from datetime import datetime, timedelta, timezone
            from airflow.sdk import DAG
            from airflow.providers.standard.operators.empty import EmptyOperator
            from tessera.timetables import Backfill, Cron, Every, Fixed, Spread

            with DAG(dag_id="{name}", schedule={schedule}{dates}):
                EmptyOperator(task_id="t")
            """
        )
    )


@pytest.mark.parametrize(
    ("schedule", "says"),
    [
        pytest.param('Cron("* * * * *", catch_up=Backfill(limit=10**12))', "catch_up.backfill.limit: 1000000000000"),
        pytest.param('Every("5M")', "every: '5M' has an uppercase unit"),
        pytest.param('Every("5m", delay="999999999d")', "delay: '999999999d' is longer than the maximum"),
    ],
)
def test_refusal_is_an_import_error(tmp_path, schedule, says):
    write_dag(tmp_path, "refused", schedule)
    bag = DagBag(str(tmp_path))
    assert not bag.dags
    (message,) = bag.import_errors.values()
    assert says in message


# -- the supported range of dates: 1900-01-01 <= t < 3000-01-01 ------------------------------------

RANGE = "the supported range 1900-01-01T00:00:00+00:00 <= t < 3000-01-01T00:00:00+00:00"


@pytest.mark.parametrize(
    ("dates", "says"),
    [
        pytest.param(
            ", start_date=datetime(1899, 12, 31, 23, 59, tzinfo=timezone.utc)",
            f"start_date: 1899-12-31T23:59:00+00:00 is outside {RANGE}",
            id="start-before-1900",
        ),
        pytest.param(
            ", start_date=datetime(2026, 1, 1, tzinfo=timezone.utc),"
            " end_date=datetime(3000, 1, 1, tzinfo=timezone.utc)",
            f"end_date: 3000-01-01T00:00:00+00:00 is outside {RANGE}",
            id="end-at-3000",
        ),
        pytest.param(
            ", start_date=datetime(9999, 1, 1, tzinfo=timezone.utc)",
            "start_date: 9999-01-01T00:00:00+00:00 is outside",
            id="start-9999",
        ),
        pytest.param(
            ", default_args={'start_date': datetime(1, 1, 1, tzinfo=timezone.utc)}",
            "start_date: 0001-01-01T00:00:00+00:00 is outside",
            id="task-start-year-1",
        ),
    ],
)
def test_dates_outside_the_supported_range_are_an_import_error(tmp_path, dates, says):
    write_dag(tmp_path, "ancient", 'Every("1d")', dates)
    bag = DagBag(str(tmp_path))
    assert not bag.dags
    (message,) = bag.import_errors.values()
    assert says in message


def test_dates_at_the_edges_of_the_range_load(tmp_path):
    edges = (
        ", start_date=datetime(1900, 1, 1, tzinfo=timezone.utc),"
        " end_date=datetime(3000, 1, 1, tzinfo=timezone.utc) - timedelta(microseconds=1)"
    )
    write_dag(tmp_path, "edges", 'Every("366d", delay="366d", window="366d")', edges)
    bag = DagBag(str(tmp_path))
    assert bag.import_errors == {}
    assert bag.dags["edges"].timetable.key == "edges"


def test_the_policy_raises_a_cluster_policy_violation_naming_the_field():
    dag = DAG(dag_id="direct", schedule=Every("1d"), start_date=datetime(1850, 6, 1, tzinfo=UTC))
    with pytest.raises(AirflowClusterPolicyViolation, match=r"^start_date: 1850-06-01T00:00:00\+00:00 is outside"):
        dag_policy(dag)


def test_the_policy_leaves_other_timetables_alone():
    dag = DAG(dag_id="not_ours", schedule=timedelta(days=1), start_date=datetime(1850, 6, 1, tzinfo=UTC))
    dag_policy(dag)


@pytest.mark.parametrize(
    "moment",
    [SUPPORTED_FROM - timedelta(microseconds=1), SUPPORTED_UNTIL, datetime(1, 1, 1, tzinfo=UTC), datetime.max],
    ids=["just-before", "the-end", "year-1", "naive-max"],
)
def test_check_supported_instant_refuses(moment):
    with pytest.raises(ValueError, match="^until: .* is outside the supported range"):
        check_supported_instant("until", moment)


# -- no date inside the range makes a timetable raise ----------------------------------------------

EXTREMES = [
    pytest.param(
        lambda: Every("366d", delay="366d", window="366d", phase=Fixed("366d"), catch_up=Backfill(limit=1000)),
        id="every-366d-everything-max",
    ),
    pytest.param(lambda: Every("1s", delay="366d", catch_up=Backfill(limit=1000)), id="every-1s-delay-max"),
    pytest.param(
        lambda: Calendar.month(31, "23:59", every=12, timezone="Pacific/Kiritimati", delay="366d", window="366d"),
        id="yearly-month-end-kiritimati",
    ),
    pytest.param(lambda: Calendar.day("00:00", timezone="Pacific/Apia", catch_up=Backfill(limit=1000)), id="apia"),
    pytest.param(lambda: Calendar.week("sunday", "02:30", every=4, timezone="America/New_York"), id="4-weekly"),
    pytest.param(lambda: Calendar.day(every=30, phase=Fixed("366d")), id="unanchored-30-days"),
    pytest.param(lambda: Cron("0 0 29 2 *", catch_up=Backfill(limit=1000), window="366d"), id="cron-leap-day"),
    pytest.param(lambda: Cron("@yearly", timezone="Asia/Kathmandu", delay="366d"), id="cron-yearly"),
    pytest.param(lambda: Cron("59 23 31 12 *", timezone="Pacific/Kiritimati", dst="once"), id="cron-new-years-eve"),
    pytest.param(lambda: Cron("30 2 * * 0", timezone="Europe/Berlin", starting_deadline="366d"), id="cron-gap"),
]
EDGE_FROM = pendulum.instance(SUPPORTED_FROM)
EDGE_UNTIL = pendulum.instance(SUPPORTED_UNTIL - timedelta(microseconds=1))
NOWS = [EDGE_FROM.add(seconds=1), pendulum.datetime(2026, 5, 27, 13, 7, tz="UTC"), EDGE_UNTIL]


@pytest.mark.parametrize("make", EXTREMES)
@pytest.mark.parametrize("catchup", [False, True])
@pytest.mark.parametrize("now", NOWS, ids=["now-1900", "now-2026", "now-2999"])
def test_no_date_in_the_range_makes_the_adapter_raise(make, catchup, now):
    timetable = make().bind(dag_id="edges", catchup=catchup, end_date=EDGE_UNTIL)
    restrictions = [
        TimeRestriction(EDGE_FROM, EDGE_UNTIL, catchup),
        TimeRestriction(EDGE_FROM, None, catchup),
        TimeRestriction(EDGE_UNTIL, None, catchup),
        TimeRestriction(None, None, catchup),
    ]
    with time_machine.travel(now, tick=False):
        for restriction in restrictions:
            info = None
            for _ in range(5):
                info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction)
                if info is None:
                    break
                # The bounds select runs by their period (previous occurrence -> occurrence), which
                # for a leap-day cron spans 8 years around 2100 or 3000: only the order is checked here.
                assert info.data_interval.start < info.data_interval.end <= info.run_after
        for moment in (EDGE_FROM, EDGE_UNTIL, now):
            interval = timetable.infer_manual_data_interval(run_after=moment)
            assert interval.start < interval.end <= moment
            model = DagModel(dag_id="edges")
            model.next_dagrun = interval.start
            model.next_dagrun_data_interval = (interval.start, interval.end)
            model.next_dagrun_create_after = interval.end
            timetable.next_run_info_from_dag_model(dag_model=model)
