"""Why a JSON document fails its schema, in words that never quote the document.

jsonschema's own messages embed the instance (``'s3cr3t' does not match '^[0-9]+$'``),
and these reasons reach fire records, the status page and task logs, which every
viewer of the DAG may read, while the cursor itself lives in a store only some may
read. So a reason is rebuilt from what the *schema* says (the keyword and its value),
*where* the failure is (the JSON path, keys the schema never names masked as
``[*]``) and the failing value's *kind and size*: never from ``error.message``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from jsonschema.exceptions import ValidationError

from .regex import extra_properties

_PLAIN_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")
"""The names jsonschema itself writes as ``.name`` in a JSON path."""
_SHOWN_SCHEMA_TEXT = 80
"""Longer schema values (a huge enum, a long pattern) are summarised rather than quoted."""


def describe(error: ValidationError, schema: Any) -> str:
    """``"at <path>: <rule> (<kind and size>)"`` for one error of a validator built on ``schema``."""
    where = json_path(error.absolute_path, declared_names(schema))
    shape = kind_of(error.instance)
    if "propertyNames" in error.absolute_schema_path:
        shape += "; a property name"  # the instance is a key of the object at the path, not a value
    return f"at {where}: {rule(error)} ({shape})"


def json_path(path: Iterable[str | int], names: set[str]) -> str:
    """jsonschema's JSON path, except that a key the schema does not name (a user's data) reads ``[*]``."""
    text = "$"
    for element in path:
        if isinstance(element, int):
            text += f"[{element}]"
        elif element not in names:
            text += "[*]"
        elif _PLAIN_NAME.match(element):
            text += "." + element
        else:
            text += "['" + element.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return text


def declared_names(schema: Any) -> set[str]:
    """Every property name the schema spells out (``properties``, ``required``, dependencies), at any depth."""
    names: set[str] = set()
    pending = [schema]
    while pending:  # iterative: a schema is bounded in size, never in this function's stack
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for keyword in ("properties", "dependentRequired", "dependentSchemas", "dependencies"):
            if isinstance(node.get(keyword), dict):
                names.update(key for key in node[keyword] if isinstance(key, str))
        if isinstance(node.get("required"), list):
            names.update(item for item in node["required"] if isinstance(item, str))
        pending.extend(node.values())
    return names


def kind_of(value: Any) -> str:
    """The JSON kind and size of a value: what a reason may say about it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return f"a string of {_count(len(value), 'character')}"
    if isinstance(value, list):
        return f"an array of {_count(len(value), 'item')}"
    if isinstance(value, dict):
        return f"an object with {_count(len(value), 'property', 'properties')}"
    return f"a {type(value).__name__}"


def rule(error: ValidationError) -> str:
    """The broken rule, in words built from the schema; a safe generic sentence for unknown keywords."""
    keyword = error.validator
    if keyword is None:  # the subschema is literally `false`
        return "is not allowed (its schema is false)"
    explain = _RULES.get(str(keyword))
    if explain is None:
        return f"fails the schema's {_quote(keyword)} rule"
    return explain(error.validator_value, error.instance, error)


def _types(value: Any, instance: Any, error: ValidationError) -> str:
    listed = value if isinstance(value, list) else [value]
    return "is not of type " + ", ".join(_quote(t) if isinstance(t, str) else "(a schema)" for t in listed)


def _enum(value: Any, instance: Any, error: ValidationError) -> str:
    shown = repr(value)
    if isinstance(value, list) and len(shown) > _SHOWN_SCHEMA_TEXT:
        return f"is not one of the {len(value)} allowed values"
    return f"is not one of the allowed values {shown}"


def _const(value: Any, instance: Any, error: ValidationError) -> str:
    shown = repr(value)
    return (
        "is not the constant the schema requires" if len(shown) > _SHOWN_SCHEMA_TEXT else f"is not the constant {shown}"
    )


def _minimum(value: Any, instance: Any, error: ValidationError) -> str:
    if error.schema.get("exclusiveMinimum") is True:  # drafts 3 and 4: a flag next to minimum
        return f"is not greater than the exclusive minimum {value}"
    return f"is less than the minimum {value}"


