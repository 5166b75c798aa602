"""Which schedules repeat, and how a range is cut into spans stepped and stretches counted (:mod:`.periods`).

That counting gives the brute-force answer is checked in ``test_compare.py``; here, the cheap facts
it rests on: the periods read off a schedule, and spans that tile the range in a bounded number.
"""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tessera.plugin.migrate.current import Current
from tessera.plugin.migrate.periods import DAY, WEEK, margin, period_of, spans

UTC = datetime.timezone.utc
SINCE = datetime.datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expressions", "period"),
    [
        (("* * * * *",), DAY),
        (("*/5 9-17 * * *",), DAY),
        (("@hourly",), DAY),
        (("0 6 * * 1-5",), WEEK),
        (("0 6 * * mon,wed",), WEEK),
        (("0 9 * * *", "0 17 * * 5"), WEEK),
        (("0 6 1 * *",), None),  # a day of the month: months differ in length
        (("0 6 * 1-6 *",), None),
        (("0 6 * * 5L",), None),  # the month's last Friday
        (("0 6 * * 1#2",), None),  # its second Monday
        (("@monthly",), None),
        (("0 0 6 * * *",), None),  # six fields: not a five-field cron
    ],
)
def test_a_cron_repeats_daily_or_weekly_only_when_its_days_do_not_depend_on_the_month(expressions, period):
    assert period_of(Current("CronTriggerTimetable", "crons", expressions=expressions)) == period


@pytest.mark.parametrize(
    ("delta", "period"),
    [
        (datetime.timedelta(minutes=30), DAY),
        (datetime.timedelta(hours=7), 7 * DAY),
        (datetime.timedelta(days=14), 14 * DAY),
        (datetime.timedelta(minutes=61), None),  # lcm with a day: 30.5 days, over MAX_PERIOD
        (None, None),  # a relativedelta
    ],
)
def test_a_step_repeats_every_least_common_multiple_of_it_and_a_day(delta, period):
    assert period_of(Current("DeltaTriggerTimetable", "delta", delta=delta)) == period


@given(
    days=st.integers(1, 400),
    boundaries=st.lists(st.integers(-30, 430 * 24), max_size=8),
    period=st.sampled_from([DAY, WEEK, 14 * DAY]),
    interval_hours=st.integers(0, 48),
)
def test_the_spans_tile_the_range_and_number_at_most_three_per_boundary_plus_four(
    days, boundaries, period, interval_hours
):
    until = SINCE + datetime.timedelta(days=days)
    at = [SINCE + datetime.timedelta(hours=h) for h in boundaries]
    around = margin(period, datetime.timedelta(hours=interval_hours))
    found = spans(SINCE, until, period=period, boundaries=at, around=around)
    assert len(found) <= 3 * len(boundaries) + 4
    pieces = [(s.low, s.high) for s in found] + [(s.high, s.high + s.copies * period) for s in found if s.copies]
    pieces.sort()
    assert pieces[0][0] == SINCE and pieces[-1][1] == until
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(pieces, pieces[1:]))
    for index, span in enumerate(found):
        if span.copies:
            # A counted stretch follows two stepped periods, and every run it holds is a margin from any boundary.
            assert span.high - span.low == period and found[index - 1].high - found[index - 1].low == period
            end = span.high + span.copies * period
            assert all(not found[index - 1].low - around < b < end + around for b in [SINCE, until, *at])
