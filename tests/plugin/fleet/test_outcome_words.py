"""The API says how a run ended in Airflow's words, also for a cursor function's fires."""

from __future__ import annotations

import pytest

from tessera.plugin.fleet.models import CursorStatus

FIRE = dict(
    task_id="t",
    last_schedule_time=None,
    last_fire_time=None,
    last_skip_time=None,
    last_skip_reason=None,
    consecutive_failures=0,
    conditions=[],
)


@pytest.mark.parametrize(
    ("recorded", "said"),
    [
        pytest.param("Succeeded", "success", id="succeeded"),
        pytest.param("Failed", "failed", id="failed"),
        pytest.param("Unknown", "unknown", id="unknown"),
        pytest.param("success", "success", id="already-airflow"),
        pytest.param(None, None, id="no-fire-yet"),
    ],
)
def test_a_cursor_functions_outcome_is_said_in_airflows_words(recorded, said):
    assert CursorStatus(last_outcome=recorded, **FIRE).last_outcome == said
