"""A fresh PostgreSQL deployment with two schedulers: two cursor functions unpaused at once both run.

The first admissions of ``dags_postgres/ha_fresh_cursors.py`` create the dispatch pool,
possibly in both schedulers at the same instant; neither scheduler may fail on the
duplicate (they once died on it at every restart). Runs first of the PostgreSQL
modules, while the deployment's database is new.
"""

from __future__ import annotations

import pytest

from .conftest import SCHEDULERS
from .harness import AirflowHome
from .test_scheduler_safety import check_simultaneous_functions_fire

CURSORS = ("ha_fresh_cursor_a", "ha_fresh_cursor_b")


@pytest.mark.e2e
def test_cursor_functions_unpaused_at_once_run_under_two_schedulers(postgres_stack: AirflowHome) -> None:
    check_simultaneous_functions_fire(postgres_stack, CURSORS)
    assert postgres_stack.scheduler_jobs() == dict.fromkeys(SCHEDULERS, "running")
