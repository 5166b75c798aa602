"""The layering rules of DESIGN.md, checked on the source (farm-studio cannot follow imports across the folders).

- plugin -> operators -> timetables, never back; the pure core (timetables/_time) imports
  nothing from the rest of tessera and no Airflow;
- nothing outside timetables/ imports the private core or touches a timetable's private
  attributes: it asks the public plan;
- one concept per module: no module over 300 lines.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import REPO

FOLDERS = ("timetables", "operators", "plugin")
RANK = {"timetables": 0, "operators": 1, "plugin": 2}
MAX_LINES = 300


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py"))


def _package_of(path: Path) -> list[str]:
    rel = path.relative_to(REPO).with_suffix("").parts
    return ["tessera", *rel[:-1]] if rel[-1] != "__init__" else ["tessera", *rel[:-1]]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``path``, relative ones resolved."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(path)[: len(_package_of(path)) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _folder(path: Path) -> str:
    return path.relative_to(REPO).parts[0]


def test_layers_point_one_way():
    wrong = []
    for path in _sources():
        mine = RANK[_folder(path)]
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] == "tessera" and len(parts) > 1 and parts[1] in RANK and RANK[parts[1]] > mine:
                wrong.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    assert wrong == []


def test_only_timetables_reach_the_pure_core():
    wrong = [
        f"{path.relative_to(REPO)}:{line} imports {module}"
        for path in _sources()
        if _folder(path) != "timetables"
        for line, module in _imports(path)
        if module.startswith("tessera.timetables._time")
    ]
    assert wrong == []


def test_the_pure_core_imports_no_airflow_and_nothing_above_it():
    core = REPO / "timetables" / "_time"
    wrong = [
        f"{path.relative_to(REPO)}:{line} imports {module}"
        for path in sorted(core.rglob("*.py"))
        for line, module in _imports(path)
        if module.split(".")[0] in ("airflow", "pendulum")
        or (module.startswith("tessera.") and not module.startswith("tessera.timetables._time"))
    ]
    assert wrong == []


def test_nothing_outside_timetables_touches_a_timetables_private_attributes():
    private = {"_plan", "_catch_up", "_phase_policy", "_calendar", "_expression", "_timezone", "_every_us", "_dst"}
    wrong = []
    for path in _sources():
        if _folder(path) == "timetables":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in private:
                wrong.append(f"{path.relative_to(REPO)}:{node.lineno} reads .{node.attr}")
    assert wrong == []


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_modules_hold_one_concept(path: Path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(REPO)} has {lines} lines; split it by concept"


def test_the_pure_core_imports_without_airflow_installed():
    """Import every core module in a fresh interpreter where ``airflow`` cannot be imported at all."""
    modules = sorted(
        "tessera.timetables._time." + p.stem
        for p in (REPO / "timetables" / "_time").glob("*.py")
        if p.stem != "__init__"
    )
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["airflow"] = None  # any `import airflow...` now raises ImportError
        import importlib
        for name in {modules!r}:
            importlib.import_module(name)
        leaked = sorted(m for m in sys.modules if m.split(".")[0] == "airflow" and sys.modules[m] is not None)
        assert not leaked, leaked
        print("ok", len({modules!r}))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("ok")
