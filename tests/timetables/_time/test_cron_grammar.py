"""The cron grammar is a Kubernetes CronJob's: robfig/cron v3's standard parser, case for case.

Cases marked "robfig" are ported from robfig/cron v3's ``parser_test.go`` and ``spec_test.go``
(standard five-field parser and descriptors; the seconds field is dropped, and a time robfig
evaluates in ``time.Local`` is evaluated in America/New_York). Cases marked "regression" pin
bugs of the croniter-based parser this grammar replaced; the others pin a rule of
``ParseStandard`` that tessera must share (checked against robfig itself when written).
"""

from __future__ import annotations

import datetime
import zoneinfo

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tessera.timetables._time.cron import CronCadence, CronInvalid, parse_cron
from tessera.timetables._time.cron_fields import plain_text
from tessera.timetables._time.durations import US_PER_DAY, US_PER_MINUTE, US_PER_SECOND
from tessera.timetables._time.grid import EpochGrid

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
LOCAL = "America/New_York"  # stands in for robfig's time.Local


def us(moment: datetime.datetime) -> int:
    return (moment - EPOCH) // datetime.timedelta(microseconds=1)


def instant(text: str, zone: str) -> int:
    """A local reading (``2012-07-09T15:00``, first instance if repeated) or an instant with an offset."""
    moment = datetime.datetime.fromisoformat(text)
    return us(moment if moment.tzinfo else moment.replace(tzinfo=zoneinfo.ZoneInfo(zone)))


def reading(t: int, zone: str) -> str:
    return (EPOCH + datetime.timedelta(microseconds=t)).astimezone(zoneinfo.ZoneInfo(zone)).isoformat()


def cadence(expression: str, zone: str = LOCAL):
    return parse_cron(expression, zoneinfo.ZoneInfo(zone), "cronjob")


# -- which times an expression fires at -------------------------------------------------------

R = "robfig-"  # ported from robfig/cron v3 (spec_test.go TestActivation)


@pytest.mark.parametrize(
    ("expression", "at", "fires"),
    [
        pytest.param("0/15 * * * *", "2012-07-09T15:00", True, id=R + "every-15-at-00"),
        pytest.param("0/15 * * * *", "2012-07-09T15:45", True, id=R + "every-15-at-45"),
        pytest.param("0/15 * * * *", "2012-07-09T15:40", False, id=R + "every-15-not-40"),
        pytest.param("5/15 * * * *", "2012-07-09T15:05", True, id=R + "every-15-from-5-at-05"),
        pytest.param("5/15 * * * *", "2012-07-09T15:20", True, id=R + "every-15-from-5-at-20"),
        pytest.param("5/15 * * * *", "2012-07-09T15:50", True, id=R + "every-15-from-5-at-50"),
        pytest.param("0/15 * * Jul *", "2012-07-15T15:00", True, id=R + "named-month-jul"),
        pytest.param("0/15 * * Jun *", "2012-07-15T15:00", False, id=R + "named-month-jun"),
        pytest.param("30 08 ? Jul Sun", "2012-07-15T08:30", True, id=R + "all-set-question-dom"),
        pytest.param("30 08 15 Jul ?", "2012-07-15T08:30", True, id=R + "all-set-question-dow"),
        pytest.param("30 08 ? Jul Sun", "2012-07-16T08:30", False, id=R + "all-set-question-dom-monday"),
        pytest.param("30 08 15 Jul ?", "2012-07-16T08:30", False, id=R + "all-set-question-dow-16th"),
        pytest.param("@hourly", "2012-07-09T15:00", True, id=R + "hourly-on-the-hour"),
        pytest.param("@hourly", "2012-07-09T15:04", False, id=R + "hourly-not-04"),
        pytest.param("@daily", "2012-07-09T15:00", False, id=R + "daily-not-15h"),
        pytest.param("@daily", "2012-07-09T00:00", True, id=R + "daily-midnight"),
        pytest.param("@weekly", "2012-07-09T00:00", False, id=R + "weekly-not-monday"),
        pytest.param("@weekly", "2012-07-08T00:00", True, id=R + "weekly-sunday"),
        pytest.param("@weekly", "2012-07-08T01:00", False, id=R + "weekly-sunday-not-1am"),
        pytest.param("@monthly", "2012-07-08T00:00", False, id=R + "monthly-not-8th"),
        pytest.param("@monthly", "2012-07-01T00:00", True, id=R + "monthly-first"),
        pytest.param("* * 1,15 * Sun", "2012-07-15T00:00", True, id=R + "dom-or-dow-both"),
        pytest.param("* * 1,15 * Sun", "2012-06-15T00:00", True, id=R + "dom-or-dow-dom-only"),
        pytest.param("* * 1,15 * Sun", "2012-08-01T00:00", True, id=R + "dom-or-dow-first"),
        pytest.param("* * */10 * Sun", "2012-07-15T00:00", True, id=R + "stepped-dom-is-restricted-issue-70"),
        pytest.param("* * * * Mon", "2012-07-15T00:00", False, id=R + "star-dom-and-monday"),
        pytest.param("* * 1,15 * *", "2012-07-09T00:00", False, id=R + "star-dow-and-9th"),
        pytest.param("* * 1,15 * *", "2012-07-15T00:00", True, id=R + "star-dow-and-15th"),
        pytest.param("* * */2 * Sun", "2012-07-15T00:00", True, id=R + "stepped-dom-or-sunday"),
    ],
)
def test_activation(expression, at, fires):
    t = instant(at, LOCAL)
    assert (cadence(expression).following(t - US_PER_SECOND) == t) is fires


