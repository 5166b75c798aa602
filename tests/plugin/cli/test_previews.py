"""``tessera plan --load`` and the backfill preview (``--from``/``--to``) over DAG files, no deployment needed.

The preview of a stored DAG is compared with a real ``airflow backfill create`` in
``tests/e2e/test_backfill_preview.py``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tessera.plugin.cli import EXIT_OK, EXIT_USAGE, main

SEED = """
import datetime
from airflow.sdk import DAG
from tessera.timetables import Every, Fixed

with DAG("preview_seed", schedule=Every("5m", delay="30s", phase=Fixed("2m10s")),
         start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)):
    pass
"""
HERD = """
import datetime
from airflow.sdk import DAG
from tessera.timetables import Every

START = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
for i in range(4):
    with DAG(f"herd_cron_{i}", schedule="0 * * * *", start_date=START):  # Airflow's own cron: all at :00
        pass
    with DAG(f"herd_phased_{i}", schedule=Every("1h"), start_date=START):  # tessera's default phase
        pass
"""


def _file(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "dags.py"
    path.write_text(textwrap.dedent(source))
    return path


def test_the_preview_lists_each_run_with_its_window_and_run_after(tmp_path, capsys):
    """The seed example over 00:00-00:29:59: the first window starts at 23:59:30, before --from, as the delay says."""
    path = _file(tmp_path, SEED)
    argv = ["plan", str(path), "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T00:29:59Z", "--json"]
    assert main(argv) == EXIT_OK
    (preview,) = json.loads(capsys.readouterr().out)
    first = preview["runs"][0]
    assert len(preview["runs"]) == 6
    assert (first["logical_date"], first["window_start"], first["window_end"], first["run_after"]) == (
        "2025-12-31T23:59:30Z",
        "2025-12-31T23:59:30Z",
        "2026-01-01T00:04:30Z",
        "2026-01-01T00:07:10Z",
    )
    assert first["run_id"] == "backfill__2026-01-01T00:07:10+00:00"
    assert preview["runs"][-1]["window_end"] == "2026-01-01T00:29:30Z"


def test_the_preview_as_text_names_the_command_it_previews(tmp_path, capsys):
    path = _file(tmp_path, SEED)
    assert main(["plan", str(path), "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T00:09:59Z"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "preview_seed: airflow backfill create --from-date 2026-01-01 00:00:00Z" in out
    assert "creates 2 runs" in out
    assert "2025-12-31 23:59:30Z  2025-12-31 23:59:30Z -> 2026-01-01 00:04:30Z  2026-01-01 00:07:10Z" in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        pytest.param(
            ["--from", "2026-01-02T00:00:00Z", "--to", "2026-01-01T00:00:00Z"], "must not be after", id="backwards"
        ),
        pytest.param(["--from", "2999-01-01T00:00:00Z", "--to", "2999-01-02T00:00:00Z"], "future", id="future"),
        pytest.param(["--from", "2026-01-01T00:00:00Z"], "needs a DAG file or id, --from and --to", id="no-to"),
    ],
)
def test_a_range_backfill_refuses_is_refused(tmp_path, capsys, argv, says):
    assert main(["plan", str(_file(tmp_path, SEED)), *argv]) == EXIT_USAGE
    assert says in capsys.readouterr().err


def test_the_load_names_the_herd_plain_cron_makes_and_phases_spread_it(tmp_path, capsys):
    assert main(["plan", str(_file(tmp_path, HERD)), "--load", "--json"]) == EXIT_OK
    load = json.loads(capsys.readouterr().out)
    assert load["total_runs"] == 8 * 24
    herd = {f"herd_cron_{i}" for i in range(4)}
    top = load["spikes"][0]
    assert top["minute"].endswith(":00:00Z") and herd <= set(top["dag_ids"])
    phased = {f"herd_phased_{i}" for i in range(4)}
    # Every phased DAG's runs start somewhere in the first 15 minutes of the hour, not all in one minute.
    assert len({s["minute"][14:16] for s in load["spikes"] if phased & set(s["dag_ids"])}) <= 1
    assert {d["dag_id"]: d["source"] for d in load["dags"]}["herd_cron_0"] == "timetable"


def test_the_load_as_text_gives_the_peak_to_mean_and_each_spike(tmp_path, capsys):
    assert main(["plan", str(_file(tmp_path, HERD)), "--load"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "runs of 8 DAGs" in out and "peak-to-mean" in out
    assert "herd_cron_0, herd_cron_1, herd_cron_2, herd_cron_3" in out


def test_the_load_needs_files_or_an_api(capsys):
    assert main(["plan", "--load"]) == EXIT_USAGE
    assert capsys.readouterr().err.startswith("tessera plan --load: ")


PARTITIONED = """
import datetime
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG("preview_keys", schedule=Every("1h", delay="5m", partitioned=True),
         start_date=datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)):
    pass
"""


def test_the_preview_of_a_partitioned_dag_shows_each_runs_key(tmp_path, capsys):
    """The key names the period (00:00-01:00), not the delay-shifted window (23:55-00:55)."""
    path = _file(tmp_path, PARTITIONED)
    argv = ["plan", str(path), "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T02:59:59Z", "--json"]
    assert main(argv) == EXIT_OK
    (preview,) = json.loads(capsys.readouterr().out)
    keys = [(run["window_start"], run["partition_key"]) for run in preview["runs"]]
    assert keys == [
        ("2025-12-31T23:55:00Z", "2026-01-01T00:00:00"),
        ("2026-01-01T00:55:00Z", "2026-01-01T01:00:00"),
        ("2026-01-01T01:55:00Z", "2026-01-01T02:00:00"),
    ]
    argv.remove("--json")
    assert main(argv) == EXIT_OK
    assert "key 2026-01-01T01:00:00" in capsys.readouterr().out
