"""``tessera plan`` over DAG files: loaded with Airflow's DagBag (the dag policy runs), no deployment needed.

The ``--api`` form is tested against a real API server in ``test_api.py`` and against hostile servers in
``test_cli_hostile_api.py``; a DAG id without a metadata database in ``test_cli_database.py``.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tessera.plugin.cli import EXIT_CONTRADICTION, EXIT_OK, EXIT_USAGE, main
from tessera.timetables.support import PARTITIONS, SCHEDULE_STATE
from tests.compat import needs

SEED = """
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

with DAG(dag_id="cli_seed", schedule=Every("5m", delay="30s", phase=Fixed("2m10s")), start_date=None):
    pass
"""
AMSTERDAM = """
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG("cli_amsterdam", schedule=Every.day(at="07:00", timezone="Europe/Amsterdam"), start_date=None):
    pass
"""
SPREAD = """
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG(dag_id="cli_spread", schedule=Every("1h"), start_date=None):
    pass
"""
INVALID = """
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG(dag_id="cli_invalid", schedule=Every("7m"), start_date=None):
    pass
"""
ORPHAN = """
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

SCHEDULES = ScheduleSet([Schedule("child", after=["renamed_parent"])])
with DAG(dag_id="cli_orphan", start_date=None, **SCHEDULES.dag_kwargs("child")):
    pass
"""
AFTER = "2026-03-02T12:03:00Z"


def _folder(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    return tmp_path


def test_the_seed_example_plan_is_printed(tmp_path, capsys):
    folder = _folder(tmp_path, seed=SEED)
    assert main(["plan", str(folder), "--count", "2", "--after", AFTER]) == EXIT_OK
    out = capsys.readouterr().out
    assert "cli_seed: every 5m · delay 30s · phase 2m10s" in out
    assert "2026-03-02 12:05:00  2026-03-02 12:07:10  2026-03-02 11:59:30 -> 2026-03-02 12:04:30" in out
    assert "2026-03-02 12:10:00  2026-03-02 12:12:10  2026-03-02 12:04:30 -> 2026-03-02 12:09:30" in out


def test_json_output_has_the_api_shape_and_the_local_time(tmp_path, capsys):
    folder = _folder(tmp_path, amsterdam=AMSTERDAM)
    assert main(["plan", str(folder / "amsterdam.py"), "--count", "1", "--after", AFTER, "--json"]) == EXIT_OK
    plan = json.loads(capsys.readouterr().out)
    (dag,) = plan["dags"]
    (run,) = dag["occurrences"]
    assert (dag["dag_id"], dag["timezone"]) == ("cli_amsterdam", "Europe/Amsterdam")
    assert run["occurrence"] == "2026-03-03T06:00:00Z"
    assert run["occurrence_local"] == "2026-03-03T07:00:00+01:00"
    assert plan["contradictions"] == [] and plan["plan_check"] == "ok"


def test_the_phase_is_hashed_from_the_dag_id_because_the_dag_policy_ran(tmp_path, capsys):
    folder = _folder(tmp_path, spread=SPREAD)
    assert main(["plan", str(folder), "--count", "1", "--after", AFTER, "--json"]) == EXIT_OK
    (dag,) = json.loads(capsys.readouterr().out)["dags"]
    assert "phase spread" not in dag["summary"], "an unbound timetable would not know its phase yet"
    assert dag["phase"] != "0s"


def test_a_dag_id_filter_keeps_one_dag(tmp_path, capsys):
    folder = _folder(tmp_path, seed=SEED, amsterdam=AMSTERDAM)
    assert main(["plan", str(folder), "--dag-id", "cli_amsterdam", "--json"]) == EXIT_OK
    assert [d["dag_id"] for d in json.loads(capsys.readouterr().out)["dags"]] == ["cli_amsterdam"]
    assert main(["plan", str(folder), "--dag-id", "no_such_dag"]) == EXIT_USAGE


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param({"invalid": INVALID}, "ERROR invalid_spec: invalid.py: ", id="invalid-spec"),
        pytest.param(
            {"orphan": ORPHAN},
            "ERROR unknown_parent: child: AFTER 'renamed_parent'",
            id="unknown-parent",
            marks=needs(SCHEDULE_STATE),
        ),
    ],
)
def test_contradictions_are_printed_and_fail_the_command(tmp_path, capsys, files, expected):
    folder = _folder(tmp_path, seed=SEED, **files)
    assert main(["plan", str(folder), "--count", "1"]) == EXIT_CONTRADICTION
    out = capsys.readouterr().out
    assert expected in out
    assert "cli_seed:" in out, "the valid DAGs are still planned"


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["plan"], id="neither-path-nor-api"),
        pytest.param(["plan", "dags/", "--api", "http://localhost:8080"], id="both-path-and-api"),
        pytest.param(["plan", "/no/such/folder"], id="missing-path"),
        pytest.param(["plan", ".", "--count", "0"], id="zero-count"),
        pytest.param(["plan", "--api", "http://127.0.0.1:9"], id="unreachable-api"),
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == EXIT_USAGE
    assert capsys.readouterr().err.startswith("tessera plan: ")


PARTITIONED = """
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

