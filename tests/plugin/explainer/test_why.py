"""``why`` on the real SQLite metadata DB: each cause, from the records Airflow and tessera write.

The DAGs are parsed and stored as the dag-processor stores them; their versions are dated back
so they existed at the instants asked about. Runs, audit-log entries (pauses, skips, parse
states) and scheduler jobs are inserted as the scheduler, the API and the dag-processor write
them; the end-to-end corpus (``tests/e2e/test_why_corpus.py``) has real processes write them.
Every assertion reads the verdict and evidence a person reads.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator

import pytest
from sqlalchemy import delete, insert, update

from tessera.plugin.explainer import explain
from tessera.plugin.scoped_reads import Scope
from tests.plugin.api.test_api_app import store_dags

UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
NOW = T0 + datetime.timedelta(hours=1)
STORED = datetime.datetime(2026, 1, 1, tzinfo=UTC)

DAGS = """
import datetime
from airflow.sdk import DAG
from airflow.timetables.trigger import CronTriggerTimetable
from tessera.timetables import Cron, Every, Fixed

UTC = datetime.timezone.utc
start = datetime.datetime(2025, 1, 1, tzinfo=UTC)
for dag_id, schedule, extra in [
    ("why_every", Every("5m", phase=Fixed("0s")), {{}}),
    ("why_slots", Every("5m", phase=Fixed("0s")), {{"max_active_runs": 1}}),
    ("why_berlin", Cron("30 2 * * *", timezone="Europe/Berlin"), {{}}),
    ("why_berlin_once", Cron("30 2 * * *", timezone="Europe/Berlin", dst="once"), {{}}),
    ("why_later", Every("1h", phase=Fixed("0s")), {{"start_date": datetime.datetime(2027, 1, 1, tzinfo=UTC)}}),
    ("why_ended", Every("1h", phase=Fixed("0s")), {{"end_date": datetime.datetime(2026, 1, 1, tzinfo=UTC)}}),
    ("why_builtin", CronTriggerTimetable("*/5 * * * *", timezone="UTC"), {{}}),
    ("why_manual_only", None, {{}}),
]:
    with DAG(dag_id, schedule=schedule, **{{"start_date": start, **extra}}):
        pass
"""
DAG_IDS = (
    "why_every",
    "why_slots",
    "why_berlin",
    "why_berlin_once",
    "why_later",
    "why_ended",
    "why_builtin",
    "why_manual_only",
)


def at(minutes: float) -> datetime.datetime:
    return T0 + datetime.timedelta(minutes=minutes)


@pytest.fixture(scope="module")
def stored(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    from airflow.models.dag_version import DagVersion
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session

    store_dags(tmp_path_factory.mktemp("why"), DAGS, DAG_IDS)
    with create_session() as session:  # as if stored long ago, and not rewritten since
        session.execute(update(DagVersion).where(DagVersion.dag_id.in_(DAG_IDS)).values(created_at=STORED))
        stored = update(SerializedDagModel).where(SerializedDagModel.dag_id.in_(DAG_IDS))
        session.execute(stored.values(created_at=STORED, last_updated=STORED))


@pytest.fixture
def session(stored: None) -> Iterator[object]:
    """A session on the metadata DB, with this module's runs, jobs and audit log emptied before each test."""
    from airflow.jobs.job import Job
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    with create_session() as session:
        session.execute(delete(TaskInstance).where(TaskInstance.dag_id.in_(DAG_IDS)))
        session.execute(delete(DagRun).where(DagRun.dag_id.in_(DAG_IDS)))
        session.execute(delete(Log))
        session.execute(delete(Job))
        session.commit()
        yield session
        session.rollback()


def scheduler_job(session, start: datetime.datetime, last_heartbeat: datetime.datetime, host: str = "sched") -> int:
    from airflow.jobs.job import Job

    row = {"job_type": "SchedulerJob", "state": "running", "hostname": host, "start_date": start}
    result = session.execute(insert(Job.__table__).values(**row, latest_heartbeat=last_heartbeat))
    return result.inserted_primary_key[0]


