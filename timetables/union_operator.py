"""The ``|`` operator of tessera timetables: ``Every.day(at="09:00", timezone=Z) | Cron("0 17 * * 5", timezone=Z)``."""

from __future__ import annotations

from typing import Any


class Unites:
    """Mixed into :class:`~tessera.timetables.base.TesseraTimetable`: ``a | b`` is ``Union(a, b)``."""

    def __or__(self, other: object) -> Any:
        from .union import Union  # the union is itself a timetable: imported when first used

        return Union(self, other)
