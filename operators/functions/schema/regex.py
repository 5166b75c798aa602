"""Regular expressions of a cursor function's schemas, matched by RE2 in time linear in the text.

jsonschema matches ``pattern`` and ``patternProperties`` (and the ``additionalProperties``
that depends on them) with Python's ``re``, which backtracks: ``"^(a+)+$"`` against 35
``a`` and a ``!`` takes hours, and the match holds the GIL, so a worker sits until its
``execution_timeout`` and a check at parse time ends in the dag-processor's import timeout.
A schema is user data, so those keywords run here on RE2 (``google-re2``), which never
backtracks. RE2 also reads closer to JSON Schema's ECMA-262 dialect than ``re`` does:
``\\d`` and ``\\w`` are ASCII, ``$`` is the end of the text.

What RE2 cannot run (lookaround, backreferences, a repeat count above 1000) is refused
when the DAG file is parsed, naming the field. jsonschema's ``unevaluatedProperties`` works
out which properties ``patternProperties`` evaluated with Python's ``re``, deep inside its
own helpers, so a schema that has both is refused too. ``format`` is an annotation here
(no format checker is given), so no format runs a regular expression on a document.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import re2
from jsonschema import FormatChecker, validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from tessera.timetables.rules import excerpt

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 writes every refused pattern to stderr; the refusal says it instead
RULE = (
    "tessera matches schema patterns with RE2, whose time grows linearly with the text: write it without "
    "lookaround ((?=, (?!, (?<=, (?<!), backreferences (\\1) or a repeat count above 1000"
)


class PatternRefused(ValueError):
    """A regular expression RE2 cannot run; the message quotes the pattern and RE2's reason."""


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, _OPTIONS)


def compiled(pattern: str) -> Any:
    """The RE2 program for ``pattern``; :class:`PatternRefused` if RE2 cannot run it."""
    try:
        return _compiled(pattern)
    except re2.error as error:
        reason = error.args[0] if error.args else ""
        text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise PatternRefused(f"{excerpt(pattern)} is not a regular expression RE2 can run ({text}); {RULE}") from None
    except UnicodeError:  # a lone surrogate: not text RE2 (or JSON in UTF-8) can hold
        raise PatternRefused(f"{excerpt(pattern)} is not valid Unicode text; {RULE}") from None


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text`` (JSON Schema's rule: not anchored unless it says so)."""
    program = compiled(pattern)
    try:
        return program.search(text) is not None
    except UnicodeEncodeError:
        # A lone surrogate (JSON's "\ud800" escape decodes to one): match the bytes Python keeps for it.
        return program.search(text.encode("utf-8", "surrogatepass")) is not None


def extra_properties(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The keys of ``instance`` neither ``properties`` nor ``patternProperties`` of ``schema`` covers."""
    declared = schema.get("properties") or {}
    patterns = list(schema.get("patternProperties") or {})
    return [key for key in instance if key not in declared and not any(search(p, key) for p in patterns)]


# The keywords jsonschema implements with Python's re, each rewritten on search() above. Their
# ValidationError texts never quote the instance; tessera's own reasons are built from the schema.


def _pattern(validator: Validator, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"does not match {pattern!r}")


def _pattern_properties(validator: Validator, patterns: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Validator, extra: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = extra_properties(instance, schema)
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        yield ValidationError(f"{len(extras)} additional properties are not allowed")


_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


@functools.cache
def linear_time(cls: type[Validator]) -> type[Validator]:
    """``cls`` (a dialect's validator class) with every regular expression matched by RE2."""
    return validators.extend(cls, {k: f for k, f in _KEYWORDS.items() if k in cls.VALIDATORS})


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        compiled(instance)
    return True


@functools.cache
def metaschema_formats(cls: type[Validator]) -> FormatChecker:
    """The format checker a schema of dialect ``cls`` is checked with: its own, with RE2 deciding ``regex``.

    The metaschemas of draft 6 on mark ``pattern`` and the keys of ``patternProperties``
    as ``format: regex``, so the check of the schema names the path of a refused pattern.
    """
    checker = FormatChecker(formats=())
    checker.checkers = dict(cls.FORMAT_CHECKER.checkers)
    checker.checks("regex", raises=PatternRefused)(_is_regex)
    return checker


def refused_patterns(contents: Any, keywords: Any) -> str | None:
    """Why one subschema's patterns cannot run (the drafts 3 and 4 metaschemas check no key), or None."""
    if not isinstance(contents, dict):
        return None
    found = []
    if "pattern" in keywords and isinstance(contents.get("pattern"), str):
        found.append(("pattern", contents["pattern"]))
    if "patternProperties" in keywords and isinstance(contents.get("patternProperties"), dict):
        found += [("patternProperties", key) for key in contents["patternProperties"] if isinstance(key, str)]
    for keyword, pattern in found:
        try:
            compiled(pattern)
        except PatternRefused as error:
            return f"in {keyword}: {error}"
    return None


UNEVALUATED_WITH_PATTERNS = (
    "unevaluatedProperties together with patternProperties cannot be checked in linear time (jsonschema "
    "matches those patterns with Python's backtracking re to find the evaluated properties); use "
    "additionalProperties beside patternProperties, or list the properties"
)