def run(session, dag_id: str, occurrence: datetime.datetime, *, state="success", run_type="scheduled",
        created: datetime.datetime | None = None, end: datetime.datetime | None = None,
        interval=datetime.timedelta(minutes=5), user: str | None = None):  # fmt: skip
    from airflow.models.dagrun import DagRun
    from airflow.utils.types import DagRunTriggeredByType

    created = created or occurrence
    manual = run_type == "manual"
    dag_run = DagRun(
        dag_id=dag_id,
        run_id=f"{run_type}__{occurrence.isoformat()}",
        run_type=run_type,
        logical_date=None if manual else occurrence - interval,
        data_interval=None if manual else (occurrence - interval, occurrence),
        run_after=occurrence,
        queued_at=created,
        start_date=created + datetime.timedelta(seconds=1),
        state=state,
        triggered_by=DagRunTriggeredByType.REST_API if manual else DagRunTriggeredByType.TIMETABLE,
        triggering_user_name=user,
    )
    dag_run.created_at = created
    finished = None if state == "running" else created + datetime.timedelta(seconds=30)
    dag_run.end_date = end if end is not None else finished
    session.add(dag_run)
    session.flush()
    return dag_run


def logged(session, event: str, dag_id: str, when: datetime.datetime, extra: dict | None = None) -> int:
    from airflow.models.log import Log

    entry = Log(event, dag_id=dag_id, owner="admin", extra=None if extra is None else json.dumps(extra))
    entry.dttm = when
    session.add(entry)
    session.flush()
    return entry.id


def ask(session, dag_id: str, moment: datetime.datetime, now: datetime.datetime = NOW):
    session.flush()
    return explain(session, dag_id, at=moment, now=now, scope=Scope.everything())


def texts(answer) -> str:
    return "\n".join(f"{e.section}/{e.fact}: {e.text} [{e.record}]" for e in answer.evidence)


def test_an_occurrence_that_ran_names_its_run_and_the_schedule_in_force(session):
    scheduler_job(session, at(-60), NOW)
    ran = run(session, "why_every", at(5))
    answer = ask(session, "why_every", at(6))
    assert answer.cause == "ran", answer.verdict
    assert answer.verdict.startswith("Ran: the 2026-11-30 12:05:00 UTC occurrence ran as")
    assert ran.run_id in answer.verdict
    assert answer.occurrence.nominal == at(5)
    evidence = texts(answer)
    assert "The schedule in force at T: every 5m · phase 0s." in evidence
    assert "dag_version 1" in evidence
    assert "only the newest due occurrence runs after downtime (catch-up Latest)" in evidence
    assert f"dag_run {ran.run_id!r}" in evidence
    assert [e.section for e in answer.evidence] == sorted(
        (e.section for e in answer.evidence), key=["schedule", "airflow", "next"].index
    )


def test_paused_at_the_occurrence_cites_the_audit_log_entry(session):
    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(0))
    pause = logged(session, "cli_dag_pause", "why_every", at(2))
    answer = ask(session, "why_every", at(6), now=at(8))
    assert answer.cause == "paused", answer.verdict
    said = "the DAG was paused when it came due at 2026-11-30 12:05:00 UTC (paused 2026-11-30 12:02:00 UTC with airflow"
    assert said in answer.verdict
    assert f"audit log #{pause} (cli_dag_pause)" in texts(answer)