def _maximum(value: Any, instance: Any, error: ValidationError) -> str:
    if error.schema.get("exclusiveMaximum") is True:
        return f"is not less than the exclusive maximum {value}"
    return f"is greater than the maximum {value}"


def _required(value: Any, instance: Any, error: ValidationError) -> str:
    if not isinstance(value, list):  # draft 3: `required: true` on the property; the path names it
        return "is required but missing"
    missing = [name for name in value if isinstance(instance, dict) and name not in instance]
    if len(missing) == 1:
        return f"is missing the required property {_quote(missing[0])}"
    return f"is missing the required properties {missing}" if missing else "is missing a required property"


def _extra_properties(value: Any, instance: Any, error: ValidationError) -> str:
    # The schema's own patterns on RE2, as the validator matched them: never Python's backtracking re.
    extras = extra_properties(instance, error.schema) if isinstance(instance, dict) else []
    return (
        f"has {_count(len(extras), 'property', 'properties')} the schema does not allow (additionalProperties is false)"
    )


def _dependencies(value: Any, instance: Any, error: ValidationError) -> str:
    for name, needs in (value or {}).items():
        needs = [needs] if isinstance(needs, str) else needs
        if isinstance(instance, dict) and name in instance and isinstance(needs, list):
            missing = [need for need in needs if need not in instance]
            if missing:
                return f"has {_quote(name)} but not {missing}, which it requires"
    return "is missing a property that another property requires"


def _one_of(value: Any, instance: Any, error: ValidationError) -> str:
    if error.context:
        return "matches none of the oneOf alternatives"
    return "matches more than one of the oneOf alternatives"


def _fixed(sentence: str) -> Callable[[Any, Any, ValidationError], str]:
    return lambda value, instance, error: sentence


def _bounded(sentence: str) -> Callable[[Any, Any, ValidationError], str]:
    return lambda value, instance, error: f"{sentence} {value}"


def _quote(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_SCHEMA_TEXT else text[: _SHOWN_SCHEMA_TEXT - 4] + "...'"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


_RULES: dict[str, Callable[[Any, Any, ValidationError], str]] = {
    "type": _types,
    "enum": _enum,
    "const": _const,
    "pattern": lambda value, instance, error: f"does not match the pattern {_quote(value)}",
    "format": lambda value, instance, error: f"is not a valid {_quote(value)}",
    "minimum": _minimum,
    "maximum": _maximum,
    "exclusiveMinimum": _bounded("is not greater than the exclusive minimum"),
    "exclusiveMaximum": _bounded("is not less than the exclusive maximum"),
    "multipleOf": _bounded("is not a multiple of"),
    "divisibleBy": _bounded("is not a multiple of"),
    "minLength": _bounded("is shorter than the minimum length"),
    "maxLength": _bounded("is longer than the maximum length"),
    "minItems": _bounded("has fewer items than the minimum"),
    "maxItems": _bounded("has more items than the maximum"),
    "uniqueItems": _fixed("has duplicate items; the schema requires unique items"),
    "minProperties": _bounded("has fewer properties than the minimum"),
    "maxProperties": _bounded("has more properties than the maximum"),
    "required": _required,
    "additionalProperties": _extra_properties,
    "dependentRequired": _dependencies,
    "dependencies": _dependencies,
    "contains": _fixed("has no item matching the schema's contains"),
    "minContains": _bounded("has fewer items matching contains than the minimum"),
    "maxContains": _bounded("has more items matching contains than the maximum"),
    "items": _fixed("has more items than the schema allows"),
    "additionalItems": _fixed("has more items than the schema allows"),
    "unevaluatedProperties": _fixed("has properties no subschema evaluates (unevaluatedProperties)"),
    "unevaluatedItems": _fixed("has items no subschema evaluates (unevaluatedItems)"),
    "anyOf": _fixed("matches none of the anyOf alternatives"),
    "oneOf": _one_of,
    "not": _fixed("matches the schema under 'not', which it must not"),
    "disallow": _fixed("is of a type the schema disallows"),
}
