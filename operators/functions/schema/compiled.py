"""A cursor function's JSON Schemas, compiled and proven usable when the DAG file is parsed.

jsonschema checks a schema against its metaschema but resolves ``$ref`` only while
validating, so a reference to nothing would first fail at a fire, as a raw
``PointerToNowhere``; and a reference to another document would be fetched over the
network (jsonschema's deprecated default). Here every reference must resolve inside
the schema itself, and the schema is tried once on a document of each JSON type, so
a reference loop that never consumes the document is refused too. Its regular
expressions run on RE2 (:mod:`.regex`); one RE2 cannot run is refused here.
"""

from __future__ import annotations

import copy
from typing import Any

import referencing
import referencing.jsonschema
from jsonschema import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from jsonschema_specifications import REGISTRY as METASCHEMAS

from tessera.timetables.rules import clip, excerpt

from ..json_bounds import bounded_json
from .regex import UNEVALUATED_WITH_PATTERNS, PatternRefused, linear_time, metaschema_formats, refused_patterns

_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
_PROBES: tuple[Any, ...] = (None, True, 0, 0.5, "", [], {})
"""One document of each JSON type: a loop of references met before any descent meets one of them."""


def compile_schema(field: str, schema: Any) -> Validator | None:
    """The validator for ``schema`` (``None`` for none); ``ValueError`` naming ``field`` if unusable."""
    if schema is None:
        return None
    if not isinstance(schema, dict | bool):
        raise ValueError(f"{field}: {excerpt(schema)}; a JSON Schema is an object (or true/false)")
    bounded_json(field, schema, fix="split it with $defs kept small, or validate less")
    cls = _dialect(field, schema)
    try:
        cls.check_schema(schema, format_checker=metaschema_formats(cls))
    except SchemaError as error:
        where = error.json_path if error.path else "$"
        if isinstance(error.cause, PatternRefused):
            raise ValueError(f"{field}: at {clip(where)}: {error.cause}") from None
        raise ValueError(
            f"{field}: does not compile as JSON Schema ({cls.__name__}) at {clip(where)}: "
            f"{clip(error.message, 300)}; fix the schema"
        ) from None
    # An empty registry of our own: documents that are not this schema (or a metaschema) are never fetched.
    validator = linear_time(cls)(copy.deepcopy(schema), registry=referencing.Registry())
    _check_references(field, cls, schema)
    for probe in _PROBES:
        try:
            next(validator.iter_errors(probe), None)
        except BaseException as error:  # the schema is user data: any failure to apply it is its refusal
            if not (isinstance(error, Exception) or is_schema_loop(error)):
                raise  # KeyboardInterrupt, SystemExit
            raise refusal(field, error, "to a first document") from None
    return validator


def is_schema_loop(error: BaseException) -> bool:
    """Whether applying a schema ended in a $ref loop: the recursion limit reached, in Python or in Rust.

    Where the limit is reached decides what surfaces: Python's ``RecursionError``, or, when it is
    reached while ``rpds`` (the maps under jsonschema's ``referencing``) hashes a key, a Rust panic,
    which pyo3 raises as ``PanicException``, a ``BaseException`` that ``except Exception`` misses.
    """
    return isinstance(error, RecursionError) or type(error).__name__ == "PanicException"


def _dialect(field: str, schema: dict[str, Any] | bool) -> type[Validator]:
    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    if dialect is None:
        return validator_for(schema)
    try:
        cls = validator_for(schema, default=None) if isinstance(dialect, str) else None  # type: ignore[arg-type]
    except ValueError:  # a "$schema" that is not even a URI
        cls = None
    if cls is None:
        raise ValueError(
            f"{field}: $schema {excerpt(dialect)} is not a JSON Schema dialect jsonschema knows; use e.g. "
            f"'https://json-schema.org/draft/2020-12/schema', or leave $schema out"
        )
    return cls


def _check_references(field: str, cls: type[Validator], schema: Any) -> None:
    """Resolve every reference of every subschema, each from its own base URI (``$id`` scopes).

    The same walk refuses patterns RE2 cannot run that the metaschema does not mark as regular
    expressions (the keys of ``patternProperties`` before draft 6), and the one keyword pair
    whose patterns jsonschema matches outside the keywords :mod:`.regex` replaces.
    """
    specification = referencing.jsonschema.specification_with(
        cls.META_SCHEMA.get("$schema", ""), default=referencing.Specification.OPAQUE
    )
    root = specification.create_resource(schema)
    stack = [(METASCHEMAS.resolver_with_root(root), root)]
    seen: set[str] = set()
    while stack:
        resolver, resource = stack.pop()
        contents = resource.contents
        if problem := refused_patterns(contents, cls.VALIDATORS):
            raise ValueError(f"{field}: {problem}")
        if isinstance(contents, dict):
            seen.update(k for k in ("unevaluatedProperties", "patternProperties") if k in contents)
        for keyword in _REFERENCES if isinstance(contents, dict) else ():
            reference = contents.get(keyword)
            if not isinstance(reference, str) or keyword not in cls.VALIDATORS:  # e.g. $dynamicRef in draft 7
                continue
            try:
                resolver.lookup(reference)
            except Exception as error:  # Unresolvable, or a malformed URI that urljoin refuses
                raise ValueError(
                    f"{field}: {keyword} {excerpt(reference)} resolves to nothing ({_reason(error)}); point it "
                    f"at a part of this schema, e.g. '#/$defs/name' (other documents are not fetched)"
                ) from None
        for sub in resource.subresources():
            stack.append((resolver.in_subresource(sub), sub))
    if len(seen) == 2 and "unevaluatedProperties" in cls.VALIDATORS:
        raise ValueError(f"{field}: {UNEVALUATED_WITH_PATTERNS}")


def refusal(field: str, error: BaseException, when: str) -> ValueError:
    """The refusal of schema ``field``, which failed when applied ``when`` (see :func:`is_schema_loop`)."""
    if is_schema_loop(error):
        return ValueError(
            f"{field}: its references loop without end when applied {when} (a $ref reaches itself before "
            f"looking into the document); break the loop, e.g. by moving the $ref under properties or items"
        )
    return ValueError(f"{field}: cannot be applied {when} ({_reason(error)}); fix the schema")


def _reason(error: BaseException) -> str:
    # Type only for referencing's errors: their text repeats the whole schema.
    if isinstance(error, referencing.exceptions.Unresolvable):
        return type(error).__name__
    try:
        return f"{type(error).__name__}: {clip(str(error), 200)}"
    except Exception:  # its text may itself fail to render
        return type(error).__name__
