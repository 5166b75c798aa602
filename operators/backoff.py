"""Failure backoff: a failing run retries after 5, 10, 20, 40 ... minutes, capped at one period.

A failed run is neither abandoned nor retried at once. Each consecutive
failure doubles the wait, and the wait never exceeds one period of the DAG's
own cadence, so a permanently broken daily DAG settles into about one retry a
day instead of hammering its source. The failures are counted across runs: a
run that starts after failed ones (they ran out of explicit ``retries``, or a
person failed them) goes on doubling from their count, and only a success
starts again at 5 minutes. The retries never stop on their own: by default a
task retries for as long as the schedule is active (:data:`RETRIES_FOREVER`),
and pausing the DAG is how to stop them (Airflow schedules no retry of a
paused DAG's task; unpausing resumes them).

Use it as the DAG's task defaults, with one active run at a time so the
retrying run holds the schedule's slot (the next scheduled run starts once it
succeeds, from the newest due occurrence)::

    schedule = Calendar.day("09:00", timezone="America/New_York")
    with DAG("daily_report", schedule=schedule, max_active_runs=1, default_args=backoff(schedule)):
        ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import Any

from tessera.timetables.rules import excerpt, format_duration, parse_duration
from tessera.timetables.support import EXACT_RETRY_WAITS, require

from ._airflow import RetryDecision, RetryPolicy

FIRST_DELAY = timedelta(minutes=5)
"""The longest period or first wait, as for every duration."""
MAX_RETRIES = 1000
"""The most retries ``backoff(retries=...)`` takes when a run should give up."""
RETRIES_FOREVER = 1_000_000_000
"""The default: one retry a period for longer than any deployment lives, so only pausing stops them.
Below 2**31 with room to spare: Airflow adds the retries to the try number on a clear."""
MAX_RUNS_READ = 64
"""Earlier runs read back at most, per failure, to continue their count (the wait reaches its cap sooner)."""


def consecutive_failures(outcomes: Iterable[tuple[str | None, int]], *, enough: int) -> int:
    """The failures in a row, newest first, back to the last success; the one reading of "consecutive failures".

    Each outcome is ``(state, failures)``: a ``"failed"`` one adds its failures (a task's tries, or
    1 for a run), a ``"success"`` ends the count, any other (not finished, skipped) is passed
    over. Reading stops once ``enough`` are found, so a caller reads no further than it needs.
    The backoff counts a task's failed tries with it; pausing after failed runs counts runs.
    """
    found = 0
    for state, failures in outcomes:
        if state == "success":
            break
        if state == "failed":
            found += failures
        if found >= enough:
            break
    return found


class CadenceBackoff(RetryPolicy):
    """Retry the ``n``-th consecutive failure after ``first * 2**(n - 1)``, at most ``cap``.

    It runs in the worker, where Airflow asks it how long to wait after each
    failure; the delay it returns replaces Airflow's own jittered exponential
    backoff, so the waits are exact. Failures count from the last success of the
    task: its tries in this run, plus those of the earlier runs that failed since
    (read through the Execution API, only as far back as the cap needs). A clear
    starts the doubling again, as a success does.

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
        if try_number > max_tries:
            # The last try: no retry follows, so no wait to name (Airflow logs a decision's reason); it fails.
            return RetryDecision.default()
        # On a clear Airflow sets max_tries = try_number + retries, so this counts from the clear.
        cleared_at = max(0, max_tries - self.retries)
        failure = max(1, try_number - cleared_at)
        earlier = 0 if cleared_at else self.failures_before(context, enough=self.doublings_to_cap() - failure)
        failure += earlier
        wait = self.delay(failure)
        before = f", {earlier} of them in earlier runs" if earlier else ""
        return RetryDecision.retry(wait, reason=f"backoff after failure {failure}{before}: retry in {_text(wait)}")

    def doublings_to_cap(self) -> int:
        """The consecutive failures after which every wait is the cap."""
        return (_us(self.cap) // max(1, _us(self.first))).bit_length() + 1

    @staticmethod
    def failures_before(context: Any, *, enough: int) -> int:
        """Failed tries of this task in the runs just before this one, back to its last success.

        Reads at most :data:`MAX_RUNS_READ` earlier task instances, and stops once ``enough``
        failures are found (the wait is at its cap by then); 0 without a task instance to ask.
        """
        ti = None if context is None else context.get("ti")
        if ti is None or not callable(getattr(ti, "get_previous_ti", None)) or enough <= 0:
            return 0

        def earlier() -> Iterator[tuple[str | None, int]]:
            logical_date = None
            for _ in range(MAX_RUNS_READ):
                previous = ti.get_previous_ti(logical_date=logical_date) if logical_date else ti.get_previous_ti()
                if previous is None:
                    return
                yield previous.state, previous.try_number
                if previous.logical_date is None:
                    return
                logical_date = previous.logical_date

        return consecutive_failures(earlier(), enough=enough)

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
    :param retries: how many retries a run gets before it fails (0 to 1000; the next run goes on
        doubling from its failures); by default :data:`RETRIES_FOREVER`: the retries never stop
        while the DAG is active, and pausing it stops them.
    :returns: ``retries``, ``retry_delay``, ``retry_exponential_backoff`` and ``max_retry_delay``
        (Airflow's own doubling, jittered, capped: used when a task dies without reporting its
        failure) and a ``retry_policy`` that makes the waits exact.
    """
    require(EXACT_RETRY_WAITS, "backoff(...)", schedule)
    cap = _period(schedule)
    # The cap wins over the first wait too: a 1-minute cadence retries every minute.
    first_delay = min(_bounded("first", first), cap)
    if retries is None:
        retries = RETRIES_FOREVER
    elif isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
        raise ValueError(f"retries: {excerpt(retries)} must be a whole number from 0 to {MAX_RETRIES}, e.g. 10")
    return {
        "retries": retries,
        "retry_delay": first_delay,
        "retry_exponential_backoff": 2.0,
        "max_retry_delay": cap,
        "retry_policy": CadenceBackoff(first=first_delay, cap=cap, retries=retries),
    }


__all__ = ["FIRST_DELAY", "RETRIES_FOREVER", "CadenceBackoff", "backoff", "consecutive_failures"]