# -- the next fire after a time ---------------------------------------------------------------

N = "robfig-next-"  # ported from robfig/cron v3 (spec_test.go TestNext and TestNextWithTz)
NY, SAO_PAULO, KOLKATA = "America/New_York", "America/Sao_Paulo", "Asia/Kolkata"


@pytest.mark.parametrize(
    ("expression", "zone", "after", "expected"),
    [
        pytest.param("5 * * * *", LOCAL, "2012-07-09T14:45", "2012-07-09T15:05", id="robfig-parse-5-past"),
        pytest.param("0/15 * * * *", LOCAL, "2012-07-09T14:45", "2012-07-09T15:00", id=N + "simple-14-45"),
        pytest.param("0/15 * * * *", LOCAL, "2012-07-09T14:59", "2012-07-09T15:00", id=N + "simple-14-59"),
        pytest.param("0/15 * * * *", LOCAL, "2012-07-09T14:59:59", "2012-07-09T15:00", id=N + "simple-14-59-59"),
        pytest.param("20-35/15 * * * *", LOCAL, "2012-07-09T15:45", "2012-07-09T16:20", id=N + "wrap-hour"),
        pytest.param("*/15 * * * *", LOCAL, "2012-07-09T23:46", "2012-07-10T00:00", id=N + "wrap-day"),
        pytest.param("20-35/15 * * * *", LOCAL, "2012-07-09T23:45", "2012-07-10T00:20", id=N + "wrap-day-range"),
        # robfig's seconds field 15/35 dropped: the same minutes, at second 0.
        pytest.param("20-35/15 * * * *", LOCAL, "2012-07-09T23:35:51", "2012-07-10T00:20", id=N + "wrap-day-minutes"),
        pytest.param(
            "20-35/15 1/2 * * *", LOCAL, "2012-07-09T23:35:51", "2012-07-10T01:20", id=N + "wrap-day-odd-hours"
        ),
        pytest.param(
            "20-35/15 10-12 * * *", LOCAL, "2012-07-09T23:35:51", "2012-07-10T10:20", id=N + "wrap-day-hour-range"
        ),
        pytest.param(
            "20-35/15 1/2 */2 * *", LOCAL, "2012-07-09T23:35:51", "2012-07-11T01:20", id=N + "wrap-day-odd-days"
        ),
        pytest.param(
            "20-35/15 * 9-20 * *", LOCAL, "2012-07-09T23:35:51", "2012-07-10T00:20", id=N + "wrap-day-dom-range"
        ),
        pytest.param(
            "20-35/15 * 9-20 Jul *", LOCAL, "2012-07-09T23:35:51", "2012-07-10T00:20", id=N + "wrap-day-in-july"
        ),
        pytest.param("0 0 9 Apr-Oct ?", LOCAL, "2012-07-09T23:35", "2012-08-09T00:00", id=N + "wrap-month"),
        pytest.param("0 0 */5 Apr,Aug,Oct Mon", LOCAL, "2012-07-09T23:35", "2012-08-01T00:00", id=N + "wrap-month-or"),
        pytest.param("0 0 */5 Oct Mon", LOCAL, "2012-07-09T23:35", "2012-10-01T00:00", id=N + "wrap-month-oct"),
        pytest.param("0 0 * Feb Mon", LOCAL, "2012-07-09T23:35", "2013-02-04T00:00", id=N + "wrap-year"),
        pytest.param("0 0 * Feb Mon/2", LOCAL, "2012-07-09T23:35", "2013-02-01T00:00", id=N + "wrap-year-dow-step"),
        pytest.param("* * * * *", LOCAL, "2012-12-31T23:59:45", "2013-01-01T00:00", id=N + "wrap-everything"),
        pytest.param("0 0 29 Feb ?", LOCAL, "2012-07-09T23:35", "2016-02-29T00:00", id=N + "leap-day"),
        pytest.param(
            "30 2 11 Mar ?", NY, "2012-03-11T00:00-05:00", "2013-03-11T02:30-04:00", id=N + "spring-forward-skipped"
        ),
        pytest.param("0 * * * ?", NY, "2012-03-11T00:00-05:00", "2012-03-11T01:00-05:00", id=N + "hourly-spring-1"),
        pytest.param("0 * * * ?", NY, "2012-03-11T01:00-05:00", "2012-03-11T03:00-04:00", id=N + "hourly-spring-2"),
        pytest.param("0 * * * ?", NY, "2012-03-11T03:00-04:00", "2012-03-11T04:00-04:00", id=N + "hourly-spring-3"),
        pytest.param("0 * * * ?", NY, "2012-03-11T04:00-04:00", "2012-03-11T05:00-04:00", id=N + "hourly-spring-4"),
        pytest.param("0 1 * * ?", NY, "2012-03-11T00:00-05:00", "2012-03-11T01:00-05:00", id=N + "1am-spring-1"),
        pytest.param("0 1 * * ?", NY, "2012-03-11T01:00-05:00", "2012-03-12T01:00-04:00", id=N + "1am-spring-2"),
        pytest.param("0 2 * * ?", NY, "2012-03-11T00:00-05:00", "2012-03-12T02:00-04:00", id=N + "2am-skipped"),
        pytest.param("30 2 04 Nov ?", NY, "2012-11-04T00:00-04:00", "2012-11-04T02:30-05:00", id=N + "fall-back-2-30"),
        pytest.param("30 1 04 Nov ?", NY, "2012-11-04T01:45-04:00", "2012-11-04T01:30-05:00", id=N + "fall-back-1-30"),
        pytest.param("0 * * * ?", NY, "2012-11-04T00:00-04:00", "2012-11-04T01:00-04:00", id=N + "hourly-fall-1"),
        pytest.param("0 * * * ?", NY, "2012-11-04T01:00-04:00", "2012-11-04T01:00-05:00", id=N + "hourly-fall-2"),
        pytest.param("0 * * * ?", NY, "2012-11-04T01:00-05:00", "2012-11-04T02:00-05:00", id=N + "hourly-fall-3"),
        pytest.param("0 1 * * ?", NY, "2012-11-04T00:00-04:00", "2012-11-04T01:00-04:00", id=N + "1am-twice-1"),
        pytest.param("0 1 * * ?", NY, "2012-11-04T01:00-04:00", "2012-11-04T01:00-05:00", id=N + "1am-twice-2"),
        pytest.param("0 1 * * ?", NY, "2012-11-04T01:00-05:00", "2012-11-05T01:00-05:00", id=N + "1am-twice-3"),
        pytest.param("0 2 * * ?", NY, "2012-11-04T00:00-04:00", "2012-11-04T02:00-05:00", id=N + "2am-fall-1"),
        pytest.param("0 2 * * ?", NY, "2012-11-04T02:00-05:00", "2012-11-05T02:00-05:00", id=N + "2am-fall-2"),
        pytest.param("0 3 * * ?", NY, "2012-11-04T00:00-04:00", "2012-11-04T03:00-05:00", id=N + "3am-fall-1"),
        pytest.param("0 3 * * ?", NY, "2012-11-04T03:00-05:00", "2012-11-05T03:00-05:00", id=N + "3am-fall-2"),
        pytest.param("0 3 3 * ?", NY, "2012-11-04T00:00-04:00", "2012-12-03T03:00-05:00", id=N + "monthly"),
        pytest.param(
            "0 9 10 * ?", SAO_PAULO, "2018-10-17T05:00-04:00", "2018-11-10T06:00-05:00", id=N + "sao-paulo-issue-157-a"
        ),
        pytest.param(
            "0 9 22 * ?", SAO_PAULO, "2018-02-14T05:00-05:00", "2018-02-22T07:00-05:00", id=N + "sao-paulo-issue-157-b"
        ),
        pytest.param("14 14 * * *", KOLKATA, "2016-01-03T13:09:03", "2016-01-03T14:14", id=N + "tz-before-hour"),
        pytest.param("14 14 * * ?", KOLKATA, "2016-01-03T04:09:03", "2016-01-03T14:14", id=N + "tz-early-morning"),
        pytest.param("14 14 * * *", KOLKATA, "2016-01-03T14:09:03", "2016-01-03T14:14", id=N + "tz-same-hour"),
        pytest.param("14 14 * * ?", KOLKATA, "2016-01-03T14:00:00", "2016-01-03T14:14", id=N + "tz-on-the-hour"),
        # -- regressions of the croniter-based parser: a "*" item inside a list --------------------
        pytest.param("0 0 *,1 * *", "UTC", "2026-03-04T00:00", "2026-03-05T00:00", id="regression-star-in-dom-list"),
        pytest.param(
            "30 * * oct,*,nov *", "UTC", "2026-03-04T00:00", "2026-03-04T00:30", id="regression-star-in-month-list"
        ),
        pytest.param("0 0 * * *,5", "UTC", "2026-03-04T00:00", "2026-03-05T00:00", id="regression-star-in-dow-list"),
        pytest.param("0 *,6 * * *", "UTC", "2026-03-04T00:00", "2026-03-04T01:00", id="regression-star-in-hour-list"),
        pytest.param("*,5 * * * *", "UTC", "2026-03-04T00:00", "2026-03-04T00:01", id="regression-star-in-minute-list"),
        pytest.param("0 0 1 * *,5", "UTC", "2026-03-04T00:00", "2026-04-01T00:00", id="regression-star-item-ands-days"),
        # -- regressions: an equal range spelled two ways is one value, not the whole field ------
        pytest.param("0 0 1-01 * *", "UTC", "2026-03-04T00:00", "2026-04-01T00:00", id="regression-range-1-01"),
        pytest.param("05-5 0 1 1 *", "UTC", "2026-03-04T00:00", "2027-01-01T00:05", id="regression-range-05-5"),
        pytest.param("0 0 1 jan-1 *", "UTC", "2026-03-04T00:00", "2027-01-01T00:00", id="regression-range-jan-1"),
        pytest.param("0 0 * * sun-0", "UTC", "2026-03-04T00:00", "2026-03-08T00:00", id="regression-range-sun-0"),
        # -- ParseStandard's other rules ------------------------------------------------------------
        pytest.param("0 0 */1 * 5", "UTC", "2026-03-01T00:00", "2026-03-06T00:00", id="step-1-star-ands-days"),
        pytest.param("0 0 1-31 * 5", "UTC", "2026-03-01T00:00", "2026-03-02T00:00", id="full-range-is-restricted"),
        pytest.param("0 0 , * 1", "UTC", "2026-03-04T00:00", "2026-03-09T00:00", id="empty-dom-or-monday"),
        pytest.param("0 0 1,,15 * *", "UTC", "2026-03-04T00:00", "2026-03-15T00:00", id="empty-items-skipped"),
        pytest.param("0 0 * * ?", "UTC", "2026-03-04T00:00", "2026-03-05T00:00", id="question-mark-dow"),
        pytest.param("? 0 * * *", "UTC", "2026-03-04T00:00", "2026-03-04T00:01", id="question-mark-minute"),
        pytest.param("*-5 0 * * *", "UTC", "2026-03-04T00:00", "2026-03-04T00:01", id="star-range-is-star"),
        pytest.param("*-5/20 0 * * *", "UTC", "2026-03-04T00:00", "2026-03-04T00:20", id="star-range-step"),
        pytest.param("50/7 0 * * *", "UTC", "2026-03-04T00:00", "2026-03-04T00:50", id="start-step-to-max"),
        pytest.param("50/7 0 * * *", "UTC", "2026-03-04T00:50", "2026-03-04T00:57", id="start-step-second"),
        pytest.param("*/90 * * * *", "UTC", "2026-03-04T00:00", "2026-03-04T01:00", id="step-beyond-range"),
        pytest.param(
            "*/9223372036854775807 0 * * *", "UTC", "2026-03-04T00:00", "2026-03-05T00:00", id="step-int64-max"
        ),
        pytest.param("+5 +0 * * *", "UTC", "2026-03-04T00:00", "2026-03-04T00:05", id="plus-sign"),
        pytest.param("005 0000 * * *", "UTC", "2026-03-04T00:00", "2026-03-04T00:05", id="leading-zeros"),
        pytest.param(
            "0 0 * * 00000000000000000000000000001", "UTC", "2026-03-04T00:00", "2026-03-09T00:00", id="many-zeros"
        ),
        pytest.param("0 0 1 JAN *", "UTC", "2026-03-04T00:00", "2027-01-01T00:00", id="month-name-uppercase"),
        pytest.param("0 0 * * FRİ", "UTC", "2026-03-04T00:00", "2026-03-06T00:00", id="name-go-lowercase-dotted-i"),
        pytest.param("0 0 * * mon-Fri/2", "UTC", "2026-03-04T00:00", "2026-03-06T00:00", id="name-range-step"),
        pytest.param("0\t0\u00a0*\u3000*  *", "UTC", "2026-03-04T00:00", "2026-03-05T00:00", id="go-white-space"),
        pytest.param("  0 0 * * * \n", "UTC", "2026-03-04T00:00", "2026-03-05T00:00", id="space-around-fields"),
        pytest.param("0 0 29 2 *", "UTC", "2096-03-01T00:00", "2104-02-29T00:00", id="leap-day-across-2100"),
    ],
)
def test_next(expression, zone, after, expected):
    assert cadence(expression, zone).following(instant(after, zone)) == instant(expected, zone)


