"""``tessera pause DAG --note`` / ``tessera unpause``: on the SQLite metadata DB, as an operator runs them."""

from __future__ import annotations

import getpass
import json

import pytest

from tessera.plugin.cli import main

from ..api.test_api_app import DAG_FILE, store_dags

DAG_ID = "cli_pause_probe"


@pytest.fixture(scope="module")
def stored(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    store_dags(tmp_path_factory.mktemp("tessera-cli-pause"), DAG_FILE, (DAG_ID,))
    return DAG_ID


def _paused_and_notes() -> tuple[bool, list[str | None]]:
    from airflow.models.dag import DagModel
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        paused = session.scalar(select(DagModel.is_paused).where(DagModel.dag_id == DAG_ID))
        extras = session.scalars(
            select(Log.extra).where(Log.dag_id == DAG_ID, Log.event.like("tessera.dag.%")).order_by(Log.id)
        ).all()
    return bool(paused), [json.loads(extra)["note"] for extra in extras]


def test_pause_with_a_note_then_unpause(stored, capsys):
    assert main(["pause", stored, "--note", "source down, see INC-12"]) == 0
    assert capsys.readouterr().out == f"{stored}: paused by {getpass.getuser()}: source down, see INC-12\n"
    assert _paused_and_notes() == (True, ["source down, see INC-12"])
    assert main(["unpause", stored]) == 0
    assert capsys.readouterr().out == f"{stored}: unpaused by {getpass.getuser()}\n"
    assert _paused_and_notes() == (False, ["source down, see INC-12", None])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["pause", DAG_ID, "--note", "x" * 1025],
            "tessera pause: note: 1025 bytes of UTF-8; a pause note is at most 1024 bytes, so shorten it",
            id="note-too-long",
        ),
        pytest.param(
            ["pause", "no_such_dag"],
            "tessera pause: dag_id: 'no_such_dag' is not a DAG in the metadata database",
            id="unknown-dag",
        ),
    ],
)
def test_refusals_exit_2_with_a_message_and_change_nothing(stored, capsys, argv, message):
    before = _paused_and_notes()
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == message
    assert _paused_and_notes() == before