def test_paused_by_tessera_after_failures_says_the_reason_the_runs_and_the_note(session):
    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(0), state="failed")
    extra = {
        "is_paused": True,
        "note": "Paused by tessera: 1 runs failed in a row",
        "reason": "pause_after_failures",
        "failed_runs": ["scheduled__a"],
    }
    pause = logged(session, "tessera.dag.pause", "why_every", at(2), extra)
    answer = ask(session, "why_every", at(6), now=at(8))
    assert answer.cause == "paused", answer.verdict
    said = (
        "(paused 2026-11-30 12:02:00 UTC by tessera after 1 failed runs in a row (pause_after_failures: "
        "'scheduled__a') with the note \"Paused by tessera: 1 runs failed in a row\")"
    )
    assert said in answer.verdict
    assert f"audit log #{pause} (tessera.dag.pause)" in texts(answer)


def test_a_note_is_quoted_so_it_cannot_pass_for_the_answer(session):
    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(0))
    logged(
        session,
        "tessera.dag.pause",
        "why_every",
        at(2),
        {"is_paused": True, "note": 'x").\nRan: ok', "reason": "by_hand"},
    )
    answer = ask(session, "why_every", at(6), now=at(8))
    assert 'by hand by admin with the note "x\\").\\nRan: ok")' in answer.verdict, answer.verdict


def test_paused_then_unpaused_says_what_the_catch_up_did_on_unpause(session):
    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(0))
    logged(session, "patch_dag", "why_every", at(2), {"is_paused": True})
    logged(session, "patch_dag", "why_every", at(11), {"is_paused": False})
    later = run(session, "why_every", at(10), created=at(11))
    answer = ask(session, "why_every", at(6))
    assert answer.cause == "paused", answer.verdict
    assert "when it was unpaused at 2026-11-30 12:11:00 UTC, 1 newer occurrence(s) were due" in answer.verdict
    assert "only the newest due occurrence runs after downtime (catch-up Latest)" in answer.verdict
    assert later.run_id in texts(answer)


def test_no_scheduler_heartbeat_while_it_is_down(session):
    first = scheduler_job(session, at(-60), at(3), host="sched-a")
    run(session, "why_every", at(0))
    answer = ask(session, "why_every", at(6), now=at(9))
    assert answer.cause == "scheduler_down", answer.verdict
    assert "no scheduler was heartbeating at 2026-11-30 12:05:00 UTC" in answer.verdict
    assert f"job #{first} (SchedulerJob)" in texts(answer)


def test_after_the_scheduler_returns_the_older_occurrences_were_passed_over(session):
    scheduler_job(session, at(-60), at(3), host="sched-a")
    back = scheduler_job(session, at(17), NOW, host="sched-b")
    run(session, "why_every", at(0))
    run(session, "why_every", at(15), created=at(17))
    answer = ask(session, "why_every", at(6))
    assert answer.cause == "passed_over", answer.verdict
    assert "when a scheduler started again at 2026-11-30 12:17:00 UTC, 1 newer occurrence(s) were due" in answer.verdict
    assert f"job #{back} (SchedulerJob)" in texts(answer)


def test_a_scheduler_that_returned_in_time_to_run_it_is_not_why_it_has_no_run(session):
    """The first scheduler started a moment after 12:05 (nothing newer was due) and ran 12:10, not 12:05.

    It owed 12:05, so its absence at 12:05 is not the reason; with no audit log, nothing says what was.
    """
    scheduler_job(session, at(5.01), NOW, host="sched-a")
    run(session, "why_every", at(10), created=at(10.05))
    answer = ask(session, "why_every", at(6))
    assert answer.cause == "cannot_tell", answer.verdict
    assert "no scheduler was heartbeating" not in answer.verdict


def test_a_scheduler_back_but_with_no_run_made_yet_is_still_why(session):
    """Back a moment after 12:05 but with no run made since: it may yet make this one, so the downtime is the answer."""
    scheduler_job(session, at(-60), at(3), host="sched-a")
    scheduler_job(session, at(5.01), NOW, host="sched-b")
    run(session, "why_every", at(0))
    answer = ask(session, "why_every", at(6), now=at(5.5))
    assert answer.cause == "scheduler_down", answer.verdict