# -- what is refused --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        # robfig parser_test.go TestRange, on a field with the same bounds problem.
        pytest.param("5--5 * * * *", "more than one '-'", id="robfig-range-too-many-hyphens"),
        pytest.param("0 0 * jan-x *", "'x' is not a number", id="robfig-range-name-then-junk"),
        pytest.param("2-x * * * *", "'x' is not a number", id="robfig-range-number-then-junk"),
        pytest.param("*/-12 * * * *", "'-12' is negative", id="robfig-range-negative-step"),
        pytest.param("*//2 * * * *", "more than one '/'", id="robfig-range-too-many-slashes"),
        pytest.param("0 0 0 * *", "0 is out of range (the lowest day-of-month is 1)", id="robfig-range-below-minimum"),
        pytest.param("0 24 * * *", "24 is out of range (the highest hour is 23)", id="robfig-range-above-maximum"),
        pytest.param("5-3 * * * *", "starts after it ends", id="robfig-range-beyond-end-regression-wrapped"),
        pytest.param("*/0 * * * *", "the step of '*/0' is 0", id="robfig-range-zero-step"),
        # robfig parser_test.go TestParseScheduleErrors / TestStandardSpecSchedule, spec_test.go TestErrors.
        pytest.param("5 j * * *", "'j' is not a number", id="robfig-letter-in-hour"),
        pytest.param("@every Xm", "needs a duration after @every", id="robfig-every-bad-duration"),
        pytest.param("@unrecognized", "not a known descriptor", id="robfig-unrecognized-descriptor"),
        pytest.param("* * * *", "has 4 fields, not 5", id="robfig-four-fields"),
        pytest.param("", "is empty", id="robfig-empty"),
        pytest.param("xyz", "has 1 fields, not 5", id="robfig-xyz"),
        pytest.param("60 0 * * *", "60 is out of range (the highest minute is 59)", id="robfig-minute-60"),
        pytest.param("0 60 * * *", "60 is out of range (the highest hour is 23)", id="robfig-hour-60"),
        pytest.param("0 0 * * XYZ", "'XYZ' is not a number or a name", id="robfig-dow-xyz"),
        pytest.param("15/0 * * * *", "the step of '15/0' is 0", id="robfig-slash-0-no-hang-issue-144"),
        # robfig accepts these; a CronJob refuses a TZ in its schedule, tessera takes timezone=.
        pytest.param("CRON_TZ=UTC  5 * * * *", "sets a timezone", id="robfig-cron-tz-prefix"),
        pytest.param("TZ=UTC  @midnight", "sets a timezone", id="robfig-tz-prefix-descriptor"),
        # robfig accepts these and never fires them (spec_test.go "Unsatisfiable"); tessera refuses.
        pytest.param("0 0 30 Feb ?", "never fires", id="robfig-unsatisfiable-feb-30"),
        pytest.param("0 0 31 Apr ?", "never fires", id="robfig-unsatisfiable-apr-31"),
        # -- regression of the croniter-based parser: a reversed range wrapped around ------------
        pytest.param("0 0 * * 5-1", "starts after it ends", id="regression-reversed-dow-range"),
        # -- ParseStandard's other rules ------------------------------------------------------------
        pytest.param("0 0 * * 7", "7 is out of range (the highest day-of-week is 6; Sunday is 0)", id="dow-seven"),
        pytest.param("0 0 * * 1-7", "7 is out of range (the highest day-of-week is 6", id="dow-range-to-seven"),
        pytest.param("0 jan * * *", "names are allowed only in the month and day-of-week", id="name-in-hour"),
        pytest.param("0 0 * */feb *", "'feb' is not a number", id="name-as-step"),
        pytest.param("0 0 * janu *", "'janu' is not a number", id="long-month-name"),
        pytest.param("-5 * * * *", "'' is not a number", id="negative-number"),
        pytest.param("+ * * * *", "'+' is not a number", id="sign-alone"),
        pytest.param("1_0 * * * *", "'1_0' is not a number", id="underscore-digits"),
        pytest.param("\u0665 * * * *", "is not a number", id="non-ascii-digit"),
        pytest.param("*/9223372036854775808 * * * *", "is out of range", id="step-beyond-int64"),
        pytest.param("99999999999999999999 * * * *", "is out of range", id="huge-number"),
        pytest.param("1" * 5000 + " * * * *", "is out of range", id="thousands-of-digits"),
        pytest.param("*/ * * * *", "'' is not a number", id="empty-step"),
        pytest.param("0 0 L * *", "'L' is not a number (L, W, # and H are not supported)", id="last-day-L"),
        pytest.param("0 0 15W * *", "(L, W, # and H are not supported)", id="nearest-weekday-W"),
        pytest.param("0 0 * * 5#2", "(L, W, # and H are not supported)", id="nth-weekday-hash"),
        pytest.param("H * * * *", "(L, W, # and H are not supported)", id="hashed-H"),
        pytest.param("0 * * * * *", "has 6 fields, not 5", id="seconds-field"),
        pytest.param("0\x1c0 * * * *", "'0\\x1c0' is not a number", id="python-only-white-space"),
        pytest.param("   ", "is empty", id="blank"),
        pytest.param(", * * * *", "never fires", id="empty-minute-field"),
        pytest.param("0 0 , * *", "never fires", id="empty-dom-and-star-dow"),
        pytest.param("0 0 31 4,6,9,11 *", "never fires", id="no-31st-in-those-months"),
        pytest.param("tz=UTC 0 0 * * *", "sets a timezone", id="lowercase-tz"),
        # descriptors are spelled exactly, as robfig matches them.
        pytest.param("@DAILY", "must be spelled exactly", id="descriptor-uppercase"),
        pytest.param(" @daily", "must be spelled exactly", id="descriptor-leading-space"),
        pytest.param("@daily\n", "must be spelled exactly", id="descriptor-trailing-newline"),
        pytest.param("@reboot", "not a known descriptor", id="descriptor-reboot"),
        pytest.param("@every", "must be spelled exactly", id="every-without-duration"),
        pytest.param("@every5m", "must be spelled exactly", id="every-without-space"),
        pytest.param("@every  5m", "exactly one space", id="every-two-spaces"),
        pytest.param("@every 5m ", "exactly one space", id="every-trailing-space"),
        pytest.param("@Every 5m", "must be spelled exactly", id="every-capitalised"),
        # @every takes tessera durations: whole seconds from 1 s to 366 d.
        pytest.param("@every 5M", "units are lowercase", id="every-uppercase-unit"),
        pytest.param("@every 0s", "needs a duration after @every", id="every-zero"),
        pytest.param("@every -5m", "needs a duration after @every", id="every-negative"),
        pytest.param("@every 1.5s", "not a whole number of seconds", id="every-fractional-second"),
        pytest.param("@every 500ms", "not a whole number of seconds", id="every-sub-second"),
        pytest.param("@every 367d", "longer than 366 days", id="every-over-366-days"),
        pytest.param("@every 5x", "needs a duration after @every", id="every-bad-unit"),
        pytest.param("@every " + "1" * 400 + ".5s", "needs a duration after @every", id="every-float-overflow"),
    ],
)
def test_refused(expression, problem):
    with pytest.raises(CronInvalid) as caught:
        cadence(expression)
    message = str(caught.value)
    assert message.startswith(f"expression: {expression!r} ")
    assert problem in message
    assert message.endswith("or '@every 5m'")  # the fix names the valid forms


