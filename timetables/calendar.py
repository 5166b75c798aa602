"""Calendar cadences (hour, day, week, month at a wall-clock time in a timezone). Being built: issue 3."""

from __future__ import annotations

from .base import TesseraTimetable


class Calendar(TesseraTimetable):
    """Placeholder until issue 3 lands; constructing it is refused."""

    def __init__(self, *args, **kwargs) -> None:
        raise NotImplementedError("calendar cadences are not built yet")