def test_max_active_runs_reached_names_the_run_holding_the_slot(session):
    scheduler_job(session, at(-60), NOW)
    holder = run(session, "why_slots", at(0), state="running")
    answer = ask(session, "why_slots", at(6), now=at(8))
    assert answer.cause == "max_active_runs", answer.verdict
    assert f"max_active_runs=1 was reached at 2026-11-30 12:05:00 UTC by {holder.run_id!r}" in answer.verdict


def test_a_dst_gap_has_no_occurrence_and_says_which_readings_were_skipped(session):
    scheduler_job(session, STORED, NOW)
    answer = ask(session, "why_berlin", datetime.datetime(2026, 3, 29, 1, 30, tzinfo=UTC))
    assert answer.cause == "dst_gap", answer.verdict
    assert "readings 02:00–03:00 did not exist" in answer.verdict
    assert "a time the clock skips never fires" in answer.verdict
    assert "2026-03-28 01:30:00 UTC (02:30:00 CET Europe/Berlin)" in answer.verdict


def test_a_repeated_time_fires_once_under_dst_once(session):
    scheduler_job(session, STORED, NOW)
    first = datetime.datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    ran = run(session, "why_berlin_once", first, interval=datetime.timedelta(hours=25))
    answer = ask(session, "why_berlin_once", datetime.datetime(2026, 10, 25, 1, 30, tzinfo=UTC))
    assert answer.cause == "dst_once", answer.verdict
    assert "readings 02:00–03:00 happened twice" in answer.verdict
    assert "It fired once, at 2026-10-25 00:30:00 UTC (02:30:00 CEST Europe/Berlin)" in answer.verdict
    assert ran.run_id in answer.verdict


def test_a_repeated_time_fires_twice_under_cronjob_semantics(session):
    scheduler_job(session, STORED, NOW)
    second = datetime.datetime(2026, 10, 25, 1, 30, tzinfo=UTC)
    ran = run(session, "why_berlin", second, interval=datetime.timedelta(hours=1))
    answer = ask(session, "why_berlin", second + datetime.timedelta(minutes=5))
    assert answer.cause == "ran", answer.verdict
    assert "(02:30:00 CET Europe/Berlin) occurrence ran as" in answer.verdict and ran.run_id in answer.verdict
    assert "a time it repeats fires at both instants (CronJob)" in texts(answer)


def test_before_the_start_date_and_after_the_end_date(session):
    later = ask(session, "why_later", at(0))
    assert later.cause == "before_start_date", later.verdict
    assert "T is before the DAG's start_date (2027-01-01 00:00:00 UTC)" in later.verdict
    ended = ask(session, "why_ended", at(0))
    assert ended.cause == "after_end_date", ended.verdict
    assert "the DAG's end_date (2026-01-01 00:00:00 UTC) has passed" in ended.verdict


def test_a_built_in_cron_dag_paused(session):
    scheduler_job(session, at(-60), NOW)
    pause = logged(session, "cli_dag_pause", "why_builtin", at(1))
    answer = ask(session, "why_builtin", at(6), now=at(7))
    assert answer.cause == "paused", answer.verdict
    assert "the 2026-11-30 12:05:00 UTC occurrence had no run because the DAG was paused" in answer.verdict
    assert "The schedule in force at T: */5 * * * *." in texts(answer)
    assert f"audit log #{pause}" in texts(answer)


def test_a_manual_run_in_flight_at_t_answers_with_who_triggered_it(session):
    manual = run(session, "why_manual_only", at(30), run_type="manual", state="running", user="alice")
    answer = ask(session, "why_manual_only", at(30.5))
    assert answer.cause == "manual_run", answer.verdict
    said = f"Manual run: {manual.run_id!r}, triggered by alice via rest api at 2026-11-30 12:30:00 UTC; it was running"
    assert answer.verdict.startswith(said)
    assert answer.missing == []


