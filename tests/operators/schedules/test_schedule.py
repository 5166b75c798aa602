"""Schedule declarations: validation at parse time, and the policy Airflow receives (checked on the serialized DAG)."""

from __future__ import annotations

import datetime
import textwrap
from pathlib import Path

import pytest
from airflow.sdk import DAG

from tessera.operators.schedules.checks import ScheduleError
from tessera.operators.schedules.identity import RECORD_KEY, asset_uri, schedule_tag
from tessera.operators.schedules.notify import WebhookNotifier
from tessera.operators.schedules.policy import UNLIMITED_RUNS, dag_kwargs, timetable_of
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet, load_schedules
from tessera.timetables import Cron
from tessera.timetables.run_policy import RunPolicy
from tessera.timetables.support import SCHEDULE_STATE
from tests.compat import needs
from tests.compat.airflow_names import DagBag, DagSerialization

EXAMPLES = Path(__file__).resolve().parents[3] / "dags_examples"


def _pipeline(schedule: Schedule, **dag_args: object) -> DAG:
    """A one-task DAG built from the schedule, as Airflow stores it (serialization round trip)."""
    from airflow.providers.standard.operators.empty import EmptyOperator

    dag_args.setdefault("start_date", datetime.datetime(2026, 1, 4, tzinfo=datetime.timezone.utc))
    with DAG("pipeline", **dag_kwargs(schedule, **dag_args)) as dag:
        EmptyOperator(task_id="work")
    return DagSerialization.from_dict(DagSerialization.to_dict(dag))


