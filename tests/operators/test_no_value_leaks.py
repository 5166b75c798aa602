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
from jsonschema import Draft3Validator, Draft4Validator, Draft7Validator, Draft202012Validator, FormatChecker
from jsonschema.validators import validator_for

from tessera.operators.cursor_fire import (
    CursorFire,
    CursorWriteFailed,
    DispatchStartFailed,
    InputInvalid,
    OutputInvalid,
)
from tessera.operators.cursor_store import StoreLocation
from tessera.operators.function_spec import FunctionSpec, schema_violation
from tessera.operators.function_status import function_status

from .conftest import fire_record

SEKRET = "SEKRET"
S = "SEKRET_VALUE"


def violation(schema: Any, document: Any, validator: type | None = None, **options: Any) -> str:
    cls = validator or validator_for(schema)
    problem = schema_violation(cls(schema, **options), document)
    assert problem is not None, "the document was expected to fail"
    return problem


# (schema, hostile document, what the message must say); every draft keyword that can put the
# instance (or one of its keys) into jsonschema's own message is here.
KEYWORDS = [
    pytest.param(
        {"properties": {"since": {"pattern": "^[0-9]+$"}}},
        {"since": S},
        "at $.since: does not match the pattern '^[0-9]+$' (a string of 12 characters)",
        id="pattern",
    ),
    pytest.param({"type": "integer"}, S, "at $: is not of type 'integer' (a string of 12 characters)", id="type"),
    pytest.param(
        {"type": ["integer", "null"]},
        [S],
        "at $: is not of type 'integer', 'null' (an array of 1 item)",
        id="type-list",
    ),
    pytest.param({"enum": ["a", "b"]}, S, "at $: is not one of the allowed values ['a', 'b']", id="enum"),
    pytest.param({"enum": ["x" * 100]}, S, "at $: is not one of the 1 allowed values", id="enum-long"),
    pytest.param({"const": "fixed"}, S, "at $: is not the constant 'fixed'", id="const"),
    pytest.param({"minimum": 10}, -1, "at $: is less than the minimum 10 (an integer)", id="minimum"),
    pytest.param({"maximum": 10}, 11.5, "at $: is greater than the maximum 10 (a number)", id="maximum"),
    pytest.param({"exclusiveMinimum": 10}, 10, "at $: is not greater than the exclusive minimum 10", id="exmin"),
    pytest.param({"exclusiveMaximum": 10}, 10, "at $: is not less than the exclusive maximum 10", id="exmax"),
    pytest.param({"multipleOf": 7}, 10, "at $: is not a multiple of 7", id="multipleOf"),
    pytest.param({"minLength": 20}, S, "at $: is shorter than the minimum length 20 (a string of 12", id="minLength"),
    pytest.param({"maxLength": 2}, S, "at $: is longer than the maximum length 2 (a string of 12", id="maxLength"),
    pytest.param({"minItems": 2}, [S], "at $: has fewer items than the minimum 2 (an array of 1 item)", id="minItems"),
    pytest.param(
        {"maxItems": 1}, [S, S], "at $: has more items than the maximum 1 (an array of 2 items)", id="maxItems"
    ),
    pytest.param({"uniqueItems": True}, [S, S], "at $: has duplicate items", id="uniqueItems"),
    pytest.param({"minProperties": 2}, {S: 1}, "at $: has fewer properties than the minimum 2", id="minProperties"),
    pytest.param({"maxProperties": 0}, {S: 1}, "at $: has more properties than the maximum 0", id="maxProperties"),
    pytest.param({"required": ["cursor"]}, {S: S}, "at $: is missing the required property 'cursor'", id="required"),
    pytest.param(
        {"properties": {"a": {}}, "additionalProperties": False},
        {"a": 1, S: S},
        "at $: has 1 property the schema does not allow (additionalProperties is false)",
        id="additionalProperties-false",
    ),
    pytest.param(
        {"patternProperties": {"^x": {}}, "additionalProperties": False},
        {S: 1, "SEKRET2": 2},
        "at $: has 2 properties the schema does not allow",
        id="additionalProperties-patterns",
    ),
    pytest.param(
        {"additionalProperties": {"type": "integer"}},
        {S: S},
        "at $[*]: is not of type 'integer'",
        id="additionalProperties-schema-key-masked",
    ),
    pytest.param(
        {"patternProperties": {"^S": {"type": "integer"}}},
        {S: S},
        "at $[*]: is not of type 'integer'",
        id="patternProperties-key-masked",
    ),
    pytest.param(
        {"propertyNames": {"maxLength": 3}},
        {S: 1},
        "at $: is longer than the maximum length 3 (a string of 12 characters; a property name)",
        id="propertyNames",
    ),
    pytest.param(
        {"dependentRequired": {"a": ["b"]}},
        {"a": S},
        "at $: has 'a' but not ['b'], which it requires",
        id="dependentRequired",
    ),
    pytest.param(
        {"contains": {"type": "integer"}}, [S], "at $: has no item matching the schema's contains", id="contains"
    ),
    pytest.param(
        {"contains": {"type": "string"}, "minContains": 2},
        [S],
        "at $: has fewer items matching contains than the minimum 2",
        id="minContains",
    ),
    pytest.param(
        {"contains": {"type": "string"}, "maxContains": 1},
        [S, S],
        "at $: has more items matching contains than the maximum 1",
        id="maxContains",
    ),
    pytest.param(
        {"prefixItems": [{}], "items": False}, [1, S], "at $: has more items than the schema allows", id="items-false"
    ),
    pytest.param(
        {"unevaluatedProperties": False},
        {S: S},
        "at $: has properties no subschema evaluates",
        id="unevaluatedProperties",
    ),
    pytest.param(
        {"prefixItems": [{}], "unevaluatedItems": False},
        [1, S],
        "at $: has items no subschema evaluates",
        id="unevaluatedItems",
    ),
    pytest.param(
        {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
        S,
        "at $: matches none of the anyOf alternatives",
        id="anyOf",
    ),
    pytest.param(
        {"oneOf": [{"type": "string"}, {"minLength": 1}]},
        S,
        "at $: matches more than one of the oneOf alternatives",
        id="oneOf-many",
    ),
    pytest.param({"not": {"type": "string"}}, S, "at $: matches the schema under 'not'", id="not"),
    pytest.param(
        {"if": {"type": "string"}, "then": {"maxLength": 1}},
        S,
        "at $: is longer than the maximum length 1",
        id="if-then",
    ),
    # jsonschema drops the path of an error under a `false` subschema; the rule still holds no value.
    pytest.param(
        {"properties": {"cursor": False}},
        {"cursor": S},
        "at $: is not allowed (its schema is false)",
        id="false-schema",
    ),
    pytest.param(
        {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        {"a": S},
        "at $.a: is not of type 'integer'",
        id="ref",
    ),
    pytest.param({"items": {"type": "integer"}}, [1, S], "at $[1]: is not of type 'integer'", id="array-index"),
]


@pytest.mark.parametrize(("schema", "document", "expected"), KEYWORDS)
def test_a_schema_violation_names_the_path_and_rule_never_the_value(schema: Any, document: Any, expected: str) -> None:
    problem = violation(schema, document)
    assert SEKRET not in problem
    assert problem.startswith(expected), problem


LEGACY = [
    pytest.param(
        Draft3Validator,
        {"properties": {"a": {"required": True}}},
        {S: 1},
        "at $.a: is required but missing",
        id="draft3-required",
    ),
    pytest.param(Draft3Validator, {"disallow": "string"}, S, "at $: is of a type the schema disallows", id="disallow"),
    pytest.param(Draft3Validator, {"divisibleBy": 3}, 10, "at $: is not a multiple of 3", id="divisibleBy"),
    pytest.param(
        Draft3Validator, {"dependencies": {"a": "b"}}, {"a": S}, "at $: has 'a' but not ['b']", id="draft3-dependencies"
    ),
    pytest.param(Draft3Validator, {"extends": {"type": "integer"}}, S, "at $: is not of type 'integer'", id="extends"),
    pytest.param(
        Draft4Validator,
        {"minimum": 10, "exclusiveMinimum": True},
        10,
        "at $: is not greater than the exclusive minimum 10",
        id="draft4-exclusiveMinimum",
    ),
    pytest.param(
        Draft4Validator,
        {"maximum": 10, "exclusiveMaximum": True},
        10,
        "at $: is not less than the exclusive maximum 10",
        id="draft4-exclusiveMaximum",
    ),
    pytest.param(
        Draft7Validator,
        {"items": [{}], "additionalItems": False},
        [1, S],
        "at $: has more items than the schema allows",
        id="additionalItems",
    ),
    pytest.param(
        Draft7Validator, {"contains": {"type": "integer"}}, [S], "at $: has no item matching", id="contains-7"
    ),
    pytest.param(
        Draft7Validator,
        {"dependencies": {"a": ["b"]}},
        {"a": S},
        "at $: has 'a' but not ['b'], which it",
        id="dependencies-draft7",
    ),
]


@pytest.mark.parametrize(("cls", "schema", "document", "expected"), LEGACY)
def test_older_drafts_keywords_do_not_leak_either(cls: type, schema: Any, document: Any, expected: str) -> None:
    problem = violation(schema, document, cls)
    assert SEKRET not in problem
    assert problem.startswith(expected), problem


def test_format_and_oneof_none_and_unknown_keywords_fall_back_to_a_safe_sentence() -> None:
    checked = violation({"format": "email"}, S, Draft202012Validator, format_checker=FormatChecker())
    assert checked.startswith("at $: is not a valid 'email'") and SEKRET not in checked
    none = violation({"oneOf": [{"type": "integer"}, {"type": "boolean"}]}, S)
    assert SEKRET not in none and none.startswith("at $:")

    def leaky(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        from jsonschema import ValidationError

        yield ValidationError(f"{instance!r} is rejected by a custom keyword")

    from jsonschema.validators import extend

    custom = extend(Draft202012Validator, {"x-leaky": leaky})
    problem = violation({"x-leaky": True}, S, custom)
    assert problem.startswith("at $: fails the schema's 'x-leaky' rule") and SEKRET not in problem


def test_a_key_the_schema_names_is_shown_and_one_it_does_not_is_masked() -> None:
    schema = {
        "properties": {
            "cursor": {"properties": {"since": {"type": "integer"}}, "additionalProperties": {"type": "integer"}}
        }
    }
    assert violation(schema, {"cursor": {"since": "x"}}).startswith("at $.cursor.since:")
    masked = violation(schema, {"cursor": {"SEKRET key!": "x"}})
    assert masked.startswith("at $.cursor[*]:") and SEKRET not in masked


# -- the fire's bookkeeping -------------------------------------------------------------------


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
from tessera.operators.cursor_function import CursorFunctionOperator
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
