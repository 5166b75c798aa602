"""Schema failures are described by path, rule, kind and size: never by the value that failed.

Every jsonschema keyword whose own message quotes the instance (or one of its
keys) is exercised with a hostile value; none of it may come out.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft3Validator, Draft4Validator, Draft7Validator, Draft202012Validator, FormatChecker
from jsonschema.validators import validator_for

from tessera.operators.functions.spec import schema_violation

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