# -- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        pytest.param({}, "driver", ["no driver", "cron=", "interval_seconds=", "after="], id="no-driver"),
        pytest.param(
            {"cron": "0 6 * * *", "interval_seconds": 60}, "driver", ["cron and interval_seconds"], id="cron+interval"
        ),
        pytest.param({"cron": "0 6 * * *", "after": ["a"]}, "driver", ["cron and after"], id="cron+after"),
        pytest.param(
            {"cron": "0 6 * * *", "interval_seconds": 5, "after": ["a"]}, "driver", ["are all given"], id="three"
        ),
        pytest.param({"interval_seconds": 0}, "interval_seconds", ["0", "positive"], id="zero-interval"),
        pytest.param({"interval_seconds": -5}, "interval_seconds", ["-5", "positive"], id="negative-interval"),
        pytest.param({"interval_seconds": 2.5}, "interval_seconds", ["2.5", "whole"], id="fractional-interval"),
        pytest.param({"interval_seconds": True}, "interval_seconds", ["True"], id="bool-interval"),
        pytest.param({"cron": "0 6 * *"}, "cron", ["five-field"], id="four-fields"),
        pytest.param({"cron": "61 * * * *"}, "cron", ["'61 * * * *'"], id="minute-61"),
        pytest.param({"cron": "0 6 31 2 *"}, "cron", ["never fires"], id="february-31"),
        pytest.param({"cron": "0 6 L * *"}, "cron", ["not supported"], id="quartz-L"),
        pytest.param({"cron": "0 6 * * *", "timezone": "Mars/Olympus"}, "timezone", ["Mars/Olympus", "IANA"], id="tz"),
        pytest.param({"after": []}, "after", ["no parent"], id="after-empty"),
        pytest.param({"after": ["a", "a"]}, "after", ["twice"], id="after-twice"),
        pytest.param({"after": ["x"]}, "after", ["itself"], id="after-self"),
        pytest.param({"after": ["bad name"]}, "after", ["'bad name'"], id="after-bad-name"),
        pytest.param(
            {"interval_seconds": 5, "parent_freshness": 2}, "parent_freshness", ["AFTER"], id="fresh-no-after"
        ),
        pytest.param({"after": ["a"], "parent_freshness": -1}, "parent_freshness", ["-1"], id="fresh-negative"),
        pytest.param({"interval_seconds": 5, "retries": -1}, "retries", ["-1"], id="retries-negative"),
        pytest.param({"interval_seconds": 5, "retry_delay": -3}, "retry_delay", ["-3"], id="delay-negative"),
        pytest.param({"interval_seconds": 5, "timeout": 0}, "timeout", ["more than zero"], id="timeout-zero"),
        pytest.param({"interval_seconds": 5, "max_concurrent": -1}, "max_concurrent", ["-1"], id="concurrent"),
        pytest.param({"interval_seconds": 5, "max_wave_concurrent": -2}, "max_wave_concurrent", ["-2"], id="wave"),
        pytest.param({"interval_seconds": 5, "priority": "high"}, "priority", ["'high'"], id="priority-text"),
        pytest.param({"interval_seconds": 5, "catchup": "yes"}, "catchup", ["'yes'"], id="catchup-text"),
        pytest.param({"interval_seconds": 5, "notify": ["ops"]}, "notify", ["'ops'", "email"], id="email"),
        pytest.param({"interval_seconds": 5, "webhook": ["ftp://x/y"]}, "webhook", ["http(s)"], id="url-scheme"),
        pytest.param({"interval_seconds": 5, "target_nodes": []}, "target_nodes", ["no node"], id="nodes-empty"),
        pytest.param({"interval_seconds": 5, "target_nodes": ["a b"]}, "target_nodes", ["'a b'"], id="node-id"),
        # Bounds: each refused here, never an OverflowError later in dag_kwargs or Airflow.
        pytest.param({"interval_seconds": 31_622_401}, "interval_seconds", ["31622400", "366 days"], id="interval-max"),
        pytest.param({"cron": "0 6 * * *", "timeout": float("inf")}, "timeout", ["inf", "finite"], id="timeout-inf"),
        pytest.param({"cron": "0 6 * * *", "timeout": 10**20}, "timeout", ["too large", "31622400"], id="timeout-huge"),
        pytest.param({"cron": "0 6 * * *", "timeout": 0.5}, "timeout", ["0.5", "from 1"], id="timeout-below-1s"),
        pytest.param({"cron": "0 6 * * *", "retry_delay": 10**20}, "retry_delay", ["too large"], id="delay-huge"),
        pytest.param({"cron": "0 6 * * *", "retry_delay": float("nan")}, "retry_delay", ["nan"], id="delay-nan"),
        pytest.param({"cron": "0 6 * * *", "retries": 101}, "retries", ["101", "0 to 100"], id="retries-101"),
        pytest.param({"after": ["a"], "parent_freshness": float("inf")}, "parent_freshness", ["inf"], id="fresh-inf"),
        pytest.param({"after": ["a"], "parent_freshness": 8785}, "parent_freshness", ["8784"], id="fresh-8785"),
        pytest.param({"cron": "0 6 * * *", "priority": -(2**31)}, "priority", ["too small"], id="priority-min"),
        pytest.param(
            {"cron": "0 6 * * *", "retries": 10**5000}, "retries", ["<integer of about 5000 digits>"], id="no-repr"
        ),
        pytest.param({"cron": "0 6 * * *", "timezone": "America"}, "timezone", ["'America'"], id="tz-directory"),
        pytest.param({"cron": "0 6 * * *", "timezone": "localtime"}, "timezone", ["localtime"], id="tz-localtime"),
        pytest.param(
            {"interval_seconds": 5, "target_nodes": [f"n{i:03}" for i in range(65)]},
            "target_nodes",
            ["65 nodes", "at most 64"],
            id="too-many-nodes",
        ),
        pytest.param(
            {"interval_seconds": 5, "target_nodes": ["n" * 257]},
            "target_nodes",
            ["257 characters", "at most 256"],
            id="node-id-too-long",
        ),
        pytest.param(
            {"interval_seconds": 5, "notify": ["ops\ud800@example.com"]},
            "notify",
            ["holds a lone surrogate (U+D800 at character 3), which is not Unicode text"],
            id="email-lone-surrogate",
        ),
        pytest.param(
            {"interval_seconds": 5, "webhook": ["https://h\udfff.example.com/x"]},
            "webhook",
            ["lone surrogate (U+DFFF"],
            id="webhook-lone-surrogate",
        ),
        pytest.param(
            {"interval_seconds": 5, "description": "nightly \ud800"}, "description", ["lone surrogate"], id="desc"
        ),
    ],
)
def test_a_bad_declaration_is_refused_naming_the_field(kwargs: dict, field: str, words: list[str]) -> None:
    with pytest.raises(ScheduleError) as caught:
        Schedule("x", **kwargs)
    assert caught.value.field == field
    message = str(caught.value)
    assert message.startswith(f"{field}:") or field == "driver", message
    for word in words:
        assert word in message


