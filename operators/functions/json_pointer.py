"""JSON Pointers (RFC 6901): where a cursor is read from in an output and spliced into an input.

The standard library has none, and jsonschema only *checks* the format through an
optional package this deployment does not install; reading and splicing need the
parsed reference tokens anyway, so the few lines live here.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from tessera.timetables.rules import excerpt

# "~" must be followed by 0 or 1 (RFC 6901 section 3); anything else is malformed.
_BAD_ESCAPE = re.compile(r"~(?![01])")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class JsonPointer:
    """A parsed JSON Pointer: ``""`` is the whole document, ``"/cursor/since"`` a member path."""

    text: str
    tokens: tuple[str, ...]

    @classmethod
    def parse(cls, field: str, text: object) -> JsonPointer:
        """Parse ``text`` or raise ``ValueError`` naming ``field``."""
        if not isinstance(text, str):
            raise ValueError(f"{field}: {excerpt(text)} is not a JSON Pointer; give a string such as '/cursor'")
        if text and not text.startswith("/"):
            raise ValueError(
                f"{field}: {excerpt(text)} is not a JSON Pointer; it must be empty (the whole document) "
                f"or start with '/', e.g. '/{text}'"
            )
        if _BAD_ESCAPE.search(text):
            raise ValueError(
                f"{field}: {excerpt(text)} is not a JSON Pointer; write '~' as '~0' and a '/' inside a name as '~1'"
            )
        raw = text.split("/")[1:] if text else []
        return cls(text, tuple(token.replace("~1", "/").replace("~0", "~") for token in raw))

    def resolve(self, document: Any) -> Any:
        """The value the pointer refers to; ``LookupError`` naming the missing step if absent."""
        node = document
        for depth, token in enumerate(self.tokens):
            node = _step(node, token, self._prefix(depth + 1))
        return node

    def splice(self, document: Any, value: Any) -> Any:
        """A deep copy of ``document`` with ``value`` placed at the pointer.

        Missing objects along the way are created, so ``/state/cursor`` works on an
        input that has no ``state`` yet; an array member must exist or be ``-`` (append).
        The caller's document is never mutated: it is the task's frozen input.
        """
        if not self.tokens:
            return copy.deepcopy(value)
        root = copy.deepcopy(document)
        node = root
        for depth, token in enumerate(self.tokens[:-1]):
            if isinstance(node, dict) and token not in node:
                node[token] = {}
            node = _step(node, token, self._prefix(depth + 1))
        last = self.tokens[-1]
        if isinstance(node, dict):
            node[last] = copy.deepcopy(value)
        elif isinstance(node, list):
            if last == "-":
                node.append(copy.deepcopy(value))
            else:
                node[_index(node, last, self.text)] = copy.deepcopy(value)
        else:
            raise LookupError(
                f"{self._prefix(len(self.tokens) - 1) or '/'} is a {type(node).__name__}, not a container"
            )
        return root

    def _prefix(self, depth: int) -> str:
        return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in self.tokens[:depth])

    def __str__(self) -> str:
        return self.text


def _step(node: Any, token: str, where: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise LookupError(f"{where} does not exist")
        return node[token]
    if isinstance(node, list):
        return node[_index(node, token, where)]
    raise LookupError(f"{where} does not exist: its parent is a {type(node).__name__}, not an object or array")


def _index(node: list[Any], token: str, where: str) -> int:
    if not _ARRAY_INDEX.fullmatch(token) or int(token) >= len(node):
        raise LookupError(f"{where} does not exist: arrays are indexed 0..{len(node) - 1}")
    return int(token)
