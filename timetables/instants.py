"""Airflow's datetimes <-> the pure core's integer microseconds since the Unix epoch.

The core counts instants as integers so its arithmetic is exact; Airflow stores aware
pendulum ``DateTime`` values in UTC. These two conversions are the only bridge.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

import pendulum

if TYPE_CHECKING:
    from pendulum import DateTime

_EPOCH = pendulum.DateTime(1970, 1, 1, tzinfo=pendulum.UTC)
_add = datetime.datetime.__add__
_sub = datetime.datetime.__sub__


def to_us(moment: datetime.datetime) -> int:
    """An aware datetime as microseconds since the Unix epoch (datetime's own C arithmetic, exact)."""
    delta = _sub(moment, _EPOCH)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> DateTime:
    """Microseconds since the Unix epoch as a UTC pendulum ``DateTime`` (what Airflow stores)."""
    return _add(_EPOCH, datetime.timedelta(microseconds=us))
