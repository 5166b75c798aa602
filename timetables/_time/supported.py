"""The years tessera supports, 1900 up to (not including) 3000: the one home of that fact.

Every instant a DAG file or a caller gives (start and end dates, ``after``, a backfill's
range), every date an exclusion names, every wall-clock reading a partition key may hold
and every zone history read lies in these years; each module that checks or steps through
them takes its bound from here. With every duration at most 366 days, nothing computed
from them leaves the years ``datetime`` can hold (1-9999).
"""

from __future__ import annotations

import datetime

FIRST_YEAR = 1900
"""The first supported year."""
END_YEAR = 3000
"""The first year past the supported ones (exclusive)."""
LAST_YEAR = END_YEAR - 1
"""The last supported year."""

FIRST_DATE = datetime.date(FIRST_YEAR, 1, 1)
LAST_DATE = datetime.date(LAST_YEAR, 12, 31)
FIRST_READING = datetime.datetime(FIRST_YEAR, 1, 1)
"""The first wall-clock reading (naive: on any zone's clock)."""
END_READING = datetime.datetime(END_YEAR, 1, 1)
"""The first wall-clock reading past the supported years (exclusive)."""
SUPPORTED_FROM = FIRST_READING.replace(tzinfo=datetime.timezone.utc)
"""The first supported instant."""
SUPPORTED_UNTIL = END_READING.replace(tzinfo=datetime.timezone.utc)
"""The end, exclusive, of the supported instants."""
YEARS = f"{FIRST_YEAR}-{LAST_YEAR}"
"""The supported years as messages name them."""
DATES = f"{FIRST_DATE.isoformat()} to {LAST_DATE.isoformat()}"
"""The supported dates as messages name them."""
