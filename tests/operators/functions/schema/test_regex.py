"""Regular expressions in a cursor function's schemas run on RE2, so no pattern can hold a worker or a parse.

``"^(a+)+$"`` against 35 ``a`` and a ``!`` takes Python's backtracking ``re`` about 2**35
steps (an hour and more); RE2 matches in time linear in the text. Each catastrophic case
below runs under an alarm: a regression fails the test naming the backtracking instead of
hanging the suite. The bound is a hang guard, not a speed assertion (the
measured times are milliseconds).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import pytest

from tessera.operators.functions.fire import CursorFire, InputInvalid, OutputInvalid
from tessera.operators.functions.spec import FunctionSpec
from tessera.operators.functions.store import StoreLocation

CATASTROPHIC = "^(a+)+$"
EVIL = "a" * 35 + "!"
"""Python's re backtracks through every way of splitting the a's before giving up at the '!'."""
GOOD = "a" * 35
HANG_GUARD_SECONDS = 60
FIRE_GUARD_SECONDS = 600
"""A whole fire in its own process (imports, DAG parse, the run) on a busy CI machine: generous, never a timing."""


def finishes(call: Callable[[], Any]) -> Any:
    """``call()``'s result, or its exception; the test fails if it has not returned after the hang guard.

    SIGALRM, not a thread: a backtracking match holds the GIL, but Python's ``re`` polls for
    signals while it matches, so the alarm's handler interrupts it.
    """

    def hung(signum: int, frame: Any) -> None:
        raise AssertionError(f"still matching after {HANG_GUARD_SECONDS} s: the pattern backtracks")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_GUARD_SECONDS)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class OneCursor:
    """A store holding one cursor document, as a hand edit in the UI could leave it."""

    def __init__(self, document: str) -> None:
        self.document = document

    @property
    def location(self) -> StoreLocation:
        return StoreLocation("memory", "test")

    def read(self) -> str | None:
        return self.document

    def write(self, document: str, *, written_by: str) -> None:
        self.document = document


def test_a_catastrophic_output_pattern_refuses_the_output_and_accepts_a_match() -> None:
    spec = FunctionSpec.build(output_schema={"type": "object", "properties": {"s": {"pattern": CATASTROPHIC}}})
    fire = CursorFire(spec, None)
    with pytest.raises(OutputInvalid) as refused:
        finishes(lambda: fire.conclude({"s": EVIL}, save=False, written_by="test"))
    assert str(refused.value) == (
        "output fails output_schema at $.s: does not match the pattern '^(a+)+$' (a string of 36 characters)"
    )
    assert finishes(lambda: fire.conclude({"s": GOOD}, save=False, written_by="test")).output == {"s": GOOD}


def test_a_catastrophic_input_pattern_is_checked_at_parse_time_without_hanging_the_dag_processor() -> None:
    schema = {"properties": {"region": {"type": "string", "pattern": CATASTROPHIC}}}
    with pytest.raises(ValueError) as refused:
        finishes(lambda: FunctionSpec.build(input={"region": EVIL}, input_schema=schema))
    assert str(refused.value).startswith("input: {'region': 'aaaa")
    assert "fails input_schema at $.region: does not match the pattern '^(a+)+$'" in str(refused.value)
    assert finishes(lambda: FunctionSpec.build(input={"region": GOOD}, input_schema=schema)).input == {"region": GOOD}


def test_catastrophic_pattern_properties_and_the_additional_properties_behind_them_finish() -> None:
    schema = {"type": "object", "patternProperties": {CATASTROPHIC: {"type": "integer"}}, "additionalProperties": False}
    spec = FunctionSpec.build(output_schema=schema)
    fire = CursorFire(spec, None)
    with pytest.raises(OutputInvalid) as refused:
        finishes(lambda: fire.conclude({EVIL: 1}, save=False, written_by="test"))
    assert "has 1 property the schema does not allow (additionalProperties is false)" in str(refused.value)
    with pytest.raises(OutputInvalid, match=r"at \$\[\*\]: is not of type 'integer'"):
        finishes(lambda: fire.conclude({GOOD: "one"}, save=False, written_by="test"))
    assert finishes(lambda: fire.conclude({GOOD: 1}, save=False, written_by="test")).output == {GOOD: 1}


def test_a_catastrophic_property_name_pattern_finishes() -> None:
    spec = FunctionSpec.build(output_schema={"propertyNames": {"pattern": CATASTROPHIC}})
    with pytest.raises(OutputInvalid, match="does not match the pattern"):
        finishes(lambda: CursorFire(spec, None).conclude({EVIL: 1}, save=False, written_by="test"))


@pytest.mark.parametrize(
    "schema, where, reason",
    [
        pytest.param({"pattern": "^(?=a)"}, "at $.pattern", "invalid perl operator: (?=", id="lookahead"),
        pytest.param({"pattern": "(?<!a)b"}, "at $.pattern", "invalid perl operator: (?<!", id="lookbehind"),
        pytest.param({"pattern": "(a)\\1"}, "at $.pattern", "invalid escape sequence: \\1", id="backreference"),
        pytest.param({"pattern": "a{1001}"}, "at $.pattern", "invalid repetition size: {1001}", id="repeat-1001"),
        pytest.param(
            {"properties": {"x": {"patternProperties": {"(?=k)": {}}}}},
            "at $.properties.x.patternProperties",
            "invalid perl operator: (?=",
            id="pattern-property-2020-12",
        ),
        pytest.param(
            {"$schema": "http://json-schema.org/draft-04/schema#", "patternProperties": {"(a)\\1": {}}},
            "in patternProperties",
            "invalid escape sequence: \\1",
            id="pattern-property-draft-4",
        ),
        pytest.param({"pattern": "["}, "at $.pattern", "missing ]: [", id="not-a-regex"),
    ],
)
def test_a_pattern_re2_cannot_run_is_refused_at_parse_time_naming_the_field(
    schema: dict[str, Any], where: str, reason: str
) -> None:
    with pytest.raises(ValueError) as refused:
        FunctionSpec.build(output_schema=schema)
    message = str(refused.value)
    assert message.startswith(f"output_schema: {where}: "), message
    assert f"is not a regular expression RE2 can run ({reason})" in message, message
    assert "without lookaround" in message, message


def test_unevaluated_properties_beside_pattern_properties_is_refused_naming_the_field() -> None:
    # jsonschema decides which properties were evaluated with Python's re, outside any keyword we replace.
    schema = {"patternProperties": {CATASTROPHIC: {}}, "unevaluatedProperties": False}
    with pytest.raises(ValueError) as refused:
        FunctionSpec.build(input_schema=schema)
    assert str(refused.value).startswith(
        "input_schema: unevaluatedProperties together with patternProperties cannot be checked in linear time"
    )
    FunctionSpec.build(input_schema={"properties": {"a": {}}, "unevaluatedProperties": False})


@pytest.mark.parametrize(
    "pattern, text, matches",
    [
        pytest.param("^[0-9]+$", "123", True, id="digits"),
        pytest.param("\\d", "\u0663", False, id="d-is-ascii-as-in-ecma-262"),
        pytest.param("^a$", "a\n", False, id="dollar-is-the-end-of-text"),
        pytest.param("\\p{Greek}", "\u03b1", True, id="unicode-classes"),
        pytest.param("b", "abc", True, id="search-not-fullmatch"),
        pytest.param("^\u00e9+$", "\u00e9\u00e9", True, id="non-ascii-literal"),
    ],
)
def test_patterns_read_as_json_schema_specifies(pattern: str, text: str, matches: bool) -> None:
    spec = FunctionSpec.build(output_schema={"pattern": pattern})
    fire = CursorFire(spec, None)
    if matches:
        assert fire.conclude(text, save=False, written_by="test").output == text
    else:
        with pytest.raises(OutputInvalid, match="does not match the pattern"):
            fire.conclude(text, save=False, written_by="test")


def test_a_stored_cursor_with_a_lone_surrogate_is_matched_not_crashed_on() -> None:
    # "\ud800" is valid JSON text that decodes to a string UTF-8 cannot encode.
    spec = FunctionSpec.build(
        input_schema={"properties": {"c": {"pattern": "^[a-z]+$"}}}, cursor_from="/c", cursor_into="/c", initial="a"
    )
    with pytest.raises(InputInvalid, match=r"at \$\.c: does not match the pattern"):
        CursorFire(spec, OneCursor('"\\ud800"')).prepare()


REAL_FIRE = """
from airflow.sdk import DAG
from tessera.operators.functions.operator import CursorFunctionOperator

