"""The REST plan and ``tessera plan`` list exactly the runs the scheduler creates.

One DAG file per example: a random tessera timetable (every cadence, delay, window, phase
and catch-up policy of ``tests/timetables/test_public_plan.py``), the DAG's start and end
dates (and sometimes a task starting earlier than the DAG, which moves the scheduler's
earliest bound), its ``catchup`` flag and an instant "now". Three answers must be
identical, run by run (run-after and window):

- the scheduler: the DAG as the dag-processor stores it, read back from the metadata DB,
  its timetable stepped through ``next_dagrun_info_v2`` with the DAG's own time
  restriction, time frozen at "now", from no run, each answer fed back;
- the REST route ``GET /tessera/api/v1/dags/{dag_id}/plan?after=now`` of the app mounted in
  Airflow's API app, over that stored DAG;
- ``tessera plan <file> --json --after now``, which parses the file itself.

Both legs run on the same 100 examples (a stored DAG, a request and a parsed file per example:
storing the DAG is most of an example's cost); hypothesis' statistics show the share of examples
with runs after "now".
"""

from __future__ import annotations

import datetime
import io
import json
import textwrap
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import time_machine
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tessera.plugin.cli import EXIT_OK, main
from tests.timetables.test_public_plan import BASE, scheduler_runs, timetables

from .api.test_api_app import Api, airflow_api, forget_dags

DAY = 24 * 3600
DAG_FILE = '''
"""A generated DAG: {summary}"""
import datetime
import json

from airflow.sdk import DAG, task
from {module} import {cls}

with DAG(
    {dag_id!r},
    schedule={cls}.deserialize(json.loads({spec!r})),
    start_date={start!r},
    end_date={end!r},
    catchup={catchup!r},
):
    @task(start_date={task_start!r})
    def work():
        pass

    work()
'''


@st.composite
def scenarios(draw: Any) -> dict[str, Any]:
    """A timetable, the DAG's dates and catch-up flag, a task's own start date, "now" and a count."""
    timetable = draw(timetables())
    now = BASE + datetime.timedelta(seconds=draw(st.integers(0, 400 * DAY)))
    # Catching up from a start date steps every occurrence since it: 36 h of a 30 s cadence at most.
    start_offset = draw(st.one_of(st.none(), st.integers(-36 * 3600, 10 * DAY)))
    start = None if start_offset is None else now + datetime.timedelta(seconds=start_offset)
    catchup = draw(st.booleans())
    if catchup and start is None:
        start = now - datetime.timedelta(days=1)
    # An end date in one example of three: most examples then have runs after "now" to compare.
    end = None
    if draw(st.integers(0, 2)) == 0:
        end = (start or now) + datetime.timedelta(seconds=draw(st.integers(0, 20 * DAY)))
    task_start = None
    if start is not None and draw(st.booleans()):
        task_start = start - datetime.timedelta(seconds=draw(st.integers(1, 12 * 3600)))
    return {
        "timetable": timetable,
        "now": now,
        "start": start,
        "end": end,
        "catchup": catchup,
        "task_start": task_start,
        "count": draw(st.integers(1, 8)),
    }


def write_dag(folder: Path, dag_id: str, scenario: dict[str, Any]) -> Path:
    timetable = scenario["timetable"]
    path = folder / f"{dag_id}.py"
    source = DAG_FILE.format(
        summary=timetable.summary,
        module=type(timetable).__module__,
        cls=type(timetable).__name__,
        spec=json.dumps(timetable.serialize()),
        dag_id=dag_id,
        start=scenario["start"],
        end=scenario["end"],
        catchup=scenario["catchup"],
        task_start=scenario["task_start"],
    )
    path.write_text(textwrap.dedent(source))
    return path


def store(path: Path, dag_id: str, now: datetime.datetime) -> Any:
    """Parse and store the file as the dag-processor does at ``now``; return the DAG the scheduler reads back.

    The dag-processor stores the DAG's first run on its row when it stores the DAG; a schedule that
    counts from the last run steps from that stored run, so it is stored at the scenario's "now".
    """
    with time_machine.travel(now, tick=False):
        return _store(path, dag_id)


def _store(path: Path, dag_id: str) -> Any:
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session

    from tests.compat.airflow_names import DagBag, sync_bag_to_db

    bag = DagBag(str(path))
    assert not bag.import_errors, bag.import_errors
    sync_bag_to_db(bag, "dags-folder", None)
    with create_session() as session:
        return SerializedDagModel.get_dag(dag_id, session=session)


def scheduler_plan(dag: Any, scenario: dict[str, Any]) -> list[tuple[datetime.datetime, ...]]:
    """What the scheduler creates after "now", from the stored DAG's own time restriction."""
    restriction = dag._time_restriction  # what SerializedDAG.next_dagrun_info passes the timetable
    runs = scheduler_runs(
        dag.timetable,
        start=restriction.earliest,
        end=restriction.latest,
        catchup=restriction.catchup,
        now=scenario["now"],
        wanted=scenario["count"],
    )
    return runs[: scenario["count"]]


def listed(occurrences: list[dict[str, Any]]) -> list[tuple[datetime.datetime, ...]]:
    return [
        tuple(datetime.datetime.fromisoformat(run[key]) for key in ("run_after", "window_start", "window_end"))
        for run in occurrences
    ]


