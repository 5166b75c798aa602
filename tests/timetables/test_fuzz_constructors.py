"""Constructor fuzz tier: whatever a DAG file passes, a timetable either works or is refused naming the field.

Each case either builds a timetable that Airflow's scheduler can step (200 calls of
``next_dagrun_info_v2``, 100 with ``catchup=False`` and 100 with ``catchup=True``, under a
drawn clock and date restriction, plus the stored-run check and a manual run) and that
survives Airflow's own timetable encode/decode, or raises ``ValueError``/``TypeError``
whose message starts with a field it names. Anything else fails: another exception, a
``ValueError`` while stepping, a RecursionError, or an unbounded walk (a counting
cadence caps the steps, an alarm catches a loop inside a single step).

Deterministic: ``derandomize=True`` and no example database, so CI sees the same cases.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pendulum
import time_machine
from airflow.models.dag import DagModel
from airflow.serialization.encoders import encode_timetable
from airflow.timetables.base import TimeRestriction
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tessera.timetables import Calendar, Cron, Every, Spread, Union
from tessera.timetables._time.plan import Plan
from tessera.timetables.base import TesseraTimetable
from tessera.timetables.instants import to_us
from tests.compat.airflow_names import decode_timetable

from ..fuzz_depth import DEEP, cases
from . import fuzz_inputs as inputs
from ._time.counting import CountingCadence

CASES = cases(deep=5_000)  # per constructor
FUZZ = settings(
    max_examples=CASES,
    derandomize=not DEEP,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
STEPS_PER_CATCHUP = 100
# Each scheduler call takes a handful of cadence steps; a catch-up walk at most 1000 more, and only
# the stored-run check (one call) can need it here. Far above what a bounded case uses, far below a hang.
STEP_BUDGET = 2 * STEPS_PER_CATCHUP * 12 + 2 * 1_000 + 100
HANG_SECONDS = 20  # a backstop for a loop inside one cadence step, never reached by a bounded case

COMMON_FIELDS = {"delay", "window", "phase", "phase.spread.max", "phase.spread.step", "phase.fixed"}
COMMON_FIELDS |= {"catch_up", "catch_up.backfill.limit", "key", "overlap", "pause_after_failures"}
EVERY_FIELDS = COMMON_FIELDS | {"every"}
EXCLUDE_FIELDS = {"exclude", "exclude.first", "exclude.last"}
CALENDAR_FIELDS = COMMON_FIELDS | EXCLUDE_FIELDS | {"every", "on", "at", "timezone"}
CRON_FIELDS = COMMON_FIELDS | EXCLUDE_FIELDS | {"expression", "timezone", "starting_deadline", "dst"}
BUSINESS_FIELDS = CALENDAR_FIELDS | {"business_day", "calendar", "calendar.first", "calendar.last"}
UNION_FIELDS = COMMON_FIELDS | EXCLUDE_FIELDS | {"members", "partitioned", "key_format"}


class Unbounded(BaseException):
    """Raised by the alarm; a BaseException so no ``except Exception`` on the way can swallow it."""


@contextmanager
def alarm(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise Unbounded(f"one case ran for {seconds}s: a loop is not bounded")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def assert_names_a_field(refused: Exception, fields: set[str]) -> None:
    message = str(refused)
    field, colon, rest = message.partition(": ")
    field = re.sub(r"\[[0-9]+\]", "", field)  # exclude[3].first names the field exclude.first
    assert colon and field in fields, f"{type(refused).__name__} names no field of {sorted(fields)}: {message!r}"
    assert "; " in rest, f"the message gives no rule or fix after the value: {message!r}"
    # The cron grammar (another module's) still echoes a whole expression; every other field shortens it.
    assert field == "expression" or len(message) < 1_000, f"the message repeats a huge value: {message[:200]!r}..."


def exercise(build: Callable[[], TesseraTimetable], fields: set[str], world: inputs.World) -> None:
    with alarm(HANG_SECONDS):
        try:
            timetable = build()
        except (ValueError, TypeError) as refused:
            assert_names_a_field(refused, fields)
            event(f"refused: {str(refused).partition(':')[0]}")
            return
        event("built and stepped")
        step_through(timetable, world)
        round_trip(timetable.bind(dag_id="fuzz", catchup=world.dag_catchup, end_date=world.latest))


def step_through(timetable: TesseraTimetable, world: inputs.World) -> None:
    bound = timetable.bind(dag_id="fuzz", catchup=world.dag_catchup, end_date=world.latest)
    plan = bound._plan
    counting = CountingCadence(plan.cadence, budget=STEP_BUDGET)
    bound._plan = Plan(counting, plan.delay, plan.lookback, plan.phase)
    now = pendulum.instance(world.now)
    first = None
    with time_machine.travel(now, tick=False):
        for catchup in (False, True):
            restriction = TimeRestriction(world.earliest, world.latest, catchup)
            info = None
            for _ in range(STEPS_PER_CATCHUP):
                following = bound.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction)
                if following is None:
                    break
                window = following.data_interval
                assert window.start < window.end <= following.run_after
                assert info is None or window.end > info.data_interval.end, "occurrences must strictly increase"
                info, first = following, first or following
        manual = bound.infer_manual_data_interval(run_after=now)
        assert manual.start < manual.end <= now
        if first is not None:
            stored = DagModel(dag_id="fuzz")
            stored.next_dagrun = first.data_interval.start
            stored.next_dagrun_data_interval = (first.data_interval.start, first.data_interval.end)
            stored.next_dagrun_create_after = first.run_after
            bound.next_run_info_from_dag_model(dag_model=stored)


def round_trip(bound: TesseraTimetable) -> None:
    restored = decode_timetable(encode_timetable(bound))
    assert type(restored) is type(bound)
    assert restored == bound
    assert (restored.summary, restored.description, restored.phase_ms) == (
        bound.summary,
        bound.description,
        bound.phase_ms,
    )


@FUZZ
@given(interval=inputs.INTERVALS, kwargs=inputs.common_kwargs(), world=inputs.worlds())
def test_every(interval, kwargs, world):
    exercise(lambda: Every(interval, **inputs.built(kwargs)), EVERY_FIELDS, world)


CALENDAR_CONSTRUCTORS = {"hour": Every.hour, "day": Every.day, "week": Every.week, "month": Every.month}


@FUZZ
@given(call=inputs.calendar_calls(), world=inputs.worlds())
def test_calendar(call, world):
    unit, kwargs = call
    exercise(lambda: CALENDAR_CONSTRUCTORS[unit](**inputs.built(kwargs)), CALENDAR_FIELDS, world)


@FUZZ
@given(call=inputs.cron_calls(), world=inputs.worlds())
def test_cron(call, world):
    expression, kwargs = call
    exercise(lambda: Cron(expression, **inputs.built(kwargs)), CRON_FIELDS, world)


# The policies are fuzzed on their own arguments, each inside a schedule that is otherwise valid.
# Mostly the epoch grid (cheapest to step), so the time goes to the policies' own arguments.
BASES: st.SearchStrategy[Callable[..., TesseraTimetable]] = inputs.mostly(
    st.sampled_from([lambda **kw: Every("5m", **kw), lambda **kw: Every("1s", **kw), lambda **kw: Every("366d", **kw)]),
    st.sampled_from(
        [
            lambda **kw: Calendar.day("09:00", timezone="Europe/Amsterdam", **kw),
            lambda **kw: Calendar.month(31, "06:00", timezone="Pacific/Apia", **kw),
            lambda **kw: Cron("*/15 * * * *", timezone="America/New_York", **kw),
            lambda **kw: Cron("30 1 * * *", timezone="America/New_York", **kw),
        ]
    ),
    tenths=7,
)
POLICY_FIELDS = {"phase.spread.max", "phase.spread.step", "phase.fixed", "catch_up.backfill.limit"}


@FUZZ
@given(recipe=inputs.spread_recipes(5), base=BASES, world=inputs.worlds())
def test_spread(recipe, base, world):
    exercise(lambda: base(phase=recipe.build()), POLICY_FIELDS, world)


@FUZZ
@given(recipe=inputs.fixed_recipes(5), base=BASES, world=inputs.worlds())
def test_fixed(recipe, base, world):
    exercise(lambda: base(phase=recipe.build()), POLICY_FIELDS, world)


@FUZZ
@given(recipe=inputs.backfill_recipes(5), base=BASES, world=inputs.worlds())
def test_backfill(recipe, base, world):
    exercise(lambda: base(catch_up=recipe.build()), POLICY_FIELDS, world)


PARTITION_FIELDS = {"partitioned", "key_format"}
PARTITION_CASES = settings(FUZZ, max_examples=CASES // 5)


@PARTITION_CASES
@given(
    partitioned=inputs.PARTITIONED,
    key_format=inputs.KEY_FORMATS,
    base=st.sampled_from(
        [
            lambda **kw: Every("1h", **kw),
            lambda **kw: Calendar.hour(at="00:30", timezone="Europe/Amsterdam", **kw),
            lambda **kw: Cron("30 2 * * *", timezone="Europe/Berlin", **kw),
            lambda **kw: Cron("*/15 * * * *", timezone="Australia/Lord_Howe", dst="once", **kw),
            lambda **kw: Cron("0 12 * * *", timezone="Pacific/Kwajalein", **kw),
        ]
    ),
    world=inputs.worlds(),
)
def test_partitioned(partitioned, key_format, base, world):
    """A key_format is taken only if the keys the scheduler writes read back as their periods."""

    def build() -> TesseraTimetable:
        timetable = base(partitioned=partitioned, key_format=key_format)
        if timetable.partitioned:
            date, key = timetable._partition_of(timetable._plan.cadence.following(to_us(world.now)))
            assert timetable.resolve_partition_date(key) == date, (key_format, key)
        return timetable

    exercise(build, PARTITION_FIELDS, world)


# -- exclusions, business days, unions ------------------------------------------------------------------
# Fewer cases than the constructors above: each builds holiday-sized exclusion sets and checks their horizon.
CALENDAR_CASES = settings(FUZZ, max_examples=CASES // 5)


@CALENDAR_CASES
@given(call=inputs.business_day_calls(), world=inputs.worlds())
def test_business_day(call, world):
    unit, kwargs = call
    build = Every.business_day if unit == "business_day" else Every.month
    exercise(lambda: build(**inputs.built(kwargs)), BUSINESS_FIELDS, world)


def member_calls() -> st.SearchStrategy[Callable[[], Any]]:
    """Mostly members a union takes (a shared zone, no options), sometimes what it must refuse."""
    zone = st.sampled_from(["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Apia"])
    at = st.builds(lambda h, m: f"{h:02d}:{m:02d}", st.integers(0, 23), st.sampled_from([0, 30]))
    plain = st.one_of(
        st.builds(lambda a: lambda z: Every.day(at=a, timezone=z), at),
        st.builds(lambda e, a: lambda z: Every.hour(e, at=a, timezone=z), st.sampled_from([1, 6]), at),
        st.builds(lambda a: lambda z: Every.business_day(at=a, timezone=z, calendar=inputs.CALENDARS[0]), at),
        st.builds(
            lambda x: lambda z: Cron(x, timezone=z), st.sampled_from(["0 17 * * 5", "30 2 * * *", "*/20 * * * *"])
        ),
        st.builds(lambda x: lambda z: Every(x), inputs.GOOD_INTERVALS),
        st.builds(lambda x: lambda z: Cron(x, timezone=z, exclude=inputs.CALENDARS[1]), st.just("0 9 * * 1-5")),
    )
    odd = st.one_of(
        st.just(lambda z: Every.day()),
        st.just(lambda z: Every("1h", phase=Spread(max="1m"))),
        st.just(lambda z: Every.day(at="09:00", timezone="Asia/Tokyo")),
        st.builds(lambda v: lambda z: v, inputs.ADVERSARIAL),
    )
    return st.tuples(zone, st.lists(inputs.mostly(plain, odd, tenths=9), min_size=1, max_size=5)).map(
        lambda pair: lambda: [make(pair[0]) for make in pair[1]]
    )


@CALENDAR_CASES
@given(
    members=member_calls(),
    kwargs=inputs.common_kwargs(),
    exclude=inputs.EXCLUSIONS,
    partitioned=inputs.mostly(st.just(False), st.just(True), tenths=8),
    world=inputs.worlds(),
)
def test_union(members, kwargs, exclude, partitioned, world):
    exercise(
        lambda: Union(*members(), exclude=exclude, partitioned=partitioned, **inputs.built(kwargs)),
        UNION_FIELDS | BUSINESS_FIELDS,
        world,
    )
