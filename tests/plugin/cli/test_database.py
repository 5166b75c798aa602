"""The commands that read the metadata database: where none is, one line that says what to pass, and no file made.

Run as an operator runs them, the ``tessera`` console script in a fresh process with nothing of the test
session's Airflow settings, but an ``AIRFLOW_HOME`` of its own: empty, or holding an empty SQLite file
(what a ``tessera why`` before this check left behind in ``~/airflow``). Then ``scripts/demo-tessera``,
which points the same commands at a demo's home (here one whose ``airflow.cfg`` names this session's
database), and DAG ids that are not text.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tessera.plugin.cli import EXIT_USAGE, main

from ...conftest import REPO
from ..api.test_api_app import DAG_FILE, store_dags

TESSERA = str(Path(sys.executable).parent / "tessera")
DEMO_TESSERA = str(REPO / "scripts" / "demo-tessera")
DAG_ID = "cli_database_probe"
DATES = ["--from", "2026-01-01T00:00Z", "--to", "2026-01-01T01:00Z"]
COMMANDS = {
    "why": ["why", DAG_ID],
    "plan": ["plan", DAG_ID],
    "backfill-preview": ["plan", DAG_ID, *DATES],
    "pause": ["pause", DAG_ID, "--note", "n"],
    "unpause": ["unpause", DAG_ID],
}
FIX = "set AIRFLOW_HOME (or AIRFLOW__DATABASE__SQL_ALCHEMY_CONN) to your deployment's"
DEMO = "; for `make demo` in the checkout, run scripts/demo-tessera instead"


def _plain_env(**settings: str) -> dict[str, str]:
    """This environment without any Airflow setting of the test session, plus ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "_AIRFLOW"))}
    return {**env, **settings}


def _said(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The command's own lines on stderr (Airflow may log a line of its own while it loads)."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-3000:]
    return [line for line in done.stderr.splitlines() if line.startswith("tessera ")]


def _fix(command: str) -> str:
    if command in ("pause", "unpause"):
        return FIX + DEMO
    return f"pass --api URL --token TOKEN to ask a running deployment, or {FIX}{DEMO}"


@pytest.mark.parametrize("command", COMMANDS)
def test_with_no_database_the_command_says_what_to_pass_and_creates_none(tmp_path, command):
    done = subprocess.run(
        [TESSERA, *COMMANDS[command]],
        env=_plain_env(AIRFLOW_HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == EXIT_USAGE, done.stderr[-3000:]
    verb = COMMANDS[command][0]
    where = f"{tmp_path}/airflow.db (from [database] sql_alchemy_conn; AIRFLOW_HOME is {tmp_path})"
    assert _said(done) == [f"tessera {verb}: no Airflow metadata database at {where}; {_fix(command)}"]
    assert not (tmp_path / "airflow.db").exists()
    assert set(os.listdir(tmp_path)) <= {"logs"}, "Airflow's import makes its logs folder; nothing else is made"


def test_an_empty_database_file_is_named_and_left_empty(tmp_path):
    database = tmp_path / "elsewhere.db"
    database.touch()
    env = _plain_env(AIRFLOW_HOME=str(tmp_path), AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{database}")
    done = subprocess.run([TESSERA, "why", DAG_ID], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == EXIT_USAGE, done.stderr[-3000:]
    (line,) = _said(done)
    assert line.startswith(f"tessera why: the database at {database} (from [database] sql_alchemy_conn; ")
    assert "holds no Airflow tables (run `airflow db migrate` for a new deployment); pass --api URL" in line
    assert database.stat().st_size == 0


# -- scripts/demo-tessera: the same commands against a demo's home ------------------------------


def test_demo_tessera_without_a_demo_says_how_to_start_one(tmp_path):
    env = _plain_env(TESSERA_DEMO_HOME=str(tmp_path / "none"))
    done = subprocess.run([DEMO_TESSERA, "why", DAG_ID], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == f"demo-tessera: no demo in {tmp_path / 'none'} yet; start it once with 'make demo'\n"


@pytest.fixture(scope="module")
def demo_home(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home as ``make demo`` leaves one, its ``airflow.cfg`` naming this session's database with a DAG in it."""
    store_dags(tmp_path_factory.mktemp("tessera-cli-database"), DAG_FILE, (DAG_ID,))
    home = tmp_path_factory.mktemp("demo-home")
    (home / "airflow.cfg").write_text(f"[database]\nsql_alchemy_conn = {airflow_db}\n\n[core]\nload_examples = False\n")
    return home


@pytest.mark.parametrize(
    ("argv", "first_line"),
    [
        pytest.param(["why", DAG_ID, "--at", "2026-01-01T00:00:00Z"], f"{DAG_ID} at 2026-01-01T00:00:00Z", id="why"),
        pytest.param(["plan", DAG_ID, "--count", "1"], f"{DAG_ID}: every 5m · delay 30s · phase 2m10s", id="plan"),
    ],
)
def test_demo_tessera_reads_the_demos_database(demo_home, argv, first_line):
    # The test session's own AIRFLOW__* settings are in this environment: the script must drop them.
    env = {
        **os.environ,
        "TESSERA_DEMO_HOME": str(demo_home),
        "TESSERA_DEMO_VENV": str(Path(sys.executable).parent.parent),
    }
    done = subprocess.run([DEMO_TESSERA, *argv], env=env, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[0].startswith(first_line), done.stdout[:2000]


# -- a DAG id that is not text ---------------------------------------------------------------------

NOT_UTF8 = os.fsdecode(b"caf\xff")  # what Python makes of bytes a shell passes that are not UTF-8
NOT_UTF8_ARGV = [
    pytest.param(["why", NOT_UTF8], "tessera why: `dag_id`", id="why"),
    pytest.param(["why", NOT_UTF8, "--api", "http://127.0.0.1:9"], "tessera why: `dag_id`", id="why-api"),
    pytest.param(["pause", NOT_UTF8], "tessera pause: `dag_id`", id="pause"),
    pytest.param(["unpause", NOT_UTF8], "tessera unpause: `dag_id`", id="unpause"),
    pytest.param(["plan", NOT_UTF8], "tessera plan: `dag_id`", id="plan"),
    pytest.param(["plan", NOT_UTF8, *DATES], "tessera plan: `dag_id`", id="backfill-preview"),
    pytest.param(["plan", NOT_UTF8, *DATES, "--api", "http://127.0.0.1:9"], "tessera plan: `dag_id`", id="preview-api"),
    pytest.param(
        ["plan", "--api", "http://127.0.0.1:9", "--dag-id", NOT_UTF8], "tessera plan: `--dag-id`", id="plan-api"
    ),
]


@pytest.mark.parametrize(("argv", "named"), NOT_UTF8_ARGV)
def test_a_dag_id_that_is_not_utf8_is_refused_naming_the_argument(argv, named, capsys):
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("tessera ")] == [
        f"{named}: 'caf\\udcff' is not UTF-8 text (the shell passed bytes no DAG id holds); give the DAG's id as "
        "Airflow shows it"
    ]


def test_the_console_script_refuses_the_bytes_a_shell_passes(tmp_path):
    """The same through a real ``argv`` of bytes, with no database to reach: the argument is named first."""
    done = subprocess.run(
        [TESSERA.encode(), b"unpause", b"caf\xff"],
        env=_plain_env(AIRFLOW_HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == EXIT_USAGE
    assert _said(done) == [
        "tessera unpause: `dag_id`: 'caf\\udcff' is not UTF-8 text (the shell passed bytes no DAG id holds); give "
        "the DAG's id as Airflow shows it"
    ]
