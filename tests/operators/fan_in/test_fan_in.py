"""Fan-in arithmetic: fire keys, fire completion, parent freshness, the release note, waves, trigger state."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.operators.fan_in.freshness import NOTE_LIMIT, ParentFire, release_note, stale_parents
from tessera.operators.fan_in.trigger import AfterTrigger, fire_count, released
from tessera.operators.schedules.fires import (
    PipelineRun,
    event_fire,
    fire_complete,
    fire_of,
    runs_of_fire,
    time_fire,
)
from tessera.operators.schedules.wave_gate import WaveGateTrigger
from tessera.operators.schedules.waves import gate_open, split_waves

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 3, 8, 12, 0, tzinfo=UTC)

# -- fire keys ---------------------------------------------------------------------------------


@settings(max_examples=300)
@given(
    a=st.datetimes(
        min_value=datetime.datetime(1, 1, 2),
        max_value=datetime.datetime(9999, 12, 30),
        timezones=st.sampled_from([UTC, datetime.timezone(datetime.timedelta(hours=-5))]),
    ),
    b=st.datetimes(timezones=st.just(UTC)),
)
def test_time_keys_sort_as_the_instants_they_encode(a: datetime.datetime, b: datetime.datetime) -> None:
    assert (time_fire(a) < time_fire(b)) == (a < b)
    assert (time_fire(a) == time_fire(b)) == (a == b)


@settings(max_examples=300)
@given(a=st.lists(st.integers(1, 10**15), min_size=1), b=st.lists(st.integers(1, 10**15), min_size=1))
def test_event_keys_sort_as_the_newest_event_ids(a: list[int], b: list[int]) -> None:
    assert (event_fire(a) < event_fire(b)) == (max(a) < max(b))


@pytest.mark.parametrize(
    ("run_type", "expected"),
    [
        pytest.param("scheduled", "t:2026-03-08T06:00:00.000000Z", id="scheduled-window-end"),
        pytest.param("asset_triggered", "e:00000000000000000042", id="after-newest-event"),
        pytest.param("manual", None, id="manual-is-no-fire"),
        pytest.param("backfill", None, id="backfill-is-no-fire"),
    ],
)
def test_which_runs_are_fires(run_type: str, expected: str | None) -> None:
    end = datetime.datetime(2026, 3, 8, 1, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
    key = fire_of(run_type, data_interval_end=end, logical_date=None, run_after=None, event_ids=lambda: [7, 42, 9])
    assert key == expected


# -- fire completion ---------------------------------------------------------------------------

STATES = st.sampled_from(["success", "failed", "running", "queued"])
RUNS = st.dictionaries(
    st.sampled_from(["p1", "p2", "p3"]),
    st.lists(st.tuples(st.integers(0, 6), STATES), max_size=5),
    min_size=1,
)


def _runs(spec: dict[str, list[tuple[int, str]]]) -> dict[str, list[PipelineRun]]:
    return {
        dag_id: [PipelineRun(dag_id, f"r{i}", state, f"t:{fire}") for i, (fire, state) in enumerate(runs)]
        for dag_id, runs in spec.items()
    }


def _model(fire: int, spec: dict[str, list[tuple[int, str]]]) -> bool:
    # Brute force over the fire timeline: a pipeline has finished fire F when, walking its
    # fires oldest first, everything up to F is finished and something at or after F is.
    for runs in spec.values():
        by_fire: dict[int, list[str]] = {}
        for f, state in runs:
            by_fire.setdefault(f, []).append(state)
        finished = {f: all(s in ("success", "failed") for s in states) for f, states in by_fire.items()}
        if not all(finished[f] for f in by_fire if f <= fire):
            return False
        if not any(s in ("success", "failed") for f, states in by_fire.items() if f >= fire for s in states):
            return False
    return True


@settings(max_examples=300)
@given(spec=RUNS, fire=st.integers(0, 6))
def test_fire_completion_matches_the_brute_force_model(spec: dict, fire: int) -> None:
    assert fire_complete(f"t:{fire}", _runs(spec)) == _model(fire, spec)


@settings(max_examples=200)
@given(spec=RUNS, fire=st.integers(0, 6), later=st.integers(0, 6))
def test_completing_a_fire_completes_every_older_one(spec: dict, fire: int, later: int) -> None:
    if fire <= later and fire_complete(f"t:{later}", _runs(spec)):
        assert fire_complete(f"t:{fire}", _runs(spec))


@pytest.mark.parametrize(
    ("spec", "complete"),
    [
        pytest.param({"p1": [(1, "failed")]}, True, id="one-failed-run-completes"),
        pytest.param({"p1": [(1, "success")], "p2": [(1, "running")]}, False, id="one-still-running"),
        pytest.param({"p1": [(1, "success")], "p2": []}, False, id="a-pipeline-has-no-run-yet"),
        pytest.param({"p1": [(1, "success")], "p2": [(2, "failed")]}, True, id="absorbed-by-a-newer-run"),
        pytest.param({"p1": [(0, "running"), (1, "success")]}, False, id="an-older-run-unfinished"),
        pytest.param({}, False, id="no-pipelines"),
    ],
)
def test_fire_completion_cases(spec: dict, complete: bool) -> None:
    assert fire_complete("t:1", _runs(spec)) is complete


def test_the_runs_that_made_up_a_fire() -> None:
    runs = _runs({"p2": [(3, "failed"), (1, "success")], "p1": [(1, "success"), (0, "success")]})
    assert [(r.dag_id, r.fire) for r in runs_of_fire("t:1", runs)] == [("p1", "t:1"), ("p2", "t:1")]


# -- freshness and the note --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hours", "last", "stale"),
    [
        pytest.param(26, {"a": NOW - datetime.timedelta(hours=25)}, [], id="fresh"),
        pytest.param(26, {"a": NOW - datetime.timedelta(hours=26)}, [], id="exactly-the-window-is-fresh"),
        pytest.param(26, {"a": NOW - datetime.timedelta(hours=26, seconds=1)}, ["a"], id="just-outside"),
        pytest.param(26, {"a": None}, ["a"], id="never-fired"),
        pytest.param(0, {"a": None}, [], id="zero-turns-it-off"),
        pytest.param(0.5, {"a": NOW - datetime.timedelta(minutes=31), "b": NOW}, ["a"], id="fractional-hours"),
    ],
)
def test_stale_parents(hours: float, last: dict, stale: list[str]) -> None:
    assert stale_parents(sorted(last), last, now=NOW, hours=hours) == stale


def test_the_note_names_stale_parents_first_and_the_releasing_fires() -> None:
    last = {"apc": NOW - datetime.timedelta(hours=30), "mpc": NOW}
    note = release_note(
        [ParentFire("mpc", NOW, ("mpc_load/scheduled__x (failed)",)), ParentFire("apc", last["apc"])],
        ["apc"],
        last,
        now=NOW,
        hours=26,
    )
    assert note.splitlines() == [
        "Stale parents (no completed fire within 26 h); this run proceeded anyway:",
        "- apc: last completed 2026-03-07 06:00:00 UTC, 30.0 h ago",
        "Released by parent fires:",
        "- apc completed 2026-03-07 06:00:00 UTC",
        "- mpc completed 2026-03-08 12:00:00 UTC (mpc_load/scheduled__x (failed))",
    ]


def test_a_long_note_fits_the_note_column_and_keeps_the_stale_parents() -> None:
    fires = [ParentFire(f"parent_{i}", NOW, ("x" * 80,)) for i in range(40)]
    note = release_note(fires, ["parent_0"], {"parent_0": None}, now=NOW, hours=1)
    assert len(note) == NOTE_LIMIT
    assert "- parent_0: never completed a fire" in note


# -- waves and the trigger state ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "waves"),
    [
        pytest.param(1, [["a"], ["b"], ["c"]], id="one-at-a-time"),
        pytest.param(2, [["a", "b"], ["c"]], id="two-wide"),
        pytest.param(0, [["a", "b", "c"]], id="unbounded"),
        pytest.param(5, [["a", "b", "c"]], id="wider-than-the-schedule"),
    ],
)
def test_split_waves(width: int, waves: list[list[str]]) -> None:
    assert split_waves(["c", "a", "b", "a"], width) == waves


def test_a_gate_opens_with_its_wave_and_never_holds_an_unplanned_run() -> None:
    plan = {"fire": "t:1", "waves": [["a"], ["b"]], "open": 0, "members": {"a/r1": 0, "b/r1": 1}}
    assert gate_open(plan, "a/r1") and not gate_open(plan, "b/r1")
    assert gate_open({**plan, "open": 1}, "b/r1")
    assert gate_open(plan, "b/r0"), "a run of an older fire is not held"
    assert gate_open(None, "b/r1")


def test_the_after_trigger_is_released_by_new_fires_of_every_parent() -> None:
    seen = {"a": 2, "b": 0}
    assert not released(seen, {"a": {"count": 3}, "b": None})
    assert not released(seen, {"a": {"count": 2}, "b": {"count": 1}})
    assert released(seen, {"a": {"count": 3}, "b": {"count": 1}})
    assert fire_count(None) == 0 and fire_count({"count": 4}) == 4


@pytest.mark.parametrize(
    "trigger",
    [
        pytest.param(AfterTrigger(seen={"a": 1}, poll_interval=3.0), id="after"),
        pytest.param(WaveGateTrigger("w", "dag/run", poll_interval=2.0), id="wave-gate"),
    ],
)
def test_triggers_serialize_to_an_importable_classpath(trigger) -> None:  # noqa: ANN001
    import importlib

    classpath, kwargs = trigger.serialize()
    module, _, name = classpath.rpartition(".")
    rebuilt = getattr(importlib.import_module(module), name)(**kwargs)
    assert rebuilt.serialize() == (classpath, kwargs)
