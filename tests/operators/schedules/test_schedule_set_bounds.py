"""What a set of declared schedules refuses as a whole: AFTER cycles, files that are not files, huge plans.

A cycle of AFTER schedules never fires and nothing fails to show it, so it is an import
error of the DAG file that loads the set, naming the schedules in the cycle. A schedules
file is read only when it is a regular file within the size cap: ``/dev/zero`` would be
read forever and a FIFO would block the dag-processor's parse.
"""

from __future__ import annotations

import datetime
import os
import textwrap
from pathlib import Path

import pytest

from tessera.operators.schedules.plan_check import MAX_PLAN_COUNT, after_cycles, check_plan
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import MAX_SCHEDULES_FILE_BYTES, ScheduleSet, load_schedules
from tessera.operators.schedules.statement import ScheduleSyntaxError, parse_schedules
from tests.compat.airflow_names import DagBag

NOW = datetime.datetime(2026, 3, 7, 12, 0, tzinfo=datetime.timezone.utc)


def test_a_schedule_set_refuses_an_after_cycle_naming_its_schedules() -> None:
    with pytest.raises(ValueError) as refused:
        ScheduleSet([Schedule("a", after=["b"]), Schedule("b", after=["c"]), Schedule("c", after=["a"])])
    assert str(refused.value) == (
        "after: a -> b -> c -> a is a cycle of AFTER schedules: each waits for the next, so none ever fires; "
        "drive one of them by cron or interval_seconds, or remove one AFTER name"
    )


def test_a_schedules_file_with_a_cycle_is_refused_at_the_after_clause_that_closes_it() -> None:
    with pytest.raises(ScheduleSyntaxError) as refused:
        parse_schedules("SCHEDULE a AFTER b;\nSCHEDULE b\n  AFTER a;\nSCHEDULE c INTERVAL_SECONDS 5;", source="s.sql")
    assert (refused.value.line, refused.value.column) == (1, 12)
    assert str(refused.value).startswith("s.sql: line 1, column 12: after: a -> b -> a is a cycle of AFTER schedules")


def test_a_dag_file_loading_a_cycle_is_an_import_error_naming_the_cycle(tmp_path: Path) -> None:
    (tmp_path / "schedules.sql").write_text("SCHEDULE a AFTER b;\nSCHEDULE b AFTER a;\n")
    (tmp_path / "pipes.py").write_text(
        textwrap.dedent(
            """
            from pathlib import Path
            from airflow.providers.standard.operators.empty import EmptyOperator
            from airflow.sdk import DAG
            from tessera.operators.schedules.schedule_set import load_schedules

            schedules = load_schedules(Path(__file__).parent / "schedules.sql")
            with DAG("pipe_a", start_date=None, **schedules.dag_kwargs("a")):
                EmptyOperator(task_id="w")
            """
        )
    )
    bag = DagBag(str(tmp_path))
    (error,) = bag.import_errors.values()
    assert "line 1, column 12: after: a -> b -> a is a cycle of AFTER schedules" in error.strip().splitlines()[-1]
    assert bag.dags == {}


def test_a_long_after_chain_is_checked_without_recursion() -> None:
    chain = {f"s{i}": Schedule(f"s{i}", after=[f"s{i + 1}"]) for i in range(5000)}
    chain["s5000"] = Schedule("s5000", interval_seconds=60)
    assert after_cycles(chain) == []
    ScheduleSet(chain.values())
    chain["s5000"] = Schedule("s5000", after=["s0"])
    (cycle,) = after_cycles(chain)
    assert (cycle[0], cycle[-2], cycle[-1], len(cycle)) == ("s0", "s5000", "s0", 5002)
    with pytest.raises(ValueError, match=r"^after: s0 -> s1 -> s2 .*\.\.\. is a cycle of AFTER schedules"):
        ScheduleSet(chain.values())
    report = check_plan(chain, now=NOW, count=0)
    assert [c.kind for c in report.contradictions] == ["after_cycle"]


# -- the schedules file --------------------------------------------------------------------------


def test_dev_zero_is_refused_as_not_a_regular_file() -> None:
    with pytest.raises(ValueError) as refused:
        load_schedules("/dev/zero")
    assert str(refused.value) == (
        "path: '/dev/zero' is a character device, not a regular file; load_schedules reads a file of "
        "SCHEDULE statements (at most 1048576 bytes)"
    )


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "schedules.sql"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"is a FIFO \(named pipe\), not a regular file"):
        load_schedules(fifo)


def test_a_directory_and_a_link_to_a_device_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"is a directory, not a regular file"):
        load_schedules(tmp_path)
    link = tmp_path / "link.sql"
    link.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"is a character device, not a regular file"):
        load_schedules(link)


def test_a_file_over_the_size_cap_is_refused_and_one_at_the_cap_is_read(tmp_path: Path) -> None:
    statement = "SCHEDULE a INTERVAL_SECONDS 5;"
    at_cap = tmp_path / "at_cap.sql"
    at_cap.write_text(statement + " " * (MAX_SCHEDULES_FILE_BYTES - len(statement)))
    assert list(load_schedules(at_cap)) == ["a"]
    over = tmp_path / "over.sql"
    over.write_text(statement + " " * (MAX_SCHEDULES_FILE_BYTES - len(statement) + 1))
    with pytest.raises(ValueError) as refused:
        load_schedules(over)
    assert str(refused.value) == (
        f"path: {str(over)!r} is 1048577 bytes; a schedules file is at most 1048576 bytes (1 MiB): "
        "split it into several files"
    )


# -- the plan check ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "count, message",
    [
        pytest.param(10**9, "count: 1000000000; give a whole number from 0 to 1000", id="a-billion"),
        pytest.param(-1, "count: -1; give a whole number from 0 to 1000", id="negative"),
        pytest.param(True, "count: True; give a whole number from 0 to 1000", id="bool"),
        pytest.param(2.5, "count: 2.5; give a whole number from 0 to 1000", id="float"),
    ],
)
def test_the_plan_count_is_bounded(count: object, message: str) -> None:
    schedules = ScheduleSet([Schedule("tick", interval_seconds=1)])
    with pytest.raises((ValueError, TypeError)) as refused:
        schedules.plan(count=count)  # type: ignore[arg-type]
    assert str(refused.value) == message
    with pytest.raises((ValueError, TypeError)):
        check_plan(schedules, count=count)  # type: ignore[arg-type]


def test_the_largest_plan_is_answered() -> None:
    report = ScheduleSet([Schedule("tick", interval_seconds=1)]).plan(count=MAX_PLAN_COUNT)
    assert len(report.schedules[0].next_fires) == MAX_PLAN_COUNT == 1000
