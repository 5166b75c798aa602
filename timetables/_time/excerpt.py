"""Short renderings of user-given values for error messages, safe for any value.

``repr()`` is not safe for that: it raises ``ValueError`` on an integer of more than
4300 digits (Python's int-to-text limit), recurses without bound into a deeply
nested list, and turns a megabyte string into a megabyte message. A refusal must
name the value without failing itself, so refusals show values through
:func:`excerpt`, which reads only as much of a value as it prints.
"""

from __future__ import annotations

from collections.abc import Iterator

LIMIT = 120
_DEPTH = 8  # containers nested deeper are shown as {...} / [...]
_DIGITS_SHOWN = 40
_LOG10_2 = 0.3010299956639812


def excerpt(value: object, limit: int = LIMIT) -> str:
    """``repr(value)`` for ordinary values, cut to ``limit`` characters; never raises."""
    text = ""
    for piece in _pieces(value, 0, limit):
        text += piece
        if len(text) > limit:
            return text[: limit - 3] + "..."
    return text


def clip(text: str, limit: int = LIMIT) -> str:
    """``text`` itself (no quotes), cut to ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def lone_surrogate(text: str) -> int | None:
    """Where ``text`` holds a lone surrogate (``"\\ud800"`` decodes to one), or None for Unicode text.

    Python keeps such a string, but UTF-8 cannot encode it: a database, a JSON store or an
    HTTP request would fail on it later, far from the field that let it in.
    """
    if text.isascii():
        return None
    try:
        text.encode()
    except UnicodeEncodeError as error:
        return error.start
    return None


def not_unicode(field: str, text: str) -> str | None:
    """The refusal of ``text`` given as ``field`` if it holds a lone surrogate, else None."""
    at = lone_surrogate(text)
    if at is None:
        return None
    return (
        f"{field}: {excerpt(text)} holds a lone surrogate (U+{ord(text[at]):04X} at character {at}), which is "
        "not Unicode text; remove it"
    )


def digits_of(value: int) -> int:
    """The number of decimal digits of ``abs(value)``, without converting it to text (exact below 10**40)."""
    magnitude = abs(value)
    if magnitude.bit_length() <= 132:
        return len(str(magnitude))
    # A lower bound within one digit: (bits - 1) * log10(2) <= log10(magnitude).
    return int((magnitude.bit_length() - 1) * _LOG10_2) + 1


def _pieces(value: object, depth: int, limit: int) -> Iterator[str]:
    kind = type(value)
    if value is None or kind in (bool, float):
        yield repr(value)
    elif kind is int:
        yield _integer(value, limit)  # type: ignore[arg-type]
    elif kind in (str, bytes):
        # A longer text renders past the limit, so excerpt() marks the cut with "...".
        yield repr(value[: limit + 1])  # type: ignore[index]
    elif kind in (dict, list, tuple):
        if depth >= _DEPTH:
            yield {dict: "{...}", list: "[...]", tuple: "(...)"}[kind]
            return
        opening, closing = {dict: "{}", list: "[]", tuple: "()"}[kind]
        yield opening
        items = value.items() if kind is dict else value  # type: ignore[attr-defined]
        for index, item in enumerate(items):  # type: ignore[arg-type]
            if index:
                yield ", "
            if kind is dict:
                yield from _pieces(item[0], depth + 1, limit)
                yield ": "
                item = item[1]
            yield from _pieces(item, depth + 1, limit)
        yield ("," if kind is tuple and len(value) == 1 else "") + closing  # type: ignore[arg-type]
    else:
        yield _other(value, limit)


def _integer(value: int, limit: int) -> str:
    # Exactly when it fits the excerpt (at most 40 digits always; digits_of is within one digit above that).
    if abs(value).bit_length() <= 132 or digits_of(value) < limit:
        return repr(value)
    return f"{'-' if value < 0 else ''}<integer of about {digits_of(value)} digits>"


def _other(value: object, limit: int) -> str:
    # Anything else shows its own repr, which is arbitrary code: it may be huge, recurse or fail.
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__name__} object>"
    return text[: limit + 1]
