"""Bounds on JSON a DAG file declares (a function's input, its initial cursor, its schemas).

A value is walked once, iteratively, BEFORE anything recursive touches it:
``json.dumps``, ``copy.deepcopy`` and jsonschema all recurse once per nesting level,
so a deeply nested value would end in a ``RecursionError`` instead of a refusal
naming the field. The walk also stops as soon as the value is certainly too large,
so a huge value costs no more than the limit to refuse.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tessera.timetables.rules import clip, digits_of, excerpt, lone_surrogate

MAX_JSON_BYTES = 64 * 1024
MAX_JSON_DEPTH = 32
"""Containers nested inside one another: ``[[1]]`` has depth 2."""

# A path is kept as (parent path, step) pairs, turned into text only for a message.
_Path = tuple[Any, str] | None


def bounded_json(field: str, value: Any, *, fix: str = "keep it small and put data elsewhere") -> str:
    """The compact JSON text of ``value``; ``ValueError`` naming ``field`` if it is not JSON or out of bounds.

    Bounds: at most :data:`MAX_JSON_BYTES` bytes of UTF-8 JSON, at most :data:`MAX_JSON_DEPTH`
    nested containers, integers short enough for Python to write as text, strings that are
    Unicode text (no lone surrogate, which UTF-8 cannot hold).

    :param fix: what to do about a value that is too large, for the message.
    """
    if _lower_bound_of_size(field, value) > MAX_JSON_BYTES:
        raise ValueError(f"{field}: more than {MAX_JSON_BYTES} bytes of JSON; {_cap(fix)}")
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{field}: {excerpt(value)}; must be JSON ({clip(str(error))})") from None
    size = len(text.encode())
    if size > MAX_JSON_BYTES:
        raise ValueError(f"{field}: {size} bytes of JSON; {_cap(fix)}")
    return text


def _lower_bound_of_size(field: str, value: Any) -> int:
    """Walk ``value`` without recursion, refusing deep nesting and huge integers; stop once it is too large.

    The size counted never exceeds the length of the JSON text, so nothing that fits is refused here.
    """
    stack: list[tuple[Any, int, _Path]] = [(value, 0, None)]
    size = 0
    max_digits = sys.get_int_max_str_digits()
    while stack and size <= MAX_JSON_BYTES:
        node, depth, path = stack.pop()
        if isinstance(node, dict | list | tuple):
            if depth >= MAX_JSON_DEPTH:
                raise ValueError(
                    f"{field}: nested more than {MAX_JSON_DEPTH} levels deep (at {_text(path)}); "
                    f"JSON here nests at most {MAX_JSON_DEPTH} objects or arrays, so flatten it"
                )
            size += 2  # the brackets; separators are counted with the items
            pairs = node.items() if isinstance(node, dict) else enumerate(node)
            for index, (key, item) in enumerate(pairs):
                named = isinstance(node, dict)
                if named and isinstance(key, str):
                    _check_text(field, key, path, "a property name")
                size += (1 if index else 0) + (len(key) + 3 if named and isinstance(key, str) else 4 if named else 0)
                stack.append((item, depth + 1, (path, _step(key, named))))
                if size > MAX_JSON_BYTES:
                    break
        elif isinstance(node, str):
            _check_text(field, node, path, "a string")
            size += len(node) + 2
        elif isinstance(node, int) and not isinstance(node, bool):
            digits = digits_of(node)
            if max_digits and digits > max_digits:
                raise ValueError(
                    f"{field}: at {_text(path)} an integer of about {digits} digits; integers longer than "
                    f"{max_digits} digits cannot be written as JSON here"
                )
            size += digits
        else:
            size += 1
    return size


def _check_text(field: str, text: str, path: _Path, what: str) -> None:
    """Refuse a lone surrogate: Python holds it, UTF-8 and every store cannot."""
    at = lone_surrogate(text)
    if at is not None:
        raise ValueError(
            f"{field}: at {_text(path)} {what} holds a lone surrogate (U+{ord(text[at]):04X} at character {at}), "
            "which is not Unicode text and cannot be written as UTF-8 JSON; remove it, or decode the bytes it "
            "came from as UTF-8"
        )


def _cap(fix: str) -> str:
    return f"it is capped at {MAX_JSON_BYTES} bytes (64 KiB); {fix}"


def _step(key: Any, named: bool) -> str:
    if not named:
        return f"[{key}]"
    return f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{excerpt(key, 40)}]"


def _text(path: _Path) -> str:
    steps: list[str] = []
    while path is not None:
        path, step = path
        steps.append(step)
    text = "$" + "".join(reversed(steps))
    return text if len(text) <= 120 else text[:117] + "..."
