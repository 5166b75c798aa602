"""Stable phases: pinned values (they must never change), bounds and resolution."""

from __future__ import annotations

import ast
import re
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tessera.timetables._time.durations import US_PER_MINUTE, US_PER_SECOND
from tessera.timetables._time.phase import spread_phase, stable_hash
from tessera.timetables.policies import Backfill, Fixed, Spread, anti_herd

PURE = Path(__file__).resolve().parents[3] / "timetables" / "_time"


@pytest.mark.parametrize(
    ("key", "bound", "step", "expected"),
    [
        pytest.param("tessera_every_5m_delay", 5 * US_PER_MINUTE, US_PER_SECOND, 12 * US_PER_SECOND, id="5m"),
        pytest.param("daily_etl", 15 * US_PER_MINUTE, US_PER_MINUTE, 10 * US_PER_MINUTE, id="anti-herd"),
        pytest.param("hourly_sync", 15 * US_PER_MINUTE, US_PER_SECOND, 331 * US_PER_SECOND, id="15m"),
    ],
)
def test_phase_values_are_pinned(key, bound, step, expected):
    """Changing these would move every deployed DAG's runs: the hash is part of the public contract."""
    assert spread_phase(key, bound, step) == expected


def test_stable_hash_is_pinned():
    assert stable_hash("tessera_every_5m_delay") == 13894190002024724412


@given(
    key=st.text(min_size=1),
    bound=st.integers(1, 3 * 3_600 * US_PER_SECOND),
    step=st.integers(1, 60 * US_PER_SECOND),
)
def test_phase_is_below_bound_and_on_a_step(key, bound, step):
    phase = spread_phase(key, bound, step)
    assert 0 <= phase < max(bound, step)
    assert phase % step == 0


def test_anti_herd_is_zero_to_fourteen_whole_minutes():
    phases = {anti_herd().resolve(f"dag_{i}", 0) for i in range(2000)}
    assert phases == {m * US_PER_MINUTE for m in range(15)}


def test_spread_spreads_evenly():
    """1000 DAGs over 5 minutes at 1 s resolution: no 10-second bucket holds more than 1.5x the mean."""
    counts = [0] * 30
    for i in range(1000):
        counts[Spread(max="5m").resolve(f"dag_{i}", 0) // (10 * US_PER_SECOND)] += 1
    assert max(counts) <= 1.5 * (1000 / 30)


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        pytest.param(lambda: Spread(max="0s"), "phase.spread.max: '0s'", id="zero-max"),
        pytest.param(lambda: Spread(max="1m", step="2m"), "phase.spread.step: '2m'", id="step-above-max"),
        pytest.param(lambda: Fixed("-1s"), "phase.fixed: '-1s'", id="negative-fixed"),
        pytest.param(lambda: Backfill(limit=0), "catch_up.backfill.limit: 0", id="zero-limit"),
        pytest.param(lambda: Backfill(limit=1001), "catch_up.backfill.limit: 1001", id="limit-over-1000"),
        pytest.param(lambda: Backfill(limit=10**12), "catch_up.backfill.limit: 1000000000000", id="limit-10-12"),
        pytest.param(lambda: Backfill(limit=10**5000), "catch_up.backfill.limit: <integer of about", id="limit-huge"),
        pytest.param(lambda: Spread(max="367d"), "phase.spread.max: '367d'", id="spread-max-over-366d"),
        pytest.param(lambda: Spread(max="100000000d"), "phase.spread.max: '100000000d'", id="spread-max-huge"),
        pytest.param(lambda: Spread(step="367d"), "phase.spread.step: '367d'", id="spread-step-over-366d"),
        pytest.param(lambda: Fixed("3000000d"), "phase.fixed: '3000000d'", id="fixed-huge"),
        pytest.param(lambda: Fixed(timedelta(days=367)), "phase.fixed: datetime.timedelta(days=367)", id="fixed-td"),
    ],
)
def test_bad_policies_are_refused_naming_the_field(make, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        make()


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        pytest.param(lambda: Backfill(limit=True), "catch_up.backfill.limit: True is a bool", id="bool-limit"),
        pytest.param(lambda: Backfill(limit=12.0), "catch_up.backfill.limit: 12.0 is a float", id="float-limit"),
        pytest.param(lambda: Backfill(limit=float("inf")), "catch_up.backfill.limit: inf", id="inf-limit"),
        pytest.param(lambda: Backfill(limit=float("nan")), "catch_up.backfill.limit: nan", id="nan-limit"),
        pytest.param(lambda: Backfill(limit="12"), "catch_up.backfill.limit: '12' is a str", id="text-limit"),
    ],
)
def test_wrong_types_are_refused_naming_the_field(make, fragment):
    with pytest.raises(TypeError, match=re.escape(fragment)):
        make()


def test_backfill_limit_message_names_the_range():
    with pytest.raises(ValueError) as err:
        Backfill(limit=10**12)
    assert str(err.value) == (
        "catch_up.backfill.limit: 1000000000000 is outside 1 to 1000; catch-up runs at most the 1000 newest "
        "missed occurrences, e.g. Backfill(limit=12); for older ones use airflow backfill create"
    )


@pytest.mark.parametrize("limit", [1, 1000])
def test_backfill_limit_bounds_are_inclusive(limit):
    # The newest due occurrence plus `limit` missed ones before it.
    assert Backfill(limit=limit).backlog == limit + 1


def test_phase_bounds_are_inclusive():
    assert Fixed("366d").offset_us == Spread(max="366d", step="366d").max_us == 366 * 86_400 * US_PER_SECOND


def test_pure_modules_import_no_airflow_and_never_read_the_clock():
    for module in PURE.glob("*.py"):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n == "airflow" or n.startswith("airflow.") for n in names), module.name
            assert "time" not in names, f"{module.name} imports the time module: pure code never reads the clock"
            if isinstance(node, ast.Attribute):
                assert node.attr not in {"now", "utcnow", "today"}, f"{module.name} reads the clock"