def test_a_dag_without_schedule_and_no_run_at_t(session):
    answer = ask(session, "why_manual_only", at(30))
    assert answer.cause == "no_schedule", answer.verdict
    assert "the DAG runs only when triggered" in answer.verdict


def test_a_broken_file_at_the_occurrence_cites_the_parse_record(session):
    scheduler_job(session, at(-60), NOW)
    state = {"state": "broken", "stale": True, "reason": "ScheduleInvalid", "since": at(1).isoformat()}
    entry = logged(session, "tessera.parse", "why_every", at(2), state)
    answer = ask(session, "why_every", at(6), now=at(7))
    assert answer.cause == "broken", answer.verdict
    assert "the DAG file failed to import (ScheduleInvalid) from 2026-11-30 12:01:00 UTC" in answer.verdict
    assert f"audit log #{entry} (tessera.parse)" in texts(answer)


def test_without_records_the_answer_names_what_is_missing(session):
    answer = ask(session, "why_every", at(6))
    assert answer.cause == "cannot_tell", answer.verdict  # no audit log at all: nothing says it was not paused
    assert "the audit log is empty" in answer.verdict
    assert any("scheduler job around 2026-11-30 12:05:00 UTC in the job table" in m for m in answer.missing)
    # The verdict must not claim what its own evidence says is missing (it said "a scheduler was heartbeating").
    assert "a scheduler was heartbeating" not in answer.verdict, answer.verdict
    assert "no scheduler job around then is in the job table" in answer.verdict, answer.verdict


def test_the_cli_prints_the_verdict_then_the_evidence_by_part(session, capsys):
    from tessera.plugin.cli import EXIT_OK, main

    scheduler_job(session, at(-60), NOW)
    ran = run(session, "why_every", at(5))
    session.commit()
    assert main(["why", "why_every", "--at", "2026-11-30T13:06:00+01:00"]) == EXIT_OK
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "why_every at 2026-11-30T12:06:00Z" or lines[0].startswith("why_every at 2026-11-30T12:06:00")
    assert lines[1].startswith("Ran: the 2026-11-30 12:05:00 UTC occurrence ran as")
    assert out.index("What the schedule decided:") < out.index("What Airflow did:") < out.index("What happens next:")
    assert f"[dag_run {ran.run_id!r}]" in out
    assert main(["why", "why_every", "--at", "2026-11-30T13:06:00+01:00", "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["cause"] == "ran"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["why", "why_every", "--at", "2026-11-30T12:00:00"], "--at: '2026-11-30T12:00:00' has no timezone"),
        (["why", "why_every", "--at", "3000-01-01T00:00:00Z"], "outside the supported range"),
        (["why", "why_every", "--at", "noon"], "is not an ISO 8601 instant"),
    ],
    ids=["naive", "year-3000", "garbage"],
)
def test_the_cli_refuses_an_instant_it_does_not_support(argv, said, capsys):
    from tessera.plugin.cli import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert said in capsys.readouterr().err


def test_the_cli_names_an_unknown_dag(stored, capsys):
    from tessera.plugin.cli import EXIT_USAGE, main

    assert main(["why", "no_such_dag"]) == EXIT_USAGE
    assert "dag_id: 'no_such_dag' is not a DAG Airflow knows" in capsys.readouterr().err


def test_a_run_created_late_says_how_late(session):
    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(5), created=at(8))
    answer = ask(session, "why_every", at(9))
    assert answer.cause == "ran", answer.verdict
    assert "It was created 3m after it came due (2026-11-30 12:05:00 UTC)." in texts(answer)


def test_a_run_created_under_another_schedule_says_so(session):
    from airflow.models.dagrun import DagRun

    scheduler_job(session, at(-60), NOW)
    old = run(session, "why_every", at(5))
    session.execute(
        update(DagRun).where(DagRun.id == old.id).values(run_id=f"{old.run_id}~phase:0s~delay:0s~interval:10m")
    )
    answer = ask(session, "why_every", at(6))
    assert answer.cause == "ran", answer.verdict
    said = "under the schedule it recorded (phase 0s, delay 0s and interval 10m); the definition stored for T now says"
    assert said in answer.verdict
    assert "every 5m · phase 0s, so the schedule has changed since." in answer.verdict


