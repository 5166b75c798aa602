"""Where a cursor lives between fires: a small pluggable store, an Airflow Variable by default.

A store keeps one serialized JSON document per function. It is a resumption
pointer, never a system of record: losing it makes the next fire start again from
the function's ``initial`` cursor, which reprocesses a window and loses nothing.

The store runs in the worker, so the default goes through the Task SDK (the
Execution API), never the metadata database directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from airflow.sdk import Variable


@dataclass(frozen=True)
class StoreLocation:
    """Where a cursor lives, for status pages: never the cursor itself."""

    provider: str
    """The kind of store, e.g. ``"airflow-variable"``."""
    reference: str
    """What to open to read or edit it, e.g. the Variable key."""


@runtime_checkable
class CursorStore(Protocol):
    """What a cursor store provides. Implement it to keep cursors elsewhere (a bucket, a table).

    ``read`` raises when the store cannot be read (the fire then fails to start, with
    the cause in its log); it returns ``None`` only when nothing was ever stored (or
    the document was deleted), which makes the fire use the function's ``initial``.
    ``write`` raises when the document could not be saved (the fire is then Failed
    and the old cursor stays).
    """

    @property
    def location(self) -> StoreLocation: ...

    def read(self) -> str | None: ...

    def write(self, document: str, *, written_by: str) -> None: ...


class VariableStore:
    """Keep the cursor in the Airflow Variable ``key`` (default ``<dag_id>-state``), as JSON.

    The Variable holds exactly the cursor, so it can be read and edited in the UI
    (Admin > Variables); its description says which run wrote it last. An edit takes
    effect at the next fire. Deleting it makes the next fire start from ``initial``.
    """

    provider = "airflow-variable"

    def __init__(self, key: str) -> None:
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"store key: {key!r}; give the non-empty name of the Airflow Variable to use")
        self.key = key

    @property
    def location(self) -> StoreLocation:
        return StoreLocation(self.provider, self.key)

    def read(self) -> str | None:
        # No deserialize_json: the fire decodes (and size-checks) the same text it writes.
        return Variable.get(self.key, default=None)

    def write(self, document: str, *, written_by: str) -> None:
        Variable.set(self.key, document, description=f"tessera cursor; last written by {written_by}")

    def __repr__(self) -> str:
        return f"VariableStore({self.key!r})"


def default_store(dag_id: str) -> VariableStore:
    """The store a function uses when it names none: the Variable ``<dag_id>-state``."""
    return VariableStore(f"{dag_id}-state")
