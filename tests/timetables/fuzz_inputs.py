"""Hypothesis strategies for the constructor fuzz tier: plausible arguments mixed with adversarial ones.

Policies (Spread, Fixed, Backfill) are drawn as *recipes* and built inside the test, so
that a refusal raised while building one is checked like any other refusal.
"""

from __future__ import annotations

import datetime
import zoneinfo
from dataclasses import dataclass
from typing import Any

import pendulum
from hypothesis import strategies as st

from tessera.timetables import Backfill, Fixed, Latest, Spread, between, holidays_of

UTC = datetime.timezone.utc
INF, NAN = float("inf"), float("nan")


def mostly(plausible: st.SearchStrategy, adversarial: st.SearchStrategy, tenths: int = 8) -> st.SearchStrategy:
    """``plausible`` in ``tenths`` of the cases, ``adversarial`` in the rest.

    Each argument is mostly plausible so that a fair share of cases builds a timetable
    (every argument adversarial at once would almost always be refused by the first check).
    """
    return st.integers(0, 9).flatmap(lambda i: plausible if i < tenths else adversarial)


# -- numbers, text and objects nobody should pass, but someone will -----------------------------------
HUGE_INTS = st.sampled_from([10**12, 10**18, 2**63, 10**100, 10**5000, -1, -(10**12), 0])
FLOATS = st.one_of(st.sampled_from([INF, -INF, NAN, 0.0, 5.0, 1e300]), st.floats())
UNICODE_DIGITS = st.sampled_from(["\u0665m", "\uff15m", "\u06f5m", "\U0001d7d3m", "\u00b2m", "\u0660\u0669:00"])
JUNK_OBJECTS = st.sampled_from([None, True, False, b"5m", [5, "m"], {"m": 5}, object, 1j, (), set()])
# Lone surrogates: text Python holds but no encoder writes (a UnicodeEncodeError waiting in any hash or log).
SURROGATE_TEXT = st.builds(
    lambda before, surrogate, after: before + surrogate + after,
    st.text(alphabet="0123456789msdh:*/ -UTCEurope", max_size=6),
    st.integers(0xD800, 0xDFFF).map(chr),
    st.text(alphabet="0123456789msdh:*/ -UTCEurope", max_size=6),
)
WEIRD_TEXT = st.one_of(
    st.text(max_size=24),
    SURROGATE_TEXT,
    st.text(alphabet="0123456789.msdhMSDHwy -+e_:,/*@\t\n", max_size=16),
    st.sampled_from(["", " ", "inf", "nan", "-inf", "1e9s", "5 m", "5m5", "m5", "5mm", "5ms5", ".5s", "5.s", "\x00"]),
    st.just("9" * 5000 + "d"),
)
ADVERSARIAL = st.one_of(HUGE_INTS, st.integers(), FLOATS, UNICODE_DIGITS, JUNK_OBJECTS, WEIRD_TEXT)


