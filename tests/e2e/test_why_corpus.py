"""The "why" fault corpus: 25 causes injected into a real deployment, each verdict and its proof checked.

One deployment per database (SQLite, then PostgreSQL), shared by the whole corpus: a
dag-processor, a scheduler and an API server (which also serves the workers) on the DAGs of
``tests/e2e/dags_why``, with ``[tessera] max_concurrent_dispatches = 1`` and a pool of one
slot. :func:`scenario` injects every fault at a known instant through the processes' own
surfaces (REST API, CLI, DAG files, stopping the scheduler) and asks the deployment's
``GET /tessera/api/v1/dags/{dag_id}/why`` about it; see ``why_scenario.py``. Nothing is inserted
into the metadata DB: every record an answer cites was written by Airflow or tessera.
Each test then checks one cause: the cause code, the verdict sentence and the record it cites.
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tessera.operators.functions.skip_events import SkipEvent
from tessera.operators.schedules.held_fires import dropped_in

from .conftest import ARTIFACTS, keep_artifacts_if_failed
from .harness import BIN, AirflowHome, StoredRun, _free_port, _utc
from .why_scenario import UTC, Corpus, now

DAGS = Path(__file__).resolve().parent / "dags_why"
SECOND = datetime.timedelta(seconds=1)
BATCH = (
    "c_paused", "c_down_latest", "c_down_backfill", "c_builtin_cron", "c_changed", "c_removed", "c_broken",
    "c_src_b_load", "c_child", "c_dst", "c_dst_once", "c_syntax", "c_runtime",
)  # fmt: skip
"""Unpaused first: they have no task, so their runs load no worker. The others are unpaused by their step."""
ALL = (
    *BATCH, "c_slots", "c_wave_1", "c_wave_2", "c_mc_pipe", "c_manual", "c_pool_hog", "c_pool_wait", "c_bf",
    "c_forbid", "c_cap", "c_suspended", "c_deadline", "c_future_start", "c_ended", "c_src_a_load",
    "c_drop_skip", "c_drop_buffer", "c_timeout", "c_zero_pool", "c_paused_manual", "c_asset_child", "c_holiday",
    "c_excluded_day",
)  # fmt: skip
BROKEN_SOURCE = """
import datetime
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG("c_broken", schedule=Every("7m"), start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)):
    pass
"""
SYNTAX_SOURCE = """
from airflow.sdk import DAG

with DAG("c_syntax",
    pass
"""
RUNTIME_SOURCE = """
from airflow.sdk import DAG  # the words "airflow" and "DAG": the dag-processor's safe mode lists the file

raise RuntimeError("corpus: the source system is down\\nsecond line of the message")
"""
CHANGED_SOURCE = """
import datetime
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

with DAG("c_changed", schedule=Every("20s", delay="5s", phase=Fixed("0s")), catchup=False,
         start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)):
    EmptyOperator(task_id="work")
