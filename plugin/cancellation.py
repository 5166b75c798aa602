"""Work that stops when its caller leaves: the checkpoint every long loop of the API's domain passes.

The route mechanism (:mod:`tessera.plugin.api.routes.guarded`) watches each request's connection
and, for as long as the request runs, makes :func:`caller_left` answer whether the client has
disconnected. A loop over units of work (a DAG of the fleet, a run of a timetable) calls
:func:`checkpoint` once per unit, which raises :class:`Abandoned` once the caller has gone, so the
worker thread is free again within one unit of the disconnect.

The answer travels in a context variable rather than as an argument: FastAPI runs a sync route and
its dependencies in a worker thread with a copy of the request's context, so the domain's
functions keep their signatures, and outside a request (``tessera plan --load``) nobody leaves and
the checkpoint costs one lookup.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


def _never() -> bool:
    return False


_caller_left: ContextVar[Callable[[], bool]] = ContextVar("tessera_caller_left", default=_never)


class Abandoned(Exception):
    """The caller left before the answer was ready: the work stopped and nothing is answered."""


def caller_left() -> bool:
    """True once the client of the request this code runs for has disconnected (never outside a request)."""
    return _caller_left.get()()


def checkpoint() -> None:
    """Raise :class:`Abandoned` if the caller has left; call once per unit of work."""
    if caller_left():
        raise Abandoned("the caller left")


def each(items: Iterable[T]) -> Iterator[T]:
    """``items``, passing a :func:`checkpoint` before each one."""
    for item in items:
        checkpoint()
        yield item


@contextlib.contextmanager
def abandoned_when(left: Callable[[], bool]) -> Iterator[None]:
    """Within the block (and the worker threads it starts), :func:`caller_left` answers ``left()``."""
    token = _caller_left.set(left)
    try:
        yield
    finally:
        _caller_left.reset(token)