@pytest.mark.parametrize("name", ["", "1abc", "has space", "x" * 81, "semi;colon"])
def test_a_bad_name_is_refused(name: str) -> None:
    with pytest.raises(ScheduleError, match="^name: "):
        Schedule(name, interval_seconds=5)


def test_every_bound_itself_is_accepted_and_reaches_airflow() -> None:
    longest = 366 * 24 * 3600
    dag = _pipeline(
        Schedule("edge", interval_seconds=longest, retries=100, retry_delay=longest, timeout=longest, priority=10)
    )
    assert dag.dagrun_timeout == datetime.timedelta(days=366)
    record = dag.default_args[RECORD_KEY]
    assert (record["retries"], record["retry_delay"]) == (100, longest)
    assert Schedule("fresh", after=["edge"], parent_freshness=8784).freshness_hours == 8784.0


def test_lists_become_tuples_and_the_driver_is_named() -> None:
    schedule = Schedule("gold", after=["a", "b"], parent_freshness=26, notify="ops@example.com")
    assert schedule.after == ("a", "b")
    assert schedule.notify == ("ops@example.com",)
    assert (schedule.driver, schedule.freshness_hours) == ("after", 26.0)
    assert Schedule("t", interval_seconds=7).driver == "interval"
    assert Schedule("c", cron=" 0   6 * * * ").cron == "0 6 * * *"
    assert hash(schedule) == hash(Schedule("gold", after=("a", "b"), parent_freshness=26, notify=["ops@example.com"]))


# -- policy mapping, verified on the DAG Airflow serializes -----------------------------------


def test_retries_are_of_the_run_and_the_timeout_bounds_one_attempt_of_it() -> None:
    dag = _pipeline(Schedule("daily_etl", cron="0 6 * * *", retries=3, retry_delay=300, timeout=3600))
    task = dag.get_task("work")
    # Not the task's: a failed run is run again as a whole (operators.schedules.run_retries).
    assert task.retries == 0 and task.execution_timeout is None
    record = dag.default_args[RECORD_KEY]
    assert (record["retries"], record["retry_delay"]) == (3, 300)
    # One attempt of the whole run, all its tasks: Airflow's dagrun_timeout, timed from each attempt's start.
    assert dag.dagrun_timeout == datetime.timedelta(seconds=3600)
    # The seed's warning: 4 attempts x 1 h.
    assert (record["retries"] + 1) * dag.dagrun_timeout == datetime.timedelta(hours=4)


def test_dag_level_policy() -> None:
    schedule = Schedule(
        "weekly_archive", cron="0 1 * * 0", timezone="Europe/London", catchup=True, active=False, max_concurrent=2
    )
    dag = _pipeline(schedule)
    # CATCHUP replays the paused periods through the timetable's run policy: no start_date needed.
    assert dag.catchup is False
    assert dag.timetable.serialize()["run_policy"] == {"overlap": "buffer_one", "replay_inactive": True}
    assert dag.is_paused_upon_creation is True
    assert dag.max_active_runs == 2
    assert schedule_tag("weekly_archive") in dag.tags
    assert dag.default_args[RECORD_KEY]["name"] == "weekly_archive"
    assert isinstance(dag.timetable, Cron)
    assert dag.timetable.serialize()["timezone"] == "Europe/London"


def test_zero_max_concurrent_means_unlimited_not_nothing() -> None:
    assert _pipeline(Schedule("s", interval_seconds=60, max_concurrent=0)).max_active_runs == UNLIMITED_RUNS


