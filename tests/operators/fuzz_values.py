"""Adversarial values for the fuzz tier: junk of every type, JSON, JSON Schemas and JSON Pointers.

Values too large to appear in a printed example (a 100,000-digit number, a list nested
100,000 deep, a megabyte string) are drawn as small markers; :func:`real` builds them
inside the test, so a failing example stays readable and a rerun builds the same value.
"""

from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

# -- markers for values too large to draw ------------------------------------------------------


@dataclass(frozen=True)
class Big:
    """An integer of ``digits`` digits."""

    digits: int
    negative: bool = False


@dataclass(frozen=True)
class Deep:
    """Lists (or objects) nested ``depth`` levels."""

    depth: int
    kind: str = "list"


@dataclass(frozen=True)
class Long:
    """A string of ``length`` copies of ``char``."""

    length: int
    char: str = "x"


@functools.cache
def _build(marker: Big | Deep | Long | Zeros) -> Any:
    if isinstance(marker, Zeros):
        return "0" * marker.count + "5"
    if isinstance(marker, Big):
        return (-1 if marker.negative else 1) * 10 ** (marker.digits - 1)
    if isinstance(marker, Long):
        return marker.char * marker.length
    value: Any = 1
    for _ in range(marker.depth):
        value = {"a": value} if marker.kind == "dict" else [value]
    return value


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` three times in four, else ``bad`` (one_of would weigh each of bad's many branches as one)."""
    return st.integers(0, 3).flatmap(lambda n: bad if n == 0 else good)


def real(value: Any) -> Any:
    """``value`` with every marker replaced by what it stands for (drawn values nest only a few levels)."""
    if isinstance(value, Big | Deep | Long | Zeros):
        return _build(value)
    if isinstance(value, list | tuple):
        return type(value)(real(item) for item in value)
    if isinstance(value, dict):
        return {real(key): real(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class Zeros:
    """The text of a number: ``count`` leading zeros, then 5."""

    count: int


# -- adversarial values ------------------------------------------------------------------------

LONE_SURROGATES = ["\ud800", "ok\udfff", "\udc00x", "a\ud83d"]
"""Strings UTF-8 cannot encode (JSON's "\\ud800" escape decodes to one): no store, database or request takes them."""
CATASTROPHIC_PATTERNS = ["^(a+)+$", "(a|a)*b", "^(a|aa)+$", "(x+x+)+y", "^(([a-z])+.)+[A-Z]([a-z])+$"]
"""Patterns Python's backtracking re takes exponential time on against ``EVIL_TEXT``."""
EVIL_TEXT = "a" * 35 + "!"

EDGE_INTS = [0, 1, -1, 100, 101, 1000, 8784, 8785, 31_622_400, 31_622_401, 2**31 - 1, 2**31, -(2**31), 2**63, 10**20]
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(EDGE_INTS),
    st.builds(Big, st.sampled_from([21, 41, 4300, 4301, 100_000]), st.booleans()),
    st.floats(),
    st.sampled_from([float("inf"), float("-inf"), float("nan"), 1e308, -0.0, 5e-324, 0.5]),
    st.text(max_size=12),
    st.sampled_from(["\u0663", "\uff11\uff12", "3600", "1h", "ALL", "0 6 * * *", "", " ", "\x00", "a\nb"]),
    st.sampled_from(LONE_SURROGATES),
    st.builds(Zeros, st.sampled_from([20, 4300, 1_000_000])),
    st.builds(Long, st.sampled_from([81, 257, 70_000, 1_000_000]), st.sampled_from(["x", "9", "\u00e9", "\n"])),
    st.lists(st.integers(), max_size=3),
    st.tuples(st.text(max_size=3)),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.binary(max_size=4),
    st.sampled_from([object(), datetime.timedelta(seconds=5), {1, 2}, Ellipsis]),
)
NUMBERS = st.one_of(
    st.integers(-5, 40_000_000),
    st.floats(-1e9, 1e9),
    st.sampled_from(EDGE_INTS),
    JUNK,
)


# -- JSON, schemas, pointers ---------------------------------------------------------------------

JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=10),
    st.builds(Big, st.sampled_from([21, 4300, 4301, 100_000]), st.booleans()),
    st.builds(Long, st.sampled_from([1000, 70_000]), st.sampled_from(["x", "\u00e9"])),
    st.sampled_from([*LONE_SURROGATES, EVIL_TEXT, "a" * 35]),
)
JSON = st.recursive(
    JSON_LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)
ANY_JSON = st.one_of(
    JSON,
    JSON,
    st.builds(Deep, st.sampled_from([30, 31, 32, 33, 1000, 100_000]), st.sampled_from(["list", "dict"])),
    st.dictionaries(st.integers(), st.integers(), max_size=2),  # keys JSON turns into strings
    st.dictionaries(st.sampled_from([*LONE_SURROGATES, EVIL_TEXT, "a"]), JSON_LEAVES, max_size=2),
    st.sampled_from([object(), {1, 2}, b"x", {(1, 2): 3}, datetime.date(2026, 1, 1), [float("nan")]]),
)
REFS = st.one_of(
    st.sampled_from(["#", "#/$defs/a", "#/$defs/b", "#/definitions/a", "#/definitions/missing", "#/properties/a"]),
    st.sampled_from(["#a", "#/items", "https://example.com/s.json", "sub.json", "http://[x", "#/%24defs/a", "urn:x"]),
    st.sampled_from(["https://json-schema.org/draft/2020-12/schema", "#/$defs/a/items/0", "#/$defs/" + "9" * 5000]),
    st.text(max_size=8),
)
DIALECTS = st.one_of(
    st.sampled_from(
        ["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"]
        + ["http://json-schema.org/draft-04/schema#", "https://json-schema.org/draft/2019-09/schema"]
        + ["http://json-schema.org/draft-03/schema#", "urn:nope", "http://[x"]
    ),
    JUNK,
)
REGEX_JUNK = [*CATASTROPHIC_PATTERNS, "(?=a)", "(?<!a)b", "(a)\\1", "a{1001}", "\\p{Greek}", "\\Z", "\ud800"]
"""Catastrophic patterns, and patterns RE2 refuses (lookaround, backreferences, big repeats) or Python's re does."""
# Small objects of a few keywords each: one draw picks the kind, so a leaf costs a few draws, not twenty.
SCHEMA_LEAVES = st.one_of(
    st.booleans(),
    st.just({}),
    st.fixed_dictionaries({"type": st.sampled_from(["object", "array", "string", "integer", "null", "strin", 12])}),
    st.fixed_dictionaries({"$ref": REFS}),
    st.fixed_dictionaries({"$dynamicRef": REFS}, optional={"$dynamicAnchor": st.sampled_from(["a", "node"])}),
    st.fixed_dictionaries({"$anchor": st.sampled_from(["a", "1bad"]), "type": st.just("object")}),
    st.fixed_dictionaries({"$id": st.sampled_from(["https://x.example/s", "sub.json", "#frag", "urn:a", 7])}),
    st.fixed_dictionaries({"$schema": DIALECTS}, optional={"$ref": REFS}),
    st.fixed_dictionaries({"minimum": NUMBERS}),
    st.fixed_dictionaries({"maximum": st.one_of(st.integers(), st.builds(Big, st.sampled_from([4300, 100_000])))}),
    st.fixed_dictionaries({"multipleOf": st.one_of(st.sampled_from([0.1, 3, 1e-300, 10**400, 0, -1]), JUNK)}),
    st.fixed_dictionaries({"minLength": st.one_of(st.integers(-1, 10), st.builds(Big, st.just(41)))}),
    st.fixed_dictionaries({"pattern": st.sampled_from(["^a", "[", "\\d+", "^[a-z]*$", *REGEX_JUNK])}),
    st.fixed_dictionaries(
        {"patternProperties": st.dictionaries(st.sampled_from(["^a", *REGEX_JUNK]), st.just({}), max_size=2)},
        optional={"additionalProperties": st.booleans(), "unevaluatedProperties": st.booleans()},
    ),
    st.fixed_dictionaries({"propertyNames": st.fixed_dictionaries({"pattern": st.sampled_from(REGEX_JUNK)})}),
    st.fixed_dictionaries(
        {"required": st.one_of(st.lists(st.sampled_from(["a", "b", "c"]), max_size=2), st.just("c"))}
    ),
    st.fixed_dictionaries({"enum": st.lists(JSON_LEAVES, max_size=3)}),
    st.fixed_dictionaries({"const": JSON_LEAVES}),
    st.fixed_dictionaries({"format": st.sampled_from(["date-time", "email", "nope"]), "type": st.just("string")}),
)
SCHEMAS = st.one_of(
    st.none(),
    st.recursive(
        SCHEMA_LEAVES,
        lambda kids: st.one_of(
            st.fixed_dictionaries(
                {"properties": st.dictionaries(st.sampled_from(["a", "b", "c", "$ref", "cursor"]), kids, max_size=3)},
                optional={"type": st.just("object"), "additionalProperties": kids},
            ),
            st.fixed_dictionaries({"items": kids}, optional={"type": st.just("array")}),
            st.fixed_dictionaries({"allOf": st.lists(kids, max_size=2)}),
            st.fixed_dictionaries({"anyOf": st.lists(kids, max_size=2)}),
            st.fixed_dictionaries({"not": kids}),
            st.fixed_dictionaries(
                {"$defs": st.dictionaries(st.sampled_from(["a", "b"]), kids, max_size=2)}, optional={"$ref": REFS}
            ),
            st.fixed_dictionaries(
                {"definitions": st.dictionaries(st.sampled_from(["a", "b"]), kids, max_size=2)},
                optional={"$ref": REFS},
            ),
        ),
        max_leaves=8,
    ),
    st.builds(Deep, st.sampled_from([31, 32, 33, 1000]), st.just("dict")),
    JUNK,
)
POINTERS = st.one_of(
    st.none(),
    st.sampled_from(["", "/", "/c", "/cursor", "/a/b", "/a/0", "/a/-", "cursor", "/a~2", "/a~", "/a" * 32, "/a" * 33]),
    st.text(alphabet="/ab~01-", max_size=10),
    JUNK,
)
