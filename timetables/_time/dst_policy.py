"""DST policies: which instants a local wall-clock reading stands for.

A reading such as "01:30 on 2026-11-01 in America/New_York" names zero, one or
two instants: none inside a spring-forward gap (the clock jumps over it), two
inside a fall-back fold (the clock shows it twice), one otherwise. A DST policy
decides what a schedule does with those readings:

- ``"cronjob"``: every instant whose reading matches fires, so a repeated reading
  fires twice and a skipped one never. This is what a Kubernetes CronJob does.
- ``"once"``: each reading fires once: a repeated one at its first instance, a
  skipped one at the first instant after the gap (several skipped readings of one
  gap collapse into that single instant). Unlike the calendar cadences'
  :mod:`.wallclock` rule, this holds for a date a zone skipped whole too
  (Pacific/Apia's 2011-12-30): a cron time is a reading, not a calendar day.

Python's PEP 495 ``fold`` attribute classifies a reading without touching zone
internals: ``utcoffset`` at ``fold=0`` is the offset before a transition and at
``fold=1`` the offset after, so equal offsets mean an ordinary reading, a larger
``fold=0`` offset a fold (the clock went back) and a smaller one a gap.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Literal
from zoneinfo import ZoneInfo

from .durations import US_PER_DAY, US_PER_MINUTE

DstPolicy = Literal["cronjob", "once"]
DST_POLICIES: tuple[str, ...] = ("cronjob", "once")

EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_ONE_US = datetime.timedelta(microseconds=1)


def check_dst_policy(value: object) -> DstPolicy:
    if value not in DST_POLICIES:
        raise ValueError(
            f"dst: {value!r} is not a DST policy; use 'cronjob' (a repeated time fires twice, a "
            f"skipped one never) or 'once' (each wall-clock time fires exactly once)"
        )
    return value  # type: ignore[return-value]


class DstClock:
    """One timezone's wall clock read under a DST policy: readings as instants (microseconds since the epoch)."""

    __slots__ = ("zone", "policy")

    def __init__(self, zone: ZoneInfo, policy: DstPolicy) -> None:
        self.zone = zone
        self.policy = policy

    def instants(self, day: int, minutes: Sequence[int]) -> list[int]:
        """The instants, ascending, at which the clock reads ``minutes`` (minutes of the day) on ``day``.

        ``day`` counts local calendar days since 1970-01-01. Each reading is at second 0.
        """
        date = datetime.date.fromordinal(day + EPOCH_ORDINAL)
        year, month, dom, zone = date.year, date.month, date.day, self.zone
        midnight = day * US_PER_DAY
        found: list[int] = []
        irregular = False
        for minute in minutes:
            hour, minute_of_hour = divmod(minute, 60)
            before = zone.utcoffset(datetime.datetime(year, month, dom, hour, minute_of_hour))
            after = zone.utcoffset(datetime.datetime(year, month, dom, hour, minute_of_hour, fold=1))
            reading = midnight + minute * US_PER_MINUTE
            if before == after:
                found.append(reading - before // _ONE_US)
                continue
            irregular = True
            if before > after:  # a fold: the reading happens at two instants
                found.append(reading - before // _ONE_US)
                if self.policy == "cronjob":
                    found.append(reading - after // _ONE_US)
            elif self.policy == "once":  # a gap: the reading never happens
                found.append(self._gap_end(reading - after // _ONE_US, reading - before // _ONE_US))
        # Inside a fold the instants of later readings can precede those of earlier ones,
        # and under "once" several skipped readings share the instant that ends their gap.
        return sorted(set(found)) if irregular else found

    def _offset_at(self, instant: int) -> datetime.timedelta:
        return (_EPOCH + datetime.timedelta(microseconds=instant)).astimezone(self.zone).utcoffset()  # type: ignore[return-value]

    def _gap_end(self, low: int, high: int) -> int:
        """The first instant after the gap that swallowed a reading.

        ``low`` (the reading at the post-gap offset) is still before the transition and
        ``high`` (the reading at the pre-gap offset) already after it; bisect between them.
        """
        offset_before = self._offset_at(low)
        while high - low > 1:
            middle = (low + high) // 2
            if self._offset_at(middle) == offset_before:
                low = middle
            else:
                high = middle
        return high
