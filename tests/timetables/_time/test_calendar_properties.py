"""Calendar cadences in every IANA zone, against a brute-force model that walks local dates one day at a time.

The model knows nothing of the implementation's index arithmetic or binary
search: it lists each local date, keeps those the cadence runs on, and turns
each wall time into an instant with the standard library's own PEP 495
conversion, round-tripped to reject times that do not exist; a time in a gap
is found by stepping the clock forward a minute, then back a second, at a time.
"""

from __future__ import annotations

import zoneinfo
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tessera.timetables._time.calendar_spec import EVERY, CalendarSpec
from tessera.timetables._time.plan import Plan

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_US = timedelta(microseconds=1)
ZONES = sorted(zoneinfo.available_timezones() - {"localtime", "Factory"})
FOCUS_ZONES = [
    "America/New_York",
    "Australia/Lord_Howe",
    "America/Santiago",
    "Asia/Beirut",
    "Pacific/Apia",
    "Europe/Dublin",
    "Pacific/Kwajalein",
    "America/St_Johns",
    "Asia/Kathmandu",
]


def clock(zone: ZoneInfo, u: int) -> datetime:
    """The naive wall time the zone's clock shows at instant ``u``."""
    return (_EPOCH + timedelta(microseconds=u)).astimezone(zone).replace(tzinfo=None)