# -- descriptors and @every -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("descriptor", "fields"),
    [
        pytest.param("@yearly", "0 0 1 1 *", id="robfig-yearly"),
        pytest.param("@annually", "0 0 1 1 *", id="robfig-annually"),
        pytest.param("@monthly", "0 0 1 * *", id="monthly"),
        pytest.param("@weekly", "0 0 * * 0", id="weekly"),
        pytest.param("@daily", "0 0 * * *", id="daily"),
        pytest.param("@midnight", "0 0 * * *", id="robfig-midnight"),
        pytest.param("@hourly", "0 * * * *", id="hourly"),
    ],
)
def test_descriptors_are_their_fields(descriptor, fields):
    named, spelled = cadence(descriptor), cadence(fields)
    assert isinstance(named, CronCadence)
    assert named.fields == spelled.fields


@pytest.mark.parametrize(
    ("expression", "interval"),
    [
        pytest.param("@every 5m", 5 * US_PER_MINUTE, id="robfig-every-5m"),
        pytest.param("@every 1h30m", 90 * US_PER_MINUTE, id="compound"),
        pytest.param("@every 1s", US_PER_SECOND, id="one-second"),
        pytest.param("@every 1d", US_PER_DAY, id="days-allowed"),
        pytest.param("@every 366d", 366 * US_PER_DAY, id="at-most-366-days"),
    ],
)
def test_every(expression, interval):
    assert cadence(expression) == EpochGrid(interval)


