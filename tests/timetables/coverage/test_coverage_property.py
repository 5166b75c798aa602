"""For any cadence, phase, policy, run lengths, outages and pauses: the windows that ran plus the owed ones tile time.

(Lookback windows at least as long as the spacing overlap by design: there, their union covers time.)

The scheduler is modelled by brute force (:mod:`.scheduler_model`: only time passes there);
every run and every stored next run comes from the real timetable code. Under
``dropped="cover"`` nothing is owed and the runs' windows alone tile; under ``"owe"`` the
owed windows, read back from the runs by the public plan, fill the gaps exactly.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.timetables import Backfill, Cron, Every, Fixed, Latest, run_policy
from tessera.timetables.instants import from_us, to_us
from tessera.timetables.run_policy import OVERLAPS, RunPolicy

from .scheduler_model import SECOND, World

MINUTE = 60 * SECOND
START = to_us(from_us(0).replace(year=2026, month=3, day=1))
SLOTS = {"skip": (1,), "buffer_one": (1,), "buffer_all": (1, 2), "allow_all": (1, 2, 3), "cancel_other": (2,)}


@pytest.fixture(autouse=True)
def _readers_restored():
    saved = list(run_policy._readers)
    yield
    run_policy._readers[:] = saved


@st.composite
def worlds(draw):
    minutes = draw(st.sampled_from([1, 2, 5, 10, 15]))
    interval = minutes * MINUTE
    phase = draw(st.integers(0, minutes * 60 - 1))
    overlap = draw(st.sampled_from(OVERLAPS))
    dropped = draw(st.sampled_from(["cover", "owe"]))
    declared = draw(st.booleans())
    catch_up = draw(st.sampled_from([Latest(), Backfill(limit=1), Backfill(limit=3)]))
    deadline = None if declared else draw(st.one_of(st.none(), st.integers(1, 3 * minutes * 60)))
    lookback = draw(st.sampled_from([None, None, minutes, 3 * minutes]))  # window= at least the spacing
    options = {"phase": Fixed(f"{phase}s"), "catch_up": catch_up, "dropped": dropped}
    if lookback is not None:
        options["window"] = f"{lookback}m"
    if deadline is None:
        timetable = Every(f"{minutes}m", overlap=None if declared else overlap, **options)
    else:
        timetable = Cron(f"@every {minutes}m", starting_deadline=f"{deadline}s", overlap=overlap, **options)
    timetable = timetable.bind(dag_id="modelled", catchup=False, end_date=None)
    if declared:
        timetable = timetable.with_run_policy(RunPolicy(overlap, replay_inactive=draw(st.booleans())))
    horizon = START + 30 * interval
    spans = st.tuples(st.integers(START, horizon), st.integers(1, 6 * interval)).map(lambda s: (s[0], s[0] + s[1]))
    durations = draw(st.lists(st.integers(1, 4 * interval), min_size=1, max_size=12))
    return {
        "timetable": timetable,
        "slots": draw(st.sampled_from(SLOTS[overlap])),
        "durations": durations,
        "horizon": horizon,
        "outages": draw(st.lists(spans, max_size=3)),
        "pauses": draw(st.lists(spans, max_size=2)) if declared else [],
        "parse_every": draw(st.one_of(st.none(), st.sampled_from([30 * SECOND, interval // 2 + 1]))),
        "lag": draw(st.sampled_from([0, SECOND, 5 * SECOND])),
    }


@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(world=worlds())
def test_the_windows_that_ran_and_the_owed_ones_tile_time(world):
    runs = World(
        world["timetable"],
        slots=world["slots"],
        durations=itertools.cycle(world["durations"]),
        start=START,
        horizon=world["horizon"],
        outages=world["outages"],
        pauses=world["pauses"],
        parse_every=world["parse_every"],
        lag=world["lag"],
    ).run()
    assert runs, "a schedule that runs for 30 intervals creates runs"
    plan = world["timetable"].plan
    scheduled = [(from_us(run.window[0]), from_us(run.window[1])) for run in runs]
    owed, truncated = plan.owed_windows(scheduled, limit=1000)
    assert not truncated
    if world["timetable"].dropped == "cover":
        assert owed == [], "under cover the next run evaluates every dropped window"
    windows = sorted([*scheduled, *((o.window_start, o.window_end) for o in owed)])
    if plan.lookback is None:  # tiling windows: no gap and no overlap
        for (start, end), (next_start, _) in itertools.pairwise(windows):
            assert start < end
            assert end == next_start, f"{'gap' if end < next_start else 'overlap'} between {end} and {next_start}"
    else:  # lookback windows overlap by design: their union covers time
        reached = windows[0][1]
        for start, end in windows[1:]:
            assert start <= reached, f"gap between {reached} and {start}"
            reached = max(reached, end)
    assert [run.window[1] for run in runs] == sorted(run.window[1] for run in runs), "runs are created in order"
