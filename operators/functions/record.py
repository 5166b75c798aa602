"""What a fire leaves behind for the status page: a small JSON record, in XCom, when it is not a clean success.

Airflow's run history says *that* a task ran and how its process ended; it cannot
say *why* a tick was declined, or *what* failed in a fire. So the decision points
write this record on the cursor task instance, under the XCom key
:data:`RECORD_KEY`:

* a fire that does not succeed writes ``phase="finished"``, its outcome and what
  failed (``FunctionError``, ``OutputInvalid``, ``CursorTooLarge``...), before its
  task fails;
* a fire that could not start (its store unreadable) writes ``phase="skipped"``
  with reason ``DispatchStartFailed``; its task fails, so Airflow's alerting sees it;
* the scheduler-side admission writes ``phase="skipped"`` with the reason when it
  declines a tick (the task instance is then ``skipped``);
* a dry run writes ``phase="dry_run"``, which the status ignores.

A clean fire writes nothing: its task instance only succeeds once the cursor is
saved, so the task state says it all, and the fire spends one Execution API call
less. A task instance that stopped without succeeding and without a record never
reported its result (its worker died): ``Unknown``. Airflow clears a task
instance's XComs when it runs again, so a record always describes the latest try.

Every viewer of the DAG can read a record (and the status built from it), while
the cursor lives in a store only some may read. So a record never holds a
cursor's, an input's or an output's value: its ``message`` names the JSON path,
the rule and sizes (see :mod:`tessera.operators.functions.fire`).
"""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any

RECORD_KEY = "tessera_fire"


class Outcome(str, Enum):
    """How a fire ended."""

    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"
    """The result was never observed (the worker died mid-fire): not counted as a failure."""


class SkipReason(str, Enum):
    """Why a tick did not fire. A skip never touches lastFireTime, lastOutcome or consecutiveFailures."""

    SUSPENDED = "Suspended"
    MISSED_DEADLINE = "MissedDeadline"
    CONCURRENCY_FORBIDDEN = "ConcurrencyForbidden"
    DISPATCH_CAP_REACHED = "DispatchCapReached"
    DISPATCH_START_FAILED = "DispatchStartFailed"


class Phase(str, Enum):
    """What a record is about: a fire that ended unclean, a declined tick, or a dry run."""

    FINISHED = "finished"
    SKIPPED = "skipped"
    DRY_RUN = "dry_run"


@dataclass(frozen=True)
class FireRecord:
    """One unclean fire, declined tick or dry run, as the status page reads it back."""

    phase: Phase
    at: str
    """ISO-8601 UTC: when the fire started, or when the tick was declined."""
    outcome: Outcome | None = None
    reason: str | None = None
    """The skip reason, or for a failed fire what failed (``OutputInvalid``, ``Timeout``...)."""
    message: str | None = None
    finished_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["phase"] = self.phase.value
        data["outcome"] = None if self.outcome is None else self.outcome.value
        return {k: v for k, v in data.items() if v is not None}

    @classmethod
    def from_json(cls, data: Any) -> FireRecord | None:
        """The record, or None for anything that is not one (a hand-written XCom, an older format)."""
        if not isinstance(data, dict):
            return None
        try:
            phase = Phase(data["phase"])
            outcome = None if data.get("outcome") is None else Outcome(data["outcome"])
            return cls(
                phase=phase,
                at=str(data["at"]),
                outcome=outcome,
                reason=data.get("reason"),
                message=data.get("message"),
                finished_at=data.get("finished_at"),
            )
        except (KeyError, ValueError):
            return None


def iso(moment: datetime.datetime) -> str:
    """An aware datetime as ISO-8601 UTC text (what records hold)."""
    return moment.astimezone(datetime.timezone.utc).isoformat()


def parse_iso(text: str | None) -> datetime.datetime | None:
    return None if text is None else datetime.datetime.fromisoformat(text)
