"""The page's light verdicts (late, not ready, failed last) are what the whole status says, for every kind of DAG.

A page that lists only some of the matching DAGs judges every one of them from a light read of the
runs (:func:`~tessera.plugin.scoped_reads.outcomes_and_queued` and
:func:`~tessera.plugin.fleet.status.verdict`), and reads the whole status of the listed rows only;
a page that lists them all reads every whole status at once. Over a mixed fleet in the real
metadata DB (late and on-time DAGs, a newest fire queued, running, failed, failed then a later
manual success, no runs at all, paused DAGs, cursor functions (their own status is their outcome), one
stored version that no longer decodes), at one frozen instant:

* each DAG's verdict equals the one its whole status holds;
* the counts, every filter's rows and the lateness order of the light path are those the whole
  path gives, and each row it lists is the whole path's row, field for field.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import time_machine

from ..api.test_api_app import Api, _seven_minutes, airflow_api, forget_dags, rewrite_serialized, store_dags

FLEET = 24
IDS = tuple(f"vrd_{n:02d}" for n in range(FLEET))
UNDECODABLE = "vrd_22"
FILE = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Cron, Every, Fixed

def count(payload):
    return {{"count": 1, "cursor": {{"n": payload["cursor"]["n"] + 1}}}}

for dag_id in {dag_ids!r}:
    n = int(dag_id[-2:])
    if n % 4 == 1:
        schedule = Cron("0 * * * *")
    elif n % 13 == 12 and dag_id != "UNDECODABLE":
        schedule = Every("5m", phase=Fixed("1m"), dropped="owe")
    else:
        schedule = Every("5m", phase=Fixed("1m"))
    with DAG(dag_id, schedule=schedule, start_date=None):
        if n % 4 == 3:  # a cursor function: its own status says its outcome
            CursorFunctionOperator(
                task_id="work", function=count, cursor_from="/cursor", cursor_into="/cursor", initial={{"n": 0}}
            )
        else:
            EmptyOperator(task_id="work")
""".replace("UNDECODABLE", UNDECODABLE)
FUNCTIONS = {dag_id for dag_id in IDS if int(dag_id[-2:]) % 4 == 3}
LATE = {dag_id for dag_id in IDS if int(dag_id[-2:]) % 5 == 0}
PAUSED = {dag_id for dag_id in IDS if int(dag_id[-2:]) % 7 == 6}
HISTORY = ("queued", "running", "failed", "failed, then a manual success", "none", "success")
"""Each DAG's newest runs, by ``n % 6``."""
PAGE = "/tessera/api/v1/page?search=vrd_"


def _history(dag_id: str) -> str:
    return HISTORY[int(dag_id[-2:]) % len(HISTORY)]


def _plant(now: datetime.datetime) -> None:
    """The runs of each kind of :data:`HISTORY`, late stored next runs, pauses, the cursor functions' tasks."""
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunType
    from sqlalchemy import insert

    minutes = datetime.timedelta(minutes=5)
    older = now.replace(second=0, microsecond=0) - datetime.timedelta(hours=3)
    older -= datetime.timedelta(minutes=older.minute % 5)
    with create_session() as session:
        tasks = []
        for dag_id in IDS:
            n = int(dag_id[-2:])
            model = session.get(DagModel, dag_id)
            model.is_paused = dag_id in PAUSED
            if dag_id in LATE:  # its stored next run ended hours ago: the scheduler has not created it
                end = older - datetime.timedelta(hours=n % 3)
                model.next_dagrun_data_interval_start, model.next_dagrun_data_interval_end = end - minutes, end
                model.next_dagrun, model.next_dagrun_create_after = end - minutes, end + datetime.timedelta(minutes=1)
            kind = _history(dag_id)
            if kind == "none":
                continue
            state = {"queued": DagRunState.QUEUED, "running": DagRunState.RUNNING}.get(kind, DagRunState.SUCCESS)
            if kind.startswith("failed"):
                state = DagRunState.FAILED
            for k in range(2):  # two scheduled runs; the newest is of its kind, the one before succeeded
                start = older + k * minutes
                run = DagRun(dag_id, f"scheduled__{start.isoformat()}", logical_date=start, run_after=start + minutes,
                             run_type=DagRunType.SCHEDULED, state=state if k else DagRunState.SUCCESS,
                             data_interval=(start, start + minutes),
                             start_date=None if k and kind == "queued" else start + minutes)  # fmt: skip
                if run.state in (DagRunState.SUCCESS, DagRunState.FAILED):
                    run.end_date = start + minutes + datetime.timedelta(seconds=30 + k)
                session.add(run)
                if dag_id in FUNCTIONS and run.end_date is not None:
                    tasks.append({"dag_id": dag_id, "task_id": "work", "run_id": run.run_id, "state": str(run.state),
                                  "pool": "default_pool", "try_number": 1, "start_date": run.start_date,
                                  "end_date": run.end_date})  # fmt: skip
            if kind == "failed, then a manual success":
                start = older + 3 * minutes
                run = DagRun(dag_id, "manual__later", run_after=start, run_type=DagRunType.MANUAL,
                             state=DagRunState.SUCCESS, start_date=start)  # fmt: skip
                run.end_date = start + datetime.timedelta(minutes=1)
                session.add(run)
        session.flush()
        if tasks:
            session.execute(insert(TaskInstance), tasks)


@dataclass(frozen=True)
class Frozen:
    api: Api
    now: datetime.datetime
    """The instant both paths are judged at: a minute after the users' tokens were made (valid then)."""


