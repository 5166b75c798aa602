"""The page draws exactly the runs the public plan lists: its lane arithmetic, run in Chromium, against ``upcoming``.

The page reads each DAG's lane (``GET /api/v1/page``: the public plan's ``lane`` as the API
encodes it) and enumerates or counts runs from it with ``plugin/ui/lane.js``. Here that very
file runs in Debian's Chromium, and for random cadences, zones, delays, windows, phases and DAG
bounds (the strategies of ``tests/timetables/test_lane.py``) the runs it gives are the runs
``timetable.plan.upcoming`` lists over the lane's range, to the microsecond, and the run starts it
counts in a sub-range (what a dense lane's band says) are the ones ``upcoming`` has there.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.plugin.fleet.plans import lane_of
from tests.plugin.ui.test_ui_browser import CHROMIUM, CHROMIUM_ARGS
from tests.timetables.test_lane import cadences, ranges, runs_to_compare, us

UI = Path(__file__).resolve().parents[3] / "plugin" / "ui"
ALL_RUNS = (
    "lane => laneRuns(lane, -Infinity, Infinity).map(r => [r.occurrence, r.run_after, r.window_start, r.window_end])"
)
RUNS_IN = (
    "([lane, from, to]) => laneRuns(lane, from, to).map(r => [r.occurrence, r.run_after, r.window_start, r.window_end])"
)
STARTS_IN = "([lane, from, to]) => laneCount(lane, from - lane.phase, to - lane.phase)"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium (/usr/bin/chromium)")


@pytest.fixture(scope="module")
def lanes_page() -> Iterator[object]:
    """A blank page with the page's own lane.js and timeline.js loaded (they need no Airflow)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_content("<!doctype html><html><body></body></html>")
        for name in ("lane.js", "timeline.js"):
            page.add_script_tag(content=(UI / name).read_text(encoding="utf-8"))
        yield page
        browser.close()


def _encoded(timetable: object, after: datetime.datetime, until: datetime.datetime, bounds: dict) -> dict:
    """The lane exactly as ``GET /api/v1/page`` sends it."""
    return lane_of(timetable.plan.lane(after=after, until=until, **bounds)).model_dump(mode="json")


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(timetable=cadences(), span=ranges(), cut=st.tuples(st.floats(0, 1), st.floats(0, 1)))
def test_the_runs_the_page_reads_from_a_lane_are_the_runs_upcoming_lists(lanes_page, timetable, span, cut):
    after, until, bounds = span
    expected = runs_to_compare(timetable, after, until, bounds)
    if expected is None:
        return
    lane = _encoded(timetable, after, until, bounds)
    drawn = [tuple(run) for run in lanes_page.evaluate(ALL_RUNS, lane)]
    if lane["through"] is None:
        assert drawn == expected
    else:
        assert drawn == expected[: len(drawn)]
    if lane["through"] is not None:
        return
    # A view inside the range: the runs drawn in it (those whose occurrence is in it, and the next
    # one), and the starts a band counts (the runs that start in it).
    low, high = sorted(cut)
    start, end = (us(after) + int(f * (us(until) - us(after))) for f in (low, high))
    inside = [run for run in expected if start <= run[0] < end]
    inside += [run for run in expected if run[0] >= end][:1]
    assert [tuple(run) for run in lanes_page.evaluate(RUNS_IN, [lane, start, end])] == inside
    counted = lanes_page.evaluate(STARTS_IN, [lane, start, end])
    assert counted == sum(1 for run in expected if start <= run[1] < end)


def test_a_dense_lane_is_one_band_with_its_exact_count(lanes_page):
    """Every 5 minutes over a 24-hour view: one band, "288 runs, every 5 min" (not an estimate)."""
    from tessera.timetables import Every, Fixed

    after = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.timezone.utc)
    lane = _encoded(Every("5m", phase=Fixed("1m10s")), after, after + datetime.timedelta(days=71), {})
    view_start = us(after) // 1000
    shapes = lanes_page.evaluate(
        "([lane, start]) => laneShapes(lane, { range: '24h', start, end: start + 86400000, now: start })",
        [lane, view_start],
    )
    assert shapes["note"] == "288 runs, every 5 min"
    assert shapes["band"].startswith("M") and shapes["even"] == "" and shapes["starts"] == ""
