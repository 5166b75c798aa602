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

from jsonschema import SchemaError
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from .json_pointer import JsonPointer
from .schema_messages import describe as describe_violation

MAX_CURSOR_BYTES = 64 * 1024
"""A cursor is a resumption pointer; one approaching this size is being used as a database."""


def encode_json(field_name: str, value: Any) -> str:
    """Compact JSON text of ``value`` (what a store keeps), or ``ValueError`` naming the field."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{field_name}: {_excerpt(value)}; must be JSON ({error})") from None


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
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _compile(field_name: str, schema: Any) -> Validator | None:
    if schema is None:
        return None
    if not isinstance(schema, (dict, bool)):
        raise ValueError(f"{field_name}: {_excerpt(schema)}; a JSON Schema is an object (or true/false)")
    cls = validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as error:
        where = error.json_path if error.path else "$"
        raise ValueError(
            f"{field_name}: does not compile as JSON Schema ({cls.__name__}) at {where}: {error.message}; "
            "fix the schema"
        ) from None
    return cls(copy.deepcopy(schema))


def schema_violation(validator: Validator | None, document: Any) -> str | None:
    """The most relevant reason ``document`` fails ``validator`` ("at $.a: ..."), or None if valid.

    The reason names the path, the rule and the value's kind and size, never the value:
    it reaches fire records, the status page and task logs, which viewers read (see
    :mod:`tessera.operators.schema_messages`).
    """
    if validator is None:
        return None
    error = best_match(validator.iter_errors(document))
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
        frozen = json.loads(encode_json("input", {} if input is None else input))
        input_validator = _compile("input_schema", input_schema)
        output_validator = _compile("output_schema", output_schema)
        if (cursor_from is None) != (cursor_into is None):
            given, value = ("cursor_from", cursor_from) if cursor_from is not None else ("cursor_into", cursor_into)
            raise ValueError(
                f"{given}: {value!r} given alone; a cursor needs "
                "both cursor_from (where the output holds it) and cursor_into (where the input receives it)"
            )
        source = None if cursor_from is None else JsonPointer.parse("cursor_from", cursor_from)
        target = None if cursor_into is None else JsonPointer.parse("cursor_into", cursor_into)
        if target is not None and (problem := cursor_size_error("initial", encode_json("initial", initial))):
            raise ValueError(problem)
        spec = cls(frozen, input_validator, output_validator, source, target, initial)
        # The first fire's exact input: the frozen input with `initial` spliced in.
        try:
            first = spec.input_with(initial)
        except LookupError as error:
            raise ValueError(f"cursor_into: {cursor_into!r} cannot be placed in input: {error}") from None
        if problem := schema_violation(input_validator, first):
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
