"""Partitioned tessera producers under a real dag-processor, scheduler, API server and workers (SQLite).

One deployment, the DAGs of ``dags_partitions/``, driven only through the ``airflow`` CLI:

1. ``airflow backfill create`` over a partition-date range of ``Every("1h", delay="5m",
   partitioned=True)`` creates exactly the keys that are missing: a second, wider backfill
   skips the six hours the first one made.
2. The producers' asset events carry their run's key; ``PartitionedAssetTimetable`` consumers
   with Airflow's stock mappers get aligned runs: one per hour both producers have, one UTC daily
   roll-up of 24 keys, and one Amsterdam daily roll-up over the 25 hours of the fall-back day.
3. ``airflow dags clear --partition-key`` reruns exactly that window (and, cleared in both
   producers, the aligned consumer reruns that one hour); ``airflow partitions clear
   --clear-task-instances`` reruns one window too but, by Airflow's design, strips its key.
4. Daylight saving: ``Cron("30 2 * * *", timezone="Europe/Berlin", partitioned=True)`` fires
   twice on the fall-back day and gets two keys (the offset tells them apart), so a backfill, a
   clear and an asset consumer treat them as two; the spring-forward day, whose 02:30 never
   happens, is keyed when the clock jumps; the same cron with a key_format lacking ``%z`` is an
   import error naming the field and the fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import api_server_healthy, keep_artifacts_if_failed
from .harness import AirflowHome, _free_port

# About 4 minutes on an idle machine: make test starts the longest deployments first (tests/conftest.py).
pytestmark = pytest.mark.minutes(4)

DAGS = Path(__file__).resolve().parent / "dags_partitions"
DAY = "2025-10-26"  # Europe's fall-back day: Amsterdam's clock shows 02:00-03:00 twice.
HOURS = [f"{DAY}T{h:02d}:00:00" for h in range(24)]
WAIT = 600
DAG_IDS = (
    "part_a",
    "part_b",
    "part_ams",
    "part_hourly_join",
    "part_daily_rollup",
    "part_daily_rollup_ams",
    "part_berlin",
    "part_berlin_consumer",
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowHome]:
    failed_before = request.session.testsfailed
    home = AirflowHome(tmp_path_factory.mktemp("airflow-partitions"), dags_source=DAGS)
    port = _free_port()
    home.env.update(
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET="tessera-e2e-" + "p" * 64,
    )
    try:
        migrated = home.cli("db", "migrate")
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        home.start("api-server", "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1")
        home.start("dag-processor", "dag-processor")
        home.wait_for("the API server", lambda: api_server_healthy(home), timeout=300)
        home.start("scheduler", "scheduler")
        for dag_id in DAG_IDS:
            home.wait_for(f"{dag_id} to be parsed", lambda d=dag_id: home.is_parsed(d), timeout=180)
        yield home
    finally:
        home.stop()
        keep_artifacts_if_failed(home, request, failed_before)


def keyed_runs(home: AirflowHome, dag_id: str) -> list[tuple]:
    return home.query(
        "SELECT partition_key, state, data_interval_start, data_interval_end, run_type FROM dag_run"
        " WHERE dag_id = ? AND partition_key LIKE ? ORDER BY partition_key, id",
        dag_id,
        f"{DAY}%",
    )


def backfill(home: AirflowHome, dag_id: str, first: str, last: str) -> None:
    result = home.cli("backfill", "create", "--dag-id", dag_id, "--from-date", first, "--to-date", last, timeout=180)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]


def backfills_done(home: AirflowHome, dag_id: str) -> bool:
    rows = home.query("SELECT completed_at FROM backfill WHERE dag_id = ?", dag_id)
    return bool(rows) and all(completed is not None for (completed,) in rows)


def all_finished(home: AirflowHome, dag_id: str, count: int) -> list[tuple] | None:
    runs = keyed_runs(home, dag_id)
    return runs if len(runs) >= count and all(state in ("success", "failed") for _, state, *_ in runs) else None


@pytest.mark.e2e
def test_a_partition_range_backfill_creates_exactly_the_missing_keys(stack: AirflowHome) -> None:
    backfill(stack, "part_a", f"{DAY}T00:00:00", f"{DAY}T05:00:00")
    assert [key for key, *_ in keyed_runs(stack, "part_a")] == HOURS[:6]
    stack.wait_for("the first backfill to complete", lambda: backfills_done(stack, "part_a"), timeout=WAIT)
    backfill(stack, "part_a", f"{DAY}T00:00:00", f"{DAY}T23:59:59")
    runs = stack.wait_for("24 finished runs of part_a", lambda: all_finished(stack, "part_a", 24), timeout=WAIT)
    assert [key for key, *_ in runs] == HOURS  # each key once: the six that ran were not made again
    skipped = stack.query(
        "SELECT partition_key, exception_reason FROM backfill_dag_run WHERE exception_reason IS NOT NULL"
    )
    assert sorted(key for key, _ in skipped) == HOURS[:6]
    # The window is the hour before each key's end, shifted back by the 5 minute delay.
    start, end = runs[0][2], runs[0][3]
    assert (str(start)[:19], str(end)[:19]) == ("2025-10-25 23:55:00", "2025-10-26 00:55:00")
    assert {state for _, state, *_ in runs} == {"success"}


@pytest.mark.e2e
def test_asset_consumers_get_runs_aligned_by_key(stack: AirflowHome) -> None:
    backfill(stack, "part_b", f"{DAY}T00:00:00", f"{DAY}T05:00:00")
    backfill(stack, "part_ams", f"{DAY}T00:00:00", f"{DAY}T23:59:59")
    ams = stack.wait_for("25 finished Amsterdam runs", lambda: all_finished(stack, "part_ams", 25), timeout=WAIT)
    assert len({key for key, *_ in ams}) == 25  # the repeated 02:00 has two keys, +0200 and +0100
    events = stack.query(
        "SELECT e.partition_key FROM asset_event e JOIN asset a ON a.id = e.asset_id WHERE a.name = 'clicks_a'"
        " AND e.partition_key LIKE ? ORDER BY e.partition_key",
        f"{DAY}%",
    )
    assert [key for (key,) in events] == HOURS
    joined = stack.wait_for(
        "six aligned hourly joins", lambda: all_finished(stack, "part_hourly_join", 6), timeout=WAIT
    )
    assert [key for key, *_ in joined] == [f"{DAY}T{h:02d}" for h in range(6)]
    daily = stack.wait_for("the UTC roll-up", lambda: all_finished(stack, "part_daily_rollup", 1), timeout=WAIT)
    assert [key for key, *_ in daily] == [DAY]
    ams_daily = stack.wait_for(
        "the Amsterdam roll-up", lambda: all_finished(stack, "part_daily_rollup_ams", 1), timeout=WAIT
    )
    assert [key for key, *_ in ams_daily] == [DAY]


@pytest.mark.e2e
def test_clearing_one_key_reruns_that_window_and_its_aligned_consumer(stack: AirflowHome) -> None:
    key = f"{DAY}T03:00:00"
    before = {dag: keyed_runs(stack, dag) for dag in ("part_a", "part_b", "part_hourly_join")}
    for dag_id in ("part_a", "part_b"):
        result = stack.cli("dags", "clear", dag_id, "--partition-key", key, "--yes")
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]

    def rerun() -> list[tuple] | None:
        tries = stack.query(
            "SELECT t.dag_id, r.partition_key, t.try_number FROM task_instance t JOIN dag_run r"
            " ON r.dag_id = t.dag_id AND r.run_id = t.run_id WHERE t.dag_id IN ('part_a', 'part_b')"
            " AND t.try_number > 1 AND t.state = 'success'"
        )
        joins = all_finished(stack, "part_hourly_join", 7)
        return tries if len(tries) == 2 and joins else None

    tries = stack.wait_for("the cleared key to rerun", rerun, timeout=WAIT)
    assert {(dag, k) for dag, k, _ in tries} == {("part_a", key), ("part_b", key)}
    for dag_id in ("part_a", "part_b"):
        assert len(keyed_runs(stack, dag_id)) == len(before[dag_id])  # the same run again, no new one
    joins = [k for k, *_ in keyed_runs(stack, "part_hourly_join")]
    assert sorted(joins) == sorted([k for k, *_ in before["part_hourly_join"]] + [f"{DAY}T03"])

    # Airflow's `partitions clear` reruns one window too, but detaches it from its key.
    other = f"{DAY}T04:00:00"
    (run_id,) = stack.query("SELECT run_id FROM dag_run WHERE dag_id = 'part_a' AND partition_key = ?", other)[0]
    result = stack.cli("partitions", "clear", "--dag-id", "part_a", "--partition-key", other, "--clear-task-instances")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert stack.query("SELECT partition_key FROM dag_run WHERE run_id = ?", run_id) == [(None,)]
    assert other not in [k for k, *_ in keyed_runs(stack, "part_a")]


BERLIN_KEYS = [
    "2025-03-29T02:30:00+0100",
    "2025-03-30T03:00:00+0200",  # 02:30 never happened: the run is when the clock jumps to 03:00
    "2025-10-25T02:30:00+0200",
    "2025-10-26T02:30:00+0200",
    "2025-10-26T02:30:00+0100",  # 02:30 again, an hour later
]


def berlin_runs(home: AirflowHome, dag_id: str) -> list[tuple]:
    """The runs keyed on the backfilled DST weekends (the DAG's one scheduled run, 2025-10-01, left out)."""
    return home.query(
        "SELECT partition_key, partition_date, state FROM dag_run WHERE dag_id = ?"
        " AND (partition_key LIKE '2025-03-%' OR partition_key LIKE '2025-10-2%') ORDER BY partition_date, id",
        dag_id,
    )


def finished(home: AirflowHome, dag_id: str, count: int) -> list[tuple] | None:
    rows = berlin_runs(home, dag_id)
    return rows if len(rows) >= count and all(state in ("success", "failed") for *_, state in rows) else None


@pytest.mark.e2e
def test_a_daily_cron_in_berlin_has_one_key_per_run_across_daylight_saving(stack: AirflowHome) -> None:
    # Bounds are read on Berlin's wall clock; a period counts when it starts inside them.
    backfill(stack, "part_berlin", "2025-03-29T00:00:00", "2025-03-30T23:59:59")
    stack.wait_for("the spring backfill to complete", lambda: backfills_done(stack, "part_berlin"), timeout=WAIT)
    backfill(stack, "part_berlin", "2025-10-25T00:00:00", "2025-10-26T23:59:59")  # one backfill at a time
    runs = stack.wait_for("five finished Berlin runs", lambda: finished(stack, "part_berlin", 5), timeout=WAIT)
    assert [(key, state) for key, _, state in runs] == [(key, "success") for key in BERLIN_KEYS]
    assert [str(date)[:16] for _, date, _ in runs] == [
        "2025-03-29 01:30",
        "2025-03-30 01:00",
        "2025-10-25 00:30",
        "2025-10-26 00:30",
        "2025-10-26 01:30",
    ]
    # The asset consumer aligns on the key: two runs for the two fall-back periods, not one merged.
    consumed = stack.wait_for("five consumer runs", lambda: finished(stack, "part_berlin_consumer", 5), timeout=WAIT)
    assert sorted(key for key, _, _ in consumed) == sorted(BERLIN_KEYS)

    # Clearing one of the two fall-back keys reruns that run alone.
    second = "2025-10-26T02:30:00+0100"
    result = stack.cli("dags", "clear", "part_berlin", "--partition-key", second, "--yes")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]

    def rerun() -> list[tuple] | None:
        rows = stack.query(
            "SELECT r.partition_key, t.try_number, t.state FROM task_instance t JOIN dag_run r"
            " ON r.dag_id = t.dag_id AND r.run_id = t.run_id WHERE t.dag_id = 'part_berlin' AND t.try_number > 1"
        )
        return rows if rows and all(state == "success" for _, _, state in rows) else None

    assert [key for key, _, _ in stack.wait_for("the cleared key to rerun", rerun, timeout=WAIT)] == [second]


@pytest.mark.e2e
def test_a_key_format_without_the_offset_for_such_a_cron_is_an_import_error_naming_the_fix(
    stack: AirflowHome,
) -> None:
    def recorded() -> list[tuple] | None:
        rows = stack.query("SELECT filename, stacktrace FROM import_error WHERE filename LIKE ?", "%bad_key_format%")
        return rows or None

    ((filename, stacktrace),) = stack.wait_for("the import error", recorded, timeout=180)
    assert filename.endswith("partitions_bad_key_format.py")
    assert (
        "key_format: '%Y-%m-%dT%H:%M:%S' gives two periods the same key '2026-10-25T02:30:00': Europe/Berlin "
        "shows 2026-10-25T02:30:00 twice when its clocks go back, and this schedule runs at both; add the UTC "
        "offset %z, e.g. '%Y-%m-%dT%H:%M:%S%z'"
    ) in stacktrace
    assert not stack.is_parsed("part_berlin_no_offset")
