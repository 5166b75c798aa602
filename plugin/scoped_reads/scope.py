"""The DAGs a caller may read, as every scoped read takes them."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class Scope:
    """The DAGs a caller may read: those the route authorized, and those Airflow's auth manager lists.

    Asking the auth manager costs a query over every DAG, so it is asked at most once per scope,
    and only when a read reaches past the DAGs the route already authorized (a pool's holders,
    the DAGs of a file in error).
    """

    authorized: frozenset[str] = frozenset()
    """The DAG ids the route's own dependency authorized (the DAG of its path): read without asking."""
    ask: Callable[[], Collection[str]] | None = field(default=None, compare=False)
    """Gives every DAG id the caller may read; None: every DAG (a CLI reading the database it was given)."""

    @classmethod
    def of_caller(cls, ask: Callable[[], Collection[str]], *, route_dag: str | None = None) -> Scope:
        """A request's scope: ``ask`` (``routes.access.readable`` for its user) and the DAG its route authorized."""
        return cls(frozenset() if route_dag is None else frozenset({route_dag}), ask)

    @classmethod
    def of(cls, readable: Collection[str]) -> Scope:
        """The scope of a request whose readable DAG ids are already known."""
        ids = frozenset(readable)
        return cls(ids, lambda: ids)

    @classmethod
    def everything(cls) -> Scope:
        """Every DAG: for the CLI, which reads the metadata database it was pointed at, as its owner."""
        return cls()

    @cached_property
    def _readable(self) -> frozenset[str] | None:
        return None if self.ask is None else frozenset(self.ask())

    def allows(self, dag_id: str) -> bool:
        if dag_id in self.authorized:
            return True
        readable = self._readable
        return readable is None or dag_id in readable

    def only(self, dag_ids: Iterable[str]) -> list[str]:
        """``dag_ids`` the caller may read, sorted, duplicates dropped."""
        return sorted({dag_id for dag_id in dag_ids if self.allows(dag_id)})
