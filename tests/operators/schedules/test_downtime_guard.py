"""Scheduler downtime is read in one place: a new reader of the scheduler jobs' heartbeats fails here.

The scheduler's run decision tells downtime from overlap by the ``job`` table
(:func:`tessera.operators.schedules.activity.scheduler_downtime`, read by the activity reader and
classified once, in :mod:`tessera.timetables._time.owed`). A second reading of the heartbeats with
its own idea of "down" (another grace, another start of the stretch) would let the decision, the
run's records and the explainer disagree about the same tick. Every module that reads
``Job.latest_heartbeat`` is listed here with the reason it may.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ...conftest import REPO

FOLDERS = ("timetables", "operators", "plugin")
READERS = {  # a module reading a row already read (an explainer's JobRow) is not a reader
    "operators/schedules/activity.py": "the one reading of scheduler downtime (scheduler_downtime)",
    # tests/plugin/explainer/test_scheduler_cover.py holds the two to one answer
    "plugin/explainer/records.py": "why's scheduler at an instant, by scheduler_downtime's rule",
}


def _reads_heartbeats(path: Path) -> list[int]:
    """Lines where ``path`` queries ``Job.latest_heartbeat`` (the model's column, or by text in SQL)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr == "latest_heartbeat":
            if isinstance(node.value, ast.Name) and node.value.id == "Job":
                found.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "latest_heartbeat" in node.value:
            found.append(node.lineno)
    return found


def test_scheduler_heartbeats_are_read_only_by_the_listed_readers() -> None:
    wrong = [
        f"{path.relative_to(REPO)}:{line} reads the scheduler jobs' heartbeats; "
        f"ask operators/schedules/activity.py's scheduler_downtime instead"
        for folder in FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
        if str(path.relative_to(REPO)) not in READERS
        for line in _reads_heartbeats(path)
    ]
    assert wrong == []


def test_every_listed_reader_still_reads_them() -> None:
    for module in READERS:
        assert _reads_heartbeats(REPO / module), f"{module} no longer reads the heartbeats; drop it from READERS"