with DAG(dag_id="cursor_t_redos", schedule=None, start_date=None):
    CursorFunctionOperator(
        task_id="fn",
        function=lambda payload: {"s": "a" * 35 + "!", "cursor": 1},
        output_schema={"properties": {"s": {"pattern": "^(a+)+$"}}},
        cursor_from="/cursor",
        cursor_into="/cursor",
        initial=0,
    )
"""


def test_a_real_fire_whose_output_meets_a_catastrophic_pattern_fails_at_once(cursor_dags) -> None:
    # In its own process, as a worker runs it: a task runner handles SIGALRM and SIGTERM itself, so a
    # backtracking match there can only be stopped from outside (it held a worker until execution_timeout).
    import subprocess

    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tests.operators.conftest import fire_record, stored_cursor

    path = cursor_dags.folder / "cursor_t_redos.py"
    path.write_text(REAL_FIRE)
    cursor_dags.load(path)
    process = cursor_dags.start_fire("cursor_t_redos")
    try:
        process.wait(timeout=FIRE_GUARD_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"the fire still ran after {FIRE_GUARD_SECONDS} s: the pattern backtracks") from None
    with create_session() as session:
        run_id = session.scalar(select(DagRun.run_id).where(DagRun.dag_id == "cursor_t_redos"))
    record = fire_record("cursor_t_redos", run_id)
    assert (record["reason"], record["message"]) == (
        "OutputInvalid",
        "output fails output_schema at $.s: does not match the pattern '^(a+)+$' (a string of 36 characters)",
    )
    assert stored_cursor("cursor_t_redos-state") is None
