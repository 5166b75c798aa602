"""Values never leave the store: what tessera records says where and which rule, never a cursor's or output's value.

A viewer may read a DAG's status, its fire records (XCom) and its task logs, but
not the Variable that holds the cursor. So every message tessera writes about a
failed fire is built from the schema, the JSON path and sizes; each test plants a
hostile value ("SEKRET...") where a value can go and checks it never comes out.
"""

from __future__ import annotations

import json
import textwrap
import traceback
from typing import Any

import pytest

from tessera.operators.functions.fire import (
    CursorFire,
    CursorWriteFailed,
    DispatchStartFailed,
    InputInvalid,
    OutputInvalid,
)
from tessera.operators.functions.spec import FunctionSpec
from tessera.operators.functions.status import function_status
from tessera.operators.functions.store import StoreLocation

from ..conftest import fire_record

SEKRET = "SEKRET"
S = "SEKRET_VALUE"


# -- the fire's bookkeeping: what the store, the schema checks and the store write say --------------


class MemoryStore:
    """A real, in-process cursor store; ``fail`` makes read or write raise an error quoting a value."""

    def __init__(self, document: str | None = None, *, fail: str = "") -> None:
        self.document = document
        self.fail = fail

    @property
    def location(self) -> StoreLocation:
        return StoreLocation("memory", "test-state")

    def read(self) -> str | None:
        if self.fail == "read":
            raise ValueError(f"cannot read cursor {self.document}")
        return self.document

    def write(self, document: str, *, written_by: str) -> None:
        if self.fail == "write":
            raise PermissionError(f"refusing to store {document}")
        self.document = document


SPEC = FunctionSpec.build(
    input={"region": "emea"},
    input_schema={
        "type": "object",
        "properties": {
            "cursor": {"type": "object", "properties": {"since": {"type": "string", "pattern": "^[0-9]+$"}}}
        },
    },
    output_schema={"type": "object", "required": ["cursor"], "properties": {"count": {"type": "integer"}}},
    cursor_from="/cursor",
    cursor_into="/cursor",
    initial={"since": "0"},
)


def assert_clean(error: BaseException) -> None:
    """Neither the message nor anything chained to it (what a task log prints) holds the value."""
    assert SEKRET not in str(error), str(error)
    assert SEKRET not in "".join(traceback.format_exception(error)), "the traceback quotes the value"


def test_a_hand_edited_cursor_failing_input_schema_is_described_without_its_value() -> None:
    store = MemoryStore(json.dumps({"since": "SEKRET_HAND_EDITED_CURSOR"}))
    with pytest.raises(InputInvalid) as caught:
        CursorFire(SPEC, store).prepare()
    assert str(caught.value) == (
        "input with the stored cursor fails input_schema at $.cursor.since: "
        "does not match the pattern '^[0-9]+$' (a string of 25 characters)"
    )
    assert_clean(caught.value)


@pytest.mark.parametrize(
    ("store", "words"),
    [
        pytest.param(MemoryStore("{SEKRET: 1"), ["not JSON", "10 bytes", "line 1 column 2"], id="not-json"),
        pytest.param(MemoryStore('"SEKRET', fail="read"), ["could not be read", "ValueError"], id="read-raises"),
    ],
)
def test_an_unreadable_store_is_described_by_the_error_type_and_position(store: MemoryStore, words: list[str]) -> None:
    with pytest.raises(DispatchStartFailed) as caught:
        CursorFire(SPEC, store).prepare()
    assert all(word in str(caught.value) for word in words), str(caught.value)
    assert_clean(caught.value)


@pytest.mark.parametrize(
    ("output", "kind", "words"),
    [
        pytest.param({"count": S, "cursor": {}}, OutputInvalid, ["at $.count: is not of type 'integer'"], id="schema"),
        pytest.param({"count": 1, "cursor": {S}}, OutputInvalid, ["not JSON", "set"], id="not-json"),
        pytest.param({"count": 1, "cursor": {"n": float("nan"), "s": S}}, OutputInvalid, ["not JSON"], id="nan"),
    ],
)
def test_an_output_failing_its_checks_is_described_without_its_value(output: Any, kind: type, words: list[str]) -> None:
    with pytest.raises(kind) as caught:
        CursorFire(SPEC, MemoryStore()).conclude(output, save=True, written_by="t")
    assert all(word in str(caught.value) for word in words), str(caught.value)
    assert_clean(caught.value)


