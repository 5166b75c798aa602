"""``dropped=``: the next run covers a dropped fire's window, or the window is owed; one rule decides every window."""

from __future__ import annotations

import ast
import datetime
from pathlib import Path

import pendulum
import pytest
import time_machine
from airflow.sdk import DAG
from airflow.timetables.base import DagRunInfo, DataInterval, TimeRestriction

from tessera.timetables import Cron, Every, Fixed, Latest, Union
from tessera.timetables.coverage import MAX_OWED
from tests.compat.airflow_names import DagSerialization

TIMETABLES = Path(__file__).resolve().parents[3] / "timetables"
NOT_A_SCHEDULED_RUN = {
    # (module, function): why its runs keep their own one-period window
    ("partition_plan.py", "iter_partition_dagrun_infos"): "a backfill of partition keys: one run per period",
}
BUILDS_A_WINDOW = {
    ("partition_plan.py", "_info"): "turns the planned run it is given into Airflow's answer",
    ("base.py", "next_dagrun_info"): "hands Airflow's last interval on to next_dagrun_info_v2",
    ("base.py", "infer_manual_data_interval"): "a manual run's window: never a scheduled one",
    ("_airflow.py", "run_info"): "the door: builds Airflow's DagRunInfo, whose fields differ by release, as it is told",
}


def at(text: str) -> pendulum.DateTime:
    return pendulum.parse(text, tz="UTC")