with DAG("cli_partitioned", schedule=Every("1h", delay="5m", phase=Fixed("0s"), partitioned=True), start_date=None):
    pass
"""


@needs(PARTITIONS)
def test_a_partitioned_dag_shows_each_runs_partition_key(tmp_path, capsys):
    folder = _folder(tmp_path, partitioned=PARTITIONED)
    assert main(["plan", str(folder), "--count", "2", "--after", AFTER]) == EXIT_OK
    out = capsys.readouterr().out
    assert "2026-03-02 11:55:00 -> 2026-03-02 12:55:00" in out and "key 2026-03-02T12:00:00" in out
    assert main(["plan", str(folder), "--count", "1", "--after", AFTER, "--json"]) == EXIT_OK
    (run,) = json.loads(capsys.readouterr().out)["dags"][0]["occurrences"]
    assert run["partition_key"] == "2026-03-02T12:00:00"


# -- every argument bounded: the REST API's bounds and words, exit 2, never a traceback ---------------

ONE_SECOND = """
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

with DAG("cli_one_second", schedule=Every("1s", phase=Fixed("0s")), start_date=None):
    pass
"""
RANGE = "is outside the supported range 1900-01-01T00:00:00+00:00 <= t < 3000-01-01T00:00:00+00:00"
REFUSED_ARGUMENTS = [
    pytest.param(["--after", "0001-01-01T00:00Z"], f"`--after`: 0001-01-01T00:00:00+00:00 {RANGE}", id="after-year-1"),
    pytest.param(["--after", "9999-12-31T23:59Z"], f"`--after`: 9999-12-31T23:59:00+00:00 {RANGE}", id="after-9999"),
    pytest.param(["--after", "2026-03-02T12:00"], "`--after`: 2026-03-02T12:00:00 has no timezone", id="after-naive"),
    pytest.param(["--after", "soon"], "`--after`: 'soon' is not an ISO 8601 instant", id="after-not-an-instant"),
    pytest.param(["--count", "1000000000"], "`--count`: 1000000000; give 1 to 1000", id="count-a-billion"),
    pytest.param(["--count", "0"], "`--count`: 0; give 1 to 1000", id="count-zero"),
    pytest.param(
        ["--from", "1900-01-01T00:00Z", "--to", "2999-12-31T23:59Z"],
        "more than 1000 runs of 'cli_one_second', the most one preview lists; narrow the range",
        id="preview-1900-to-2999",
    ),
    pytest.param(
        ["--from", "2026-01-01T00:00", "--to", "2026-01-01T00:01Z"],
        "`--from`: 2026-01-01T00:00:00 has no timezone",
        id="from-naive-like-after",
    ),
    pytest.param(
        ["--from", "0001-01-01T00:00Z", "--to", "0001-01-01T01:00Z"],
        f"`--from`: 0001-01-01T00:00:00+00:00 {RANGE}",
        id="from-year-1",
    ),
]


@pytest.mark.parametrize(("argv", "says"), REFUSED_ARGUMENTS)
def test_an_argument_out_of_bounds_is_refused_naming_it(tmp_path, capsys, argv, says):
    path = _folder(tmp_path, one_second=ONE_SECOND) / "one_second.py"
    assert main(["plan", str(path), *argv]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("tessera plan: ") and says in err.splitlines()[-1]
    assert "Traceback" not in err


def test_a_token_a_header_cannot_carry_is_refused_without_showing_it(capsys):
    assert main(["plan", "--api", "http://127.0.0.1:9", "--token", "secret\nInjected: yes"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "`--token`: holds spaces, line breaks or non-ASCII characters" in err and "secret" not in err


NOT_PYTHON = " is not a Python file; give a DAG file (.py or .zip) or a folder of them"
NOT_DAG_FILES = [
    pytest.param("notes.txt", b"hello\n", NOT_PYTHON, id="text-file"),
    pytest.param("blob.bin", bytes(range(256)), NOT_PYTHON, id="binary"),
    pytest.param("no_dag.py", b"x = 1\n", ": no DAG found; a DAG file creates a DAG when it is imported", id="no-dag"),
]


@pytest.mark.parametrize(("name", "content", "says"), NOT_DAG_FILES)
@pytest.mark.parametrize("extra", [[], ["--load"], ["--from", "2026-01-01T00:00Z", "--to", "2026-01-02T00:00Z"]])
def test_a_path_that_is_not_dag_files_is_a_clear_error(tmp_path, capsys, monkeypatch, name, content, says, extra):
    # A path as short as a user's: a long one is shown shortened, and tmp_path's length varies by runner.
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(content)
    assert main(["plan", name, *extra]) == EXIT_USAGE
    assert capsys.readouterr().err.splitlines()[-1] == f"tessera plan: {name!r}{says}"


def test_a_fifo_or_an_empty_folder_is_a_clear_error(tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe.py")  # reading it would block forever
    assert main(["plan", str(tmp_path / "pipe.py")]) == EXIT_USAGE
    assert "is not a regular file or a folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["plan", str(tmp_path / "empty")]) == EXIT_USAGE
    assert "no DAG found" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        pytest.param(b"import tessera_no_such_module\n", "ModuleNotFoundError: No module named", id="import-error"),
        pytest.param(b"\x00\xff\xfe binary", "source code string cannot contain null bytes", id="binary-named-py"),
        pytest.param(b"def broken(:\n", "SyntaxError", id="syntax-error"),
    ],
)
def test_a_dag_file_that_cannot_be_imported_fails_the_command_naming_the_error(tmp_path, capsys, content, says):
    """Imported even though it never mentions airflow or dag: Airflow's safe mode would skip it silently."""
    (tmp_path / "broken.py").write_bytes(content)
    assert main(["plan", str(tmp_path / "broken.py")]) == EXIT_CONTRADICTION
    out = capsys.readouterr().out
    assert "ERROR invalid_spec: broken.py: " in out and says in out


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """``tessera plan … | head -1``: no traceback and no error line once the reader has what it wanted."""
    import subprocess
    import sys

    from tessera.plugin.cli.command import EXIT_READER_GONE

    (tmp_path / "seed.py").write_text(SEED)
    command = [sys.executable, "-m", "tessera.plugin.cli.command", "plan", str(tmp_path), "--count", "1000"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = [process.stdout.readline() for _ in range(20)]  # Airflow may log a line or two to stdout first
    assert any(line.startswith(b"cli_seed: every 5m") for line in lines), lines
    process.stdout.close()  # as `head -1` does, long before the 1,000 runs (more than a pipe holds) are written
    _, errors = process.communicate(timeout=120)
    assert process.returncode == EXIT_READER_GONE, errors.decode()[-2000:]
    assert b"Traceback" not in errors and b"Broken pipe" not in errors and b"BrokenPipe" not in errors, errors


@pytest.mark.parametrize(
    "command", [[], ["plan"], ["why"], ["pause"], ["unpause"]], ids=["tessera", "plan", "why", "pause", "unpause"]
)
def test_the_help_is_plain_text(command, capsys):
    """What a person reads in a terminal: no reStructuredText markup from the docstrings."""
    with pytest.raises(SystemExit) as ended:
        main([*command, "--help"])
    assert ended.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: tessera")
    assert not [mark for mark in ("``", ":mod:", ":class:", ":func:", ".. ") if mark in shown], shown
