"""The parse-time contract of a cursor-carrying function: frozen input, schemas, cursor pointers.

Everything here is checked when the DAG file is parsed, so a broken spec is an
import error in the UI (the function can never fire) rather than a failure at
03:00. It imports no Airflow: the same object validates input and output in the
worker.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator

from tessera.timetables.rules import clip, excerpt

from .json_bounds import MAX_JSON_BYTES, MAX_JSON_DEPTH, bounded_json
from .json_pointer import JsonPointer
from .schema.compiled import compile_schema, is_schema_loop, refusal
from .schema.messages import describe as describe_violation

MAX_CURSOR_BYTES = MAX_JSON_BYTES
"""A cursor is a resumption pointer; one approaching this size is being used as a database."""
_CURSOR_FIX = "keep only where to resume (a watermark, a last id, a page token) and put the data elsewhere"


def encode_json(field_name: str, value: Any) -> str:
    """Compact JSON text of ``value`` (what a store keeps), or ``ValueError`` naming the field."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:
        # RecursionError: nested too deeply for the encoder, which recurses once per level.
        raise ValueError(f"{field_name}: {_excerpt(value)}; must be JSON ({clip(str(error))})") from None


def cursor_size_error(field_name: str, document: str) -> str | None:
    """Why ``document`` is too large to be a cursor, or None if it fits."""
    size = len(document.encode())
    if size <= MAX_CURSOR_BYTES:
        return None
    return (
        f"{field_name}: {size} bytes of JSON; a cursor is capped at {MAX_CURSOR_BYTES} bytes (64 KiB). "
        "Keep only where to resume (a watermark, a last id, a page token) and put the data elsewhere"
    )


def _excerpt(value: Any, limit: int = 120) -> str:
    # Never repr(): it fails on an integer of more than 4300 digits and recurses into nesting.
    return excerpt(value, limit)


def schema_violation(validator: Validator | None, document: Any) -> str | None:
    """The most relevant reason ``document`` fails ``validator`` ("at $.a: ..."), or None if valid.

    The reason names the path, the rule and the value's kind and size, never the value:
    it reaches fire records, the status page and task logs, which viewers read (see
    :mod:`tessera.operators.functions.schema.messages`).
    """
    if validator is None:
        return None
    try:
        error = best_match(validator.iter_errors(document))
    except BaseException as failure:
        if not is_schema_loop(failure):
            raise
        return "at $: its references loop without end on this document (a $ref reaches itself before looking into it)"
    return None if error is None else describe_violation(error, validator.schema)


@dataclass(frozen=True)
class FunctionSpec:
    """What a function is called with and what counts as a valid answer.

    :param input: frozen parameters (JSON); the cursor is spliced into a copy at every fire.
    :param input_schema: JSON Schema the input (with the cursor spliced in) must satisfy.
    :param output_schema: JSON Schema the function's output must satisfy for a fire to count.
    :param cursor_from: JSON Pointer into the output: the new cursor.
    :param cursor_into: JSON Pointer into the input: where the stored cursor goes.
    :param initial: the cursor before the first clean fire (or after the store was lost).
    """

    input: Any
    input_schema: Validator | None
    output_schema: Validator | None
    cursor_from: JsonPointer | None
    cursor_into: JsonPointer | None
    initial: Any

    @classmethod
    def build(
        cls,
        *,
        input: Any = None,
        input_schema: Any = None,
        output_schema: Any = None,
        cursor_from: Any = None,
        cursor_into: Any = None,
        initial: Any = None,
    ) -> FunctionSpec:
        """Validate everything that can be known before the first fire; ``ValueError`` naming the field."""
        frozen = json.loads(bounded_json("input", {} if input is None else input))
        input_validator = compile_schema("input_schema", input_schema)
        output_validator = compile_schema("output_schema", output_schema)
        if (cursor_from is None) != (cursor_into is None):
            given, value = ("cursor_from", cursor_from) if cursor_from is not None else ("cursor_into", cursor_into)
            raise ValueError(
                f"{given}: {_excerpt(value)} given alone; a cursor needs "
                "both cursor_from (where the output holds it) and cursor_into (where the input receives it)"
            )
        source = None if cursor_from is None else _pointer("cursor_from", cursor_from)
        target = None if cursor_into is None else _pointer("cursor_into", cursor_into)
        if target is not None:
            bounded_json("initial", initial, fix=_CURSOR_FIX)
        elif initial is not None:  # it would be ignored: no fire ever receives it
            raise ValueError(
                f"initial: {_excerpt(initial)} given without a cursor; it is the cursor before the first fire: "
                "set cursor_from and cursor_into too, or drop initial"
            )
        spec = cls(frozen, input_validator, output_validator, source, target, initial)
        # The first fire's exact input: the frozen input with `initial` spliced in.
        try:
            first = spec.input_with(initial)
        except LookupError as error:
            raise ValueError(f"cursor_into: {_excerpt(cursor_into)} cannot be placed in input: {error}") from None
        try:
            problem = schema_violation(input_validator, first)
        except BaseException as error:  # the schema is user data: any failure to apply it is its refusal
            if not (isinstance(error, Exception) or is_schema_loop(error)):
                raise  # KeyboardInterrupt, SystemExit
            raise refusal("input_schema", error, "to the first fire's input") from None
        if problem:
            shown = "input (with initial spliced at cursor_into)" if target is not None else "input"
            raise ValueError(f"{shown}: {_excerpt(first)}; fails input_schema {problem}; fix the value or the schema")
        return spec

    @property
    def carries_cursor(self) -> bool:
        return self.cursor_into is not None

    def input_with(self, cursor: Any) -> Any:
        """A fresh copy of the frozen input with ``cursor`` at ``cursor_into`` (unchanged if no cursor)."""
        if self.cursor_into is None:
            return copy.deepcopy(self.input)
        return self.cursor_into.splice(self.input, cursor)


def _pointer(field: str, text: Any) -> JsonPointer:
    pointer = JsonPointer.parse(field, text)
    # The cursor is spliced into the input this deep: a deeper pointer nests deeper than any JSON here may.
    if len(pointer.tokens) > MAX_JSON_DEPTH:
        raise ValueError(
            f"{field}: {_excerpt(text)} has {len(pointer.tokens)} steps; a JSON Pointer here has at most "
            f"{MAX_JSON_DEPTH}, as JSON nests at most {MAX_JSON_DEPTH} levels"
        )
    return pointer
