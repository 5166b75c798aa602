"""Failure backoff: a failing run retries after 5, 10, 20, 40 ... minutes, capped at one period.

A failed run is neither abandoned nor retried at once. Each consecutive
failure doubles the wait, and the wait never exceeds one period of the DAG's
own cadence, so a permanently broken daily DAG settles into about one retry a
day instead of hammering its source. A success ends the run; the next run
starts again at 5 minutes. Pausing the DAG is how to stop the retries.

Use it as the DAG's task defaults, with one active run at a time so the
retrying run holds the schedule's slot (the next scheduled run starts once it
succeeds, from the newest due occurrence)::

    schedule = Calendar.day("09:00", timezone="America/New_York")
    with DAG("daily_report", schedule=schedule, max_active_runs=1, default_args=backoff(schedule)):
        ...
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.sdk import RetryDecision, RetryPolicy

from tessera.timetables.durations import format_duration, parse_duration

from .excerpt import excerpt

FIRST_DELAY = timedelta(minutes=5)
"""The longest period or first wait, as for every duration."""
MAX_RETRIES = 1000
RETRIES_AT_CAP = 30
"""Retries left once the wait has reached one period: a month of daily retries, then the run fails."""


class CadenceBackoff(RetryPolicy):
    """Retry the ``n``-th consecutive failure after ``first * 2**(n - 1)``, at most ``cap``.

    It runs in the worker, where Airflow asks it how long to wait after each
    failure; the delay it returns replaces Airflow's own jittered exponential
    backoff, so the waits are exact. Failures count from the task's first try,
    or from its last clear (a clear starts the doubling again, as a success does).

    :param first: the wait after the first failure.
    :param cap: the longest wait: one period of the cadence.
    :param retries: the task's ``retries``, which Airflow adds to the try number on a clear.
    """

    def __init__(self, *, first: timedelta, cap: timedelta, retries: int) -> None:
        self.first = first
        self.cap = cap
        self.retries = retries

    def delay(self, failure: int) -> timedelta:
        """The wait after the ``failure``-th consecutive failure (1-based)."""
        # Integer microseconds: the doubling outgrows timedelta's range long before failures stop.
        first, cap = _us(self.first), _us(self.cap)
        doublings = failure - 1
        wait = cap if doublings >= cap.bit_length() else min(first << doublings, cap)
        return timedelta(microseconds=wait)

    def evaluate(self, exception: BaseException, try_number: int, max_tries: int, context: Any = None) -> RetryDecision:
        # On a clear Airflow sets max_tries = try_number + retries, so this counts from the clear.
        failure = max(1, try_number - max(0, max_tries - self.retries))
        wait = self.delay(failure)
        return RetryDecision.retry(wait, reason=f"backoff after failure {failure}: retry in {_text(wait)}")

    def serialize(self) -> dict[str, Any]:
        return {
            "__type": type(self).__name__,
            "first_s": self.first.total_seconds(),
            "cap_s": self.cap.total_seconds(),
            "retries": self.retries,
        }

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> CadenceBackoff:
        return cls(
            first=timedelta(seconds=data["first_s"]),
            cap=timedelta(seconds=data["cap_s"]),
            retries=data["retries"],
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CadenceBackoff) and self.serialize() == other.serialize()

    def __hash__(self) -> int:
        return hash((self.first, self.cap, self.retries))

    def __repr__(self) -> str:
        return f"CadenceBackoff(first={_text(self.first)}, cap={_text(self.cap)}, retries={self.retries})"


def _us(delta: timedelta) -> int:
    return delta // timedelta(microseconds=1)


def _text(delta: timedelta) -> str:
    return format_duration(_us(delta))


def _bounded(field: str, value: str | timedelta) -> timedelta:
    # The duration rules refuse anything over 366 days before it reaches timedelta().
    return timedelta(microseconds=parse_duration(field, value))


def _period(schedule: object) -> timedelta:
    period = getattr(schedule, "period", None)
    if isinstance(period, timedelta):  # through the duration rules: a pendulum Duration becomes a timedelta
        return _bounded("schedule.period", period)
    if isinstance(schedule, (str, timedelta)):
        return _bounded("schedule", schedule)
    raise TypeError(
        f"schedule: {schedule!r} has no period; pass a calendar cadence such as Calendar.day('09:00', timezone='UTC') "
        f"or its period as a duration, e.g. backoff('1d')"
    )


def backoff(schedule: object, *, first: str | timedelta = FIRST_DELAY, retries: int | None = None) -> dict[str, Any]:
    """Task default arguments that retry a failing run after 5, 10, 20 ... minutes, capped at one period.

    :param schedule: the DAG's calendar cadence (its ``period`` is the cap), or the period itself
        as a duration of at most 366 days (``"1d"``, ``timedelta(hours=6)``).
    :param first: the wait after the first failure, at most 366 days.
    :param retries: how many retries a run gets (0 to 1000); by default enough to reach the cap and then
        retry once a period ``RETRIES_AT_CAP`` more times.
    :returns: ``retries``, ``retry_delay``, ``retry_exponential_backoff`` and ``max_retry_delay``
        (Airflow's own doubling, jittered, capped: used when a task dies without reporting its
        failure) and a ``retry_policy`` that makes the waits exact.
    """
    cap = _period(schedule)
    # The cap wins over the first wait too: a 1-minute cadence retries every minute.
    first_delay = min(_bounded("first", first), cap)
    if retries is None:
        below_cap = 0  # failures whose wait is still below the cap: 5m, 10m, ... < period
        while _us(first_delay) << below_cap < _us(cap):
            below_cap += 1
        retries = below_cap + RETRIES_AT_CAP
    elif isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
        raise ValueError(f"retries: {excerpt(retries)} must be a whole number from 0 to {MAX_RETRIES}, e.g. 10")
    return {
        "retries": retries,
        "retry_delay": first_delay,
        "retry_exponential_backoff": 2.0,
        "max_retry_delay": cap,
        "retry_policy": CadenceBackoff(first=first_delay, cap=cap, retries=retries),
    }


__all__ = ["FIRST_DELAY", "RETRIES_AT_CAP", "CadenceBackoff", "backoff"]
