"""Every run note goes through the one writer (``operators/run_notes.py``): no other module writes one.

A note written anywhere else escapes the column cap, and on PostgreSQL one character too many
fails the scheduler's transaction. The scan reads every product module and fails on each write
of a run's note it finds outside the writer: an assignment to ``.note`` or ``.dag_run_note``
(plain, augmented or annotated), a ``setattr`` of either, and Airflow's ``DagRunNote`` built or
updated by hand. The feature steps the writer serves are listed too, so a caller that drops it
(or a new feature module that writes notes its own way) is seen.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..conftest import REPO

WRITER = "operators/run_notes.py"
FOLDERS = ("timetables", "operators", "plugin")
NOTE_ATTRIBUTES = ("note", "dag_run_note")
NOT_RUNS = {
    ("plugin/explainer/facts.py", "facts.note"): "the explainer's copy of a note it read, not a run's",
}
"""``.note`` assignments to objects that are not dag runs, and what they are."""
CALLERS = (
    "operators/schedules/held_fires.py",
    "operators/schedules/waves.py",
    "operators/schedules/run_retries.py",
    "operators/pauses/after_failures.py",
    "operators/replaced_runs.py",
    "operators/fan_in/release.py",
)
"""The feature modules that note on a run (issue 37's six); each must call the writer's ``append``."""


def _note_writes(path: Path) -> list[tuple[int, str]]:
    """(line, code) of each write of a run's note in ``path`` (see the module docstring)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in ast.walk(target)]  # tuples unpacked too
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        found += [
            (node.lineno, ast.unparse(target))
            for target in targets
            if isinstance(target, ast.Attribute) and target.attr in NOTE_ATTRIBUTES
        ]
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            named = [arg.value for arg in node.args[1:2] if isinstance(arg, ast.Constant)]
            first = [getattr(arg, "id", getattr(arg, "attr", None)) for arg in node.args[:1]]
            if (
                (called == "setattr" and set(named) & set(NOTE_ATTRIBUTES))
                or called == "DagRunNote"
                or (called in ("update", "insert") and first == ["DagRunNote"])
            ):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_but_the_writer_writes_a_run_note():
    wrong = [
        f"{relative}:{line} writes a run's note itself ({code}); "
        f"call tessera.operators.run_notes.append, which keeps the note within the column"
        for folder in FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
        if (relative := str(path.relative_to(REPO))) != WRITER
        for line, code in _note_writes(path)
        if (relative, code) not in NOT_RUNS
    ]
    assert wrong == [], "\n".join(wrong)


def test_the_scan_sees_every_kind_of_write(tmp_path: Path):
    """The scan is only as good as what it recognises: each way of writing a note is found."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "dag_run.note = 'a'\n"
        "run.note += 'b'\n"
        "run.dag_run_note = None\n"
        "first, runs[0].note = 1, 'c'\n"
        "setattr(run, 'note', 'd')\n"
        "DagRunNote(content='e')\n"
        "session.execute(update(DagRunNote).values(content='f'))\n"
        "note = run.note\n"  # reading is fine
    )
    assert [line for line, _ in _note_writes(probe)] == [1, 2, 3, 4, 5, 6, 7]


def test_the_note_writing_features_call_the_writer():
    missing = []
    for caller in CALLERS:
        tree = ast.parse((REPO / caller).read_text())
        imported = any(
            isinstance(node, ast.ImportFrom)
            and (node.module or "").endswith("run_notes")
            and "append" in [alias.name for alias in node.names]
            for node in ast.walk(tree)
        )
        called = any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "append"
            for node in ast.walk(tree)
        )
        if not (imported and called):
            missing.append(caller)
    assert missing == [], f"these note on a run without the writer: {missing}"


def test_the_column_limit_and_the_instant_format_are_stated_once():
    """No module but the writer states the note column's length or writes an instant its own way."""
    wrong = []
    for folder in ("operators",):
        for path in sorted((REPO / folder).rglob("*.py")):
            relative = str(path.relative_to(REPO))
            if relative == WRITER:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "NOTE_LIMIT" for t in node.targets):
                    wrong.append(f"{relative}:{node.lineno} defines NOTE_LIMIT; import it from {WRITER}")
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and "%H:%M:%S" in node.value:
                    wrong.append(f"{relative}:{node.lineno} formats an instant itself; use run_notes.at")
    assert wrong == [], "\n".join(wrong)
