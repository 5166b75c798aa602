"""The cursor examples, fired for real: the digest moves its watermark only past windows it digested cleanly."""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tessera.operators.functions.status import function_status

from ...conftest import EXAMPLES
from ..conftest import fire_record, stored_cursor, task_instance

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
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(str(EXAMPLES / "cursor_digest.py"))
    assert bag.import_errors == {}
    return bag.dags[DIGEST]


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


def test_digest_moves_the_watermark_only_past_cleanly_digested_windows(example, digest_dag):
    from airflow.models.variable import Variable

    # The function's first fire, whatever fired it before (the dry-run test may have): no stored cursor yet.
    Variable.delete(KEY)
    now = datetime.datetime.now(datetime.timezone.utc)
    _insert(
        example,
        (1, example.stamp(now - datetime.timedelta(minutes=2)), "emea", 1.5),
        (2, example.stamp(now - datetime.timedelta(minutes=1)), "apac", 9.0),  # another region
    )
    first = digest_dag.test()
    assert first.state == "success"
    out = _output(first.run_id)
    assert (out["count"], out["total"], out["window"]["since"]) == (1, 1.5, "2026-01-01T00:00:00.000000Z")
    watermark = stored_cursor(KEY)["since"]
    assert watermark == out["window"]["until"]

    later = datetime.datetime.now(datetime.timezone.utc)
    _insert(example, (3, example.stamp(later), "emea", "n/a"), (4, example.stamp(later), "emea", 2.0))
    second = digest_dag.test()
    assert second.state == "failed"  # the malformed row fails the fire
    assert stored_cursor(KEY) == {"since": watermark}
    assert fire_record(DIGEST, second.run_id, "digest")["reason"] == "FunctionError"

    _insert(example, (3, example.stamp(later), "emea", "3.0"))  # the row is fixed
    third = digest_dag.test()
    assert third.state == "success"
    out = _output(third.run_id)
    assert out["window"]["since"] == watermark  # the failed window, digested again
    assert (out["count"], out["total"]) == (2, 5.0)
    assert stored_cursor(KEY)["since"] == out["window"]["until"] > watermark

    status = function_status(DIGEST)
    assert (status.last_outcome, status.consecutive_failures, status.state.reference) == ("Succeeded", 0, KEY)


def test_dry_run_from_the_cli_digests_but_keeps_the_watermark(example, digest_dag):
    from airflow.configuration import conf

    if stored_cursor(KEY) is None:
        assert digest_dag.test().state == "success"
    before = stored_cursor(KEY)
    env = {**os.environ, "AIRFLOW__CORE__FERNET_KEY": conf.get("core", "fernet_key")}
    airflow = Path(sys.executable).parent / "airflow"
    result = subprocess.run(
        [str(airflow), "dags", "test", DIGEST, "-c", json.dumps({"dry_run": True})],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "NOT saved" in result.stdout + result.stderr
    assert stored_cursor(KEY) == before
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        newest = session.scalar(select(DagRun).where(DagRun.dag_id == DIGEST).order_by(DagRun.run_after.desc()))
        run_id = newest.run_id
    assert task_instance(DIGEST, run_id, "digest").state == "success"
    assert fire_record(DIGEST, run_id, "digest")["phase"] == "dry_run"
