"""When a schedule's zone changes its UTC offset, and what the schedule does then: the plan's DST answers.

:class:`~tessera.timetables.public_plan.PublicPlan` answers ``clock_changes`` and ``dst_rule``
through this module; the "why" page explains a run near a change with them.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from zoneinfo import ZoneInfo

_CLOCK_PROBE = datetime.timedelta(hours=12)
"""Offsets are compared this far apart when looking for clock changes: zones change theirs months apart."""
MAX_CLOCK_SPAN = datetime.timedelta(days=400)
"""The longest span :meth:`PublicPlan.clock_changes` searches (about 800 offset look-ups at most)."""

_DST_RULES = {
    "cronjob": "a time the clock skips never fires; a time it repeats fires at both instants (CronJob)",
    "once": "each wall-clock time fires once: a repeated one at its first instant, a skipped one when the gap ends",
    None: "a skipped wall-clock time runs when the gap ends; a repeated one runs once, at its first instant",
}
"""By Cron's ``dst=`` policy; ``None``: the calendar cadences' one rule."""


@dataclass(frozen=True, slots=True)
class ClockChange:
    """The schedule's zone changed its UTC offset at ``at``: a gap (the clock jumps ahead) or a fold."""

    at: datetime.datetime
    offset_before: datetime.timedelta
    offset_after: datetime.timedelta

    @property
    def is_gap(self) -> bool:
        """True when wall-clock readings were skipped (spring forward), False when repeated (fall back)."""
        return self.offset_after > self.offset_before


def dst_rule_of(policy: str | None) -> str:
    """What a wall-clock schedule does with a time a DST change skips or repeats, under Cron's ``policy``."""
    return _DST_RULES.get(policy, _DST_RULES[None])


def offset_changes(timezone: str, start: datetime.datetime, end: datetime.datetime) -> list[ClockChange]:
    """The UTC-offset changes of ``timezone`` in ``(start, end]``, at most :data:`MAX_CLOCK_SPAN` after ``start``."""
    if end <= start:
        return []
    zone = ZoneInfo(timezone)
    end = min(end, start + MAX_CLOCK_SPAN)
    changes, low = [], start
    while low < end:
        high = min(low + _CLOCK_PROBE, end)
        before, after = low.astimezone(zone).utcoffset(), high.astimezone(zone).utcoffset()
        if before != after:
            changes.append(ClockChange(_offset_change(zone, low, high), before, after))  # type: ignore[arg-type]
        low = high
    return changes


def _offset_change(zone: ZoneInfo, low: datetime.datetime, high: datetime.datetime) -> datetime.datetime:
    """The first instant in ``(low, high]`` with ``high``'s offset (one change between them), to the second."""
    offset = high.astimezone(zone).utcoffset()
    while high - low > datetime.timedelta(seconds=1):
        middle = low + (high - low) / 2
        if middle.astimezone(zone).utcoffset() == offset:
            high = middle
        else:
            low = middle
    return high.replace(microsecond=0) if high.microsecond else high
