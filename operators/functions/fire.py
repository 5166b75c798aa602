"""One fire's cursor bookkeeping: read, splice, validate, extract, size-check, save.

The rule it enforces: the stored cursor advances only on a clean success, that
is the function returned, its output is valid, and the new cursor was saved.
Every other path raises before :meth:`CursorFire.conclude` reaches the store
write, so the stored cursor stays exactly as it was and the next fire retries the
same window. No Airflow here: the operator adds the recording and the metrics.

What a failure says is recorded where every viewer of the DAG reads it (fire
records, status, task log), while the cursor lives in a store only some may read.
So no message here quotes a cursor, an input or an output: it names the JSON path,
the rule, sizes, and for a foreign exception its type and where it was raised.
"""

from __future__ import annotations

import json
import os
import re
import traceback
from dataclasses import dataclass
from typing import Any, ClassVar

from .json_pointer import JsonPointer
from .schema.messages import kind_of
from .spec import FunctionSpec, cursor_size_error, encode_json, schema_violation
from .store import CursorStore


class FireFailed(Exception):
    """A fire that must not advance the cursor; ``reason`` is what status pages show.

    Its message is recorded as is, so it never holds a cursor's, input's or output's value.
    """

    reason: ClassVar[str] = "FireFailed"


class DispatchStartFailed(FireFailed):
    """The fire could not start: typically the cursor store could not be read."""

    reason = "DispatchStartFailed"


class InputInvalid(FireFailed):
    """The stored cursor, spliced into the input, fails ``input_schema`` (e.g. a bad hand edit)."""

    reason = "InputInvalid"


class OutputInvalid(FireFailed):
    """The output fails ``output_schema``, is not JSON, or holds no cursor at ``cursor_from``."""

    reason = "OutputInvalid"


class CursorTooLarge(FireFailed):
    """The new cursor is over 64 KiB of JSON."""

    reason = "CursorTooLarge"


class CursorWriteFailed(FireFailed):
    """The function succeeded but the new cursor could not be saved: the fire is still Failed."""

    reason = "CursorWriteFailed"


@dataclass(frozen=True)
class Prepared:
    """What a fire calls the function with."""

    payload: Any
    from_store: bool
    """False when the store was empty and ``initial`` was used."""


@dataclass(frozen=True)
class Concluded:
    """A clean fire: the validated output and the cursor document that was (or, dry, would be) saved."""

    output: Any
    cursor_document: str | None
    saved: bool


class CursorFire:
    """The bookkeeping around one call of a function, against one store."""

    def __init__(self, spec: FunctionSpec, store: CursorStore | None) -> None:
        if spec.carries_cursor and store is None:
            raise ValueError("store: None; a function that carries a cursor needs a store")
        self.spec = spec
        self.store = store if spec.carries_cursor else None

    def prepare(self) -> Prepared:
        """Read the stored cursor and build the input; ``DispatchStartFailed``/``InputInvalid``."""
        cursor, from_store = self.spec.initial, False
        if self.store is not None:
            where = f"{self.store.location.provider} {self.store.location.reference!r}"
            try:
                document = self.store.read()
            except Exception as error:
                # `from None`: the store's own message (which Airflow would log as the cause) may quote the cursor.
                raise DispatchStartFailed(f"cursor store {where} could not be read: {error_summary(error)}") from None
            if document is not None:
                cursor, from_store = _decode(where, document), True
        payload = self.spec.input_with(cursor)
        if problem := schema_violation(self.spec.input_schema, payload):
            raise InputInvalid(f"input with the stored cursor fails input_schema {problem}")
        return Prepared(payload, from_store)

    def conclude(self, output: Any, *, save: bool, written_by: str) -> Concluded:
        """Validate the output and save its cursor; raises (and saves nothing) unless all is clean."""
        _encode("output", output)
        if problem := schema_violation(self.spec.output_schema, output):
            raise OutputInvalid(f"output fails output_schema {problem}")
        if self.spec.cursor_from is None:
            return Concluded(output, None, False)
        try:
            cursor = self.spec.cursor_from.resolve(output)
        except LookupError as error:
            raise OutputInvalid(f"output holds no cursor at cursor_from {self.spec.cursor_from}: {error}") from None
        document = _encode("cursor", cursor)
        if problem := cursor_size_error("cursor", document):
            raise CursorTooLarge(problem)
        store = self.store  # never None here: a spec with cursor_from carries a cursor
        if not save or store is None:
            return Concluded(output, document, False)
        try:
            store.write(document, written_by=written_by)
        except Exception as error:
            raise CursorWriteFailed(
                f"cursor could not be saved to {store.location.provider} "
                f"{store.location.reference!r}: {error_summary(error)}; the old cursor stays"
            ) from None
        return Concluded(output, document, True)


