"""A cadence proxy that counts the steps the engine asks for: cost is measured in steps, never in seconds."""

from __future__ import annotations

from tessera.timetables._time.cadence import Cadence


class CountingCadence:
    """Forwards every :class:`Cadence` call to ``inner`` and counts it.

    Raises once ``budget`` steps are exceeded, so an unbounded walk fails fast instead of hanging.
    """

    def __init__(self, inner: Cadence, budget: int | None = None) -> None:
        self.inner = inner
        self.steps = 0
        self.budget = budget

    def _count(self, n: int = 1) -> None:
        self.steps += n
        if self.budget is not None and self.steps > self.budget:
            raise AssertionError(f"more than {self.budget} cadence steps: the walk is not bounded")

    def following(self, t: int) -> int:
        self._count()
        return self.inner.following(t)

    def at_or_before(self, t: int) -> int:
        self._count()
        return self.inner.at_or_before(t)

    def at_or_after(self, t: int) -> int:
        self._count()
        return self.inner.at_or_after(t)

    def preceding(self, occurrence: int) -> int:
        self._count()
        return self.inner.preceding(occurrence)

    # Adapters look at a few cadence attributes (an @every interval, the grid's type); pass them through.
    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)