def test_a_manual_run_queued_at_t_is_still_the_persons_request(session):
    scheduler_job(session, at(-60), NOW)
    manual = run(session, "why_manual_only", at(30), run_type="manual", state="queued", user="bob")
    answer = ask(session, "why_manual_only", at(30.2))
    assert answer.cause == "manual_run", answer.verdict
    assert answer.verdict.startswith(f"Manual run: {manual.run_id!r}, triggered by bob via rest api at")


def test_a_version_rewritten_in_place_after_t_names_the_missing_definition(session):
    from airflow.models.serialized_dag import SerializedDagModel

    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(5))
    rewrite = update(SerializedDagModel).where(SerializedDagModel.dag_id == "why_every")
    session.execute(rewrite.values(last_updated=at(30)))
    try:
        answer = ask(session, "why_every", at(6))
    finally:
        session.execute(rewrite.values(last_updated=STORED))
        session.commit()
    assert "dag_version 1 was rewritten in place 2026-11-30 12:30:00 UTC, after T" in texts(answer)
    assert answer.missing == ["the definition in force at T (dag_version 1 was rewritten)"]


def test_a_run_created_after_t_says_what_held_it_until_then(session):
    scheduler_job(session, at(-60), NOW)
    pause = logged(session, "patch_dag", "why_every", at(2), {"is_paused": True})
    logged(session, "patch_dag", "why_every", at(6), {"is_paused": False})
    late = run(session, "why_every", at(5), created=at(6))
    answer = ask(session, "why_every", at(5.5))
    assert answer.cause == "paused", answer.verdict
    assert answer.verdict.startswith("No run yet at T: the 2026-11-30 12:05:00 UTC occurrence had no run because")
    assert f"when it was unpaused at 2026-11-30 12:06:00 UTC it ran late as {late.run_id!r}" in answer.verdict
    assert f"audit log #{pause} (patch_dag)" in texts(answer)


def test_a_wave_names_only_the_pipelines_the_caller_may_read_and_counts_the_others():
    from tessera.plugin.explainer.runs import _wave_members
    from tessera.plugin.explainer.waits import WavePlace, visible_waves

    plan = [["a_pipe", "hidden_1"], ["hidden_2", "hidden_3"], ["b_pipe"], "not a wave", [3]]
    waves, unread = visible_waves(plan, Scope.of({"a_pipe", "b_pipe"}))
    assert (waves, unread) == ([["a_pipe"], [], ["b_pipe"], [], []], [1, 2, 0, 0, 0])
    place = WavePlace("etl", 2, 0, waves, unread, None)
    assert _wave_members(place, 0) == "'a_pipe' and 1 DAG you may not read"
    assert _wave_members(place, 1) == "2 DAGs you may not read"
    assert _wave_members(place, 2) == "'b_pipe'"
    assert visible_waves(plan, Scope.everything())[1] == [0, 0, 0, 0, 0]


@pytest.mark.parametrize(
    "before", [[], ["… 3 earlier lines dropped", "Retried: attempt 1 of 4 failed"]], ids=["first", "later"]
)
def test_a_stale_parent_is_found_wherever_the_release_block_stands_in_the_note(before):
    """The note writer keeps other steps' lines (and a count of dropped ones) before the release block."""
    from types import SimpleNamespace

    from tessera.operators.fan_in.freshness import release_note
    from tessera.plugin.explainer.models import Decision
    from tessera.plugin.explainer.runs import _stale_parents

    now = datetime.datetime(2026, 3, 8, 12, tzinfo=datetime.timezone.utc)
    block = release_note([], ["apc_daily"], {"apc_daily": now - datetime.timedelta(hours=30)}, now=now, hours=24)
    decision = Decision(cause="ran", verdict="Ran.")
    _stale_parents(SimpleNamespace(note="\n".join([*before, block])), decision)
    assert decision.verdict == "Ran, with a warning: stale parent 'apc_daily'."
    assert [item.fact for item in decision.evidence] == ["stale_parent"]
    assert decision.evidence[0].text.startswith("Stale parents (no completed fire within 24 h); this run proceeded")


