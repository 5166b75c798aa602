"""Property: partition keys are one to one for random cadences, zones, DST policies and years 1900-2999.

Each case builds a partitioned timetable with its default ``key_format`` (which must be
accepted), walks its periods around every change of the zone's offset in a random year
(or around a random instant of a year without one), and requires that every period's key
reads back as that period's start. A key shared by two periods fails this: it reads back as
at most one of them.

``make test`` runs a fixed, derandomized subset (``CASES``); the acceptance run sets
``TESSERA_PARTITION_CASES=10000``.
"""

from __future__ import annotations

import datetime
import os
import zoneinfo

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from tessera.timetables import Calendar, Cron
from tessera.timetables._time.cron import CronInvalid
from tessera.timetables._time.zone_history import zone_history
from tessera.timetables.instants import from_us

CASES = int(os.environ.get("TESSERA_PARTITION_CASES", "120"))
HOUR = 3_600_000_000
DAY = 24 * HOUR
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
FIRST = -2_208_988_800_000_000  # 1900-01-01T00:00Z
END = 32_503_680_000_000_000  # 3000-01-01T00:00Z
STEPS = 120  # periods walked from each start point: bounded, whatever the cadence
ZONES = sorted(zoneinfo.available_timezones() - {"localtime", "Factory"})
# Zones whose folds and gaps are unusual: half hours, midnight changes, a 23-hour fold, a skipped day.
ODD_ZONES = [
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "America/Havana",
    "America/Santiago",
    "Pacific/Kwajalein",
    "Pacific/Apia",
    "Africa/Casablanca",
    "Asia/Tokyo",
    "Europe/Dublin",
    "Antarctica/Troll",
    "Pacific/Chatham",
    "Asia/Gaza",
]


def _us(moment: datetime.datetime) -> int:
    return (moment - EPOCH) // datetime.timedelta(microseconds=1)


def _field(low: int, high: int, near: list[int]) -> st.SearchStrategy[str]:
    value = st.one_of(st.sampled_from(near), st.integers(low, high))
    return st.one_of(
        st.just("*"),
        value.map(str),
        st.builds(lambda a, b: f"{min(a, b)},{max(a, b) if a != b else a}", value, value),
        st.builds(lambda a, b: f"{min(a, b)}-{max(a, b)}", value, value),
        st.builds(lambda step: f"*/{step}", st.integers(2, max(2, high))),
    )


MINUTES = _field(0, 59, [0, 15, 30, 45])
HOURS = _field(0, 23, [0, 1, 2, 3, 23])  # the hours daylight saving moves
DAYS = st.one_of(st.just("*"), st.just("*"), _field(1, 31, [1, 25, 26, 27, 28, 29, 30, 31]))
MONTHS = st.one_of(st.just("*"), st.just("*"), _field(1, 12, [3, 4, 9, 10, 11]))
WEEKDAYS = st.one_of(st.just("*"), st.just("*"), _field(0, 6, [0, 6]))
CRONS = st.builds(
    lambda dst, *fields: ("cron", " ".join(fields), dst),
    st.sampled_from(["cronjob", "once"]),
    MINUTES,
    HOURS,
    DAYS,
    MONTHS,
    WEEKDAYS,
)
AT = st.builds(lambda h, m: f"{h:02d}:{m:02d}", st.sampled_from([0, 1, 2, 3, 23, 12]), st.sampled_from([0, 30, 45]))
CALENDARS = st.one_of(
    st.builds(lambda every, at: ("hour", every, at), st.sampled_from([1, 2, 3, 4, 6, 8, 12]), AT),
    st.builds(lambda every, at: ("day", every, at), st.integers(1, 3), AT),
    st.builds(lambda on, at: ("week", on, at), st.integers(0, 6), AT),
    st.builds(lambda on, at: ("month", on, at), st.integers(1, 31), AT),
)
# Once a day or week at an hour daylight saving moves: the cadences a fold makes fire twice at one reading.
DAILY_CRONS = st.builds(
    lambda dst, minute, hour, weekday: ("cron", f"{minute} {hour} * * {weekday}", dst),
    st.sampled_from(["cronjob", "cronjob", "once"]),
    st.sampled_from([0, 30, 59]),
    st.sampled_from([0, 1, 2, 3, 23]),
    st.sampled_from(["*", "*", "0", "6"]),
)
EVERY = st.builds(lambda text: ("cron", f"@every {text}", "cronjob"), st.sampled_from(["30m", "1h", "2h", "1d", "2d"]))
# Two thirds crons (half of them once a day at an hour DST moves), a sixth calendar cadences, a sixth @every.
CADENCES = st.sampled_from([CRONS, CRONS, DAILY_CRONS, DAILY_CRONS, CALENDARS, EVERY]).flatmap(lambda kind: kind)