def test_priority_and_description() -> None:
    dag = _pipeline(Schedule("s", interval_seconds=60, priority=10, description="Sync"))
    task = dag.get_task("work")
    from airflow.task.priority_strategy import validate_and_load_priority_weight_strategy

    absolute = validate_and_load_priority_weight_strategy("absolute")
    assert (task.priority_weight, type(task.weight_rule)) == (10, type(absolute))
    assert dag.description == "Sync"


def test_interval_schedules_are_epoch_aligned_cron_every() -> None:
    timetable = timetable_of(Schedule("s", interval_seconds=7))
    assert timetable == Cron("@every 7s").with_run_policy(RunPolicy("buffer_one", replay_inactive=False))


def test_after_schedules_are_an_asset_condition_over_the_parents() -> None:
    single = _pipeline(Schedule("chain", after=["a"])).timetable
    assert [asset.uri for asset in dict(single.asset_condition.iter_assets()).values()] == [asset_uri("a")]
    fan_in = _pipeline(Schedule("gold", after=["a", "b", "c"])).timetable
    assert type(fan_in.asset_condition).__name__ == "SerializedAssetAll"
    assert sorted(a.uri for a in dict(fan_in.asset_condition.iter_assets()).values()) == [
        asset_uri(n) for n in ("a", "b", "c")
    ]


def test_the_dags_own_tags_and_callbacks_are_kept_and_notifiers_added() -> None:
    def own_callback(context: object) -> None:
        return None

    schedule = Schedule(
        "s", interval_seconds=60, notify=["ops@example.com"], webhook=["https://h.example/x"], notify_on_success=True
    )
    kwargs = dag_kwargs(schedule, tags=["team"], on_failure_callback=own_callback)
    assert kwargs["tags"] == ["team", schedule_tag("s")]
    failure = kwargs["on_failure_callback"]
    assert failure[0] is own_callback
    assert [type(n).__name__ for n in failure[1:]] == ["SmtpNotifier", "WebhookNotifier"]
    assert failure[1].to == ["ops@example.com"]
    assert [type(n).__name__ for n in kwargs["on_success_callback"]] == ["SmtpNotifier", "WebhookNotifier"]
    assert "on_success_callback" not in dag_kwargs(Schedule("q", interval_seconds=60, webhook=["http://h/x"]))
    assert isinstance(
        dag_kwargs(Schedule("q", interval_seconds=60, webhook=["http://h/x"]))["on_failure_callback"][0],
        WebhookNotifier,
    )


@pytest.mark.parametrize(
    "dag_args",
    [
        pytest.param({"catchup": True}, id="catchup"),
        pytest.param({"max_active_runs": 3}, id="max_active_runs"),
        pytest.param({"schedule": "@daily"}, id="schedule"),
        pytest.param({"dagrun_timeout": datetime.timedelta(hours=1)}, id="dagrun_timeout"),
        pytest.param({"default_args": {"priority_weight": 5}}, id="priority"),
    ],
)
def test_a_dag_cannot_silently_override_its_schedules_policy(dag_args: dict) -> None:
    with pytest.raises(ValueError, match="schedule 's'"):
        dag_kwargs(Schedule("s", interval_seconds=60, retries=1, timeout=60, priority=3), **dag_args)


# -- the registry and the examples ------------------------------------------------------------


def test_schedule_set_refuses_duplicates_and_names_what_is_declared() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        ScheduleSet([Schedule("a", interval_seconds=5), Schedule("a", interval_seconds=6)])
    schedules = ScheduleSet([Schedule("a", interval_seconds=5)])
    with pytest.raises(KeyError, match="'b' is not declared; declared schedules: a"):
        schedules.dag_kwargs("b")


def test_python_and_sql_declarations_of_the_examples_agree() -> None:
    python = _load_example("declared_python.py").SCHEDULES
    sql = load_schedules(EXAMPLES / "schedules.sql")
    assert dict(python) == dict(sql)