# -- tessera's own records, and what the records cannot tell -------------------------------------------


def noted(session, dag_run, *lines: str) -> None:
    dag_run.note = "\n".join(lines)
    session.flush()


def test_a_tick_the_overlap_policy_dropped_names_the_policy_the_note_and_the_entry(session):
    from airflow.models.log import Log

    from tessera.operators.functions.skip_events import SkipEvent
    from tessera.operators.schedules.held_fires import SKIP_EVENT, dropped_line

    scheduler_job(session, at(-60), NOW)
    holder = run(session, "why_slots", at(0), end=at(12))  # in flight when the 12:05 and 12:10 ticks came due
    recorder = run(session, "why_slots", at(15), created=at(15))
    why = "1 runs were in flight (overlap skip)"
    event = SkipEvent("ConcurrencyForbidden", 2, at(5), at(10), why)
    noted(session, recorder, "Queued: something else.", dropped_line(event))
    entry = logged(session, SKIP_EVENT, "why_slots", at(15), json.loads(event.to_json()))
    session.execute(update(Log).where(Log.id == entry).values(run_id=recorder.run_id))
    answer = ask(session, "why_slots", at(6), now=at(20))
    assert answer.cause == "overlap_dropped", answer.verdict
    assert answer.verdict == (
        "Did not run: the 2026-11-30 12:05:00 UTC occurrence was dropped by the overlap policy: ConcurrencyForbidden: "
        f"{why}; recorded when run {recorder.run_id!r} started."
    )
    assert f"audit log #{entry} ({SKIP_EVENT}); note of dag_run {recorder.run_id!r}" in texts(answer)
    assert holder.run_id not in answer.verdict  # not put down to max_active_runs


def test_after_the_audit_log_is_cleaned_the_runs_note_still_names_the_drop(session):
    from tessera.operators.functions.skip_events import SkipEvent
    from tessera.operators.schedules.held_fires import dropped_line

    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(0), end=at(12))
    recorder = run(session, "why_every", at(15), created=at(15))
    noted(session, recorder, dropped_line(SkipEvent("BufferFull", 1, at(5), at(5), "a fire was already queued")))
    logged(session, "cli_dag_unpause", "other", at(30))  # the log starts after the drop: it was cleaned
    answer = ask(session, "why_every", at(6), now=at(40))
    assert answer.cause == "overlap_dropped", answer.verdict
    assert f"note of dag_run {recorder.run_id!r}" in texts(answer)
    assert "audit log #" not in texts(answer)


def test_with_the_audit_log_cleaned_before_the_occurrence_it_cannot_tell(session):
    from airflow.models.dag import DagModel

    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(0))
    logged(session, "cli_dag_unpause", "other", at(30))  # the oldest entry left by airflow db clean
    session.execute(update(DagModel).where(DagModel.dag_id == "why_every").values(is_paused=True))
    try:
        answer = ask(session, "why_every", at(6), now=at(40))
    finally:
        session.execute(update(DagModel).where(DagModel.dag_id == "why_every").values(is_paused=False))
    assert answer.cause == "cannot_tell", answer.verdict
    assert answer.verdict.startswith(
        "Cannot tell why the 2026-11-30 12:05:00 UTC occurrence had no run: the records start at "
        "2026-11-30 12:30:00 UTC"
    )
    assert "the DAG is paused now" in answer.verdict and "was not paused" not in answer.verdict
    assert any("the audit log starts at 2026-11-30 12:30:00 UTC" in m for m in answer.missing)