def test_parsed_fields_match_robfig_bits():
    """robfig parser_test.go TestField, TestAll and TestBits, on the fields that have those bounds."""
    fields = cadence("1,5-7/2,3 0-0 1-5/2 1-4/2 *").fields
    assert fields.minutes_of_day == (1, 3, 5, 7)
    assert fields.days == {1, 3, 5}
    assert fields.months == {1, 3}
    assert fields.weekdays == set(range(7))
    everything = cadence("* * * * *").fields
    assert everything.minutes_of_day == tuple(range(24 * 60))
    assert (everything.days, everything.months) == (set(range(1, 32)), set(range(1, 13)))
    assert not everything.days_or


# -- bounded work -----------------------------------------------------------------------------


def test_stepping_scans_few_years_even_across_2100(monkeypatch):
    """The sparsest expression (a leap day) reads 13 calendar years at most: up to the next
    leap day eight years away, across 2100, and to the one after it, which proves none is earlier."""
    years: list[int] = []
    original = CronCadence._days_in

    def counting(self, year):
        years.append(year)
        return original(self, year)

    monkeypatch.setattr(CronCadence, "_days_in", counting)
    leap_day = cadence("0 0 29 2 *", "UTC")
    t = instant("2096-03-01T00:00", "UTC")
    assert reading(leap_day.following(t), "UTC") == "2104-02-29T00:00:00+00:00"
    assert len(set(years)) <= 13
    years.clear()
    assert reading(leap_day.at_or_before(instant("2104-02-28T00:00", "UTC")), "UTC") == "2096-02-29T00:00:00+00:00"
    assert len(set(years)) <= 13


