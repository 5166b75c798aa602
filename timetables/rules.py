"""The input rules every layer shares with the timetables: durations, zone names, and quoting a user's value.

The one definition of each is in the pure core (``timetables/_time``), which the timetables' own
refusals use; this module is their public face for the rest of tessera (the declared schedules,
cursor functions, failure backoff, the CLI and the REST API), since nothing outside
``timetables/`` reaches into the core. So every part reads and writes ``"30s"``, ``"1h30m"`` or a
``timedelta`` exactly as the timetables do, accepts and refuses the same zone names with the same
words, and shows a bad value in a refusal the same short, safe way.
"""

from __future__ import annotations

from ._time.durations import format_duration, parse_duration
from ._time.excerpt import LIMIT, clip, digits_of, excerpt, lone_surrogate, not_unicode
from ._time.wallclock import MAX_ZONE_NAME, load_zone

__all__ = [
    # durations as users write them ("30s", "5m", "1h30m", "2d" or a timedelta)
    "format_duration",
    "parse_duration",
    # the zone rule: a key of zoneinfo.available_timezones() but 'localtime' and 'Factory'
    "MAX_ZONE_NAME",
    "load_zone",
    # short renderings of user-given values for refusals, safe for any value
    "LIMIT",
    "clip",
    "digits_of",
    "excerpt",
    "lone_surrogate",
    "not_unicode",
]
