"""How every route of the tessera API is declared: with its DAG scope, its work budget and its cancellation.

A router is made by :func:`guarded_router` and each of its routes declared with :func:`route`,
which takes, besides FastAPI's own options, the two facts no route may go without:

* its :class:`Scope`: whose DAGs the answer may show. One DAG (the path's ``dag_id``), authorized
  by Airflow's dependency for the right the route needs; or a list, which shows only the DAGs the
  caller may read (``access.readable``); or no DAG's data at all (the page's files).
* its :class:`Budget`: the most work one request may cost (runs, rows or DAGs), and how that is
  checked before the work starts: the route's inputs are turned into a cost by a dependency that
  refuses (:class:`~tessera.plugin.errors.TooMuchWork`, 422) naming the parameter and its
  largest allowed value; or FastAPI's validation bounds the one parameter the cost grows with;
  or the cost does not depend on what the caller sends.

The third, cancellation, every route gets from :class:`GuardedRoute` itself: while the request
runs, a task watches its connection, and once the client disconnects every
:func:`~tessera.plugin.cancellation.checkpoint` the work passes raises, so the worker thread is
free within one unit of work (a DAG, a run), and the request ends with 499 (sent to no one). A
client that disconnects while its body is read ends the same way, not as a 500.

The three facts are written into the OpenAPI document as ``x-tessera-scope``, ``x-tessera-budget``
and ``x-tessera-cancel`` (into the route's ``openapi_extra`` for the routes the document leaves
out), where ``tests/plugin/api/test_api_guarded.py`` enumerates them: a route declared any other
way fails it, and a route of a guarded router declared without :func:`route` cannot be built.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from fastapi import APIRouter, Depends, Request, Response
from fastapi.routing import APIRoute

from tessera.plugin.cancellation import Abandoned, abandoned_when

from .access import authenticated

SCOPE, BUDGET, CANCEL = "x-tessera-scope", "x-tessera-budget", "x-tessera-cancel"
"""The OpenAPI extensions holding each operation's three facts."""
CLIENT_CLOSED_REQUEST = 499
"""What the access log records for a request whose caller left (nginx's code; no one receives it)."""
CANCELLATION = {
    "when": "the client disconnects",
    "stops": "at the work's next checkpoint (one DAG or one run later)",
    "status": CLIENT_CLOSED_REQUEST,
}

Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])


@dataclass(frozen=True)
class Scope:
    """Whose DAGs a route's answer may show, and the dependencies that authorize the caller for them."""

    kind: Literal["dag", "readable", "none"]
    rule: str
    dependencies: tuple[Any, ...]

    def openapi(self) -> dict[str, str]:
        return {"kind": self.kind, "rule": self.rule}


def one_dag(rule: str, *rights: Any) -> Scope:
    """The DAG of the path's ``dag_id``, for a caller Airflow grants every one of ``rights`` on it."""
    return Scope("dag", rule, rights)


READABLE_DAGS = Scope("readable", "lists only the DAGs the caller may read", (authenticated,))
NO_DAG_DATA = Scope("none", "shows no DAG's data (the page's files, the API document)", (authenticated,))


@dataclass(frozen=True)
class Budget:
    """The most work one request of a route may cost, and how that is checked before the work starts.

    Made by :meth:`estimated`, :meth:`by_parameter`, :meth:`fixed` or :meth:`while_working`.
    """

    unit: str
    most: int
    checked: Literal["estimate", "parameter", "fixed", "while working"]
    how: str
    check: Callable[..., Any] | None = field(default=None, compare=False)
    parameter: str | None = None

    @classmethod
    def estimated(cls, unit: str, most: int, check: Callable[..., Any], *, how: str) -> Budget:
        """``check``, a dependency, turns the inputs into a cost and refuses one over ``most`` (naming what fits)."""
        return cls(unit, most, "estimate", how, check)

    @classmethod
    def by_parameter(cls, unit: str, most: int, parameter: str) -> Budget:
        """The cost grows with the query parameter ``parameter`` alone, which FastAPI refuses above ``most``."""
        return cls(unit, most, "parameter", f"`{parameter}` is at most {most:,}", parameter=parameter)

    @classmethod
    def fixed(cls, unit: str, most: int, why: str) -> Budget:
        """Nothing the caller sends changes the cost (one DAG's bounded reads, one file)."""
        return cls(unit, most, "fixed", why)

    @classmethod
    def while_working(cls, unit: str, most: int, how: str) -> Budget:
        """A cost known only by doing the work (the runs of a range): the work stops and refuses at ``most``."""
        return cls(unit, most, "while working", how)

    def openapi(self) -> dict[str, Any]:
        facts = {"unit": self.unit, "most": self.most, "checked": self.checked, "how": self.how}
        return facts if self.parameter is None else {**facts, "parameter": self.parameter}


