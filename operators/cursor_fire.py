"""One fire's cursor bookkeeping: read, splice, validate, extract, size-check, save.

The rule it enforces: the stored cursor advances only on a clean success, that
is the function returned, its output is valid, and the new cursor was saved.
Every other path raises before :meth:`CursorFire.conclude` reaches the store
write, so the stored cursor stays exactly as it was and the next fire retries the
same window. No Airflow here: the operator adds the recording and the metrics.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from .cursor_store import CursorStore
from .function_spec import FunctionSpec, cursor_size_error, encode_json, schema_violation


class FireFailed(Exception):
    """A fire that must not advance the cursor; ``reason`` is what status pages show."""

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
                raise DispatchStartFailed(f"cursor store {where} could not be read: {error!r}") from error
            if document is not None:
                try:
                    cursor, from_store = json.loads(document), True
                except ValueError as error:
                    raise DispatchStartFailed(
                        f"cursor store {where} holds text that is not JSON ({error}); fix it, or delete it "
                        "to start again from initial"
                    ) from error
        payload = self.spec.input_with(cursor)
        if problem := schema_violation(self.spec.input_schema, payload):
            raise InputInvalid(f"input with the stored cursor fails input_schema {problem}")
        return Prepared(payload, from_store)

    def conclude(self, output: Any, *, save: bool, written_by: str) -> Concluded:
        """Validate the output and save its cursor; raises (and saves nothing) unless all is clean."""
        try:
            encode_json("output", output)
        except ValueError as error:
            raise OutputInvalid(str(error)) from None
        if problem := schema_violation(self.spec.output_schema, output):
            raise OutputInvalid(f"output fails output_schema {problem}")
        if self.spec.cursor_from is None:
            return Concluded(output, None, False)
        try:
            cursor = self.spec.cursor_from.resolve(output)
        except LookupError as error:
            raise OutputInvalid(f"output holds no cursor at cursor_from {self.spec.cursor_from}: {error}") from None
        document = encode_json("cursor", cursor)
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
                f"{store.location.reference!r}: {error!r}; the old cursor stays"
            ) from error
        return Concluded(output, document, True)
