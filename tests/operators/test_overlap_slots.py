"""The dag policy's part of ``overlap=``: the ``max_active_runs`` each policy needs, and what contradicts it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tessera.operators.overlap_slots import hold_overlap
from tessera.timetables.run_policy import RunPolicy

DEFAULT = 16


def _dag(max_active_runs: int = DEFAULT, catchup: bool = False) -> SimpleNamespace:
    return SimpleNamespace(dag_id="etl", max_active_runs=max_active_runs, catchup=catchup)


@pytest.mark.parametrize(
    ("overlap", "given", "held"),
    [
        pytest.param("allow_all", DEFAULT, DEFAULT, id="allow-all-keeps-the-default"),
        pytest.param("allow_all", 3, 3, id="allow-all-keeps-a-chosen-cap"),
        pytest.param("skip", DEFAULT, 1, id="skip-one-at-a-time"),
        pytest.param("buffer_one", DEFAULT, 1, id="buffer-one-one-at-a-time"),
        pytest.param("buffer_all", DEFAULT, 1, id="buffer-all-one-at-a-time"),
        pytest.param("buffer_all", 4, 4, id="buffer-all-keeps-a-chosen-cap"),
        pytest.param("cancel_other", DEFAULT, 2, id="cancel-other-default"),
        pytest.param("cancel_other", 1, 2, id="cancel-other-one-becomes-two"),
    ],
)
def test_each_policy_gets_the_slots_it_needs(overlap, given, held):
    dag = _dag(given)
    hold_overlap(dag, RunPolicy(overlap, None), default_max_active_runs=DEFAULT)
    assert dag.max_active_runs == held


def test_cancel_other_refuses_another_cap_naming_the_field_and_the_fix():
    with pytest.raises(ValueError) as refused:
        hold_overlap(_dag(5), RunPolicy("cancel_other", None), default_max_active_runs=DEFAULT)
    assert str(refused.value) == (
        "max_active_runs: 5 on DAG 'etl'; overlap 'cancel_other' runs one run at a time, replacing the run in "
        "flight with the new one (which needs 2 slots for a moment); remove max_active_runs or set it to 1"
    )


@pytest.mark.parametrize(
    ("overlap", "verb"), [("skip", "drops"), ("buffer_one", "drops"), ("cancel_other", "replaces")]
)
def test_a_policy_that_drops_ticks_refuses_airflows_catchup(overlap, verb):
    with pytest.raises(ValueError) as refused:
        hold_overlap(_dag(catchup=True), RunPolicy(overlap, None), default_max_active_runs=DEFAULT)
    assert str(refused.value).startswith(
        f"catchup: True on DAG 'etl' creates every occurrence in order, but overlap '{overlap}' {verb} ticks"
    )
    assert str(refused.value).endswith("set catchup=False, or use overlap='buffer_all' (every tick, in order)")


@pytest.mark.parametrize("overlap", ["allow_all", "buffer_all"])
def test_policies_that_drop_nothing_keep_catchup(overlap):
    dag = _dag(catchup=True)
    hold_overlap(dag, RunPolicy(overlap, None), default_max_active_runs=DEFAULT)
    assert dag.catchup is True and dag.max_active_runs == (DEFAULT if overlap == "allow_all" else 1)


def test_a_declared_schedule_is_left_alone():
    dag = _dag(7)
    hold_overlap(dag, RunPolicy("cancel_other", False), default_max_active_runs=DEFAULT)
    assert dag.max_active_runs == 7