@pytest.fixture(scope="module")
def frozen(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Frozen]:
    folder = tmp_path_factory.mktemp("tessera-verdicts")
    store_dags(folder, FILE, IDS)
    _plant(datetime.datetime.now(datetime.timezone.utc))
    rewrite_serialized(UNDECODABLE, _seven_minutes)
    try:
        with airflow_api(folder) as api:
            yield Frozen(api, datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1))
    finally:
        forget_dags("vrd_")


def _page(frozen: Frozen, query: str = "") -> dict[str, Any]:
    with time_machine.travel(frozen.now, tick=False):
        answer = frozen.api.call("GET", f"{PAGE}&{query}", user="viewer")
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_each_dags_light_verdict_is_the_one_its_whole_status_holds(frozen: Frozen) -> None:
    from airflow.utils.session import create_session

    from tessera.plugin.fleet.runs import run_histories
    from tessera.plugin.fleet.schedules import scheduled_dags
    from tessera.plugin.fleet.status import Verdict, grouped_reads, status_parts, verdict
    from tessera.plugin.scoped_reads import Scope, outcomes_and_queued

    scope, now = Scope.of(IDS), frozen.now
    with create_session() as session, time_machine.travel(now, tick=False):
        items = scheduled_dags(session, readable=None, dag_ids=IDS)
        histories = run_histories(session, scope, IDS)
        reads = grouped_reads(items, session, scope)
        picks = {pick.dag_id: pick for pick in outcomes_and_queued(session, scope, IDS)}
        judged = {}
        for item in items:
            if item.error is not None:
                continue
            pick = picks.get(item.dag_id)
            light = verdict(
                item,
                [],
                reads.cursors,
                last_outcome=None if pick is None else pick.outcome,
                unstarted=pick if pick is not None and pick.run_id is not None else None,
                now=now,
            )
            assert light == Verdict.of(status_parts(item, [], histories[item.dag_id], reads, now=now)), item.dag_id
            judged[item.dag_id] = light
    # The premise: the fleet holds every case the verdict reads.
    assert set(judged) == set(IDS) - {UNDECODABLE}
    assert {d for d, v in judged.items() if v.lateness.late} >= (LATE - PAUSED)
    assert any(v.lateness.reason == "its run is queued but has not started" for v in judged.values())
    outcomes = {judged[d].last_outcome for d in judged if d not in FUNCTIONS}
    assert outcomes == {"success", "failed", None}
    # A cursor function's outcome is its own status's (words no run state has, such as "unknown").
    assert len({judged[d].last_outcome for d in FUNCTIONS if d in judged}) >= 2
    assert any(v.lateness.state == "paused" for v in judged.values())


JUDGED = {
    "late": lambda row: row["lateness"]["late"],
    "not_ready": lambda row: any(c["status"] == "False" for c in row["conditions"]),
    "failed_last": lambda row: row["last_outcome"] == "failed",
    "paused": lambda row: row["is_paused"],
}


def test_the_light_path_lists_and_counts_what_the_whole_path_does(frozen: Frozen) -> None:
    whole = _page(frozen)  # one page holds every matching row: the whole statuses, read at once
    rows = {row["dag_id"]: row for row in whole["dags"]}
    assert set(rows) == set(IDS) and rows[UNDECODABLE]["error"]
    some = _page(frozen, "limit=3")  # the verdicts of all, the whole status of three
    assert some["counts"] == whole["counts"] and some["total"] == whole["total"] == FLEET
    assert some["dags"] == whole["dags"][:3]
    for name, judge in JUDGED.items():
        expected = [row for row in whole["dags"] if judge(row)]
        assert expected, f"the fleet has a DAG that is {name}"
        found = _page(frozen, f"filter={name}")
        assert found["dags"] == expected, name  # each row the whole path's, field for field
        assert found["counts"] == {other: sum(1 for row in expected if j(row)) for other, j in JUDGED.items()}
    by_lateness = _page(frozen, "sort=lateness")
    shorter = _page(frozen, f"sort=lateness&limit={FLEET - 1}")
    assert shorter["dags"] == by_lateness["dags"][: FLEET - 1] and shorter["counts"] == by_lateness["counts"]


def _grouped_passes(frozen: Frozen, query: str) -> tuple[dict[str, Any], int]:
    """The page for ``query`` and how many grouped passes over the runs it made."""
    from airflow.settings import engine
    from sqlalchemy import event

    passes = []

    def count(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        passes.extend(["pass"] * statement.count("GROUP BY dag_run.dag_id"))

    event.listen(engine, "before_cursor_execute", count)
    try:
        page = _page(frozen, query)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return page, len(passes)


def test_a_page_whose_order_reads_no_status_reads_its_rows_runs_with_the_verdicts(frozen: Frozen) -> None:
    """By DAG id or next run without a filter, the rows a page lists are known before the runs are read:
    their picks come with the verdicts' read (one grouped pass over the runs, not two), and each row
    is the whole path's, field for field, the undecodable DAG's error row too."""
    for sort in ("dag_id", "next_run"):
        whole = _page(frozen, f"sort={sort}")
        for offset, limit in ((0, 3), (20, 4), (9, 7)):
            part, passes = _grouped_passes(frozen, f"sort={sort}&offset={offset}&limit={limit}")
            assert part["dags"] == whole["dags"][offset : offset + limit], (sort, offset, limit)
            assert part["counts"] == whole["counts"] and part["total"] == whole["total"] == FLEET
            assert passes == 1, (sort, offset, limit)
        assert UNDECODABLE in {row["dag_id"] for row in whole["dags"][20:24]}
    # An order by a status field lists rows known only once judged: their picks are read apart.
    _, passes = _grouped_passes(frozen, "sort=lateness&limit=3")
    assert passes == 2