def build(cadence: tuple, zone: str):
    kind, *args = cadence
    if kind == "cron":
        expression, dst = args
        try:
            return Cron(expression, timezone=zone, dst=dst, partitioned=True)
        except CronInvalid:
            assume(False)  # an expression that never fires (0 0 31 2 *) is refused by design
    if kind == "hour":
        return Calendar.hour(args[0], at=args[1], timezone=zone, partitioned=True)
    if kind == "day":
        return Calendar.day(at=args[1], every=args[0], timezone=zone, partitioned=True)
    if kind == "week":
        return Calendar.week(on=args[0], at=args[1], timezone=zone, partitioned=True)
    return Calendar.month(on=args[0], at=args[1], timezone=zone, partitioned=True)


def anchors(zone: str, year: int, fraction: float) -> list[int]:
    """The instants of ``year`` at which ``zone``'s offset changes, or one instant of it."""
    start, end = _us(datetime.datetime(year, 1, 1, tzinfo=datetime.timezone.utc)), None
    end = _us(datetime.datetime(year + 1, 1, 1, tzinfo=datetime.timezone.utc)) if year < 2999 else start + 360 * DAY
    changes = [change.at for change in zone_history(zone) or () if start <= change.at < end]
    return changes or [start + int((end - start) * fraction)]


def periods_near(cadence, anchor: int) -> set[int]:
    """Period starts from a day before ``anchor`` and from two hours before it, ``STEPS`` of each at most.

    Only starts inside the supported years: a key beyond them is refused by design.
    """
    found: set[int] = set()
    for back in (26 * HOUR, 2 * HOUR):
        occurrence = cadence.at_or_after(max(anchor - back, FIRST))
        for _ in range(STEPS):
            if occurrence > anchor + 26 * HOUR or occurrence >= END:
                break
            found.add(occurrence)
            occurrence = cadence.following(occurrence)
    return found


@settings(
    max_examples=CASES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    cadence=CADENCES,
    zone=st.one_of(st.sampled_from(ODD_ZONES), st.sampled_from(ZONES)),
    year=st.integers(1900, 2999),
    fraction=st.floats(0.0, 0.99),
)
def test_every_period_has_its_own_key_and_the_key_reads_back(cadence, zone, year, fraction):
    timetable = build(cadence, zone)
    keys, steps = timetable._partition_keys, timetable._plan.cadence
    seen: dict[str, int] = {}
    for anchor in anchors(zone, year, fraction):
        for start in sorted(periods_near(steps, anchor)):
            key = keys.encode(start)
            assert seen.setdefault(key, start) == start, (cadence, zone, key, from_us(seen[key]), from_us(start))
            assert timetable._decode_partition_date(key) == from_us(start), (cadence, zone, key, from_us(start))
    # What the cases covered, for --hypothesis-show-statistics: the hard ones must be among them.
    readings = [key[:19] for key in seen]
    event(f"{cadence[0]}, default key {'with' if '%z' in keys.key_format else 'without'} %z")
    if len(set(readings)) < len(readings):
        event("two periods at one wall-clock reading, told apart by the offset")