TOKENS = ["*", "?", "0", "1", "5", "6", "7", "23", "29", "31", "59", "60", "+5", "05", "-1", "jan", "FRİ", "sun-0"]
TOKENS += ["1-01", "5-3", "*/7", "*/0", "2/3", "*-5", "*,5", ",", "L", "5#2", "9" * 25, "*/9223372036854775807"]
VALID_ANYWHERE = ["*", "?", "1", "5", "05", "+5", "1-01", "*/7", "2/3", "*-5", "*,5", ","]
TOKEN = st.sampled_from(VALID_ANYWHERE * 6 + TOKENS)  # most fields valid, so that many expressions are
ITEM = st.lists(TOKEN, min_size=1, max_size=3).map(",".join)
SEPARATORS = st.sampled_from([" "] * 12 + ["\t", "\u00a0", "\x1c", "  "])
FIVE_FIELDS = st.tuples(ITEM, SEPARATORS, ITEM, SEPARATORS, ITEM, SEPARATORS, ITEM, SEPARATORS, ITEM).map("".join)
ANY_TEXT = st.one_of(
    FIVE_FIELDS,
    FIVE_FIELDS,
    st.text(max_size=40),
    st.text(alphabet="0123456789*?,-/ @LWH#+=TZevry smhdM.", max_size=30),
    st.sampled_from(["@daily", "@every 1s", "@every 366d", "@every 2h", "@weekly", "@every 0.5s"]),
)
SUPPORTED = st.integers(us(datetime.datetime(1900, 1, 1, tzinfo=UTC)), us(datetime.datetime(2999, 12, 31, tzinfo=UTC)))


