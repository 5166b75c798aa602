"""Ticks with no run of their own, and the health gauge, under a real dag-processor, scheduler and workers on SQLite.

The DAG is ``dags/e2e_skips.py`` (a cursor function due every 10 s, paused until this
test unpauses it), in the session's deployment (``airflow_stack``). After a clean fire
the scheduler is stopped as an operator stops it; while it is down the function is
paused (``airflow dags pause``); the scheduler is restarted with StatsD pointed at a
UDP socket of this test; then the function is unpaused:

- while paused, the restarted scheduler emits ``seconds_since_last_success`` for it
  every heartbeat, growing, with no fire at all;
- on unpause, the ticks it passed over are recorded as skip events in Airflow's audit
  log: ``MissedDeadline`` for those due while the scheduler was down, ``Suspended`` for
  those due while the function was paused.

The pause under test goes through ``airflow dags pause``, which writes Airflow's audit
log (what tells a paused tick from a missed one); the unpauses and the cleanup's pause
write ``dag.is_paused`` directly, to keep the test short (each CLI call costs seconds
of imports). A logged unpause is covered by ``test_cursor_skips_recorded.py``.
"""

from __future__ import annotations

import json
import time

import pytest

from ..test_metrics_statsd import StatsdListener
from .harness import AirflowHome

DAG_ID = "e2e_cursor_downtime"
DOWNTIME = 11  # seconds: at least one 10 s tick passes while the scheduler is down
PAUSED = 21  # seconds: two ticks come due while paused; on unpause the newer one runs (catch-up Latest)
HEARTBEAT = "2"  # seconds between the restarted scheduler's gauges
WAIT = 90
GAUGE = f"tessera.cursor_function.seconds_since_last_success.{DAG_ID}.fn"

pytestmark = pytest.mark.e2e


def _fired(home: AirflowHome) -> bool:
    rows = home.query("SELECT 1 FROM task_instance WHERE dag_id = ? AND task_id = 'fn' AND state = 'success'", DAG_ID)
    return bool(rows)


def _set_paused(home: AirflowHome, paused: bool) -> None:
    home.execute("UPDATE dag SET is_paused = ? WHERE dag_id = ?", paused, DAG_ID)


def _passed_over(home: AirflowHome) -> list[dict]:
    rows = home.query("SELECT extra FROM log WHERE dag_id = ? AND event = 'tessera.skip.passed_over'", DAG_ID)
    return [json.loads(extra) for (extra,) in rows]


def test_ticks_missed_or_slept_through_are_recorded_and_the_gauge_grows_while_paused(
    airflow_stack: AirflowHome,
) -> None:
    home = airflow_stack
    home.wait_for(f"{DAG_ID} to be parsed", lambda: home.is_parsed(DAG_ID), timeout=WAIT)
    _set_paused(home, False)
    statsd = StatsdListener()
    try:
        home.wait_for(f"a clean fire of {DAG_ID}", lambda: _fired(home), timeout=WAIT)
        stopping = time.monotonic()
        home.terminate("scheduler")
        # At least one tick is due while nothing runs the schedule, before the pause.
        time.sleep(max(0.0, DOWNTIME - (time.monotonic() - stopping)))
        assert home.cli("dags", "pause", DAG_ID).returncode == 0  # and more while it is also paused
        paused = time.monotonic()
        home.start("scheduler", "scheduler", env=_statsd_env(statsd))
        gauge = f"airflow.{GAUGE}"
        grams = statsd.until(lambda grams: sum(g.name == gauge for g in grams) >= 2, timeout=WAIT)
        values = [float(g.value) for g in grams if g.name == gauge]
        assert DOWNTIME < values[0] < values[1], values  # since the fire before the downtime, still growing

        # A tick is due while it is paused, besides the newest, which runs on unpause (the pause
        # was logged before the CLI returned).
        time.sleep(max(0.0, PAUSED - (time.monotonic() - paused)))
        _set_paused(home, False)
        events = home.wait_for("the skip events", lambda: _passed_over(home) or None, timeout=WAIT)
    finally:
        _set_paused(home, True)  # no more fires every 10 s beside the next tests
        statsd.socket.close()
    reasons = {event["reason"]: event for event in events}
    assert set(reasons) == {"MissedDeadline", "Suspended"}, events
    assert reasons["MissedDeadline"]["last"] < reasons["Suspended"]["first"]  # down first, then paused
    assert all(event["count"] >= 1 and not event["at_least"] for event in events)


def _statsd_env(statsd: StatsdListener) -> dict[str, str]:
    return {
        "AIRFLOW__METRICS__STATSD_ON": "True",
        "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
        "AIRFLOW__METRICS__STATSD_PORT": str(statsd.port),
        "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": HEARTBEAT,
    }
