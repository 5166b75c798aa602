"""Window-aligned AFTER on the real metadata DB, through Airflow's own run-state and scheduler code paths.

An hourly and a 30-minute parent feed two children: ``t5_aligned`` (``ALIGN WINDOW``) must fire
once per hour window, when both parents have completed the fire ending at that hour, failed or
not; ``t5_fireset`` (today's default) keeps firing on every fire set.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest

from tessera.operators.schedules.identity import asset_uri
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.statement import ScheduleSyntaxError, parse_schedule

from .test_fan_in_db import Deployment

UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 3, 1, 12, tzinfo=UTC)
HALF = datetime.timedelta(minutes=30)

DAGS = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.operators.schedules.statement import parse_schedules

S = ScheduleSet(parse_schedules('''
SCHEDULE t5_hourly INTERVAL_SECONDS 3600;
SCHEDULE t5_half INTERVAL_SECONDS 1800;
SCHEDULE t5_aligned AFTER 't5_hourly', 't5_half' ALIGN WINDOW PARENT_FRESHNESS 1;
SCHEDULE t5_fireset AFTER 't5_hourly', 't5_half';
'''))
for schedule, dag_id in [("t5_hourly", "t5_load_hourly"), ("t5_half", "t5_load_half"),
                         ("t5_aligned", "t5_aligned_step"), ("t5_fireset", "t5_fireset_step")]:
    with DAG(dag_id, start_date=None, **S.dag_kwargs(schedule)) as dag:
        EmptyOperator(task_id="work")
"""


@pytest.fixture(scope="module")
def deployment(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    yield Deployment(tmp_path_factory.mktemp("aligned-dags"), source=DAGS, prefix="t5_")


def test_the_child_fires_once_per_hour_window_both_parents_completed(deployment: Deployment) -> None:
    both = sorted([asset_uri("t5_half"), asset_uri("t5_hourly")])
    deployment.run("t5_load_half", T0 + HALF, state="success")  # 12:00-12:30
    assert deployment.queued("t5_aligned_step") == []
    assert deployment.queued("t5_fireset_step") == [asset_uri("t5_half")]  # the fire-set default is unchanged
    deployment.run("t5_load_half", T0 + 2 * HALF, state="failed")  # 12:30-13:00 fails: completion counts
    assert deployment.queued("t5_aligned_step") == []
    deployment.run("t5_load_hourly", T0 + 2 * HALF, state="success")  # 12:00-13:00: the hour is complete
    assert deployment.queued("t5_aligned_step") == both
    deployment.schedule()
    (first,) = deployment.runs("t5_aligned_step")
    assert first["note"].startswith("Aligned window ending 2026-03-01 13:00:00 UTC: every parent")
    assert "t5_load_half/scheduled__2026-03-01T13:00:00+00:00 (failed)" in first["note"]
    assert "t5_load_hourly/scheduled__2026-03-01T13:00:00+00:00 (success)" in first["note"]

    for child in ("t5_aligned_step", "t5_fireset_step"):  # max_active_runs 1: finish before the next fire
        deployment.finish_unfinished(child)
    # Next hour: the hourly parent finishes first; the 14:00 window waits for the 30-minute one.
    deployment.run("t5_load_half", T0 + 3 * HALF, state="success")
    deployment.run("t5_load_hourly", T0 + 4 * HALF, state="success")
    assert deployment.queued("t5_aligned_step") == []
    deployment.run("t5_load_half", T0 + 4 * HALF, state="success")
    assert deployment.queued("t5_aligned_step") == both
    deployment.schedule()
    runs = deployment.runs("t5_aligned_step")
    assert len(runs) == 2
    assert ("t5_half", "t:2026-03-01T14:00:00.000000Z") in runs[1]["parents"]
    assert ("t5_hourly", "t:2026-03-01T14:00:00.000000Z") in runs[1]["parents"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("SCHEDULE c AFTER 'a' ALIGN WINDOWS;", "ALIGN expects WINDOW", id="misspelt"),
        pytest.param("SCHEDULE c INTERVAL_SECONDS 60 ALIGN WINDOW;", "needs an AFTER driver", id="without-after"),
        pytest.param("SCHEDULE c AFTER 'a' ALIGN WINDOW ALIGN WINDOW;", "repeats", id="twice"),
    ],
)
def test_a_bad_align_clause_is_refused_at_its_position(text: str, message: str) -> None:
    with pytest.raises(ScheduleSyntaxError, match=message):
        parse_schedule(text)


def test_the_statement_and_the_python_form_agree() -> None:
    parsed = parse_schedule("SCHEDULE c AFTER 'a', 'b' ALIGN WINDOW;")
    assert parsed == Schedule("c", after=("a", "b"), align_window=True)
    assert parse_schedule("SCHEDULE c AFTER 'a', 'b';").align_window is False


@pytest.mark.parametrize(
    ("parents", "expected"),
    [
        pytest.param("INTERVAL_SECONDS 3600|INTERVAL_SECONDS 1800", [], id="hour-and-half-hour-meet"),
        pytest.param("CRON '0 * * * *'|CRON '15 * * * *'", ["align_never_meets"], id="cron-never-meets"),
        pytest.param("INTERVAL_SECONDS 60|AFTER 'x'", ["align_never_meets"], id="after-driven-parent"),
    ],
)
def test_the_plan_check_names_an_aligned_schedule_that_never_fires(parents: str, expected: list[str]) -> None:
    from tessera.operators.schedules.schedule_set import ScheduleSet
    from tessera.operators.schedules.statement import parse_schedules

    first, second = parents.split("|")
    text = f"SCHEDULE x INTERVAL_SECONDS 60; SCHEDULE p1 {first}; SCHEDULE p2 {second};"
    text += " SCHEDULE child AFTER 'p1', 'p2' ALIGN WINDOW;"
    report = ScheduleSet(parse_schedules(text)).plan()
    assert [c.kind for c in report.contradictions if c.schedule == "child"] == expected