def brute_instant(zone: ZoneInfo, wall: datetime) -> int | None:
    candidates = [(wall.replace(tzinfo=zone, fold=fold) - _EPOCH) // _US for fold in (0, 1)]
    real = [u for u in candidates if clock(zone, u) == wall]
    if real:
        return min(real)
    u = min(candidates)  # in a gap: before the jump; walk to the first instant showing `wall` or later
    while clock(zone, u) < wall:
        u += 60_000_000
    while clock(zone, u - 1_000_000) >= wall:
        u -= 1_000_000
    if clock(zone, u).date() != wall.date():
        # The jump ends on a later date; if no instant in the day before it shows this date, it never existed.
        if all(clock(zone, u - k * 60_000_000).date() != wall.date() for k in range(1, 30 * 60)):
            return None
    return u


def runs_on(spec: CalendarSpec, day: date) -> bool:
    if spec.unit in ("hour", "day"):
        return spec.unit == "hour" or (day - date(1970, 1, 1)).days % spec.every == 0
    if spec.unit == "week":
        return (day.weekday() + 1) % 7 == spec.on and (day - date(1970, 1, 5)).days // 7 % spec.every == 0
    month_index = (day.year - 1970) * 12 + day.month - 1
    following_month = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
    last = (following_month - timedelta(days=1)).day
    return month_index % spec.every == 0 and day.day == min(spec.on, last)


def wall_times(spec: CalendarSpec) -> list[time]:
    minutes = [spec.at] if spec.unit != "hour" else range(spec.at % (spec.every * 60), 1440, spec.every * 60)
    return [time(m // 60, m % 60) for m in minutes]


def model(spec: CalendarSpec, zone: ZoneInfo, first: date, last: date) -> list[int]:
    out, day = [], first
    while day <= last:
        if runs_on(spec, day):
            for wall in wall_times(spec):
                u = brute_instant(zone, datetime.combine(day, wall))
                if u is not None:
                    out.append(u)
        day += timedelta(days=1)
    assert out == sorted(out), "the normalisation rule keeps wall-time order"
    return sorted(set(out))


def transition_after(zone: ZoneInfo, start: date) -> tuple[datetime, datetime] | None:
    """The first clock change within a year of ``start``: what the clock shows just before it and at it."""
    u = (datetime.combine(start, time(12), tzinfo=timezone.utc) - _EPOCH) // _US

    def offset(v: int) -> timedelta:
        return clock(zone, v) - (_EPOCH + timedelta(microseconds=v)).replace(tzinfo=None)

    for _ in range(400):
        if offset(u + 86_400_000_000) != offset(u):
            low, high = u, u + 86_400_000_000
            while high - low > 1:
                middle = (low + high) // 2
                low, high = (low, middle) if offset(middle) != offset(u) else (middle, high)
            return clock(zone, high - 1), clock(zone, high)
        u += 86_400_000_000
    return None


@st.composite
def scenarios(draw, *, at_clock_change: bool):
    zone_name = draw(st.one_of(st.sampled_from(FOCUS_ZONES), st.sampled_from(ZONES)))
    zone = ZoneInfo(zone_name)
    unit = draw(st.sampled_from(["hour", "day", "week", "month"]))
    recent = st.dates(min_value=date(1990, 1, 1), max_value=date(2040, 12, 31))  # most zones observe DST
    start = draw(st.one_of(recent, st.dates(min_value=date(1850, 1, 1), max_value=date(2080, 12, 31))))
    at = draw(st.integers(0, 1439))
    every = draw(st.sampled_from(EVERY[unit]))
    on = None
    if unit == "week":
        on = draw(st.integers(0, 6))
    elif unit == "month":
        on = draw(st.one_of(st.sampled_from([1, 28, 29, 30, 31]), st.integers(1, 31)))
    if at_clock_change:
        # Aim the cadence into the gap or the repeat of a clock change, on the day it happens.
        change = transition_after(zone, start)
        assume(change is not None)
        before, after = sorted(change)  # type: ignore[arg-type]
        aim = before + (after - before) * draw(st.floats(0, 1))
        at, start = aim.hour * 60 + aim.minute, aim.date() - timedelta(days=2)
        if unit == "day":
            every = 1
        elif unit == "week":
            on, every = (aim.weekday() + 1) % 7, 1
        elif unit == "month":
            on, every = aim.day, 1
    span = {"hour": 4, "day": 12 * every, "week": 5 * 7 * every, "month": 5 * 31 * every}[unit]
    wall = f"{at // 60:02d}:{at % 60:02d}"
    spec = CalendarSpec.parse(unit, every=every, on=on, at=wall, timezone=zone_name)
    return spec, zone, start, start + timedelta(days=span)


PROPERTY = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
PROBES = dict(probe=st.floats(0, 1), delay=st.integers(0, 3_600_000_000))


@PROPERTY
@given(scenario=scenarios(at_clock_change=False), **PROBES)
def test_any_zone_any_date_matches_the_brute_force_model(scenario, probe, delay):
    check_against_model(*scenario, probe, delay)


@PROPERTY
@given(scenario=scenarios(at_clock_change=True), **PROBES)
def test_runs_on_clock_change_days_match_the_brute_force_model(scenario, probe, delay):
    """The cadence runs on a day the clock jumps, at a wall time inside the gap or the repeat."""
    check_against_model(*scenario, probe, delay)


def check_against_model(spec: CalendarSpec, zone: ZoneInfo, first: date, last: date, probe: float, delay: int) -> None:
    expected = model(spec, zone, first, last)
    assume(len(expected) >= 3)
    c = spec.cadence()

    # Stepping forward and back visits exactly the model's occurrences: none lost, none doubled.
    forward = [expected[0]]
    while len(forward) < len(expected):
        forward.append(c.following(forward[-1]))
    assert forward == expected
    assert all(a < b for a, b in zip(expected, expected[1:], strict=False))
    for i in range(1, len(expected)):
        assert c.preceding(expected[i]) == expected[i - 1]

    # Anchored wall times hold: each occurrence shows one of the cadence's times, unless it is a gap's end.
    times = set(wall_times(spec))
    for o in expected:
        shown = clock(zone, o)
        assert shown.time() in times or clock(zone, o - 1) < shown - timedelta(seconds=1)

    # The four lookups agree with the model at an arbitrary instant between its occurrences.
    t = expected[0] + int(probe * (expected[-1] - expected[0] - 1))
    i = max(j for j, o in enumerate(expected) if o <= t)
    assert c.at_or_before(t) == expected[i]
    assert c.following(t) == expected[i + 1]
    assert c.at_or_after(t) == (expected[i] if expected[i] == t else expected[i + 1])
    assert c.at_or_after(expected[i]) == expected[i]

    # Windows tile exactly, whatever the delay, and each run pins its real spacing.
    plan = Plan(c, delay=delay)
    runs = [plan.run(o) for o in expected[1:]]
    for earlier, later in zip(runs, runs[1:], strict=False):
        assert later.window_start == earlier.window_end
        assert later.interval == later.occurrence - earlier.occurrence > 0
