"""Daylight saving around T: whether a clock change explains the occurrence (or its absence) at T.

The zone's changes come from the public plan (``clock_changes``); the rule each schedule
applies to a skipped or repeated wall-clock time from ``dst_rule``. Three findings:

* ``gap``: a spring-forward between the occurrence before T and T skipped the wall-clock time
  that occurrence has (its reading falls in the skipped range on the day of the change): the
  schedule had nothing to run that day at that time, under CronJob semantics;
* ``once``: T is the second pass of a repeated wall-clock reading whose first pass was the
  occurrence before T, and the schedule fires a repeated time once;
* ``twice``: the occurrence is the second of two at the same reading (CronJob semantics).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from .schedule import ScheduleView
from .words import when


@dataclass(frozen=True)
class ClockFinding:
    kind: str
    """gap, once, twice or change (a change nearby that decided nothing)."""
    text: str


def _reading(moment: datetime.datetime, zone: ZoneInfo) -> datetime.time:
    return moment.astimezone(zone).time()


def clock_findings(view: ScheduleView, at: datetime.datetime) -> list[ClockFinding]:
    """What the DST changes between the occurrences around T mean for T (empty on absolute time)."""
    focus = view.focus
    if focus is None or not view.clock_changes:
        return []
    zone = ZoneInfo(view.timezone)
    rule = view.dst_rule or "Airflow's cron rules"
    found = []
    for change in view.clock_changes:
        shift = abs(change.offset_after - change.offset_before)
        # The first reading after the change, as a plain wall-clock reading (stdlib, not pendulum,
        # arithmetic: subtracting from it moves the reading, not the instant).
        local = datetime.datetime.fromtimestamp(change.at.timestamp(), zone).replace(tzinfo=None)
        day = f"{local:%Y-%m-%d}"
        if change.is_gap:  # readings [local - shift, local) never happened
            low, high = (local - shift).time(), local.time()
            words = (
                f"on {day} the clock in {view.timezone} jumped ahead at {when(change.at)}: readings "
                f"{low:%H:%M}–{high:%H:%M} did not exist; this schedule: {rule}"
            )
            hit = view.due and focus.nominal < change.at <= at and low <= _reading(focus.nominal, zone) < high
            found.append(ClockFinding("gap" if hit else "change", words))
            continue
        # readings [local, local + shift) happened twice: first in [at - shift, at), again in [at, at + shift)
        low, high = local.time(), (local + shift).time()
        words = (
            f"on {day} the clock in {view.timezone} went back at {when(change.at)}: readings "
            f"{low:%H:%M}–{high:%H:%M} happened twice; this schedule: {rule}"
        )
        kind = "change"
        first_pass = change.at - shift <= focus.nominal < change.at
        if view.due and first_pass and focus.nominal + shift <= at:
            if view.following is None or view.following.nominal > at:
                kind = "once"  # the reading came again before T, and the schedule did not fire it again
        elif view.due and change.at <= focus.nominal < change.at + shift:
            previous = view.previous
            if previous is not None and focus.nominal - previous.nominal == shift:
                kind = "twice"
        found.append(ClockFinding(kind, words))
    return found
