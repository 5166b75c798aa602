"""The cursor examples, fired for real: the digest moves its watermark only past windows it digested cleanly."""

from __future__ import annotations

import datetime
import importlib.util
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tessera.operators.functions.status import function_status

from ...conftest import EXAMPLES
from ..conftest import BUNDLE_CONFIG, dags_folder_bundle, fire_record, stored_cursor, task_instance

DIGEST = "tessera_cursor_digest"
KEY = f"{DIGEST}-state"


@pytest.fixture(scope="module")
def example() -> Any:
    """The example module itself (for its table schema and timestamp format)."""
    spec = importlib.util.spec_from_file_location("cursor_digest_example", EXAMPLES / "cursor_digest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def digest_dag(airflow_db: str) -> Any:
    """The example DAG, parsed and stored under the dags-folder bundle, as the dag-processor would."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager

    from tests.compat.airflow_names import DagBag, sync_bag_to_db

    DagBundlesManager().sync_bundles_to_db()
    bag = DagBag(str(EXAMPLES / "cursor_digest.py"))
    assert bag.import_errors == {}
    sync_bag_to_db(bag, "dags-folder", None)
    return bag.dags[DIGEST]


def _fire(dag: Any, tmp_path: Path) -> Any:
    """``dag.test()`` without re-syncing the other examples first (``dags_folder_bundle``): on every fire it
    re-parsed and stored them all, though none takes part; the DAG fired is the version ``digest_dag`` stored."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(BUNDLE_CONFIG, dags_folder_bundle(tmp_path / "no-siblings"))
        return dag.test()


def _insert(example: Any, *rows: tuple[int, str, str, Any]) -> None:
    with sqlite3.connect(example.events_db()) as db:
        db.execute(example.SCHEMA)
        db.executemany("INSERT OR REPLACE INTO events (id, at, region, amount) VALUES (?, ?, ?, ?)", rows)


def _output(run_id: str) -> Any:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        row = session.scalar(
            select(XComModel).where(
                XComModel.dag_id == DIGEST, XComModel.run_id == run_id, XComModel.key == "return_value"
            )
        )
        return XComModel.deserialize_value(row)


def test_digest_moves_the_watermark_only_past_cleanly_digested_windows(example, digest_dag, tmp_path):
    from airflow.models.variable import Variable

    # The function's first fire, whatever fired it before (the dry-run test may have): no stored cursor yet.
    Variable.delete(KEY)
    now = datetime.datetime.now(datetime.timezone.utc)
    _insert(
        example,
        (1, example.stamp(now - datetime.timedelta(minutes=2)), "emea", 1.5),
        (2, example.stamp(now - datetime.timedelta(minutes=1)), "apac", 9.0),  # another region
    )
    first = _fire(digest_dag, tmp_path)
    assert first.state == "success"
    out = _output(first.run_id)
    assert (out["count"], out["total"], out["window"]["since"]) == (1, 1.5, "2026-01-01T00:00:00.000000Z")
    watermark = stored_cursor(KEY)["since"]
    assert watermark == out["window"]["until"]

    later = datetime.datetime.now(datetime.timezone.utc)
    _insert(example, (3, example.stamp(later), "emea", "n/a"), (4, example.stamp(later), "emea", 2.0))
    second = _fire(digest_dag, tmp_path)
    assert second.state == "failed"  # the malformed row fails the fire
    assert stored_cursor(KEY) == {"since": watermark}
    assert fire_record(DIGEST, second.run_id, "digest")["reason"] == "FunctionError"

    _insert(example, (3, example.stamp(later), "emea", "3.0"))  # the row is fixed
    third = _fire(digest_dag, tmp_path)
    assert third.state == "success"
    out = _output(third.run_id)
    assert out["window"]["since"] == watermark  # the failed window, digested again
    assert (out["count"], out["total"]) == (2, 5.0)
    assert stored_cursor(KEY)["since"] == out["window"]["until"] > watermark

    status = function_status(DIGEST)
    assert (status.last_outcome, status.consecutive_failures, status.state.reference) == ("Succeeded", 0, KEY)


def test_dry_run_from_the_cli_digests_but_keeps_the_watermark(example, digest_dag, tmp_path, caplog):
    from airflow.cli import cli_parser

    if stored_cursor(KEY) is None:
        assert _fire(digest_dag, tmp_path).state == "success"
    before = stored_cursor(KEY)
    # `airflow dags test` as its entry point runs it (parse the arguments, call the command), in this
    # process: a new one spent most of the test's CPU importing Airflow and building the Execution API
    # again. It finds the DAG in the real dags-folder bundle, the examples, as from a shell. Its task log
    # is then this process's logging: the INFO records of the operator's logger, kept by caplog.
    caplog.set_level(logging.INFO, logger="tessera")
    args = cli_parser.get_parser().parse_args(["dags", "test", DIGEST, "-c", json.dumps({"dry_run": True})])
    args.func(args)  # a failed run raises SystemExit("DagRun failed"), as the command's exit status
    assert "NOT saved" in caplog.text
    assert stored_cursor(KEY) == before
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        newest = session.scalar(select(DagRun).where(DagRun.dag_id == DIGEST).order_by(DagRun.run_after.desc()))
        run_id = newest.run_id
    assert task_instance(DIGEST, run_id, "digest").state == "success"
    assert fire_record(DIGEST, run_id, "digest")["phase"] == "dry_run"