def test_a_cursor_the_store_refuses_is_described_by_the_error_type() -> None:
    store = MemoryStore(fail="write")
    with pytest.raises(CursorWriteFailed) as caught:
        CursorFire(SPEC, store).conclude({"count": 1, "cursor": {"since": S}}, save=True, written_by="t")
    assert "PermissionError" in str(caught.value) and "old cursor stays" in str(caught.value)
    assert_clean(caught.value)


# -- real fires: the record, the status, the XComs and the log a viewer can read -------------------

LEAK_DAG = """
from __future__ import annotations

import json
from pathlib import Path

from airflow.sdk import DAG
from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.timetables import Every

HERE = Path(__file__).parent


def call(payload):
    mode = json.loads((HERE / "control.json").read_text()).get("cursor_t_leaks", {{}}).get("mode", "ok")
    if mode == "raise":
        raise ValueError("the function saw " + json.dumps(payload))
    if mode == "bad_output":
        return {{"count": "SEKRET_OUTPUT", "cursor": payload["cursor"]}}
    return {{"count": 1, "cursor": {{"since": str(int(payload["cursor"]["since"]) + 1)}}}}


with DAG(dag_id="cursor_t_leaks", schedule=Every("1h"), start_date=None, catchup=False):
    CursorFunctionOperator(
        task_id="fn",
        function=call,
        input={{"region": "emea"}},
        input_schema={input_schema},
        output_schema={{"type": "object", "properties": {{"count": {{"type": "integer"}}}}}},
        cursor_from="/cursor",
        cursor_into="/cursor",
        initial={{"since": "0"}},
    )
"""


def viewer_visible(dag_id: str, run_id: str) -> str:
    """Everything a viewer reads about a run, as text: every XCom of the run and the function's status."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.scalars(select(XComModel).where(XComModel.dag_id == dag_id, XComModel.run_id == run_id))
        xcoms = {row.key: XComModel.deserialize_value(row) for row in rows}
    return json.dumps({"xcoms": xcoms, "status": function_status(dag_id).to_dict()})


def test_real_fires_never_show_a_hand_edited_cursor_or_a_bad_output(cursor_dags, recorded_stats, capfd, caplog):
    from airflow.models.variable import Variable

    dag_id, key = "cursor_t_leaks", "cursor_t_leaks-state"
    schema = {"type": "object", "properties": {"cursor": {"properties": {"since": {"pattern": "^[0-9]+$"}}}}}
    path = cursor_dags.folder / f"{dag_id}.py"
    path.write_text(textwrap.dedent(LEAK_DAG.format(input_schema=repr(schema))))
    dag = cursor_dags.load(path).dags[dag_id]
    assert cursor_dags.fire(dag).state == "success"

    Variable.set(key, json.dumps({"since": "SEKRET_HAND_EDITED_CURSOR"}))  # an admin's bad hand edit
    ti = cursor_dags.fire(dag)
    assert ti.state == "failed"
    record = fire_record(dag_id, ti.run_id)
    assert (record["reason"], record["message"]) == (
        "InputInvalid",
        "input with the stored cursor fails input_schema at $.cursor.since: "
        "does not match the pattern '^[0-9]+$' (a string of 25 characters)",
    )
    seen = viewer_visible(dag_id, ti.run_id)
    assert "does not match the pattern" in seen and SEKRET not in seen

    Variable.set(key, json.dumps({"since": "7"}))
    cursor_dags.behave(dag_id, mode="bad_output")
    ti = cursor_dags.fire(dag)
    record = fire_record(dag_id, ti.run_id)
    assert (ti.state, record["reason"]) == ("failed", "OutputInvalid")
    assert record["message"].startswith("output fails output_schema at $.count: is not of type 'integer'")
    assert SEKRET not in viewer_visible(dag_id, ti.run_id)
    # What the two fires printed (the task log of dag.test()) holds no value either.
    printed = capfd.readouterr()
    assert "does not match the pattern" in printed.out + printed.err
    assert SEKRET not in printed.out + printed.err

    Variable.set(key, json.dumps({"since": "7", "note": "SEKRET_PASSES_THE_SCHEMA"}))
    cursor_dags.behave(dag_id, mode="raise")  # the function's own exception quotes its input
    ti = cursor_dags.fire(dag)
    record = fire_record(dag_id, ti.run_id)
    assert record["reason"] == "FunctionError"
    assert record["message"].startswith("the function raised ValueError, raised at cursor_t_leaks.py:")
    assert record["message"].endswith("in call; its traceback is in the task log")
    assert SEKRET not in viewer_visible(dag_id, ti.run_id)

    assert SEKRET not in repr(recorded_stats.emitted)
    tessera_lines = [r.getMessage() for r in caplog.records if r.name.startswith("tessera")]
    assert SEKRET not in "\n".join(tessera_lines)