def _load_example(name: str):  # noqa: ANN202 - a module
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"example_{name[:-3]}", EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs(SCHEDULE_STATE)  # the examples declare AFTER
def test_every_declared_example_loads_with_no_import_error(tmp_path: Path) -> None:
    for example in sorted(EXAMPLES.glob("declared_*.py")):
        (tmp_path / example.name).write_text(example.read_text())
    (tmp_path / "schedules.sql").write_text((EXAMPLES / "schedules.sql").read_text())
    bag = DagBag(str(tmp_path))
    assert bag.import_errors == {}
    assert {schedule for dag in bag.dags.values() for schedule in dag.tags if schedule.startswith("tessera-")} == {
        schedule_tag(n)
        for n in (
            "daily_etl",
            "hourly_sync",
            "distributed_refresh",
            "weekly_archive",
            "apc_daily",
            "norled_daily",
            "mpc_daily",
            "gold_cross_source",
        )
    }
    for dag in bag.dags.values():
        DagSerialization.from_dict(DagSerialization.to_dict(dag))


@needs(SCHEDULE_STATE)
def test_apply_adds_the_wave_gate_only_when_waves_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "waves.py").write_text(
        textwrap.dedent(
            """
            from airflow.providers.standard.operators.empty import EmptyOperator
            from airflow.sdk import DAG
            from tessera.operators.schedules.schedule import Schedule
            from tessera.operators.schedules.schedule_set import ScheduleSet

            S = ScheduleSet([Schedule("w", interval_seconds=60, max_wave_concurrent=2),
                             Schedule("u", interval_seconds=60)])
            for name in ("w", "u"):
                with DAG(f"pipe_{name}", start_date=None, **S.dag_kwargs(name)) as dag:
                    EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")
                    EmptyOperator(task_id="c")
                S.apply(dag)
            """
        )
    )
    bag = DagBag(str(tmp_path))
    assert bag.import_errors == {}
    gated = bag.dags["pipe_w"]
    gate = gated.get_task("tessera_wave_gate")
    assert {t.task_id for t in gate.downstream_list} == {"a", "c"}
    assert gate.execution_timeout is None and gate.retries == 0
    assert [a.uri for a in gate.inlets] == [asset_uri("w")]
    assert "tessera_wave_gate" not in bag.dags["pipe_u"].task_dict


@pytest.mark.parametrize("overlap", ["skip", "buffer_one", "buffer_all"])
def test_overlap_is_the_timetables_run_policy(overlap) -> None:
    dag = _pipeline(Schedule("s", interval_seconds=60, overlap=overlap))
    assert dag.timetable.serialize()["run_policy"] == {"overlap": overlap, "replay_inactive": False}
    assert dag.max_active_runs == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"interval_seconds": 60, "overlap": "Forbid"},
            "overlap: 'Forbid' is not a policy; use one of skip, buffer_one, buffer_all, cancel_other, allow_all",
            id="unknown",
        ),
        pytest.param(
            {"interval_seconds": 60, "overlap": ["skip"]},
            "overlap: ['skip'] is not a policy",
            id="not-text",
        ),
        pytest.param(
            {"interval_seconds": 60, "overlap": "allow_all"},
            "overlap: 'allow_all' starts every fire at once, but max_concurrent is 1; set max_concurrent=0",
            id="allow-all-with-a-limit",
        ),
        pytest.param(
            {"after": ["parent"], "overlap": "skip"},
            "overlap: 'skip' applies to a clock driver (cron or interval_seconds)",
            id="after-driver",
        ),
    ],
)
def test_a_bad_overlap_is_refused_naming_the_field(kwargs, message) -> None:
    with pytest.raises(ScheduleError) as error:
        Schedule("s", **kwargs)
    assert error.value.field == "overlap"
    assert str(error.value).startswith(message)


def test_allow_all_with_no_limit() -> None:
    dag = _pipeline(Schedule("s", interval_seconds=60, overlap="allow_all", max_concurrent=0))
    assert dag.max_active_runs == UNLIMITED_RUNS


