"""What the surfaces compute from one stored DAG version, kept from one request to the next.

A stored version's plan is a pure function of it: its timetable's public plan, the schedule facts
of a stored run (from its id and window), the run the DAG row's stored next run is, a lane over a
range, and the first run of that lane after an instant, which stays the first until it starts. The
Schedules page reloads every 30 seconds in every open browser, over every DAG, so each is computed
once per version and argument here rather than on every request. One memo per DAG id, replaced when
the DAG's stored version changes (:mod:`.stored` decodes a new version into a new ``StoredDag``);
each memo holds at most :data:`MAX_ENTRIES` runs, so the whole is bounded by the number of DAGs, as
``stored``'s own cache is.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from typing import Any

from tessera.timetables.public_plan import LaneShape, PublicPlan
from tessera.timetables.run_facts.of_task import RunSchedule

MAX_ENTRIES = 64
"""Runs (by id and window) and stored next runs (by window end) one memo keeps; then it starts over."""


class VersionMemo:
    """The answers computed for one stored version of one DAG."""

    __slots__ = ("stored", "plan", "runs", "lane", "first")

    def __init__(self, stored: Any) -> None:
        self.stored = stored
        self.plan: PublicPlan | None = None
        self.runs: dict[tuple[Any, ...], RunSchedule | None] = {}
        self.lane: tuple[tuple[Any, ...], LaneShape] | None = None
        self.first: tuple[LaneShape, datetime.datetime, RunSchedule, Any] | None = None

    def plan_of(self, timetable: Any) -> PublicPlan:
        """The public plan of the version's timetable (``timetable.plan`` builds a new one on every read)."""
        if self.plan is None:
            self.plan = timetable.plan
        return self.plan

    def run(self, key: tuple[Any, ...], compute: Callable[[], RunSchedule | None]) -> RunSchedule | None:
        """The schedule facts known by ``key`` (a stored run's id and window, or a window end)."""
        if key not in self.runs:
            if len(self.runs) >= MAX_ENTRIES:
                self.runs.clear()
            self.runs[key] = compute()
        return self.runs[key]

    def lane_for(self, key: tuple[Any, ...], compute: Callable[[], LaneShape]) -> LaneShape:
        """The lane for ``key`` (its anchor and range); only the newest key's is kept."""
        if self.lane is None or self.lane[0] != key:
            self.lane = (key, compute())
        return self.lane[1]

    def first_after(
        self, lane: LaneShape, now: datetime.datetime, compute: Callable[[], tuple[RunSchedule | None, Any]]
    ) -> tuple[RunSchedule | None, Any]:
        """The lane's first run after ``now`` and what the caller made of it (``compute``'s answer).

        Kept while it has not started: until then it is the first run after any later instant too.
        """
        found = self.first
        if found is not None and found[0] is lane and found[1] <= now < found[2].run_after:
            return found[2], found[3]
        run, made = compute()
        self.first = None if run is None else (lane, now, run, made)
        return run, made


_memos: dict[str, VersionMemo] = {}
_lock = threading.Lock()


def memo_of(dag_id: str, stored: Any) -> VersionMemo:
    """The memo of ``dag_id``'s stored version ``stored`` (a new one when the version changed)."""
    memo = _memos.get(dag_id)
    if memo is None or memo.stored is not stored:
        with _lock:
            memo = _memos[dag_id] = VersionMemo(stored)
    return memo