"""

# About 4 minutes on an idle machine: make test starts the longest deployments first (tests/conftest.py).
pytestmark = [pytest.mark.e2e, pytest.mark.minutes(4)]


def _environment(home: AirflowHome, port: int) -> None:
    passwords = home.root / "passwords.json"
    passwords.write_text(json.dumps({"admin": "admin-pw", "viewer": "viewer-pw"}))
    home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-why-" + "s" * 64,
        AIRFLOW__API__SECRET_KEY="tessera-why-key",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin,viewer:viewer",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=str(passwords),
        AIRFLOW__CORE__PARALLELISM="12",
        AIRFLOW__TESSERA__MAX_CONCURRENT_DISPATCHES="1",
        # The folder is listed every 5 s, so a file removed or restored shows within seconds; a file the scenario
        # rewrites is parsed again at once (its mtime is newer than its last parse, [dag_processor]
        # file_parsing_sort_mode), so an unchanged one keeps the harness's 2 minutes between parses: at 5 s the
        # dag-processor alone took a fifth of a core for the whole corpus. A DAG is stale after Airflow's
        # default 50 s without a parse (shorter, a busy dag-processor marks DAGs stale that are merely parsed late).
        AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL="5",
        # On a loaded machine a worker's call to the Execution API can wait for SQLite's write lock.
        AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT="60",
    )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    url = None
    if request.param == "postgresql":
        if not glob.glob("/usr/lib/postgresql/*/bin/initdb") and not os.environ.get("CI"):
            pytest.skip("PostgreSQL server binaries not installed; run scripts/postgres.sh install")
        url = request.getfixturevalue("postgres_server").create_database("tessera_why")
    home = AirflowHome(tmp_path_factory.mktemp(f"airflow-why-{request.param}"), database_url=url, dags_source=DAGS)
    port = _free_port()
    _environment(home, port)
    failed_before = request.session.testsfailed
    corpus = Corpus(home, f"http://127.0.0.1:{port}")
    try:
        migrated = home.cli("db", "migrate", timeout=900)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("dag-processor", "dag-processor")
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1")
        healthy = lambda: corpus.call("GET", "/api/v2/monitor/health", user=None)[0] == 200  # noqa: E731
        home.wait_for("the API server", healthy, timeout=300)
        home.start("scheduler", "scheduler")
        home.wait_for("the corpus to be parsed", lambda: all(home.is_parsed(d) for d in ALL), timeout=300)
        scenario(corpus)
        yield corpus
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)
        # Every answer the corpus got (the report's table is made from it), whether or not a test failed.
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        record = {"answers": corpus.answers, "facts": corpus.facts}
        (ARTIFACTS / f"why-answers-{request.param}.json").write_text(json.dumps(record, indent=2, default=str))


# -- the scenario --------------------------------------------------------------------------------


def scenario(c: Corpus) -> None:
    """Every fault, in five lanes side by side (each lane's DAGs its own), then the downtime and the clean alone.

    A lane holds steps that share facts in order (``changed`` before ``cli``, ``wave`` before
    ``wave_ended``, ``pauses`` before ``ask_paused``). The downtime stops the scheduler every lane
    relies on, and the clean removes records every other step wrote: each goes last, alone.
    """
    status, body = c.call("POST", "/api/v2/pools", {"name": "why_pool", "slots": 1, "description": "why corpus"})
    assert status in (200, 201), body
    for dag_id in BATCH:
        c.set_paused(dag_id, False)
    c.lanes(
        [
            (("paused", "builtin_paused"), _pauses),
            (("forbid", "cap", "suspended"), _functions),
            (("pool",), _pool),
            (("mc_queued",), _max_concurrent),
            (("wave",), _wave),
            (("manual",), _manual),
            (("backfill",), _backfill),
            (("broken", "syntax", "runtime"), _broken),
            (("future_start", "ended"), _bounds),
            (("paused", "builtin_paused"), _ask_paused),
            (("zero_pool",), _zero_pool),
            (("paused_manual",), _paused_manual),
            (("asset_paused",), _asset_paused),
            (("holiday", "excluded_day"), _calendars),
            (("wave_ended",), _gate_ended),
        ],
        [(("stale_parent", "after_parent"), _fan_in)],
        [(("drop_skip", "drop_buffer", "drop_status"), _drops)],
        [
            (("dst_gap", "dst_twice", "dst_once"), _dst),
            (("deadline",), _deadline),
            (("changed",), _changed),
            (("cli",), _cli_examples),
        ],
        [
            (("removed",), _removed),
            (("slots",), _slots),
            (("timeout",), _timeout),
        ],
    )
    c.step(("down", "latest", "backfill_limit"), lambda: _downtime(c))
    c.step(("clean_paused", "clean_drop", "clean_broken", "clean_removed"), lambda: _cleaned(c))


def _cli_examples(c: Corpus) -> None:
    """``tessera why`` on the deployment's own metadata DB: the README's examples are copied from here."""
    asks = [
        ["why", "c_paused"],
        ["why", "c_dst", "--at", "2026-03-29T01:30:00Z"],
        ["why", "c_changed", "--at", c.facts["changed_at"].isoformat()],
    ]
    outputs = []
    for argv in asks:
        done = c.home.run([str(BIN / "tessera"), *argv], timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(f"$ tessera {' '.join(argv)}\n{done.stdout}")
    c.answers["cli"] = {"outputs": outputs}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"why-cli-{'postgresql' if c.home.is_postgres else 'sqlite'}.txt").write_text("\n".join(outputs))


def _run_alone(c: Corpus, dag_id: str) -> None:
    """Unpause a DAG whose runs load a worker, for its step only."""
    c.set_paused(dag_id, False)


def _pauses(c: Corpus) -> None:
    c.wait_runs("c_paused", 2)
    c.wait_runs("c_builtin_cron", 1)
    for dag_id in ("c_paused", "c_builtin_cron"):  # through the CLI: the audit log says cli_dag_pause
        assert c.home.cli("dags", "pause", dag_id).returncode == 0
        c.facts[f"{dag_id}_paused"] = now()


def _functions(c: Corpus) -> None:
    _run_alone(c, "c_forbid")
    fire = c.wait_runs("c_forbid", 1)[0].run_id  # its scheduled fire sleeps 60 s and holds the one dispatch slot
    c.wait("c_forbid's fire to run", lambda: c.task_state("c_forbid", fire, "fn") == "running")
    again = c.trigger("c_forbid")
    c.wait("the run-now to be declined", lambda: c.task_state("c_forbid", again, "fn") == "skipped")
    c.answers["forbid"] = c.why("c_forbid", c.run("c_forbid", again).run_after)
    c.set_paused("c_forbid", True)  # its fire goes on holding the dispatch slot
    c.set_paused("c_cap", False)
    tick = c.wait_runs("c_cap", 1)[0].run_id
    c.wait("c_cap's tick to be declined", lambda: c.task_state("c_cap", tick, "fn") == "skipped")
    c.set_paused("c_cap", True)
    c.answers["cap"] = c.why("c_cap", c.run("c_cap", tick).run_after + SECOND)
    c.set_paused("c_suspended", True)
    asked = c.trigger("c_suspended")
    time.sleep(1)
    c.set_paused("c_suspended", False)
    c.wait("the paused run-now to be declined", lambda: c.task_state("c_suspended", asked, "fn") == "skipped")
    c.answers["suspended"] = c.why("c_suspended", c.run("c_suspended", asked).run_after)


def _pool(c: Corpus) -> None:
    _run_alone(c, "c_pool_hog")
    _run_alone(c, "c_pool_wait")
    hog = c.trigger("c_pool_hog")
    c.wait("the pool's slot to be taken", lambda: c.task_state("c_pool_hog", hog, "sleep") == "running")
    waiting = c.trigger("c_pool_wait")
    c.wait("the task to wait for the pool", lambda: c.task_state("c_pool_wait", waiting, "sleep") == "scheduled")
    time.sleep(3)
    c.facts["pool_hog"] = hog
    c.answers["pool"] = c.why("c_pool_wait")
    c.set_paused("c_pool_hog", True)
    c.set_paused("c_pool_wait", True)


def _max_concurrent(c: Corpus) -> None:
    _run_alone(c, "c_mc_pipe")
    fire = c.wait_runs("c_mc_pipe", 1)[0].run_id
    c.wait("the fire to run", lambda: c.task_state("c_mc_pipe", fire, "sleep") == "running")
    queued = c.trigger("c_mc_pipe")
    time.sleep(5)
    assert c.run("c_mc_pipe", queued).state == "queued"
    c.facts["mc_fire"] = fire
    c.answers["mc_queued"] = c.why("c_mc_pipe")
    c.set_paused("c_mc_pipe", True)


def _wave(c: Corpus) -> None:
    _run_alone(c, "c_wave_1")
    _run_alone(c, "c_wave_2")
    held = c.wait_runs("c_wave_2", 1)[0].run_id
    c.wait("the wave gate to defer", lambda: c.task_state("c_wave_2", held, "tessera_wave_gate") == "deferred")
    asked = now()
    c.answers["wave"] = c.why("c_wave_2", asked)
    # Both stay unpaused (daily: no other run comes): the scheduler finishes c_wave_1's run and opens the gate,
    # and the same instant is asked about again once it has (_gate_ended).
    c.facts["wave"] = (held, asked)


def _slots(c: Corpus) -> None:
    _run_alone(c, "c_slots")
    first = c.wait_runs("c_slots", 1)[0]
    c.wait(
        "c_slots's run to sleep past two occurrences", lambda: now() > first.run_after + datetime.timedelta(seconds=22)
    )
    c.facts["slots_holder"] = first.run_id
    c.answers["slots"] = c.why("c_slots")
    c.set_paused("c_slots", True)


def _fan_in(c: Corpus) -> None:
    b_fire = c.wait_runs("c_src_b_load", 1)[0]
    c.wait("c_src_b's fire to complete", lambda: c.run("c_src_b_load", b_fire.run_id).state == "success")
    time.sleep(12)  # older than the child's 0.003 h (10.8 s) freshness window when c_src_a completes
    c.set_paused("c_src_a_load", False)
    child = c.wait_runs("c_child", 1)[0]
    c.facts["child"] = child.run_id
    # Its note (which parents released it, which were stale) is written when it starts: ask as it started.
    started = c.wait("the child run to start", lambda: c.started("c_child", child.run_id))
    c.answers["stale_parent"] = c.why("c_child", started)
    # A second completed fire of c_src_a, and none of c_src_b: the child waits for it.
    c.wait("a second fire of c_src_a", lambda: [r for r in c.runs("c_src_a_load") if r.state == "success"][1:])
    c.set_paused("c_src_a_load", True)
    c.answers["after_parent"] = c.why("c_child")


def _manual(c: Corpus) -> None:
    _run_alone(c, "c_manual")
    run_id = c.trigger("c_manual")
    c.facts["manual"] = run_id
    started = c.wait("the manual run to start", lambda: c.started("c_manual", run_id))
    c.answers["manual"] = c.why("c_manual", started + SECOND)
    c.set_paused("c_manual", True)


def _backfill(c: Corpus) -> None:
    _run_alone(c, "c_bf")
    hour = now().replace(minute=0, second=0, microsecond=0)
    start, end = hour - datetime.timedelta(hours=5), hour - datetime.timedelta(hours=3)
    c.facts["backfill"] = c.backfill("c_bf", start.isoformat(), end.isoformat())
    c.wait(
        "a backfill run to run", lambda: any(r.run_type == "backfill" and r.state == "running" for r in c.runs("c_bf"))
    )
    # The last window of the range: its run waits behind the first (max_active_runs 1).
    c.answers["backfill"] = c.why("c_bf", end + datetime.timedelta(hours=1) + SECOND)


def _dst(c: Corpus) -> None:
    def done(backfill: int) -> bool:
        return c.home.query("SELECT completed_at FROM backfill WHERE id = ?", backfill)[0][0] is not None

    march = c.backfill("c_dst", "2026-03-27T00:00:00Z", "2026-03-30T00:00:00Z")
    once = c.backfill("c_dst_once", "2026-10-24T00:00:00Z", "2026-10-26T00:00:00Z")
    c.wait("the March backfill of c_dst", lambda: done(march))
    october = c.backfill("c_dst", "2026-10-24T00:00:00Z", "2026-10-26T00:00:00Z")
    c.wait("the October backfills", lambda: done(october) and done(once))
    c.answers["dst_gap"] = c.why("c_dst", datetime.datetime(2026, 3, 29, 1, 30, tzinfo=UTC))
    c.answers["dst_twice"] = c.why("c_dst", datetime.datetime(2026, 10, 25, 1, 35, tzinfo=UTC))
    c.answers["dst_once"] = c.why("c_dst_once", datetime.datetime(2026, 10, 25, 1, 35, tzinfo=UTC))


def _deadline(c: Corpus) -> None:
    """Unpause ``Cron("@every 20s", starting_deadline="5s")`` 9 to 11 s after an occurrence: it is skipped."""
    c.wait("9 s past a 20 s occurrence", lambda: 9 <= now().timestamp() % 20 <= 11, timeout=30)
    unpaused = c.set_paused("c_deadline", False)
    skipped = datetime.datetime.fromtimestamp(unpaused.timestamp() // 20 * 20, UTC)
    first = c.wait_runs("c_deadline", 1)[0]
    c.set_paused("c_deadline", True)
    c.facts["deadline"] = (skipped, first.run_after)
    c.answers["deadline"] = c.why("c_deadline", skipped + SECOND)


def _changed(c: Corpus) -> None:
    # T must fall while the old run is the newest occurrence's run: after it was created and before the next
    # 10 s occurrence came due. The first run of a newly stored DAG may be created seconds after its occurrence,
    # so "a second after it started" could land past the next occurrence (its run not created yet: 'late').
    def timely() -> StoredRun | None:
        return next((r for r in c.runs("c_changed") if r.created_at and r.created_at < r.run_after + 8 * SECOND), None)

    old = c.wait("a run of c_changed created within 8 s of its occurrence", timely)
    at = old.created_at + SECOND  # type: ignore[operator]
    c.rewrite("corpus_changed.py", CHANGED_SOURCE)
    edited = now()
    c.wait(
        "a run under the new schedule",
        lambda: [r for r in c.runs("c_changed") if "~interval:20s" in r.run_id and r.created_at > edited],
    )
    c.facts["changed"] = old.run_id
    c.facts["changed_at"] = at
    c.answers["changed"] = c.why("c_changed", at)  # as it ran


def _broken(c: Corpus) -> None:
    c.rewrite("corpus_broken.py", BROKEN_SOURCE)
    c.rewrite("corpus_syntax.py", SYNTAX_SOURCE)
    c.rewrite("corpus_runtime.py", RUNTIME_SOURCE)
    c.facts["broken_at"] = now()
    for dag_id in ("c_broken", "c_syntax", "c_runtime"):
        broken = lambda d=dag_id: [e for _, e in c.parse_entries(d) if e["state"] == "broken"]  # noqa: E731
        c.wait(f"{dag_id} to be recorded broken", broken)
    c.facts["broken_status"] = c.call("GET", "/tessera/api/v1/dags/c_broken/status", user="viewer")
    time.sleep(11)  # an occurrence comes due while its file fails (Airflow creates no run of it then)
    c.answers["broken"] = c.why("c_broken")
    c.answers["syntax"] = c.why("c_syntax")
    c.answers["runtime"] = c.why("c_runtime")


def _removed(c: Corpus) -> None:
    source = c.remove("corpus_removed.py")
    removed = c.facts["removed_at"] = now()
    entries = lambda: c.parse_entries("c_removed")  # noqa: E731
    missing = lambda: [t for t, e in entries() if t > removed and e["state"] == "missing" and e["stale"]]  # noqa: E731
    since = c.wait("c_removed to be recorded missing", missing)[0]
    time.sleep(15)
    c.rewrite("corpus_removed.py", source)
    c.facts["restored_at"] = now()
    c.wait(
        "c_removed to be recorded restored",
        lambda: [e for _, e in c.parse_entries("c_removed") if e["state"] == "restored"],
    )
    c.facts["removed_asked"] = since + datetime.timedelta(seconds=12)
    c.answers["removed"] = c.why("c_removed", c.facts["removed_asked"])


def _bounds(c: Corpus) -> None:
    c.answers["future_start"] = c.why("c_future_start")
    c.answers["ended"] = c.why("c_ended")


def _ask_paused(c: Corpus) -> None:
    c.answers["paused"] = c.why("c_paused")
    minute = c.facts["c_builtin_cron_paused"].replace(second=0, microsecond=0) + datetime.timedelta(minutes=1)
    c.wait("a minute to come due while c_builtin_cron is paused", lambda: now() > minute + 2 * SECOND, timeout=90)
    c.answers["builtin_paused"] = c.why("c_builtin_cron")


def _downtime(c: Corpus) -> None:
    """Stop the scheduler for 90 s: ask while it is down (beyond the 30 s health threshold), and after it is back.

    The occurrence asked about (42 s in) must be older than the three newest due at the restart, which
    Backfill(limit=2) runs: at 70 s down they began 41-51 s in, and one run in a few asked about one of them.
    """
    down = now()
    c.stop_process("scheduler")
    c.wait("90 s of downtime", lambda: now() > down + datetime.timedelta(seconds=90), timeout=120)
    c.answers["down"] = c.why("c_down_latest")
    c.start_process("scheduler", "scheduler")
    back = now()
    c.wait_runs("c_down_latest", 1, after=back)
    c.wait_runs("c_down_backfill", 2, after=back)
    c.facts["down"] = (down, back)
    c.facts["scheduling_again"] = now()  # the new scheduler has created runs: it heartbeats
    c.answers["latest"] = c.why("c_down_latest", down + datetime.timedelta(seconds=42))
    c.answers["backfill_limit"] = c.why("c_down_backfill", down + datetime.timedelta(seconds=42))


def _noted_drops(c: Corpus, dag_id: str) -> list[tuple[str, SkipEvent]]:
    """The dropped fires the DAG's runs recorded in their notes, with the run that recorded each."""
    rows = c.home.query(
        "SELECT r.run_id, n.content FROM dag_run r JOIN dag_run_note n ON n.dag_run_id = r.id WHERE r.dag_id = ?",
        dag_id,
    )
    return [(run_id, event) for run_id, content in rows for event in dropped_in(content)]


def _drops(c: Corpus) -> None:
    """Every 10 s, runs of 25 s: ``skip`` drops the ticks that find a run in flight, ``buffer_one`` those beyond one."""
    _run_alone(c, "c_drop_skip")
    _run_alone(c, "c_drop_buffer")
    skip = c.wait("c_drop_skip to record a dropped tick", lambda: _noted_drops(c, "c_drop_skip"))
    buffer = c.wait("c_drop_buffer to record a dropped tick", lambda: _noted_drops(c, "c_drop_buffer"))
    c.answers["drop_status"] = c.call("GET", "/tessera/api/v1/dags/c_drop_buffer/status", user="viewer")[1]
    c.set_paused("c_drop_skip", True)
    c.set_paused("c_drop_buffer", True)
    for name, dag_id, (run_id, event) in (("skip", "c_drop_skip", skip[0]), ("buffer", "c_drop_buffer", buffer[0])):
        c.facts[f"drop_{name}"] = (run_id, event.reason, event.first)
        c.answers[f"drop_{name}"] = c.why(dag_id, event.first + SECOND)


def _timeout(c: Corpus) -> None:
    """A run whose task sleeps 60 s under ``dagrun_timeout`` 10 s: Airflow fails it and skips the task."""
    _run_alone(c, "c_timeout")
    run_id = c.trigger("c_timeout")
    c.wait("c_timeout's run to time out", lambda: c.run("c_timeout", run_id).state == "failed")
    c.set_paused("c_timeout", True)
    (end,) = c.home.query("SELECT end_date FROM dag_run WHERE dag_id = ? AND run_id = ?", "c_timeout", run_id)[0]
    c.facts["timeout"] = run_id
    c.answers["timeout"] = c.why("c_timeout", _utc(end))  # asked as it ended, answered after


def _zero_pool(c: Corpus) -> None:
    status, body = c.call("POST", "/api/v2/pools", {"name": "why_zero", "slots": 0, "description": "no slot"})
    assert status in (200, 201), body
    _run_alone(c, "c_zero_pool")
    run_id = c.trigger("c_zero_pool")
    c.wait("the task to wait for the empty pool", lambda: c.task_state("c_zero_pool", run_id, "sleep") == "scheduled")
    time.sleep(3)
    c.answers["zero_pool"] = c.why("c_zero_pool")
    c.set_paused("c_zero_pool", True)


def _paused_manual(c: Corpus) -> None:
    """A run triggered while the DAG is paused (as created: no audit entry) waits, queued."""
    run_id = c.trigger("c_paused_manual")
    time.sleep(5)
    assert c.run("c_paused_manual", run_id).state == "queued"
    c.facts["paused_manual"] = run_id
    c.answers["paused_manual"] = c.why("c_paused_manual")


def _asset_paused(c: Corpus) -> None:
    """An event of the asset ``c_asset_child`` is scheduled on arrives while it is paused: Airflow queues nothing."""
    status, body = c.call("GET", "/api/v2/assets?uri_pattern=x-why")
    assert status == 200, body
    (asset,) = [a for a in body["assets"] if a["uri"] == "x-why://corpus/asset"]
    c.settled("POST", "/api/v2/assets/events", {"asset_id": asset["id"]})
    time.sleep(3)
    c.answers["asset_paused"] = c.why("c_asset_child")


def _calendars(c: Corpus) -> None:
    """The next New York holiday (from now) an hour after its 09:00 occurrence, and an hour on an excluded day."""
    from tessera.timetables import Every, holidays_of

    schedule = Every.business_day(at="09:00", timezone="America/New_York", calendar=holidays_of("US", subdiv="NY"))
    (holiday,) = schedule.plan.excluded(after=now(), until=now() + datetime.timedelta(days=400), count=1)
    c.facts["holiday"] = holiday
    c.answers["holiday"] = c.why("c_holiday", holiday.occurrence + datetime.timedelta(hours=1))
    c.answers["excluded_day"] = c.why("c_excluded_day", datetime.datetime(2026, 6, 10, 15, 30, tzinfo=UTC))


def _gate_ended(c: Corpus) -> None:
    """The wave-gate wait asked about again, at the same instant, after the gate opened."""
    held, asked = c.facts["wave"]
    # The gate is a deferred task: a triggerer resumes it once its wave opens (the corpus runs none otherwise).
    c.start_process("triggerer", "triggerer")
    try:
        c.wait("c_wave_2's gate to open", lambda: c.task_state("c_wave_2", held, "tessera_wave_gate") == "success")
    finally:
        c.stop_process("triggerer")
    c.set_paused("c_wave_1", True)
    c.set_paused("c_wave_2", True)
    c.answers["wave_ended"] = c.why("c_wave_2", asked)


def _cleaned(c: Corpus) -> None:
    """``airflow db clean --tables log``: the audit log (pauses, parse states, skips) is gone; notes and jobs stay."""
    cleaned_before = now()
    done = c.home.cli(
        "db", "clean", "--tables", "log", "--clean-before-timestamp", cleaned_before.isoformat(), "--skip-archive",
        "--yes", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    c.answers["clean_paused"] = c.why("c_paused", c.facts["c_paused_paused"] + datetime.timedelta(seconds=15))
    run_id, _, first = c.facts["drop_buffer"]
    c.answers["clean_drop"] = c.why("c_drop_buffer", first + SECOND)
    # Its newest occurrence (every 10 s), once one came due with the scheduler back and after the records cleaned:
    # asked sooner, the newest could predate the restart (CI asked seconds after it: "no scheduler was
    # heartbeating" is then the answer) or the clean (then nothing says why: "cannot tell").
    since = max(c.facts.get("scheduling_again", cleaned_before), cleaned_before).timestamp()
    back = datetime.datetime.fromtimestamp((since // 10 + 1) * 10, tz=UTC)
    c.wait("an occurrence of c_broken with the scheduler back", lambda: now() > back + 3 * SECOND, timeout=30)
    c.answers["clean_broken"] = c.why("c_broken")
    c.answers["clean_removed"] = c.why("c_removed", c.facts["removed_asked"])


# -- the corpus: one test per cause ----------------------------------------------------------------


def answer(corpus: Corpus, cause: str) -> dict:
    found = corpus.answers.get(cause)
    assert found is not None, f"no answer was asked for {cause}"
    assert "step_failed" not in found, found.get("step_failed")
    return found


def records(found: dict, section: str | None = None) -> list[str]:
    return [e["record"] or "" for e in found["evidence"] if section is None or e["section"] == section]


def evidence(found: dict) -> str:
    return "\n".join(f"{e['section']}/{e['fact']}: {e['text']} [{e['record']}]" for e in found["evidence"])


def test_paused(corpus):
    found = answer(corpus, "paused")
    assert found["cause"] == "paused", found["verdict"]
    assert "had no run because the DAG was paused when it came due" in found["verdict"]
    assert "with airflow dags pause" in found["verdict"]
    assert any(r.startswith("audit log #") and r.endswith("(cli_dag_pause)") for r in records(found, "airflow"))


def test_paused_then_unpaused_run_now_is_suspended(corpus):
    found = answer(corpus, "suspended")
    assert found["cause"] == "fire_skipped", found["verdict"]
    assert found["verdict"].startswith("Ran without firing: the manual run ran as")
    assert (
        "its cursor function 'fn' was skipped: Suspended (run-now requested while the DAG was paused"
        in found["verdict"]
    )
    assert any(r.endswith("(tessera.skip)") for r in records(found))


def test_scheduler_down(corpus):
    found = answer(corpus, "down")
    assert found["cause"] == "scheduler_down", found["verdict"]
    assert "had no run because no scheduler was heartbeating at" in found["verdict"]
    assert any(r.startswith("job #") and "(SchedulerJob)" in r for r in records(found, "airflow"))


def test_latest_skips_older_windows_after_downtime(corpus):
    found = answer(corpus, "latest")
    assert found["cause"] == "passed_over", found["verdict"]
    assert "when a scheduler started again at" in found["verdict"]
    assert "only the newest due occurrence runs after downtime (catch-up Latest)" in found["verdict"]
    assert sum("(SchedulerJob)" in r for r in records(found, "airflow")) >= 1


def test_backfill_limit_drops_older_ones(corpus):
    found = answer(corpus, "backfill_limit")
    assert found["cause"] == "passed_over", found["verdict"]
    # Backfill(limit=2): the newest due occurrence and the 2 missed before it; the downtime spans more.
    assert re.search(r"\b\d+ newer occurrence\(s\) were due and the 3 newest due occurrences run", found["verdict"])
    assert "catch-up Backfill(limit=2): the newest and the 2 missed before it" in found["verdict"]


def test_starting_deadline_passed(corpus):
    found = answer(corpus, "deadline")
    skipped, next_run = corpus.facts["deadline"]
    assert found["occurrence"]["nominal"].startswith(skipped.strftime("%Y-%m-%dT%H:%M:%S"))
    assert found["cause"] == "missed_deadline", found["verdict"]
    assert "longer than the starting deadline 5s: skipped (MissedDeadline)" in found["verdict"]
    assert "when it was unpaused at" in found["verdict"]
    assert next_run > skipped  # the scheduler ran the next occurrence, not this one


def test_start_date_in_the_future(corpus):
    found = answer(corpus, "future_start")
    assert found["cause"] == "before_start_date", found["verdict"]
    assert "T is before the DAG's start_date (2027-06-01 00:00:00 UTC)" in found["verdict"]
    assert any("dag_version 1" in r for r in records(found, "schedule"))


def test_end_date_passed(corpus):
    found = answer(corpus, "ended")
    assert found["cause"] == "after_end_date", found["verdict"]
    assert "the DAG's end_date (2025-06-01 00:00:00 UTC) has passed" in found["verdict"]


def test_dst_gap(corpus):
    found = answer(corpus, "dst_gap")
    assert found["cause"] == "dst_gap", found["verdict"]
    assert "readings 02:00–03:00 did not exist" in found["verdict"]
    assert "a time the clock skips never fires" in found["verdict"]
    assert "2026-03-28 01:30:00 UTC (02:30:00 CET Europe/Berlin) and it ran as 'backfill__" in found["verdict"]


def test_dst_repeated_time_fires_twice_under_cronjob_semantics(corpus):
    found = answer(corpus, "dst_twice")
    assert found["cause"] == "backfill_run", found["verdict"]
    assert found["verdict"].startswith(
        "Backfilled: the 2026-10-25 01:30:00 UTC (02:30:00 CET Europe/Berlin) occurrence"
    )
    assert (
        "happened twice; this schedule: a time the clock skips never fires; a time it repeats fires at both"
        in evidence(found)
    )
    assert any(r.startswith("backfill #") for r in records(found, "airflow"))


def test_dst_repeated_time_fires_once_with_dst_once(corpus):
    found = answer(corpus, "dst_once")
    assert found["cause"] == "dst_once", found["verdict"]
    assert "It fired once, at 2026-10-25 00:30:00 UTC (02:30:00 CEST Europe/Berlin)" in found["verdict"]


def test_import_error(corpus):
    found = answer(corpus, "broken")
    assert found["cause"] == "broken", found["verdict"]
    assert (
        "the DAG file 'corpus_broken.py' failed to import (ScheduleInvalid: every: '7m' does not divide"
        in found["verdict"]
    )
    assert any(r.endswith("(tessera.parse)") for r in records(found, "airflow"))
    status, row = corpus.facts["broken_status"]
    assert status == 200, row
    assert row["broken"]["reason"] == "ScheduleInvalid"
    assert "every: '7m' does not divide a day evenly" in row["broken"]["message"]
    assert row["broken"]["since"] >= corpus.facts["broken_at"].isoformat()[:19]


def test_dag_file_removed_then_restored(corpus):
    found = answer(corpus, "removed")
    assert found["cause"] == "file_missing", found["verdict"]
    # the dag-processor found the file deleted, and the answer says so without hedging
    assert "the DAG file 'corpus_removed.py' was deleted (FileMissing) from" in found["verdict"]
    assert "no longer defined it" not in found["verdict"]
    assert any(r.endswith("(tessera.parse)") for r in records(found, "airflow"))


def test_max_active_runs_reached(corpus):
    found = answer(corpus, "slots")
    assert found["cause"] == "max_active_runs", found["verdict"]
    assert "max_active_runs=1 was reached at" in found["verdict"]
    assert corpus.facts["slots_holder"] in found["verdict"]


def test_max_concurrent_queued(corpus):
    found = answer(corpus, "mc_queued")
    assert found["cause"] == "queued_max_active_runs", found["verdict"]
    assert "max_active_runs=1 (MAX_CONCURRENT) was reached by" in found["verdict"]
    assert corpus.facts["mc_fire"] in found["verdict"]


def test_forbid(corpus):
    found = answer(corpus, "forbid")
    assert found["cause"] == "fire_skipped", found["verdict"]
    assert (
        "was skipped: ConcurrencyForbidden (an earlier fire was still in flight and the policy is Forbid)"
        in found["verdict"]
    )
    assert any(r.endswith("(tessera.skip)") for r in records(found))


def test_dispatch_cap(corpus):
    found = answer(corpus, "cap")
    assert found["cause"] == "fire_skipped", found["verdict"]
    assert (
        "was skipped: DispatchCapReached ([tessera] max_concurrent_dispatches fires were already in flight)"
        in found["verdict"]
    )


def test_pool_full(corpus):
    found = answer(corpus, "pool")
    assert found["cause"] == "waiting_pool", found["verdict"]
    assert "waited for a slot of pool 'why_pool' (1 slot, all held by 'c_pool_hog.sleep" in found["verdict"]
    assert any(r.startswith("task_instance c_pool_hog.sleep") for r in records(found, "airflow"))


def test_after_parent_not_complete(corpus):
    found = answer(corpus, "after_parent")
    assert found["cause"] == "waiting_for_parents", found["verdict"]
    assert found["verdict"].startswith("Not released: waiting for parent 'c_src_b': no completed fire")
    assert "Parent 'c_src_a': 1 event(s) since the last run" in evidence(found)


def test_stale_parent_warning(corpus):
    found = answer(corpus, "stale_parent")
    assert found["run"]["run_id"] == corpus.facts["child"]
    assert found["verdict"].endswith("with a warning: stale parent 'c_src_b'.")
    assert "the run's note" in records(found, "airflow")


def test_wave_gate_closed(corpus):
    found = answer(corpus, "wave")
    assert found["cause"] == "waiting_wave_gate", found["verdict"]
    assert (
        "it is in wave 1 of schedule 'c_waves', which opens when wave 0 ('c_wave_1') has finished" in found["verdict"]
    )


def test_backfill_in_progress(corpus):
    found = answer(corpus, "backfill")
    assert found["cause"] == "backfill_run", found["verdict"]
    assert f"is run by backfill #{corpus.facts['backfill']} as 'backfill__" in found["verdict"]
    assert "the backfill is still in progress" in found["verdict"]


def test_run_triggered_manually(corpus):
    found = answer(corpus, "manual")
    assert found["cause"] == "manual_run", found["verdict"]
    assert found["verdict"].startswith(f"Manual run: {corpus.facts['manual']!r}, triggered by admin via rest api at")
    assert "; it was running at T (started " in found["verdict"]


def test_schedule_changed_between_runs(corpus):
    found = answer(corpus, "changed")
    assert found["cause"] in ("ran", "running", "queued"), found["verdict"]  # T: a second after it was created
    assert corpus.facts["changed"] in found["verdict"]
    assert (
        "under the schedule in force then (every 10s · phase 0s, dag_version 1); it has changed since to"
        in found["verdict"]
    )
    assert "every 20s · delay 5s · phase 0s (dag_version 2)" in found["verdict"]
    assert "recorded phase 0s, delay 0s and interval 10s" in evidence(found)


def test_a_built_in_cron_dag_paused(corpus):
    found = answer(corpus, "builtin_paused")
    assert found["cause"] == "paused", found["verdict"]
    assert found["schedule_in_force"] == "* * * * *"
    assert any(r.endswith("(cli_dag_pause)") for r in records(found, "airflow"))


def test_the_cli_answers_on_the_deployments_database(corpus):
    outputs = answer(corpus, "cli")["outputs"]
    assert "Did not run: " in outputs[0] and "What Airflow did:" in outputs[0]
    assert "No occurrence at T: on 2026-03-29 the clock in Europe/Berlin jumped ahead" in outputs[1]
    assert "it has changed since to every 20s" in outputs[2]


# -- what tessera recorded itself, and what it cannot know ---------------------------------------------


def test_a_python_syntax_error_names_the_file_the_class_and_its_line(corpus):
    found = answer(corpus, "syntax")
    assert found["cause"] == "broken", found["verdict"]
    assert re.search(
        r"the DAG file 'corpus_syntax.py' failed to import \(SyntaxError: [^)]+\(line \d+\)\)", found["verdict"]
    )
    assert "SpecInvalid" not in found["verdict"]


def test_a_runtime_error_at_import_names_its_first_line(corpus):
    found = answer(corpus, "runtime")
    assert found["cause"] == "broken", found["verdict"]
    assert (
        "the DAG file 'corpus_runtime.py' failed to import (RuntimeError: corpus: the source system is down (line 4))"
        in found["verdict"]
    )
    assert "second line of the message" not in found["verdict"]


@pytest.mark.parametrize(
    ("name", "reason", "policy"),
    [("skip", "ConcurrencyForbidden", "overlap skip"), ("buffer", "BufferFull", "overlap buffer_one")],
)
def test_a_tick_the_overlap_policy_dropped_names_the_policy_and_the_record(corpus, name, reason, policy):
    found = answer(corpus, f"drop_{name}")
    run_id = corpus.facts[f"drop_{name}"][0]
    assert found["cause"] == "overlap_dropped", found["verdict"]
    assert f"was dropped by the overlap policy: {reason}: " in found["verdict"]
    assert f"({policy})" in found["verdict"]
    assert f"recorded when run {run_id!r} started" in found["verdict"]
    # not put down to Airflow's limit or the catch-up (the record's own words may name the limit the policy met)
    assert "max_active_runs=" not in found["verdict"] and "catch-up Latest" not in found["verdict"]
    (dropped,) = [e for e in found["evidence"] if e["fact"] == "dropped"]
    assert "(tessera.schedule.skip)" in dropped["record"] and f"note of dag_run {run_id!r}" in dropped["record"]


def test_the_status_shows_the_latest_drop(corpus):
    status = answer(corpus, "drop_status")
    assert status["skip_reason"] == "BufferFull", status
    assert status["latest_drop"]["reason"] == "BufferFull"
    assert status["latest_drop"]["record"].endswith("(tessera.schedule.skip)")
    assert "owed_windows" in status


def test_a_run_past_its_dagrun_timeout_reads_as_timed_out(corpus):
    found = answer(corpus, "timeout")
    assert found["cause"] == "timed_out", found["verdict"]
    assert f"Timed out: the manual run ran as {corpus.facts['timeout']!r} from" in found["verdict"]
    assert (
        "past its dagrun_timeout of 10s: Airflow failed the run; its unfinished tasks were skipped ('sleep')"
        in (found["verdict"])
    )


def test_a_pool_of_no_slot(corpus):
    found = answer(corpus, "zero_pool")
    assert found["cause"] == "waiting_pool", found["verdict"]
    assert "a slot of pool 'why_zero', which has 0 slots: none of its tasks can run" in found["verdict"]
    assert "all held by" not in found["verdict"]


def test_a_manual_run_queued_because_the_dag_is_paused(corpus):
    found = answer(corpus, "paused_manual")
    assert found["cause"] == "paused", found["verdict"]
    assert found["verdict"].startswith(f"Queued: the manual run was created as {corpus.facts['paused_manual']!r}")
    assert "the DAG was paused at " in found["verdict"] and "it is paused now" in found["verdict"]


def test_an_asset_event_that_arrived_while_the_dag_was_paused(corpus):
    found = answer(corpus, "asset_paused")
    assert found["cause"] == "paused", found["verdict"]
    assert (
        "Not run: the newest event of asset 'x-why://corpus/asset' arrived while the DAG was paused"
        in (found["verdict"])
    )


def test_a_holiday_ahead_names_the_exclusion_and_its_calendar(corpus):
    found = answer(corpus, "holiday")
    holiday = corpus.facts["holiday"]
    assert found["cause"] == "excluded", found["verdict"]
    assert "will be skipped by the schedule's exclusions" in found["verdict"]
    assert f"({holiday.reasons[0]})" in found["verdict"] and "(holidays US-NY)" in found["verdict"]


def test_an_instant_on_an_excluded_day_names_the_occurrence_at_t(corpus):
    found = answer(corpus, "excluded_day")
    assert found["cause"] == "excluded", found["verdict"]
    assert "the 2026-06-10 15:00:00 UTC occurrence was skipped by the schedule's exclusions" in found["verdict"]


def test_a_wave_gate_wait_stays_explained_after_the_gate_opened(corpus):
    found = answer(corpus, "wave_ended")
    assert found["cause"] == "waiting_wave_gate", found["verdict"]
    assert "was held at its wave gate at T" in found["verdict"] and "when its wave opened" in found["verdict"]
    assert any(r.startswith("task_instance c_wave_2.tessera_wave_gate") for r in records(found, "airflow"))


def test_after_db_clean_a_pause_it_cannot_see_is_not_denied(corpus):
    found = answer(corpus, "clean_paused")
    assert found["cause"] == "cannot_tell", found["verdict"]
    assert "Cannot tell why" in found["verdict"] and "the records start at" in found["verdict"]
    assert "the DAG is paused now" in found["verdict"]
    assert "was not paused" not in found["verdict"]


def test_after_db_clean_a_drop_is_still_explained_by_the_runs_note(corpus):
    found = answer(corpus, "clean_drop")
    run_id = corpus.facts["drop_buffer"][0]
    assert found["cause"] == "overlap_dropped", found["verdict"]
    (dropped,) = [e for e in found["evidence"] if e["fact"] == "dropped"]
    assert dropped["record"] == f"note of dag_run {run_id!r}"


def test_after_db_clean_a_broken_file_is_read_from_its_import_error(corpus):
    found = answer(corpus, "clean_broken")
    assert found["cause"] == "broken", found["verdict"]
    assert "corpus_broken.py" in found["verdict"]


def test_after_db_clean_a_gone_parse_record_is_not_denied(corpus):
    found = answer(corpus, "clean_removed")
    # no run (or one created late, when the file came back): either way what held it is not known any more
    assert found["cause"] in ("cannot_tell", "late"), found["verdict"]
    assert re.search(r"Cannot tell (why|what held it)[^.]*: the records start at ", found["verdict"]), found["verdict"]
    assert "its file parsed" not in found["verdict"]