@settings(max_examples=400, deadline=None)
@given(ANY_TEXT, st.sampled_from(["UTC", NY, "Australia/Lord_Howe", "Pacific/Apia"]), SUPPORTED)
def test_any_text_is_refused_or_steps(text, zone, t):
    """Whatever a DAG file says, parsing raises nothing but CronInvalid and stepping answers."""
    try:
        schedule = cadence(text, zone)
    except CronInvalid:
        event("refused")
        return
    event("accepted")
    after, before = schedule.following(t), schedule.at_or_before(t)
    assert before <= t < after
    assert schedule.at_or_after(t) == (t if before == t else after)
    assert schedule.preceding(after) == before
    assert schedule.preceding(before) < before


def date_rule(fields) -> set[tuple[int, int, int]]:
    """Every (month, day, weekday) the fields match, whatever the year."""
    rule = set()
    for month in fields.months:
        for day in range(1, 32):
            for weekday in range(7):
                on_day, on_weekday = day in fields.days, weekday in fields.weekdays
                if (on_day or on_weekday) if fields.days_or else (on_day and on_weekday):
                    rule.add((month, day, weekday))
    return rule


@settings(max_examples=200, deadline=None)
@given(FIVE_FIELDS)
def test_plain_text_for_the_describer_means_the_same(text):
    try:
        fields = cadence(text, "UTC").fields
    except CronInvalid:
        return
    plain = cadence(plain_text(fields), "UTC").fields
    assert plain.minutes_of_day == fields.minutes_of_day
    assert date_rule(plain) == date_rule(fields)
