"""The small value objects a schedule is configured with: phase (Spread, Fixed) and catch-up (Latest, Backfill).

They import nothing from Airflow, so DAG files and the pure arithmetic can share them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ._time.catch_up import past_deadline
from ._time.durations import US_PER_SECOND, parse_duration, shown
from ._time.phase import spread_phase
from .instants import to_us

MAX_BACKFILL = 1000
"""The most missed occurrences a catch-up runs: it bounds the scheduler's work after any downtime."""


@dataclass(frozen=True)
class Spread:
    """A phase taken from a stable hash of the DAG id (or ``key``), below ``max``.

    Without ``max`` an interval cadence spreads over the interval or 15 minutes,
    whichever is shorter, and a calendar cadence over 15 minutes. ``step`` is the
    resolution: ``Spread(max="15m", step="1m")`` gives the anti-herd offset of 0 to
    14 whole minutes. Both are durations, at most 366 days.
    """

    max: str | timedelta | None = None
    step: str | timedelta = "1s"
    max_us: int | None = field(init=False, repr=False, compare=False)
    step_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        max_us = None if self.max is None else parse_duration("phase.spread.max", self.max)
        step_us = parse_duration("phase.spread.step", self.step)
        if max_us is not None and step_us > max_us:
            raise ValueError(f"phase.spread.step: {self.step!r} is longer than max {self.max!r}; use a step below max")
        object.__setattr__(self, "max_us", max_us)
        object.__setattr__(self, "step_us", step_us)

    def resolve(self, key: str | None, default_bound: int) -> int:
        if key is None:
            return 0
        return spread_phase(key, self.max_us if self.max_us is not None else default_bound, self.step_us)

    def to_dict(self) -> dict:
        return {"kind": "spread", "max_us": self.max_us, "step_us": self.step_us}


def anti_herd() -> Spread:
    """The stable 0 to 14 whole-minute offset per DAG that keeps a thousand "daily 09:00" DAGs apart."""
    return Spread(max=timedelta(minutes=15), step=timedelta(minutes=1))


@dataclass(frozen=True)
class Fixed:
    """Every run starts this long after its occurrence; ``Fixed("0s")`` starts at the occurrence.

    A phase at or above the interval is allowed: each run then starts after the
    next occurrence, and its results arrive that much later. At most 366 days.
    """

    offset: str | timedelta
    offset_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "offset_us", parse_duration("phase.fixed", self.offset, allow_zero=True))

    def resolve(self, key: str | None, default_bound: int) -> int:
        return self.offset_us

    def to_dict(self) -> dict:
        return {"kind": "fixed", "offset_us": self.offset_us}


Phase = Spread | Fixed


def phase_from_dict(data: dict) -> Phase:
    if data["kind"] == "fixed":
        return Fixed(timedelta(microseconds=data["offset_us"]))
    max_us = data["max_us"]
    return Spread(
        max=None if max_us is None else timedelta(microseconds=max_us),
        step=timedelta(microseconds=data.get("step_us", US_PER_SECOND)),
    )


@dataclass(frozen=True)
class Latest:
    """After downtime, run only the newest due occurrence, against its own window (the default)."""

    @property
    def backlog(self) -> int:
        return 1

    def describe(self) -> str:
        return "latest"


@dataclass(frozen=True)
class Backfill:
    """After downtime, also run the ``limit`` most recent missed occurrences, oldest first, each against its own window.

    The newest due occurrence always runs (as with ``Latest()``); ``limit`` counts the
    missed ones before it that run too, so ``Backfill(limit=12)`` after a long gap makes
    13 runs: the 12 most recent missed windows and the current one. Older missed
    occurrences are skipped. It is 1 to 1000: the scheduler steps back at most that many
    occurrences after downtime. Older gaps are what ``airflow backfill create`` is for.
    """

    limit: int

    def __post_init__(self) -> None:
        limit = self.limit
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(
                f"catch_up.backfill.limit: {shown(limit)} is a {type(limit).__name__}; give a whole number of "
                f"runs from 1 to {MAX_BACKFILL}, e.g. Backfill(limit=12)"
            )
        if not 1 <= limit <= MAX_BACKFILL:
            raise ValueError(
                f"catch_up.backfill.limit: {shown(limit)} is outside 1 to {MAX_BACKFILL}; catch-up runs at most "
                f"the {MAX_BACKFILL} newest missed occurrences, e.g. Backfill(limit=12); for older ones use "
                f"airflow backfill create"
            )

    @property
    def backlog(self) -> int:
        """Due occurrences a catch-up runs: the newest one plus the ``limit`` missed before it."""
        return self.limit + 1

    def describe(self) -> str:
        return f"backfill {self.limit}"


CatchUp = Latest | Backfill


def catch_up_from_dict(data: dict) -> CatchUp:
    return Backfill(limit=data["limit"]) if data["kind"] == "backfill" else Latest()


def catch_up_to_dict(policy: CatchUp) -> dict:
    return {"kind": "backfill", "limit": policy.limit} if isinstance(policy, Backfill) else {"kind": "latest"}


def check_phase(value: object) -> Phase | None:
    if value is None or isinstance(value, (Spread, Fixed)):
        return value
    raise TypeError(f"phase: {shown(value)} is not a phase; use Spread(max='5m') or Fixed('2m10s')")


def check_catch_up(value: object) -> CatchUp:
    if value is None:
        return Latest()
    if isinstance(value, (Latest, Backfill)):
        return value
    raise TypeError(f"catch_up: {shown(value)} is not a catch-up policy; use Latest() or Backfill(limit=12)")


def check_key(key: object) -> str | None:
    """``key`` if a phase can be hashed from it: ``None``, or non-empty text that is valid UTF-8."""
    if key is None:
        return None
    if not isinstance(key, str):
        raise TypeError(f"key: {shown(key)} is a {type(key).__name__}; give a non-empty string such as 'team-x'")
    if not key:
        raise ValueError("key: '' is empty; give a non-empty string such as 'team-x' (the phase is hashed from it)")
    try:
        key.encode("utf-8")  # the phase hashes these bytes; a lone surrogate has none
    except UnicodeEncodeError:
        raise ValueError(f"key: {shown(key)} is not valid UTF-8 text; use letters, digits, - and _") from None
    return key


def missed_deadline(due: datetime, now: datetime, deadline: timedelta | None) -> bool:
    """Whether a run due at ``due`` and not started by ``now`` waited longer than its starting ``deadline``.

    The starting-deadline rule for readers outside the pure core (the function dispatch's
    admission, the explainer): the same rule the scheduler's catch-up applies.
    """
    if deadline is None:
        return False
    return past_deadline(to_us(due), to_us(now), deadline // timedelta(microseconds=1))