# -- durations ----------------------------------------------------------------------------------------
def _seconds(text: str) -> int:
    return int(text[:-1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[text[-1]]


UNITS = st.sampled_from(["ms", "s", "m", "h", "d", "M", "S", "H", "D", "Ms", "mS", "us", "w", "y", ""])
NUMBER_TEXT = st.one_of(
    st.integers(0, 500).map(str),
    st.sampled_from(["0", "00", "366", "367", "999999999", "99999999999", "3000000", "100000000", "1.5", "0.001"]),
    st.builds(lambda a, b: f"{a}.{b}", st.integers(0, 400), st.integers(0, 10**9)),
)
DURATION_TEXT = st.one_of(
    st.builds(lambda n, u: n + u, NUMBER_TEXT, UNITS),
    st.lists(st.builds(lambda n, u: n + u, NUMBER_TEXT, UNITS), min_size=2, max_size=4).map("".join),
)
TIMEDELTAS = st.one_of(
    st.timedeltas(),
    st.timedeltas(min_value=datetime.timedelta(0), max_value=datetime.timedelta(days=400)),
    st.sampled_from([datetime.timedelta.max, datetime.timedelta.min, datetime.timedelta(days=366, microseconds=1)]),
)
# pendulum's types are timedelta subclasses whose own arithmetic differs: Airflow users hold them everywhere.
PENDULUM_ZONES = st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Tokyo"])
PENDULUM_DIFFERENCES = st.builds(
    lambda zone, start, span: pendulum.instance(start, tz=zone).add(seconds=span) - pendulum.instance(start, tz=zone),
    PENDULUM_ZONES,
    st.datetimes(min_value=datetime.datetime(1901, 1, 1), max_value=datetime.datetime(2998, 1, 1)),
    st.integers(-86_400, 400 * 86_400),
)
PENDULUM_DURATIONS = st.one_of(
    st.builds(lambda seconds: pendulum.duration(seconds=seconds), st.integers(0, 366 * 86_400)),
    st.builds(
        lambda weeks, days, hours, ms: pendulum.duration(weeks=weeks, days=days, hours=hours, milliseconds=ms),
        st.integers(-1, 60),
        st.integers(-3, 30),
        st.integers(-5, 48),
        st.integers(0, 999),
    ),
    st.builds(lambda m, y: pendulum.duration(months=m, years=y), st.integers(-2, 14), st.integers(0, 2)),
    st.sampled_from([pendulum.duration(days=366), pendulum.duration(days=366, microseconds=1), pendulum.duration()]),
    PENDULUM_DIFFERENCES,
)
GOOD_INTERVALS = st.sampled_from(["1s", "30s", "1m", "5m", "15m", "45m", "1h", "6h", "1d", "2d", "7d", "366d"])
ANY_DURATION = st.one_of(DURATION_TEXT, TIMEDELTAS, PENDULUM_DURATIONS, ADVERSARIAL)
INTERVALS = mostly(
    st.one_of(
        GOOD_INTERVALS,
        GOOD_INTERVALS.map(lambda t: datetime.timedelta(seconds=_seconds(t))),
        GOOD_INTERVALS.map(lambda t: pendulum.duration(seconds=_seconds(t))),
    ),
    st.one_of(GOOD_INTERVALS.map(lambda t: t.upper()), ANY_DURATION),
    tenths=5,
)
PLAUSIBLE_DURATION = st.one_of(
    st.sampled_from(["0s", "30s", "5m", "1h", "1h30m", "2d", "366d", "1.5s", "250ms"]),
    st.timedeltas(min_value=datetime.timedelta(0), max_value=datetime.timedelta(days=366)),
    st.builds(lambda us: pendulum.duration(microseconds=us), st.integers(0, 366 * 86_400_000_000)),
    PENDULUM_DIFFERENCES,
)
OPTIONAL_DURATION = mostly(st.one_of(st.none(), PLAUSIBLE_DURATION), ANY_DURATION)

# -- timezones ----------------------------------------------------------------------------------------
ZONES = sorted(zoneinfo.available_timezones())
TIMEZONES = mostly(
    st.one_of(
        st.sampled_from(ZONES),
        st.sampled_from(["UTC", "Europe/Amsterdam", "America/New_York", "Pacific/Apia", "Australia/Lord_Howe"]),
        st.sampled_from(ZONES).map(zoneinfo.ZoneInfo),
    ),
    st.one_of(
        st.sampled_from(["", "Mars/Olympus_Mons", "localtime", "Factory", "../etc/passwd", "UTC\x00", "+05:00"]),
        st.sampled_from(["posixrules", "right/UTC", "posix/UTC", "posix/Europe/Berlin", "Europe/Berl\ud800n"]),
        st.just(datetime.timezone(datetime.timedelta(hours=5))),
        WEIRD_TEXT,
        JUNK_OBJECTS,
        HUGE_INTS,
    ),
)

# -- policies, as recipes ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipe:
    """A policy to build inside the test (``kind`` spread/fixed/latest/backfill) or a raw value to pass as is."""

    kind: str
    args: tuple = ()

    def build(self) -> Any:
        if self.kind == "spread":
            return Spread(**dict(self.args))
        if self.kind == "fixed":
            return Fixed(*self.args)
        if self.kind == "backfill":
            return Backfill(limit=self.args[0])
        if self.kind == "latest":
            return Latest()
        return self.args[0] if self.args else None  # "raw": passed to the timetable unchanged


def spread_recipes(tenths: int = 8) -> st.SearchStrategy[Recipe]:
    plausible_max = st.one_of(st.none(), st.sampled_from(["5m", "15m", "1h", "366d"]), PLAUSIBLE_DURATION)
    spread_max = mostly(plausible_max, ANY_DURATION, tenths)
    spread_step = mostly(st.sampled_from(["1s", "1m", "1ms", "10s"]), ANY_DURATION, tenths)
    kwargs = st.fixed_dictionaries({}, optional={"max": spread_max, "step": spread_step})
    return kwargs.map(lambda kw: Recipe("spread", tuple(sorted(kw.items()))))


def fixed_recipes(tenths: int = 8) -> st.SearchStrategy[Recipe]:
    plausible = st.one_of(st.sampled_from(["0s", "2m10s", "1h", "366d"]), PLAUSIBLE_DURATION)
    adversarial = st.one_of(st.sampled_from(["367d", "3000000d", "-1s"]), ANY_DURATION)
    return mostly(plausible, adversarial, tenths).map(lambda o: Recipe("fixed", (o,)))


def backfill_recipes(tenths: int = 8) -> st.SearchStrategy[Recipe]:
    plausible = st.one_of(st.integers(1, 1_000), st.sampled_from([1, 12, 1_000]))
    adversarial = st.one_of(
        st.integers(-3, 1_010), st.integers(), HUGE_INTS, FLOATS, JUNK_OBJECTS, st.sampled_from(["12", 1_001])
    )
    return mostly(plausible, adversarial, tenths).map(lambda n: Recipe("backfill", (n,)))


RAW = ADVERSARIAL.map(lambda v: Recipe("raw", (v,)))
PHASES = mostly(st.one_of(st.none(), spread_recipes(), fixed_recipes()), RAW, tenths=9)
CATCH_UPS = mostly(st.one_of(st.none(), st.just(Recipe("latest")), backfill_recipes()), RAW, tenths=9)
KEYS = mostly(
    st.one_of(st.none(), st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)),
    st.one_of(st.sampled_from(["", "\ud800", "a\udfffb"]), st.text(max_size=12), JUNK_OBJECTS),
)


OVERLAP_VALUES = mostly(
    st.sampled_from([None, "skip", "buffer_one", "buffer_all", "cancel_other", "allow_all"]), ADVERSARIAL
)
PAUSE_COUNTS = mostly(st.one_of(st.none(), st.integers(1, 1000)), st.one_of(HUGE_INTS, ADVERSARIAL))


def common_kwargs() -> st.SearchStrategy[dict[str, Any]]:
    """The keywords every timetable takes; policy recipes are built by :func:`built`."""
    return st.fixed_dictionaries(
        {},
        optional={
            "delay": OPTIONAL_DURATION,
            "window": OPTIONAL_DURATION,
            "phase": PHASES,
            "catch_up": CATCH_UPS,
            "overlap": OVERLAP_VALUES,
            "pause_after_failures": PAUSE_COUNTS,
        },
    ).flatmap(lambda kw: st.one_of(st.just(kw), KEYS.map(lambda key: {**kw, "key": key})))


def built(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with every recipe built (this is where a policy's own refusal is raised)."""
    return {name: value.build() if isinstance(value, Recipe) else value for name, value in kwargs.items()}


# -- the world a timetable is stepped in ---------------------------------------------------------------


@dataclass(frozen=True)
class World:
    now: datetime.datetime
    earliest: datetime.datetime | None
    latest: datetime.datetime | None
    dag_catchup: bool


SUPPORTED = st.datetimes(
    min_value=datetime.datetime(1900, 1, 1), max_value=datetime.datetime(2999, 12, 31, 23, 59), timezones=st.just(UTC)
)
RECENT = st.datetimes(
    min_value=datetime.datetime(2020, 1, 1), max_value=datetime.datetime(2030, 1, 1), timezones=st.just(UTC)
)


def worlds() -> st.SearchStrategy[World]:
    span = st.one_of(st.none(), st.timedeltas(min_value=datetime.timedelta(0), max_value=datetime.timedelta(days=800)))
    earliest = st.one_of(st.none(), RECENT, SUPPORTED)

    def world(now, start, length, catchup):
        last_day = datetime.datetime(2999, 12, 31, tzinfo=UTC)
        latest = None if length is None or start is None else min(start + length, last_day)
        return World(now, start, latest, catchup)

    return st.builds(world, st.one_of(RECENT, SUPPORTED), earliest, span, st.booleans())


# -- calendar cadences ---------------------------------------------------------------------------------
EVERY_COUNTS = mostly(
    st.sampled_from([1, 1, 2, 3, 4, 6, 12]),
    st.one_of(st.integers(-3, 40), HUGE_INTS, FLOATS, JUNK_OBJECTS, st.just("2")),
)
WEEKDAYS = mostly(
    st.one_of(st.sampled_from(["monday", "Sunday", "SAT", "wed", "mon "]), st.integers(0, 6)),
    st.one_of(st.sampled_from(["funday", "", "\u0661", "7"]), st.integers(-2, 9), JUNK_OBJECTS, HUGE_INTS),
)
MONTH_DAYS = mostly(
    st.integers(1, 31),
    st.one_of(st.integers(-2, 40), HUGE_INTS, st.sampled_from(["31", 31.0, None, True]), FLOATS),
)
WALL_TIMES = mostly(
    st.one_of(
        st.builds(lambda h, m: f"{h:02d}:{m:02d}", st.integers(0, 23), st.integers(0, 59)),
        st.builds(lambda h, m: datetime.time(h, m), st.integers(0, 23), st.integers(0, 59)),
        st.sampled_from(["9:00", " 09:00 ", "02:30", "00:00", "23:59"]),
    ),
    st.one_of(
        st.builds(lambda h, m: f"{h}:{m}", st.integers(0, 99), st.integers(0, 99)),
        st.times(),
        st.times(timezones=st.just(UTC)),
        st.sampled_from(["0900", "24:00", "23:60", "\u0660\u0669:00", "\uff10\uff19:00", "09:00:00"]),
        WEIRD_TEXT,
        HUGE_INTS,
        JUNK_OBJECTS,
    ),
)


def calendar_calls() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(unit, keywords) for Every.hour/day/week/month: only the keywords each one declares."""

    def keywords(unit: str) -> st.SearchStrategy[dict[str, Any]]:
        own = {"every": EVERY_COUNTS, "at": st.one_of(st.none(), WALL_TIMES)}
        own["timezone"] = st.one_of(st.none(), TIMEZONES)
        own["exclude"] = EXCLUSIONS
        if unit == "week":
            own["on"] = st.one_of(st.none(), WEEKDAYS)
        if unit == "month":
            own["on"] = st.one_of(st.none(), MONTH_DAYS)
        calendar = st.fixed_dictionaries({}, optional=own)
        return st.tuples(calendar, common_kwargs()).map(lambda pair: {**pair[0], **pair[1]})

    units = st.sampled_from(["hour", "day", "week", "month"])
    return units.flatmap(lambda unit: keywords(unit).map(lambda kw: (unit, kw)))


# -- cron text -----------------------------------------------------------------------------------------
CRON_ATOMS = st.one_of(
    st.integers(0, 61).map(str),
    st.sampled_from(["*", "?", "L", "W", "5#2", "H", "LW", "jan", "FEB", "mon", "sun", "SAT", "dec", "foo", "7"]),
    st.sampled_from(["", "-1", "99999999999999999999", "\u0665", "0x1", "1.5", "*/0", "*/1", "*/99999999999"]),
)
CRON_ITEMS = st.one_of(
    CRON_ATOMS,
    st.builds(lambda a, b: f"{a}-{b}", CRON_ATOMS, CRON_ATOMS),
    st.builds(lambda a, s: f"{a}/{s}", CRON_ATOMS, st.one_of(st.integers(0, 70).map(str), CRON_ATOMS)),
    st.builds(lambda a, b, s: f"{a}-{b}/{s}", CRON_ATOMS, CRON_ATOMS, st.integers(0, 70).map(str)),
)
CRON_FIELDS = st.lists(CRON_ITEMS, min_size=1, max_size=3).map(",".join)
# Mostly-valid fields, so that a fair share of expressions parse and get stepped.
PLAUSIBLE_FIELDS = [
    st.sampled_from(["*", "0", "30", "*/5", "*/15", "0,30", "5-10", "59"]),
    st.sampled_from(["*", "0", "6", "*/2", "9-17", "23", "1,13"]),
    st.sampled_from(["*", "1", "15", "29", "30", "31", "1-7", "*/2", "?"]),
    st.sampled_from(["*", "1", "2", "2,8", "jan", "*/3", "12", "feb"]),
    st.sampled_from(["*", "0", "1-5", "mon", "sun", "7", "*/2", "?", "sat,sun"]),
]
CRON_EXPRESSIONS = mostly(
    st.one_of(
        st.tuples(*PLAUSIBLE_FIELDS).map(" ".join),
        st.sampled_from(["@yearly", "@monthly", "@weekly", "@daily", "@hourly", "@every 5m", "@every 1h30m"]),
    ),
    st.one_of(
        st.lists(CRON_FIELDS, min_size=5, max_size=5).map(" ".join),
        st.lists(CRON_FIELDS, min_size=5, max_size=5).map(" ".join),
        st.lists(CRON_FIELDS, min_size=3, max_size=7).map(lambda fields: "  \t".join(fields)),
        st.sampled_from(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@reboot"]),
        st.sampled_from(["@DAILY", "@every", "CRON_TZ=UTC 0 6 * * *", "TZ=Europe/London * * * * *", "0 0 31 2 *"]),
        st.one_of(GOOD_INTERVALS, DURATION_TEXT).map(lambda d: f"@every {d}"),
        st.text(alphabet="0123456789*/,-? LW#H@abcdefjmnorstuvwy\t", max_size=30),
        WEIRD_TEXT,
        # Not 10**5000: the cron grammar's TypeError prints the expression whole, and such an int
        # refuses to print (a ValueError naming no field). Left to the cron grammar's owner.
        st.sampled_from([10**12, 2**63, 10**100, -1, 0]),
        JUNK_OBJECTS,
    ),
    tenths=5,
)
DST_POLICIES = mostly(
    st.sampled_from(["cronjob", "once"]), st.one_of(st.sampled_from(["CRONJOB", "twice", "", None, 1]), SURROGATE_TEXT)
)


def cron_calls() -> st.SearchStrategy[tuple[Any, dict[str, Any]]]:
    own = st.fixed_dictionaries(
        {},
        optional={
            "timezone": TIMEZONES,
            "starting_deadline": OPTIONAL_DURATION,
            "dst": DST_POLICIES,
            "exclude": EXCLUSIONS,
        },
    )
    keywords = st.tuples(own, common_kwargs()).map(lambda pair: {**pair[0], **pair[1]})
    return st.tuples(CRON_EXPRESSIONS, keywords)


# -- partition keys -------------------------------------------------------------------------------------
DIRECTIVES = ["%Y", "%m", "%d", "%H", "%M", "%S", "%z", "%%", "%", "%:z", "%c", "%y", "%I", "%p", "%j", "%G", "%V"]
DIRECTIVES += ["%u", "%s", "%Z", "%-d", "%Ey", "%Od", "%b", "\x00", "\ud800", "T", "-", ":", " ", "\n", "é"]
KEY_FORMATS = mostly(
    st.sampled_from(
        [None, "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S%z", "hour=%Y%m%dT%H%M%S", "%Y-%jT%H:%M:%S%z"]
        + ["%G-W%V-%u %H:%M:%S"]
    ),
    st.one_of(
        st.lists(st.sampled_from(DIRECTIVES), max_size=12).map("".join),
        st.permutations(["%Y", "%m", "%d", "%H", "%M", "%S", "%z", "-", "%%"]).map("".join),
        WEIRD_TEXT,
        JUNK_OBJECTS,
        st.just("%Y" * 40),
    ),
    tenths=3,
)
PARTITIONED = mostly(st.just(True), st.one_of(st.just(False), JUNK_OBJECTS, st.just("yes")), tenths=9)


# -- exclusions, business days and unions ---------------------------------------------------------------
# Holiday calendars are built once (the package takes milliseconds a calendar): valid ones, as users pass them.
CALENDARS = [
    holidays_of("US", subdiv="NY"),
    holidays_of(market="NYSE", years=(2000, 2030)),
    holidays_of("GB", subdiv="ENG", years=(1900, 1950)),
]
PLAUSIBLE_DATES = st.one_of(
    st.dates(min_value=datetime.date(1900, 1, 1), max_value=datetime.date(2999, 12, 31)),
    st.dates(min_value=datetime.date(2020, 1, 1), max_value=datetime.date(2030, 12, 31)),
    st.dates(min_value=datetime.date(2020, 1, 1), max_value=datetime.date(2030, 12, 31)).map(lambda d: d.isoformat()),
    st.dates(min_value=datetime.date(1900, 1, 1), max_value=datetime.date(2999, 12, 31)).map(
        lambda d: pendulum.date(d.year, d.month, d.day)
    ),
)
RANGES = st.builds(
    lambda first, days: between(first, first + datetime.timedelta(days=days)),
    st.dates(min_value=datetime.date(1900, 1, 1), max_value=datetime.date(2998, 1, 1)),
    st.integers(0, 365),
)
ADVERSARIAL_DATES = st.one_of(
    st.datetimes(min_value=datetime.datetime(1900, 1, 1), max_value=datetime.datetime(2999, 1, 1)),
    st.builds(lambda d: pendulum.datetime(d.year, d.month, d.day), st.dates()),
    st.dates(),  # outside 1900-2999 in most draws
    st.sampled_from(["2026-02-30", "26-12-25", "2026-12-25T00:00", "\u0662026-12-25", "", "9999-99-99"]),
    st.builds(between, st.one_of(st.dates(), WEIRD_TEXT, JUNK_OBJECTS), st.one_of(st.dates(), WEIRD_TEXT)),
    st.builds(
        lambda first, days: between(first, first + datetime.timedelta(days=days)),
        st.dates(min_value=datetime.date(1900, 1, 1), max_value=datetime.date(2900, 1, 1)),
        st.integers(-400, 800),
    ),
    ADVERSARIAL,
)
EXCLUSION_ITEMS = mostly(st.one_of(PLAUSIBLE_DATES, RANGES, st.sampled_from(CALENDARS)), ADVERSARIAL_DATES, tenths=8)
EXCLUSIONS = mostly(
    st.one_of(st.none(), EXCLUSION_ITEMS, st.lists(EXCLUSION_ITEMS, max_size=8)),
    st.one_of(
        st.lists(st.lists(EXCLUSION_ITEMS, max_size=2), max_size=3),
        st.just(["2026-01-01"] * 1001),
        st.just(CALENDARS * 2),
        st.lists(RANGES, min_size=2, max_size=6),  # adjacent-ish ranges: the horizon may refuse them
        st.just([between(f"{y}-01-01", f"{y}-12-31") for y in range(2020, 2024)]),
    ),
    tenths=8,
)
NTH_BUSINESS_DAYS = mostly(
    st.one_of(st.integers(1, 23), st.integers(-23, -1)),
    st.one_of(st.integers(-30, 30), HUGE_INTS, FLOATS, JUNK_OBJECTS, st.just("1")),
)


def business_day_calls() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(unit, keywords) for Every.business_day and Every.month(business_day=...)."""
    own = {"at": WALL_TIMES, "timezone": TIMEZONES, "calendar": EXCLUSIONS, "exclude": EXCLUSIONS}
    daily = st.fixed_dictionaries({}, optional=own)
    monthly = st.fixed_dictionaries({"business_day": NTH_BUSINESS_DAYS}, optional={**own, "every": EVERY_COUNTS})
    return st.one_of(
        st.tuples(st.just("business_day"), st.tuples(daily, common_kwargs())),
        st.tuples(st.just("month"), st.tuples(monthly, common_kwargs())),
    ).map(lambda call: (call[0], {**call[1][0], **call[1][1]}))