def test_a_dag_paused_now_whose_log_covers_the_occurrence_was_paused_then(session):
    from airflow.models.dag import DagModel

    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(0))
    logged(session, "cli_dag_unpause", "other", at(1))  # the log starts before the occurrence, and has no change
    session.execute(update(DagModel).where(DagModel.dag_id == "why_every").values(is_paused=True))
    try:
        answer = ask(session, "why_every", at(6), now=at(40))
    finally:
        session.execute(update(DagModel).where(DagModel.dag_id == "why_every").values(is_paused=False))
    assert answer.cause == "paused", answer.verdict
    assert "the audit log, which starts 2026-11-30 12:01:00 UTC, before it came due, records no pause change" in (
        answer.verdict
    )


def test_a_run_replaced_by_cancel_other_says_by_which_run(session):
    from tessera.operators.replaced_runs import REPLACED_NOTE

    scheduler_job(session, at(-60), NOW)
    replaced = run(session, "why_every", at(5), state="failed", end=at(10))
    newer = run(session, "why_every", at(10))
    noted(session, replaced, f"{REPLACED_NOTE}{newer.run_id} (due 2026-11-30 12:10:00 UTC) started, because ...")
    answer = ask(session, "why_every", at(6), now=at(20))
    assert answer.cause == "replaced", answer.verdict
    assert answer.verdict == (
        f"Replaced: the 2026-11-30 12:05:00 UTC occurrence was running at T as {replaced.run_id!r} and was failed at "
        f"2026-11-30 12:10:00 UTC when run {newer.run_id!r} started: overlap cancel_other runs the newest fire "
        "(Superseded)."
    )
    assert f"note of dag_run {replaced.run_id!r}" in texts(answer)


def test_error_head_reads_the_class_the_first_line_and_the_files_line():
    import traceback

    from tessera.plugin.parse_watch import error_head

    try:
        exec(compile('\nraise RuntimeError("down\\nsecond")', "/dags/why_file.py", "exec"))
    except RuntimeError:
        text = traceback.format_exc()
    head = error_head(text, "why_file.py")
    assert (head.kind, head.first_line, head.line) == ("RuntimeError", "down", 2)
    try:
        compile("with DAG(\n    pass\n", "/dags/why_syntax.py", "exec")
    except SyntaxError:
        text = traceback.format_exc()
    head = error_head(text, "why_syntax.py")
    assert head.kind == "SyntaxError" and head.line is not None, head
    assert error_head("plain words", None).kind is None


def test_the_dropped_line_a_run_writes_is_the_one_the_explainer_reads():
    from tessera.operators.functions.skip_events import SkipEvent
    from tessera.operators.schedules.held_fires import WHY_DROPPED, dropped_in, dropped_line

    for reason in WHY_DROPPED:
        for count, at_least in ((1, False), (3, True)):
            event = SkipEvent(reason, count, at(5), at(5 * count), "why: (it) says.", at_least)
            assert dropped_in(f"Queued: x.\n{dropped_line(event)}\nReplaced: y.") == [event]


def test_a_run_created_late_with_the_log_cleaned_since_says_it_cannot_tell_what_held_it(session):
    scheduler_job(session, at(-60), NOW)
    run(session, "why_every", at(0))
    late = run(session, "why_every", at(5), created=at(9))
    logged(session, "cli_dag_unpause", "other", at(30))  # the oldest entry left by airflow db clean
    answer = ask(session, "why_every", at(6), now=at(40))
    assert answer.cause == "late", answer.verdict
    assert late.run_id in answer.verdict
    assert answer.verdict.endswith(
        "Cannot tell what held it: the records start at 2026-11-30 12:30:00 UTC, after it came due (cleaned, e.g. by "
        "airflow db clean --tables log)."
    )