def output_without_cursor(cursor_from: JsonPointer | None, output: Any) -> Any:
    """``output`` with its cursor taken out: what the task pushes as its return value.

    Every viewer of a DAG reads its XComs, while the cursor lives in a store that may need
    more (the Variable needs the op role). An object member at ``cursor_from`` is removed,
    an array item becomes ``null`` (the other items keep their places), and when the whole
    output is the cursor (``cursor_from=""``) nothing is pushed. Containers along the path
    are copied, so the validated output itself is never changed.
    """
    if cursor_from is None:
        return output
    return None if not cursor_from.tokens else _without(output, cursor_from.tokens)


def _without(node: Any, tokens: tuple[str, ...]) -> Any:
    head, rest = tokens[0], tokens[1:]
    if isinstance(node, dict):
        copied = dict(node)
        if rest:
            copied[head] = _without(node[head], rest)
        else:
            del copied[head]
        return copied
    items, index = list(node), int(head)  # conclude() resolved this pointer: the path exists
    items[index] = _without(node[index], rest) if rest else None
    return items


def error_summary(error: BaseException) -> str:
    """A foreign exception as its type, errno or HTTP status, and where it was raised; never its message.

    A store's, a client's or a user's exception text may quote the cursor or the payload;
    the type and the innermost frame (code, not data) are enough to find the cause.
    """
    parts = [type(error).__name__]
    if isinstance(error, OSError) and isinstance(error.errno, int):
        parts.append(f"errno {error.errno} ({os.strerror(error.errno)})")
    status = getattr(getattr(error, "response", None), "status_code", None)
    if isinstance(status, int):
        parts.append(f"HTTP {status}")
    frames = traceback.extract_tb(error.__traceback__)
    if frames:
        parts.append(f"raised at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name}")
    return ", ".join(parts)


def _decode(where: str, document: Any) -> Any:
    """The stored cursor; a hand edit that is not JSON is described by its size and the error's position."""
    try:
        return json.loads(document)
    except json.JSONDecodeError as error:
        raise DispatchStartFailed(
            f"cursor store {where} holds {len(error.doc.encode())} bytes of text that is not JSON "
            f"({error.msg}: line {error.lineno} column {error.colno}); fix it, or delete it to start again "
            "from initial"
        ) from None
    except (TypeError, ValueError) as error:
        raise DispatchStartFailed(
            f"cursor store {where} returned {kind_of(document)} that is not JSON text "
            f"({type(error).__name__}); a store's read() returns a str, or None when empty"
        ) from None


def _encode(field: str, value: Any) -> str:
    """``value`` as the compact JSON a store keeps, or ``OutputInvalid`` saying why without quoting it."""
    try:
        document = encode_json(field, value)
    except (ValueError, RecursionError):
        raise OutputInvalid(_refusal(field, value)) from None  # encode_json's message quotes the value
    try:
        document.encode()
    except UnicodeEncodeError as error:  # a lone surrogate: no store (nor UTF-8) can hold it
        code = ord(document[error.start])
        raise OutputInvalid(f"{field} is not Unicode text: it holds a lone surrogate (U+{code:04X})") from None
    return document


def _refusal(field: str, value: Any) -> str:
    try:
        json.dumps(value, allow_nan=False)
    except TypeError as error:
        # The standard library's text names only the type ("Object of type set is not JSON serializable").
        found = re.match(r"Object of type (\w+)", str(error))
        what = f"a {found.group(1)}" if found else "a key or value of a kind JSON cannot hold"
        return f"{field} is not JSON: it holds {what}"
    except ValueError:
        return f"{field} is not JSON: it holds NaN, an infinity or a circular reference"
    except RecursionError:
        return f"{field} is not JSON: it nests too deeply"
    return f"{field}: {kind_of(value)} is over the JSON bounds of a cursor function"
