"""The plan check: drivers, next fires, and the contradictions that span schedules."""

from __future__ import annotations

import datetime
import json

import pytest

from tessera.operators.schedules.plan_check import check_plan, pipelines_of_dags
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

NOW = datetime.datetime(2026, 3, 7, 12, 0, 7, tzinfo=datetime.timezone.utc)


def _kinds(report) -> set[tuple[str, str]]:  # noqa: ANN001
    return {(c.schedule, c.kind) for c in report.contradictions}


def test_a_consistent_set_reports_drivers_and_next_fires() -> None:
    schedules = ScheduleSet(
        [
            Schedule("daily_etl", cron="0 6 * * *", timezone="America/New_York"),
            Schedule("tick", interval_seconds=7),
            Schedule("gold", after=["daily_etl", "tick"]),
        ]
    )
    pipelines = {"daily_etl": ["a"], "tick": ["b"], "gold": ["c"]}
    assert schedules.plan(pipelines=pipelines).ok
    report = check_plan(schedules, pipelines=pipelines, now=NOW)
    assert report.ok and report.contradictions == []
    by_name = {plan.name: plan for plan in report.schedules}
    assert by_name["daily_etl"].driver == "cron"
    # 06:00 New York is 11:00 UTC until the spring-forward of 2026-03-08, 10:00 UTC after it.
    assert by_name["daily_etl"].next_fires == [
        "2026-03-08T10:00:00+00:00",
        "2026-03-09T10:00:00+00:00",
        "2026-03-10T10:00:00+00:00",
    ]
    # @every 7s counts from the epoch: the first multiple of 7 s after NOW.
    first = datetime.datetime.fromisoformat(by_name["tick"].next_fires[0])
    assert first.timestamp() % 7 == 0 and NOW < first <= NOW + datetime.timedelta(seconds=7)
    assert by_name["gold"].next_fires == [] and by_name["gold"].summary == "after daily_etl, tick"
    json.dumps(report.to_dict())


def test_an_unknown_parent_holds_the_chain_and_is_reported_with_a_suggestion() -> None:
    report = check_plan(
        ScheduleSet([Schedule("mpc_daily", interval_seconds=60), Schedule("gold", after=["mpc_dialy"])]), now=NOW
    )
    assert not report.ok
    (problem,) = [c for c in report.contradictions if c.kind == "unknown_parent"]
    assert problem.schedule == "gold" and problem.severity == "error"
    assert "'mpc_dialy'" in problem.message and "did you mean 'mpc_daily'" in problem.message


@pytest.mark.parametrize(
    ("after", "cycles"),
    [
        pytest.param({"a": ["a2"], "a2": ["a"]}, [["a", "a2", "a"]], id="two"),
        pytest.param({"a": ["b"], "b": ["c"], "c": ["a"]}, [["a", "b", "c", "a"]], id="three"),
        pytest.param({"a": ["b", "c"], "b": ["c"], "c": ["x"], "x": ["y"]}, [], id="diamond-no-cycle"),
        pytest.param({"a": ["b"], "b": ["a", "c"], "c": ["b"]}, [["a", "b", "a"], ["b", "c", "b"]], id="two-loops"),
    ],
)
def test_cycles_of_after_references_are_each_reported(after: dict, cycles: list) -> None:
    # A plain mapping, as the deployment-wide check rebuilds it from the pipelines' records:
    # a ScheduleSet refuses a cycle outright (see test_schedule_set_bounds).
    schedules = {name: Schedule(name, after=parents) for name, parents in after.items()}
    schedules["y"] = Schedule("y", interval_seconds=5)
    report = check_plan(schedules, now=NOW)
    found = [c.message for c in report.contradictions if c.kind == "after_cycle"]
    assert len(found) == len(cycles)
    for cycle, message in zip(cycles, found, strict=True):
        assert " -> ".join(cycle) in message


def test_schedules_without_pipelines_are_reported_only_when_pipelines_are_known() -> None:
    schedules = ScheduleSet([Schedule("used", interval_seconds=5), Schedule("orphan", interval_seconds=5)])
    assert check_plan(schedules, now=NOW).ok
    report = check_plan(schedules, pipelines={"used": ["dag_1"]}, now=NOW)
    assert _kinds(report) == {("orphan", "no_pipelines")}
    assert {p.name: p.pipelines for p in report.schedules} == {"orphan": [], "used": ["dag_1"]}


def test_pipelines_are_read_from_dag_tags() -> None:
    from airflow.sdk import DAG

    schedules = ScheduleSet([Schedule("s", interval_seconds=60)])
    with DAG("one", start_date=None, **schedules.dag_kwargs("s")) as one:
        pass
    with DAG("two", start_date=None, schedule=None, tags=["other"]) as two:
        pass
    assert pipelines_of_dags([one, two]) == {"s": ["one"]}


def test_policy_that_does_not_do_what_it_reads_like_is_a_warning() -> None:
    report = check_plan(
        ScheduleSet(
            [
                Schedule("tz", interval_seconds=60, timezone="Europe/Berlin"),
                Schedule("delay", interval_seconds=60, retry_delay=30),
                Schedule("overlap", interval_seconds=60, catchup=True, max_concurrent=0),
            ]
        ),
        now=NOW,
    )
    assert report.ok
    assert _kinds(report) == {
        ("tz", "timezone_ignored"),
        ("delay", "retry_delay_without_retries"),
        ("overlap", "catchup_overlaps"),
    }
    assert {c.severity for c in report.contradictions} == {"warning"}