ONE_DAG = Budget.fixed("DAGs", 1, "one DAG; each of its reads is bounded (the last runs, one instant)")
"""The budget of a route about the path's DAG alone."""


class _Connection:
    """The request's receive channel, read by one watcher that notes the client leaving.

    Starlette's ``Request.is_disconnected`` cannot tell: it polls with a cancelled scope, which
    Airflow's middleware stack turns into "still connected", always. The watcher waits on the
    channel instead, which yields ``http.disconnect`` when the client goes. A route that reads a
    body gets its messages through a queue of one, so the body is still read at the route's pace
    (and capped by it); any other route's body is dropped unread.
    """

    def __init__(self, receive: Callable[[], Coroutine[Any, Any, dict[str, Any]]], *, reads_body: bool) -> None:
        self._receive = receive
        self._reads_body = reads_body
        self._messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1)
        self.left = threading.Event()

    async def watch(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self.left.set()  # first: the work stops even while no one reads the queue
                await self._messages.put(message)
                return
            if self._reads_body:
                await self._messages.put(message)

    async def receive(self) -> dict[str, Any]:
        if self.left.is_set() and self._messages.empty():
            return {"type": "http.disconnect"}
        return await self._messages.get()


class GuardedRoute(APIRoute):
    """A route that stops its work when its caller leaves; it refuses to be built without :func:`route`."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        super().__init__(path, endpoint, **options)
        missing = [name for name in (SCOPE, BUDGET, CANCEL) if name not in (self.openapi_extra or {})]
        if missing:
            raise TypeError(
                f"route {path!r}: declared without {', '.join(missing)}; declare it with "
                "tessera.plugin.api.routes.guarded.route(router, method, path, scope=..., budget=...)"
            )

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        reads_body = "requestBody" in (self.openapi_extra or {})

        async def guarded(request: Request) -> Response:
            connection = _Connection(request.receive, reads_body=reads_body)
            # Everything after this reads the channel through the watcher (the body reader too).
            request._receive = connection.receive
            watcher = asyncio.create_task(connection.watch())
            try:
                with abandoned_when(connection.left.is_set):
                    return await handler(request)
            except Abandoned:
                return Response(status_code=CLIENT_CLOSED_REQUEST)
            finally:
                watcher.cancel()

        return guarded


def guarded_router(**options: Any) -> APIRouter:
    """An ``APIRouter`` whose routes are :class:`GuardedRoute` (so each must be declared with :func:`route`)."""
    return APIRouter(route_class=GuardedRoute, **options)


def route(
    router: APIRouter,
    method: str,
    path: str,
    *,
    scope: Scope,
    budget: Budget,
    dependencies: Sequence[Any] = (),
    openapi_extra: dict[str, Any] | None = None,
    **options: Any,
) -> Callable[[Endpoint], Endpoint]:
    """Declare ``endpoint`` as ``method path`` of ``router``, under ``scope`` and ``budget``, cancellable.

    The dependencies run in this order: the scope's (authorization), the budget's check, then
    ``dependencies`` (a body reader, the audit log): so no unauthorized caller learns a cost, and
    no refused request is logged as an action.
    """
    checks = [] if budget.check is None else [Depends(budget.check)]
    facts = {SCOPE: scope.openapi(), BUDGET: budget.openapi(), CANCEL: CANCELLATION}

    def declare(endpoint: Endpoint) -> Endpoint:
        router.add_api_route(
            path,
            endpoint,
            methods=[method],
            dependencies=[*scope.dependencies, *checks, *dependencies],
            openapi_extra={**(openapi_extra or {}), **facts},
            **options,
        )
        return endpoint

    return declare
