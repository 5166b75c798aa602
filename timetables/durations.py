"""Durations as users write them (``"30s"``, ``"5m"``, ``"1h30m"``, ``"2d"`` or a ``timedelta``).

The public face of the pure core's duration rules, for every part of tessera that takes or
prints a duration (the failure backoff, the CLI, the REST API), so they all read and write
durations exactly as the timetables do.
"""

from __future__ import annotations

from ._time.durations import format_duration, parse_duration

__all__ = ["format_duration", "parse_duration"]
