"""The keywords every tessera timetable takes besides its own: one declaration for every constructor.

``Every``, the calendar cadences, ``Cron`` and ``Union`` each declare only what is theirs
(an interval, a wall time, an expression, members) and take these as ``**options``, typed
with :class:`Options` so an editor and a type checker still see each keyword and its type.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypedDict

from .policies import CatchUp, Phase

Duration = str | datetime.timedelta


class Options(TypedDict, total=False):
    """What each keyword does is in :class:`~tessera.timetables.Every`'s docstring."""

    delay: Duration | None
    window: Duration | None
    phase: Phase | None
    catch_up: CatchUp | None
    key: str | None
    partitioned: bool
    key_format: str | None
    overlap: str | None
    pause_after_failures: int | None
    dropped: str | None


OPTION_NAMES = tuple(Options.__annotations__)
"""The shared keywords, in the order the docstrings list them."""


def check_options(owner: str, options: Mapping[str, Any]) -> None:
    """Refuse a key of ``options`` that is not one of :data:`OPTION_NAMES`.

    Python would name the private method the keywords are passed on to; this names the
    constructor the DAG file called, the keyword and the ones it could have meant.

    :raises TypeError: a keyword that no tessera timetable takes.
    """
    for name in options:
        if name not in OPTION_NAMES:
            raise TypeError(
                f"{owner}: {name!r} is not a keyword it takes; besides its own it takes {', '.join(OPTION_NAMES)}"
            )
