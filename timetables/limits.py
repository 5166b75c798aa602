"""The limits every user-given value is checked against, in one place.

=====================================  ==================================================
what                                   limit
=====================================  ==================================================
any duration (interval, delay,         at most :data:`MAX_DURATION` (366 days); strings are
window, phase, spread, deadline)       ASCII digits and lowercase units ms, s, m, h, d
scheduling interval (Every, @every,    whole seconds, 1s or more
unanchored calendar periods)
``Backfill(limit)``                    1 to :data:`MAX_BACKFILL` (1000)
instants (start/end dates, ``after``)  ``SUPPORTED_FROM <= t < SUPPORTED_UNTIL``
=====================================  ==================================================

With every duration at most 366 days and every instant in the supported years (:mod:`._time.supported`), each window,
phase and step computed from them stays far inside the years ``datetime`` can hold
(1-9999), so nothing a DAG declares can overflow inside the scheduler.
"""

from __future__ import annotations

import datetime

from ._time.durations import MAX_DURATION
from ._time.supported import END_YEAR, FIRST_YEAR, SUPPORTED_FROM, SUPPORTED_UNTIL
from .policies import MAX_BACKFILL

__all__ = ["MAX_BACKFILL", "MAX_DURATION", "SUPPORTED_FROM", "SUPPORTED_UNTIL", "check_supported_instant"]


def check_supported_instant(field: str, moment: datetime.datetime) -> None:
    """Refuse an instant outside ``SUPPORTED_FROM <= moment < SUPPORTED_UNTIL`` (a naive one is read as UTC).

    :raises ValueError: naming ``field``, the instant and the range.
    """
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.timezone.utc)
    if not SUPPORTED_FROM <= aware < SUPPORTED_UNTIL:
        raise ValueError(
            f"{field}: {moment.isoformat()} is outside the supported range {SUPPORTED_FROM.isoformat()} <= t < "
            f"{SUPPORTED_UNTIL.isoformat()}; give a date from {FIRST_YEAR} up to, not including, the year {END_YEAR}"
        )