# -- cancel_other and pause after failures on a declared schedule ---------------------------------------

PAUSE_RULE = "give a whole number of failed runs in a row from 1 to 1000; e.g. 3"


def test_cancel_other_runs_with_two_slots_one_of_them_for_the_run_being_replaced() -> None:
    dag = _pipeline(Schedule("s", interval_seconds=60, overlap="cancel_other", pause_after_failures=3))
    assert dag.timetable.run_policy.overlap == "cancel_other"
    assert dag.timetable.run_policy.pause_after_failures == 3
    assert dag.max_active_runs == 2


def test_cancel_other_needs_max_concurrent_one() -> None:
    with pytest.raises(ScheduleError) as error:
        Schedule("s", interval_seconds=60, overlap="cancel_other", max_concurrent=3)
    assert error.value.field == "overlap"
    assert str(error.value) == (
        "overlap: 'cancel_other' replaces the one run in flight, but max_concurrent is 3; "
        "set max_concurrent=1 or choose buffer_one"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(
            0,
            f"pause_after_failures: 0 is not positive; {PAUSE_RULE}",
            id="zero",
        ),
        pytest.param(
            1001,
            f"pause_after_failures: 1001 is too large; {PAUSE_RULE}",
            id="over",
        ),
        pytest.param(True, "pause_after_failures: True is not a whole number", id="bool"),
        pytest.param("3", "pause_after_failures: '3' is not a whole number", id="text"),
    ],
)
def test_pause_after_failures_is_bounded_naming_the_field(value, message) -> None:
    with pytest.raises(ScheduleError) as error:
        Schedule("s", interval_seconds=60, pause_after_failures=value)
    assert error.value.field == "pause_after_failures"
    assert str(error.value).startswith(message)


def test_the_statement_takes_pause_after_failures_and_cancel_other() -> None:
    from tessera.operators.schedules.statement import parse_schedule

    parsed = parse_schedule("SCHEDULE s INTERVAL_SECONDS 60 OVERLAP cancel_other PAUSE_AFTER_FAILURES 5;")
    assert parsed == Schedule("s", interval_seconds=60, overlap="cancel_other", pause_after_failures=5)


# -- dropped: what happens to a dropped fire's window ----------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "kind"),
    [
        pytest.param(Schedule("s", interval_seconds=60, overlap="skip"), "Cron", id="interval"),
        pytest.param(Schedule("s", cron="0 6 * * *", timezone="Europe/London"), "Cron", id="cron"),
        pytest.param(Schedule("s", cron=("0 6 * * *", "0 18 * * 5")), "Union", id="union"),
    ],
)
def test_dropped_windows_are_covered_by_default_and_owed_on_request(schedule, kind) -> None:
    import dataclasses

    covering = _pipeline(schedule).timetable
    assert (type(covering).__name__, covering.dropped) == (kind, "cover")
    assert "dropped" not in covering.serialize(), "declared DAGs serialize as before"
    owing = _pipeline(dataclasses.replace(schedule, dropped="owe")).timetable
    assert owing.dropped == "owe" and owing.run_policy == covering.run_policy


def test_the_statement_takes_dropped() -> None:
    from tessera.operators.schedules.statement import parse_schedule

    parsed = parse_schedule("SCHEDULE s INTERVAL_SECONDS 60 OVERLAP skip DROPPED OWE;")
    assert parsed == Schedule("s", interval_seconds=60, overlap="skip", dropped="owe")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"interval_seconds": 60, "dropped": "lost"},
            "dropped: 'lost' is not a policy; use cover (the next run evaluates the windows",
            id="unknown",
        ),
        pytest.param(
            {"after": ["parent"], "dropped": "owe"},
            "dropped: 'owe' applies to a clock driver (cron or interval_seconds)",
            id="after-driver",
        ),
    ],
)
def test_a_bad_dropped_is_refused_naming_the_field(kwargs, message) -> None:
    with pytest.raises(ScheduleError) as error:
        Schedule("s", **kwargs)
    assert error.value.field == "dropped"
    assert str(error.value).startswith(message)
