"""The one zone rule, for every part of tessera that takes a timezone name.

The timetables, declared schedules and anything else that reads a timezone call
:func:`load_zone`, so they accept and refuse exactly the same names with the same words:
a key of ``zoneinfo.available_timezones()`` other than the machine's own ``'localtime'``
and the placeholder ``'Factory'``.
"""

from __future__ import annotations

from ._time.wallclock import MAX_ZONE_NAME, load_zone

__all__ = ["MAX_ZONE_NAME", "load_zone"]
