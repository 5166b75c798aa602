"""``tessera migrate`` on real folders: 200 generated DAGs, the project's examples in plain Airflow, bad input.

The acceptance: every "identical" verdict is confirmed by stepping both timetables through the
year with ``next_dagrun_info``, and the patch applied to a copy of the folder (``git apply``)
loads with no import error and yields the runs the report promised.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tessera.plugin.cli import main
from tessera.plugin.migrate import IDENTICAL, MAX_FILES

from .generated import ZONES, write_generated
from .plain_examples import write_plain_examples
from .stepping import UTC, step

START = datetime.datetime(2025, 6, 1, 3, 15, tzinfo=UTC)
SINCE = datetime.datetime(2025, 6, 10, tzinfo=UTC)
UNTIL = SINCE + datetime.timedelta(days=365)
EXAMPLES_RANGE = ("--since", "2026-02-01T00:00Z", "--until", "2026-05-01T00:00Z")
"""Three months holding March's clock changes in Europe and America: the examples' findings, in less time."""


def _migrate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any] | str, str]:
    code = main(["migrate", *argv])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except ValueError:
        return code, out, err


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path]:
    """The 200-DAG folder, its report and its patch (the exact variant, identical DAGs only)."""
    folder = tmp_path_factory.mktemp("generated")
    write_generated(folder)
    patch = folder.parent / "generated.diff"
    # Module-scoped, so no capsys: the console script, as a user runs it, through a pipe.
    command = [
        str(Path(sys.executable).parent / "tessera"),
        "migrate",
        str(folder),
        "--since",
        SINCE.isoformat(),
        "--until",
        UNTIL.isoformat(),
        "--json",
        "--patch",
        str(patch),
    ]
    # As a user runs it: not in Airflow's unit-test mode, whose configuration logs a line to stdout.
    env = {name: value for name, value in os.environ.items() if name != "AIRFLOW__CORE__UNIT_TEST_MODE"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert done.returncode == 1, done.stderr[-3000:]  # some DAGs' runs change: exit 1
    return folder, json.loads(done.stdout), patch


def test_every_kind_and_zone_is_reported_with_a_verdict_or_why_not(generated):
    _, report, _ = generated
    dags = report["dags"]
    assert len(dags) == 200 and not report["problems"]
    kinds = {dag["kind"] for dag in dags}
    assert kinds == {"cron", "crons", "delta", "events", "not_clock"}
    assert {dag["schedule"].split("(")[-1].split(",")[0].rstrip(")") for dag in dags if dag["kind"] == "cron"} >= {
        "CronTriggerTimetable",
        "CronDataIntervalTimetable",
        "CronPartitionTimetable",
    }
    zones = {zone for zone in ZONES if any(f" in {zone} (" in dag["schedule"] for dag in dags)}
    assert len(zones) == 12
    for dag in dags:
        if dag["kind"] in ("cron", "crons", "delta"):
            assert dag["verdict"] in (IDENTICAL, "same runs, different windows", "different runs"), dag
        elif dag["kind"] == "events":
            assert "no tessera schedule keeps these runs" in dag["variants"][0]["note"]
        else:
            assert not dag["variants"], dag
    assert report["before"]["peak"] >= report["after"]["peak"] > 0


def test_the_patch_loads_with_no_import_error_and_every_identical_verdict_steps_the_same(generated, tmp_path):
    from tessera.plugin.migrate.current import core_timetable
    from tests.compat.airflow_names import DagBag

    folder, report, patch = generated
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    subprocess.run(["git", "apply", "-p1", str(patch)], cwd=copy, check=True, capture_output=True)
    before, after = DagBag(str(folder), safe_mode=True), DagBag(str(copy), safe_mode=True)
    assert after.import_errors == {} and len(after.dags) == 200
    patched = {Path(name).stem for name in report["patch"]["files"]}
    identical = [dag for dag in report["dags"] if dag["verdict"] == IDENTICAL]
    assert patched == {dag["dag_id"] for dag in identical if "computed" not in _why_not(report, dag["dag_id"])}
    assert len(patched) >= 80
    for dag in identical:
        old = core_timetable(before.dags[dag["dag_id"]].timetable)
        new = after.dags[dag["dag_id"]].timetable
        if dag["dag_id"] not in patched:
            continue
        assert type(new).__module__.startswith("tessera."), dag
        # The whole year run by run, whatever the report stepped or counted (the scheduler's question).
        theirs = step(old, start_date=START, since=SINCE, until=UNTIL)
        mine = step(new, start_date=START, since=SINCE, until=UNTIL)
        assert [r[0] for r in theirs] == [r[0] for r in mine], dag["dag_id"]
        if dag["reads_windows"]:
            assert theirs == mine, dag["dag_id"]


def test_every_dag_compared_accounts_for_the_whole_year_stepped_or_counted(generated):
    """The spans stepped and the stretches counted as copies of a period tile the range: no run goes unseen."""
    _, report, _ = generated
    compared = [dag for dag in report["dags"] if dag["variants"] and dag["kind"] != "events"]
    assert compared and all(not dag["truncated"] for dag in compared)
    for dag in compared:
        pieces = sorted(
            (datetime.datetime.fromisoformat(low), datetime.datetime.fromisoformat(high))
            for low, high in dag["ranges"] + dag["repeated"]
        )
        assert pieces[0][0] == SINCE and pieces[-1][1] == UNTIL, dag["dag_id"]
        assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:])), dag["dag_id"]
    # The schedules that repeat are counted (most of their year), the others stepped whole.
    assert sum(bool(dag["repeated"]) for dag in compared) >= 100


def _why_not(report: dict[str, Any], dag_id: str) -> str:
    return " ".join(p["problem"] for p in report["patch"]["not_rewritten"] if f"({dag_id})" in p["file"])


def test_the_projects_examples_in_plain_airflow(tmp_path, capsys):
    """What the report says about dags_examples/ written with Airflow's own schedules (the issue's worked example)."""
    ids = write_plain_examples(tmp_path / "plain")
    diff = str(tmp_path / "p.diff")
    code, report, _ = _migrate(capsys, str(tmp_path / "plain"), *EXAMPLES_RANGE, "--json", "--patch", diff)
    assert code == 1 and sorted(d["dag_id"] for d in report["dags"]) == ids
    by_id = {d["dag_id"]: d for d in report["dags"]}
    # A cron with data intervals (Airflow 2's reading) is exactly tessera's Cron.
    assert by_id["tessera_refresh_dashboard"]["verdict"] == IDENTICAL
    # A trigger cron whose task reads its window: the runs are kept, the windows are not, and the report says why.
    london = by_id["tessera_cron_daily_london"]
    assert london["verdict"] == "same runs, different windows"
    assert any("create_cron_data_intervals" in note for note in london["notes"])
    assert "'L' is not a number" in by_id["tessera_calendar_month_end"]["variants"][0]["note"]
    left = {p["file"]: p["problem"] for p in report["patch"]["not_rewritten"]}
    assert left["cursor_digest.py (tessera_cursor_digest)"].startswith("schedule computed at parse time")
    assert left["load_herd.py (tessera_herd_cron_0)"].startswith("dynamic DAG")


@pytest.mark.parametrize("variant", ["spread", "wall-clock", "cronjob"])
def test_a_variant_patch_with_include_changed_rewrites_the_changed_dags_too(tmp_path, capsys, variant):
    write_plain_examples(tmp_path / "plain")
    diff = tmp_path / "v.diff"
    argv = [str(tmp_path / "plain"), *EXAMPLES_RANGE, "--json", "--patch", str(diff)]
    _, report, _ = _migrate(capsys, *argv, "--variant", variant, "--include-changed")
    assert report["variant"] == variant == report["patch"]["variant"]
    text = diff.read_text()
    if variant == "spread":
        assert "phase=Spread(max=" in text and report["after"]["peak"] < report["before"]["peak"]
    assert "tessera_cron_daily_london" in str(report["patch"]["files"]) or "cron_daily_london.py" in text


# -- bad input: one clear line each, bounded ----------------------------------------------------------


def test_files_that_do_not_import_are_a_line_each_and_the_rest_is_reported(tmp_path, capsys):
    (tmp_path / "ok.py").write_text(
        "import datetime\nfrom airflow.sdk import DAG\n"
        "dag = DAG('ok', schedule='0 6 * * *', start_date=datetime.datetime(2026, 1, 1))\n"
    )
    (tmp_path / "syntax.py").write_text("from airflow.sdk import DAG  # a dag\ndef broken(:\n")
    (tmp_path / "missing.py").write_text("import tessera_no_such_module  # airflow dag\n")
    (tmp_path / "binary.py").write_bytes(b"\x00\xff airflow dag")
    (tmp_path / "raises.py").write_text("from airflow.sdk import DAG  # a dag\nraise SystemExit(3)\n")
    code, out, _ = _migrate(capsys, str(tmp_path), "--since", "2026-01-01T00:00Z")
    assert code == 1
    assert "NOT READ syntax.py: SyntaxError" in out or "NOT READ syntax.py:" in out
    assert "NOT READ missing.py: ModuleNotFoundError: No module named 'tessera_no_such_module'" in out
    assert "NOT READ binary.py:" in out
    assert "\nok (ok.py): cron '0 6 * * *' in UTC" in out


def test_a_symlink_loop_is_one_line(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "back").symlink_to(tmp_path)
    (tmp_path / "a.py").write_text("# airflow dag\n")
    code, _, err = _migrate(capsys, str(tmp_path))
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith("tessera migrate: ") and "a symbolic link leads back into the folder" in line, err


def test_a_folder_of_more_than_10000_files_is_refused_before_any_import(tmp_path, capsys):
    for i in range(MAX_FILES + 1):
        (tmp_path / f"f{i}.py").touch()
    code, _, err = _migrate(capsys, str(tmp_path))
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"tessera migrate: {str(tmp_path)!r}: holds more than 10,000 DAG files (.py, .zip); give a folder of at "
        "most 10,000, e.g. one of its sub-folders"
    )


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--since", "yesterday"], "`--since`: 'yesterday' is not an ISO 8601 instant"),
        (["--since", "2026-01-01T00:00Z", "--until", "2028-01-01T00:00Z"], "by at most 400 days"),
        (["--since", "2026-01-01T00:00Z", "--until", "2025-01-01T00:00Z"], "is not after `since`"),
    ],
)
def test_a_range_it_will_not_compare_is_one_line(tmp_path, capsys, argv, says):
    write_plain_examples(tmp_path)
    code, _, err = _migrate(capsys, str(tmp_path), *argv)
    assert code == 2 and says in err.strip().splitlines()[-1], err