def cli_plan(path: Path, dag_id: str, scenario: dict[str, Any]) -> list[tuple[datetime.datetime, ...]]:
    out = io.StringIO()
    argv = ["plan", str(path), "--dag-id", dag_id, "--json"]
    argv += ["--count", str(scenario["count"]), "--after", scenario["now"].isoformat()]
    with redirect_stdout(out):
        assert main(argv) == EXIT_OK
    (dag,) = json.loads(out.getvalue())["dags"]
    return listed(dag["occurrences"])


def examples(count: int) -> settings:
    return settings(
        max_examples=count,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


@pytest.fixture(scope="module")
def folder(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the DAG files go; the DAG bundles are in the DB, as a dag-processor syncs them once when it starts."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager

    DagBundlesManager().sync_bundles_to_db()
    yield tmp_path_factory.mktemp("plan-agreement")
    # Up to 200 DAGs the later modules on this worker need not read: the fleet-wide calls of
    # test_api_scale.py list every DAG (its page of 1,000 rows and plan of 50,000 runs were cut short by them).
    forget_dags("agree_")


@pytest.fixture(scope="module")
def api(airflow_db: str, folder: Path) -> Iterator[Api]:
    with airflow_api(folder) as api:
        yield api


class Counter:
    value = 0

    @classmethod
    def dag_id(cls) -> str:
        cls.value += 1
        return f"agree_{cls.value}"


# Both legs answer for the same stored DAG of each example: storing it as the dag-processor does is most
# of an example's cost, and the scheduler's answer read back from it is what both are compared with.
@examples(100)
@given(scenario=scenarios())
def test_the_rest_plan_and_tessera_plan_list_exactly_the_runs_the_scheduler_creates(api, folder, scenario):
    dag_id = Counter.dag_id()
    path = write_dag(folder, dag_id, scenario)
    expected = scheduler_plan(store(path, dag_id, scenario["now"]), scenario)
    event("the scheduler creates runs after now" if expected else "the scheduler creates no run after now")
    params = {"after": scenario["now"].isoformat(), "count": scenario["count"]}
    answer = api.call("GET", f"/tessera/api/v1/dags/{dag_id}/plan", user="viewer", params=params)
    assert answer.status_code == 200, answer.text
    assert answer.json()["error"] is None
    assert listed(answer.json()["occurrences"]) == expected, "the REST plan"
    assert cli_plan(path, dag_id, scenario) == expected, "tessera plan"


# The reproduced reports, pinned: Every("1h") from 2030-01-01 00:00 until 05:00.
REPORTED = {
    "timetable": None,
    "now": datetime.datetime(2029, 12, 31, tzinfo=datetime.timezone.utc),
    "start": datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc),
    "end": datetime.datetime(2030, 1, 1, 5, tzinfo=datetime.timezone.utc),
    "catchup": False,
    "task_start": None,
    "count": 10,
}
REPORTED_HOURS = [1, 2, 3, 4, 5, 6]
"""The scheduler's first run is the 01:00 occurrence (its period starts at 00:00) and its last the 06:00 one."""


@pytest.fixture
def reported() -> dict[str, Any]:
    from tessera.timetables import Every, Fixed

    return {**REPORTED, "timetable": Every("1h", phase=Fixed("0s"))}


def test_the_reported_dates_rest(api, folder, reported):
    dag_id = "agree_reported_rest"
    dag = store(write_dag(folder, dag_id, reported), dag_id, reported["now"])
    assert [run[0].hour for run in scheduler_plan(dag, reported)] == REPORTED_HOURS
    params = {"after": reported["now"].isoformat(), "count": 10}
    answer = api.call("GET", f"/tessera/api/v1/dags/{dag_id}/plan", user="viewer", params=params)
    assert [run[0].hour for run in listed(answer.json()["occurrences"])] == REPORTED_HOURS


def test_the_reported_dates_cli(airflow_db, folder, reported):
    dag_id = "agree_reported_cli"
    path = write_dag(folder, dag_id, reported)
    assert [run[0].hour for run in cli_plan(path, dag_id, reported)] == REPORTED_HOURS


def test_a_schedule_from_the_last_run_is_planned_from_the_stored_run_not_from_the_request(api, folder):
    """``Every.day()`` without a start date, stored at 14:23:17 and asked three hours later: the plan
    steps from the run the dag-processor stored (14:23:17 the next days), not from the request's time."""
    from tessera.timetables import Every

    stored_at = datetime.datetime(2026, 3, 10, 14, 23, 17, tzinfo=datetime.timezone.utc)
    scenario = {**REPORTED, "timetable": Every.day(), "now": stored_at, "start": None, "end": None, "count": 2}
    dag_id = "agree_from_last_run"
    store(write_dag(folder, dag_id, scenario), dag_id, stored_at)
    params = {"after": (stored_at + datetime.timedelta(hours=3)).isoformat(), "count": 2}
    answer = api.call("GET", f"/tessera/api/v1/dags/{dag_id}/plan", user="viewer", params=params)
    assert answer.status_code == 200, answer.text
    day = datetime.timedelta(days=1)
    assert [run[0] for run in listed(answer.json()["occurrences"])] == [stored_at + day, stored_at + 2 * day]
