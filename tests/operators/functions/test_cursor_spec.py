"""Pure tests of the cursor contract: JSON Pointers, the parse-time spec, advancing only on a clean fire."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.operators.functions.fire import (
    CursorFire,
    CursorTooLarge,
    CursorWriteFailed,
    DispatchStartFailed,
    InputInvalid,
    OutputInvalid,
)
from tessera.operators.functions.json_pointer import JsonPointer
from tessera.operators.functions.spec import MAX_CURSOR_BYTES, FunctionSpec
from tessera.operators.functions.store import StoreLocation


class MemoryStore:
    """A complete CursorStore in memory; ``broken`` makes reads or writes raise like an unreachable store."""

    def __init__(self, document: str | None = None, broken: str = "") -> None:
        self.document = document
        self.broken = broken
        self.writes = 0

    @property
    def location(self) -> StoreLocation:
        return StoreLocation("memory", "test")

    def read(self) -> str | None:
        if self.broken == "read":
            raise ConnectionError("store unreachable")
        return self.document

    def write(self, document: str, *, written_by: str) -> None:
        if self.broken == "write":
            raise ConnectionError("store unreachable")
        self.document = document
        self.writes += 1


@pytest.mark.parametrize(
    "pointer, document, expected",
    [
        pytest.param("", {"a": 1}, {"a": 1}, id="whole-document"),
        pytest.param("/cursor", {"cursor": {"since": "x"}}, {"since": "x"}, id="member"),
        pytest.param("/a/b/0", {"a": {"b": [7, 8]}}, 7, id="array-index"),
        pytest.param("/a~1b", {"a/b": 1}, 1, id="escaped-slash"),
        pytest.param("/m~0n", {"m~n": 2}, 2, id="escaped-tilde"),
        pytest.param("/", {"": 3}, 3, id="empty-name"),
    ],
)
def test_pointer_resolves_rfc6901_examples(pointer: str, document: Any, expected: Any) -> None:
    assert JsonPointer.parse("p", pointer).resolve(document) == expected


@pytest.mark.parametrize(
    "text, fragment",
    [
        pytest.param("cursor", "start with '/'", id="no-leading-slash"),
        pytest.param("/a~2", "'~0'", id="bad-escape"),
        pytest.param("/a~", "'~0'", id="dangling-tilde"),
        pytest.param(7, "give a string", id="not-a-string"),
    ],
)
def test_malformed_pointer_is_refused_naming_the_field(text: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match="cursor_from") as error:
        JsonPointer.parse("cursor_from", text)
    assert fragment in str(error.value)


@pytest.mark.parametrize(
    "pointer, document",
    [
        pytest.param("/missing", {"a": 1}, id="missing-member"),
        pytest.param("/a/3", {"a": [1]}, id="index-out-of-range"),
        pytest.param("/a/01", {"a": [1, 2]}, id="leading-zero-index"),
        pytest.param("/a/b", {"a": 5}, id="through-a-scalar"),
    ],
)
def test_pointer_to_nothing_raises_lookup_error(pointer: str, document: Any) -> None:
    with pytest.raises(LookupError):
        JsonPointer.parse("p", pointer).resolve(document)


names = st.text(alphabet="ab~/", min_size=0, max_size=4)


@settings(max_examples=250, deadline=None)
@given(path=st.lists(names, min_size=1, max_size=4), value=st.integers())
def test_splice_then_resolve_round_trips_and_never_mutates_the_input(path: list[str], value: int) -> None:
    text = "".join("/" + name.replace("~", "~0").replace("/", "~1") for name in path)
    pointer = JsonPointer.parse("p", text)
    original = {"keep": [1, 2]}
    spliced = pointer.splice(original, value)
    assert original == {"keep": [1, 2]}
    assert pointer.resolve(spliced) == value
    assert pointer.tokens == tuple(path)


def _nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth - (1 if isinstance(leaf, dict | list) else 0)):
        value = {"not": value} if isinstance(leaf, dict) else [value]
    return value


@pytest.mark.parametrize(
    "kwargs, field",
    [
        pytest.param(
            {"input": {"region": 7}, "input_schema": {"properties": {"region": {"type": "string"}}}},
            "input",
            id="input-fails-schema",
        ),
        pytest.param({"input_schema": {"type": "strin"}}, "input_schema", id="input-schema-does-not-compile"),
        pytest.param({"output_schema": {"type": 12}}, "output_schema", id="output-schema-does-not-compile"),
        pytest.param({"output_schema": "object"}, "output_schema", id="output-schema-not-an-object"),
        pytest.param({"cursor_from": "cursor", "cursor_into": "/cursor"}, "cursor_from", id="pointer-not-json-pointer"),
        pytest.param({"cursor_from": "/cursor"}, "cursor_from", id="cursor-from-alone"),
        pytest.param({"input": {"when": object()}}, "input", id="input-not-json"),
        pytest.param(
            {"cursor_from": "/c", "cursor_into": "/c", "initial": "x" * (MAX_CURSOR_BYTES + 1)},
            "initial",
            id="initial-over-64KiB",
        ),
        pytest.param(
            {"input": {"region": "emea"}, "cursor_from": "/c", "cursor_into": "/region/x"},
            "cursor_into",
            id="cursor-into-a-string",
        ),
        pytest.param(
            {
                "input": {},
                "cursor_from": "/c",
                "cursor_into": "/c",
                "initial": None,
                "input_schema": {"required": ["c"], "properties": {"c": {"type": "object"}}},
            },
            "input (with initial spliced at cursor_into)",
            id="initial-fails-input-schema",
        ),
        # Bounds and schemas, refused at build time naming the field: never a raw library error.
        pytest.param({"input": _nested(33)}, "input", id="input-33-deep"),
        pytest.param({"input": _nested(100_000)}, "input", id="input-100000-deep-no-recursion-error"),
        pytest.param({"input": {"n": 10**100_000}}, "input", id="input-100000-digit-number"),
        pytest.param({"input": {"blob": "x" * MAX_CURSOR_BYTES}}, "input", id="input-over-64KiB"),
        pytest.param({"input": list(range(10**6))}, "input", id="input-a-million-items"),
        pytest.param({"cursor_from": "/c", "cursor_into": "/c", "initial": _nested(40)}, "initial", id="initial-deep"),
        pytest.param({"cursor_from": "/c", "cursor_into": "/a" * 33}, "cursor_into", id="pointer-33-steps"),
        pytest.param({"input_schema": {"$ref": "#/definitions/missing"}}, "input_schema", id="input-ref-to-nothing"),
        pytest.param({"output_schema": {"$ref": "#/definitions/missing"}}, "output_schema", id="output-ref-nothing"),
        pytest.param({"output_schema": {"$ref": "https://example.com/s.json"}}, "output_schema", id="remote-ref"),
        pytest.param({"output_schema": {"allOf": [{"$ref": "#"}]}}, "output_schema", id="ref-loop"),
        pytest.param({"input_schema": {"$schema": "urn:nope"}}, "input_schema", id="unknown-dialect"),
        pytest.param({"input_schema": _nested(33, {})}, "input_schema", id="schema-33-deep"),
        pytest.param({"input_schema": {"maximum": 10**100_000}}, "input_schema", id="schema-huge-number"),
        pytest.param({"input": {"a": "\ud800"}}, "input", id="input-lone-surrogate"),
        pytest.param({"input": {"\udfff": 1}}, "input", id="input-key-lone-surrogate"),
        pytest.param({"cursor_from": "/c", "cursor_into": "/c", "initial": ["\ud800"]}, "initial", id="initial-lone"),
        pytest.param({"output_schema": {"const": "x\udc00"}}, "output_schema", id="schema-lone-surrogate"),
    ],
)
def test_bad_spec_is_refused_at_parse_time_naming_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError) as error:
        FunctionSpec.build(**kwargs)
    assert str(error.value).startswith(f"{field}:"), str(error.value)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        pytest.param(
            {"input": {"region": ["emea", "ok\ud800"]}},
            "input: at $.region[1] a string holds a lone surrogate (U+D800 at character 2), which is not Unicode "
            "text and cannot be written as UTF-8 JSON; remove it, or decode the bytes it came from as UTF-8",
            id="value",
        ),
        pytest.param(
            {"cursor_from": "/c", "cursor_into": "/c", "initial": {"\udfff": 1}},
            "initial: at $ a property name holds a lone surrogate (U+DFFF at character 0), which is not Unicode "
            "text and cannot be written as UTF-8 JSON; remove it, or decode the bytes it came from as UTF-8",
            id="key",
        ),
    ],
)
def test_a_lone_surrogate_is_refused_naming_the_field_and_where_it_is(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        FunctionSpec.build(**kwargs)
    assert str(refused.value) == message


def test_json_at_its_bounds_is_accepted() -> None:
    spec = FunctionSpec.build(
        input={"deep": _nested(31), "blob": "x" * (MAX_CURSOR_BYTES - 200)},
        input_schema={"$defs": {"n": {"type": "object"}}, "properties": {"c": {"$ref": "#/$defs/n"}}},
        cursor_from="/c",
        cursor_into="/c",
        initial=_nested(31, {}),
    )
    assert spec.input_with({})["deep"] == _nested(31)


def _spec(**kwargs: Any) -> FunctionSpec:
    return FunctionSpec.build(
        input={"region": "emea"},
        input_schema={"type": "object", "required": ["region", "cursor"]},
        output_schema={
            "type": "object",
            "required": ["cursor"],
            "properties": {"count": {"type": "integer"}},
        },
        cursor_from="/cursor",
        cursor_into="/cursor",
        initial={"n": 0},
        **kwargs,
    )


def test_first_fire_gets_initial_and_a_clean_fire_saves_the_new_cursor() -> None:
    store = MemoryStore()
    fire = CursorFire(_spec(), store)
    prepared = fire.prepare()
    assert prepared.payload == {"region": "emea", "cursor": {"n": 0}} and not prepared.from_store
    fire.conclude({"count": 1, "cursor": {"n": 5}}, save=True, written_by="run")
    assert json.loads(store.document) == {"n": 5}
    assert fire.prepare().payload["cursor"] == {"n": 5}


@pytest.mark.parametrize(
    "output, error",
    [
        pytest.param({"count": "many", "cursor": {"n": 9}}, OutputInvalid, id="schema-invalid"),
        pytest.param({"count": 1}, OutputInvalid, id="no-cursor-at-pointer"),
        pytest.param({"count": 1, "cursor": float("nan")}, OutputInvalid, id="not-json"),
        pytest.param({"count": 1, "cursor": {"blob": "x" * (70 * 1024)}}, CursorTooLarge, id="cursor-70KiB"),
        pytest.param({"count": 1, "cursor": "\ud800"}, OutputInvalid, id="lone-surrogate"),
    ],
)
def test_unclean_output_keeps_the_stored_cursor(output: Any, error: type[Exception]) -> None:
    store = MemoryStore('{"n":3}')
    with pytest.raises(error):
        CursorFire(_spec(), store).conclude(output, save=True, written_by="run")
    assert store.document == '{"n":3}' and store.writes == 0


def test_unreadable_or_corrupt_store_fails_to_start_and_a_failed_write_fails_the_fire() -> None:
    with pytest.raises(DispatchStartFailed, match="could not be read"):
        CursorFire(_spec(), MemoryStore(broken="read")).prepare()
    with pytest.raises(DispatchStartFailed, match="not JSON"):
        CursorFire(_spec(), MemoryStore("{oops")).prepare()
    hand_edited = FunctionSpec.build(
        input={},
        input_schema={"properties": {"cursor": {"type": "object"}}},
        cursor_from="/cursor",
        cursor_into="/cursor",
        initial={},
    )
    with pytest.raises(InputInvalid, match="input_schema"):
        CursorFire(hand_edited, MemoryStore("[1, 2]")).prepare()
    with pytest.raises(CursorWriteFailed, match="old cursor stays"):
        CursorFire(_spec(), MemoryStore('{"n":1}', broken="write")).conclude(
            {"cursor": {"n": 2}}, save=True, written_by="run"
        )


def test_dry_conclusion_validates_but_saves_nothing() -> None:
    store = MemoryStore('{"n":1}')
    concluded = CursorFire(_spec(), store).conclude({"cursor": {"n": 2}}, save=False, written_by="run")
    assert concluded.cursor_document == '{"n":2}' and not concluded.saved and store.writes == 0


SPEC = _spec()
OUTCOMES = st.sampled_from(["clean", "raise", "invalid", "huge", "write-fails"])


@settings(max_examples=250, deadline=None)
@given(outcomes=st.lists(OUTCOMES, min_size=1, max_size=12))
def test_cursor_equals_the_last_clean_fire_whatever_happened_in_between(outcomes: list[str]) -> None:
    """Brute-force model: the stored cursor is the cursor of the last clean fire, else absent."""
    store = MemoryStore()
    model: int | None = None
    for step, outcome in enumerate(outcomes):
        store.broken = "write" if outcome == "write-fails" else ""
        fire = CursorFire(SPEC, store)
        received = fire.prepare().payload["cursor"]["n"]
        assert received == (0 if model is None else model)  # each fire resumes where the last clean one stopped
        output: dict[str, Any] = {"count": 1, "cursor": {"n": step + 1}}
        if outcome == "invalid":
            output["count"] = "x"
        if outcome == "huge":
            output["cursor"] = {"n": step + 1, "blob": "x" * MAX_CURSOR_BYTES}
        try:
            if outcome == "raise":
                raise RuntimeError("function failed")
            fire.conclude(output, save=True, written_by=f"run-{step}")
        except Exception:
            continue
        model = step + 1
    assert (None if store.document is None else json.loads(store.document)["n"]) == model


LOOPS = [
    {"allOf": [{"$ref": "#"}]},
    {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"},
    {"$ref": "#"},
    {"not": {"$ref": "#"}},
]


@pytest.mark.parametrize("schema", LOOPS)
def test_a_ref_loop_is_refused_wherever_the_recursion_limit_is_reached(schema: dict[str, Any]) -> None:
    """The loop ends at the recursion limit; some stack depths reach it inside Rust (rpds, under jsonschema's
    referencing), where it surfaces as pyo3's PanicException, a BaseException. Every depth must be a refusal."""

    def at_depth(depth: int) -> None:
        if depth:
            return at_depth(depth - 1)
        with pytest.raises(ValueError, match=r"^output_schema: its references loop without end"):
            FunctionSpec.build(output_schema=schema)

    for depth in range(400):  # before the fix, 80 of these 1,600 cases ended in a PanicException
        at_depth(depth)


def test_a_ref_loop_only_some_outputs_reach_fails_that_output_instead_of_crashing_the_task() -> None:
    """No first document reaches the loop under ``a``, so the schema is accepted; an output with ``a`` reaches it."""
    from tessera.operators.functions.spec import schema_violation

    loop_under_a = {"properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"allOf": [{"$ref": "#/$defs/x"}]}}}
    spec = FunctionSpec.build(output_schema=loop_under_a)
    assert schema_violation(spec.output_schema, {"b": 1}) is None
    assert schema_violation(spec.output_schema, {"a": 1}) == (
        "at $: its references loop without end on this document (a $ref reaches itself before looking into it)"
    )


def test_an_initial_cursor_without_a_cursor_is_refused_not_ignored() -> None:
    refusal = r"^initial: .* given without a cursor; .*cursor_from and cursor_into"
    with pytest.raises(ValueError, match=refusal) as refused:
        FunctionSpec.build(input={"region": "emea"}, initial={"n": 0})
    assert "{'n': 0}" in str(refused.value) or '{"n": 0}' in str(refused.value)
    assert FunctionSpec.build(input={"region": "emea"}).initial is None  # no cursor, no initial: as before