def _functions() -> list[tuple[str, ast.FunctionDef, set[str]]]:
    """Every function in ``timetables/`` with the names it calls (``f(...)`` and ``x.f(...)``)."""
    found = []
    for path in sorted(TIMETABLES.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                calls = {
                    call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
                    for call in ast.walk(node)
                    if isinstance(call, ast.Call)
                }
                found.append((str(path.relative_to(TIMETABLES)), node, calls))
    return found


def test_every_run_handed_to_the_scheduler_gets_its_window_from_the_coverage_rule():
    """A function that turns a planned run into Airflow's answer (``_info``) applies ``covering_run`` first."""
    bypasses = [
        f"timetables/{path}:{node.lineno} {node.name}() hands the scheduler a run without timetable._covering(...)"
        for path, node, calls in _functions()
        if "_info" in calls
        and not calls & {"_covering", "covering_run"}
        and (path, node.name) not in NOT_A_SCHEDULED_RUN
    ]
    assert bypasses == []


def test_no_other_place_builds_a_data_interval():
    builders = [
        f"timetables/{path}:{node.lineno} {node.name}() builds a DagRunInfo/DataInterval itself"
        for path, node, calls in _functions()
        if calls & {"DagRunInfo", "DataInterval"} and (path, node.name) not in BUILDS_A_WINDOW
    ]
    assert builders == []


def _after_downtime(timetable, last_end: str, now: str) -> DataInterval:
    bound = timetable.bind(dag_id="d", catchup=False, end_date=None)
    end = at(last_end)
    last = DagRunInfo(run_after=end, data_interval=DataInterval(end - datetime.timedelta(minutes=5), end))
    with time_machine.travel(at(now), tick=False):
        info = bound.next_dagrun_info_v2(last_dagrun_info=last, restriction=TimeRestriction(None, None, False))
    return info.data_interval


def test_the_run_after_downtime_covers_the_windows_the_catch_up_passed_over():
    """Down from 10:00 to 10:22: Latest runs 10:20 only; its window reaches back to the last run's end."""
    latest = Every("5m", phase=Fixed("0s"), catch_up=Latest())
    interval = _after_downtime(latest, "2026-03-01T10:00", "2026-03-01T10:22")
    assert interval == DataInterval(at("2026-03-01T10:00"), at("2026-03-01T10:20"))


def test_owe_keeps_one_period_and_the_plan_lists_the_owed_windows():
    timetable = Every("5m", phase=Fixed("0s"), dropped="owe")
    interval = _after_downtime(timetable, "2026-03-01T10:00", "2026-03-01T10:22")
    assert interval == DataInterval(at("2026-03-01T10:15"), at("2026-03-01T10:20"))
    scheduled = [(at("2026-03-01T09:55"), at("2026-03-01T10:00")), (interval.start, interval.end)]
    owed, truncated = timetable.plan.owed_windows(scheduled)
    assert [(o.window_start, o.window_end) for o in owed] == [
        (at("2026-03-01T10:00"), at("2026-03-01T10:05")),
        (at("2026-03-01T10:05"), at("2026-03-01T10:10")),
        (at("2026-03-01T10:10"), at("2026-03-01T10:15")),
    ]
    assert not truncated
    # A backfill run of 10:05's window since: no longer owed. The backfill range is the owed periods' starts.
    ran = [(at("2026-03-01T10:05"), at("2026-03-01T10:10"))]
    assert [o.occurrence for o in timetable.plan.owed_windows(scheduled, ran=ran)[0]] == [
        at("2026-03-01T10:05"),
        at("2026-03-01T10:15"),
    ]
    assert timetable.plan.previous(owed[0]).occurrence == at("2026-03-01T10:00")


def test_owed_windows_are_bounded():
    timetable = Every("1m", phase=Fixed("0s"), dropped="owe")
    year = [(at("2025-03-01T00:00"), at("2025-03-01T00:01")), (at("2026-02-28T23:59"), at("2026-03-01T00:00"))]
    owed, truncated = timetable.plan.owed_windows(year, limit=MAX_OWED)
    assert len(owed) == MAX_OWED and truncated
    with pytest.raises(ValueError, match=r"^limit: 1001 is not 1 to 1000; ask for fewer owed windows"):
        timetable.plan.owed_windows(year, limit=MAX_OWED + 1)


def test_a_lookback_at_least_the_spacing_covers_and_a_shorter_one_samples():
    covering = _after_downtime(Every("5m", window="15m", phase=Fixed("0s")), "2026-03-01T10:00", "2026-03-01T10:22")
    assert covering == DataInterval(at("2026-03-01T09:50"), at("2026-03-01T10:20")), "from 10:05's lookback start"
    sampling = _after_downtime(Every("5m", window="1m", phase=Fixed("0s")), "2026-03-01T10:00", "2026-03-01T10:22")
    assert sampling == DataInterval(at("2026-03-01T10:19"), at("2026-03-01T10:20")), "a sample stays a sample"


def test_a_deadline_skip_is_covered_too():
    timetable = Cron("@every 5m", starting_deadline="1m", phase=Fixed("0s"))
    interval = _after_downtime(timetable, "2026-03-01T10:00", "2026-03-01T10:22")
    assert interval == DataInterval(at("2026-03-01T10:00"), at("2026-03-01T10:25")), "resumes at 10:25, from 10:00"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"dropped": "Cover"}, "dropped: 'Cover' is not a policy; use 'cover' (the next run", id="case"),
        pytest.param({"dropped": 1}, "dropped: 1 is not a policy; use 'cover'", id="number"),
        pytest.param(
            {"dropped": "cover", "partitioned": True},
            "dropped: 'cover' with partitioned=True; a run's partition_key names one period",
            id="cover-partitioned",
        ),
    ],
)
def test_bad_values_are_refused_naming_the_field_the_value_and_the_fix(kwargs, message):
    with pytest.raises(ValueError) as refused:
        Every("5m", **kwargs)
    assert str(refused.value).startswith(message)


def test_defaults_and_round_trip_through_airflow():
    assert Every("5m").dropped == "cover" and "dropped" not in Every("5m").serialize(), "older DAGs serialize as before"
    assert Every("5m", partitioned=True).dropped == "owe"
    timetable = Every("5m", dropped="owe")
    with DAG("round_trip", schedule=timetable, start_date=pendulum.datetime(2026, 1, 1)) as dag:
        pass
    restored = DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
    assert restored == timetable and restored.dropped == "owe"
    assert "· dropped owe" in timetable.summary and "dropped" not in Every("5m").summary


def test_a_union_decides_for_its_members():
    assert Union(Every("5m"), Every("6m"), dropped="owe").dropped == "owe"
    with pytest.raises(ValueError, match=r"^members\[0\]: .* sets dropped; a member says only when it fires"):
        Union(Every("5m", dropped="owe"), Every("6m"))
