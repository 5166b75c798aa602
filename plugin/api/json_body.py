"""Reading a JSON request body without letting its sender choose how much work or memory it costs.

Python's ``json`` module accepts what JSON does not (``NaN``, ``Infinity``), turns ``1e400``
into an infinite float, recurses once per nesting level (``'[' * 100000`` is a
``RecursionError``) and decodes ``"\\ud800"`` into a string that cannot be encoded back, so a
response naming the value fails later with a 500. So a body is read in this order, each step
refusing with the reason before the next one runs:

1. at most :data:`MAX_BODY_BYTES` bytes (read in chunks; the rest is never buffered);
2. UTF-8;
3. nested at most :data:`MAX_BODY_DEPTH` arrays and objects deep (counted in one pass over
   the text, before the parser sees it);
4. JSON with finite numbers only;
5. every string and key valid Unicode (no lone surrogates from ``\\uXXXX`` escapes).
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterable
from typing import Any

from ..errors import ContentTooLarge, Unprocessable

MAX_BODY_BYTES = 64 * 1024
"""The largest body a route reads (a refresh sends ``{}``; the cursor limit is the same 64 KiB)."""
MAX_BODY_DEPTH = 32
"""The deepest nesting of arrays and objects a body may have (the cursor limit is the same)."""


def _sample(text: str, limit: int = 40) -> str:
    """A value as it may be shown back: short, and ASCII-escaped so no lone surrogate reaches a response."""
    shown = text if len(text) <= limit else text[:limit] + "…"
    return ascii(shown)


async def read_capped(chunks: AsyncIterable[bytes], declared_length: str | None) -> bytes:
    """The body, refused once it is larger than :data:`MAX_BODY_BYTES` (by its Content-Length or as it arrives)."""
    if declared_length is not None and declared_length.strip().isdigit() and int(declared_length) > MAX_BODY_BYTES:
        raise _too_large(f"{int(declared_length)} bytes")
    received = bytearray()
    async for chunk in chunks:
        received += chunk
        if len(received) > MAX_BODY_BYTES:
            raise _too_large(f"more than {MAX_BODY_BYTES} bytes")
    return bytes(received)


def _too_large(size: str) -> ContentTooLarge:
    return ContentTooLarge(f"request body: {size}; send at most {MAX_BODY_BYTES} bytes of JSON, such as {{}}")


def _nesting(text: str) -> int:
    """How deep the arrays and objects of ``text`` nest, stopping as soon as it passes the limit."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_BODY_DEPTH:
                return depth
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> Any:
    raise Unprocessable(f"request body: {name} is not a JSON number; send finite numbers only")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise Unprocessable(f"request body: {_sample(text)} is too large for a number; send finite numbers only")
    return number


def _check_unicode(value: Any, pointer: str) -> None:
    """Refuse a string or key holding a lone surrogate, naming where it is (the depth is already bounded)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_unicode(item, f"{pointer}/{index}")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not _encodable(key):
                raise _surrogate(f"a key of the object at `{pointer or '/'}`", key)
            _check_unicode(item, f"{pointer}/{key}" if key.isascii() and key.isprintable() else f"{pointer}/…")
    elif isinstance(value, str) and not _encodable(value):
        raise _surrogate(f"the string at `{pointer or '/'}`", value)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surrogate(where: str, text: str) -> Unprocessable:
    return Unprocessable(
        f"request body: {where} is {_sample(text)}, which holds a lone surrogate (\\ud800-\\udfff); "
        "send valid Unicode text"
    )


def parse_json(raw: bytes) -> Any:
    """The JSON value of a body already capped by :func:`read_capped`, or :class:`Unprocessable` saying why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Unprocessable(f"request body: not UTF-8 (byte {error.start}); send UTF-8 JSON such as {{}}") from None
    if not text.strip():
        raise Unprocessable("request body: empty; send a JSON object such as {}")
    if _nesting(text) > MAX_BODY_DEPTH:
        raise Unprocessable(
            f"request body: nested more than {MAX_BODY_DEPTH} arrays or objects deep; send a flatter JSON value"
        )
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except ValueError as error:  # JSONDecodeError, and ints longer than Python converts
        raise Unprocessable(f"request body: not valid JSON ({error}); send a JSON object such as {{}}") from None
    _check_unicode(value, "")
    return value
