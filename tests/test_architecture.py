"""The layering rules of DESIGN.md, checked on the source (farm-studio cannot follow imports across the folders).

- plugin -> operators -> timetables, never back; the pure core (timetables/_time) imports
  nothing from the rest of tessera and no Airflow;
- nothing outside timetables/ imports the private core or touches a timetable's private
  attributes: it asks the public plan;
- one door to Airflow per layer: a private Airflow name (a module path with a segment starting
  with "_", a name starting with "_" imported from Airflow, a "_" member read off an Airflow
  object) is used only in that layer's ``_airflow.py``, and no layer uses another layer's door;
- a module is one concept and a concept that outgrows it is a package: no family of three or more
  sibling modules sharing a name prefix (``why_records``, ``why_verdict``, ...) beyond those listed
- no import circle within a layer: the cadences depend on the base, not the other way round;
- one home per fact, checked by value: the supported years appear as literals only in their home;
- one writer of Airflow's asset queue rows (``operators/fan_in/queue.py``).
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import REPO

FOLDERS = ("timetables", "operators", "plugin")
RANK = {"timetables": 0, "operators": 1, "plugin": 2}


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py"))


# Every rule reads the same sources, several rules a module each time: each is parsed once per run
# (the rules only read the trees).
@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _package_of(path: Path) -> list[str]:
    rel = path.relative_to(REPO).with_suffix("").parts
    return ["tessera", *rel[:-1]] if rel[-1] != "__init__" else ["tessera", *rel[:-1]]


@functools.cache  # four rules read every module's imports
def _imports(path: Path) -> tuple[tuple[int, str], ...]:
    """(line, absolute module) of every import in ``path``, relative ones resolved."""
    found = []
    for node in ast.walk(_tree(path)):
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
    return tuple(found)


def _folder(path: Path) -> str:
    return path.relative_to(REPO).parts[0]


DOORS = {folder: REPO / folder / "_airflow.py" for folder in FOLDERS}

NOT_AIRFLOWS = {
    "_replace": "namedtuple's public API (urllib.parse.urlsplit's result)",
    "_body": "Starlette's Request body cache, not an Airflow name",
}
"""Private-looking members tessera reads off objects that are not Airflow's, and what they are."""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_airflow_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "airflow" and any(part.startswith("_") for part in parts)


def _tessera_names() -> set[str]:
    """Every private name tessera defines itself: functions, classes, variables, ``self``/``cls`` attributes."""
    names = set()
    for path in _sources():
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                names.add(node.attr)
    return {name for name in names if _private(name)}


def _airflow_bound(tree: ast.AST) -> set[str]:
    """The names a module binds to Airflow modules or objects by importing them."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "airflow":
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "airflow":
            bound.update(alias.asname or alias.name for alias in node.names)
    return bound


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _private_airflow_uses(path: Path, ours: set[str]) -> list[tuple[int, str]]:
    """(line, what) of every private Airflow name ``path`` imports or reads (see the module docstring).

    A ``_`` member counts as Airflow's when it is read off a name the module imported from Airflow,
    or when tessera defines no such name itself (and it is not one of :data:`NOT_AIRFLOWS`).
    """
    tree = _tree(path)
    airflow = _airflow_bound(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"imports {a.name}") for a in node.names if _private_airflow_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "airflow":
            if _private_airflow_module(node.module):
                found.append((node.lineno, f"imports from {node.module}"))
            found += [(node.lineno, f"imports {node.module}.{a.name}") for a in node.names if _private(a.name)]
        else:
            if isinstance(node, ast.Attribute):
                member, owner = node.attr, node.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                member, owner = node.args[1].value, node.args[0]
            else:
                continue
            if not _private(member) or _root(owner) in ("self", "cls"):
                continue
            if _root(owner) in airflow or (member not in ours and member not in NOT_AIRFLOWS):
                found.append((node.lineno, f"reads {ast.unparse(owner)}.{member}"))
    return found


def test_private_airflow_names_go_through_the_layers_door():
    ours = _tessera_names()
    wrong = [
        f"{path.relative_to(REPO)}:{line} {what}, a private Airflow name; "
        f"use it through {DOORS[_folder(path)].relative_to(REPO)} (add it there with a contract test)"
        for path in _sources()
        if path not in DOORS.values()
        for line, what in _private_airflow_uses(path, ours)
    ]
    assert wrong == [], "\n".join(wrong)


def test_no_layer_uses_another_layers_door():
    wrong = [
        f"{path.relative_to(REPO)}:{line} imports {module}; use {DOORS[_folder(path)].relative_to(REPO)}"
        for path in _sources()
        for line, module in _imports(path)
        if (parts := module.split("."))[:1] == ["tessera"]
        and len(parts) > 2
        and parts[2] == "_airflow"
        and parts[1] != _folder(path)
    ]
    assert wrong == [], "\n".join(wrong)


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
    private |= {"_wall_clock", "_partition_keys"}  # facts the public plan holds as fields of its own
    wrong = []
    for path in _sources():
        if _folder(path) == "timetables":
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Attribute) and node.attr in private:
                wrong.append(f"{path.relative_to(REPO)}:{node.lineno} reads .{node.attr}")
    assert wrong == []


ONE_DEFINITION = {
    # the rule: (the one module that states it, the names it is stated by)
    "the instants tessera supports": ("timetables/_time/supported.py", ("SUPPORTED_FROM", "SUPPORTED_UNTIL")),
    "which zone names a schedule accepts": ("timetables/_time/wallclock.py", ("load_zone",)),
    "how a user's value is shown in a refusal": ("timetables/_time/excerpt.py", ("excerpt",)),
    "Airflow's bounds on a DAG's runs (_time_restriction)": ("plugin/fleet/stored.py", ("time_restriction",)),
    "the starting deadline": ("timetables/_time/catch_up.py", ("past_deadline",)),
    "the run the scheduler stored next": ("timetables/public_plan.py", ("next_stored",)),
    "the ticks passed over between two runs": ("timetables/public_plan.py", ("missed_between",)),
    "the run before a run": ("timetables/public_plan.py", ("previous",)),
}


@functools.cache  # every rule looks its names up in every module
def _definitions(path: Path) -> frozenset[str]:
    """Names ``path`` defines: module-level functions, classes and assignments, and methods."""
    names: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    for node in _tree(path).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return frozenset(names)


@pytest.mark.parametrize("rule", sorted(ONE_DEFINITION))
def test_each_rule_is_stated_in_one_place(rule: str):
    """A rule that two readers share is defined once; the others call it (issue 25's list of copies)."""
    home, names = ONE_DEFINITION[rule]
    assert (REPO / home).exists(), f"{rule}: {home} is gone; update ONE_DEFINITION"
    where = {name: sorted(str(p.relative_to(REPO)) for p in _sources() if name in _definitions(p)) for name in names}
    # A class that serves the stored next run to the page memoises the plan's answer under the same name.
    allowed = {"next_stored": {"plugin/fleet/schedules.py"}}
    for name, modules in where.items():
        extra = set(modules) - {home} - allowed.get(name, set())
        assert home in modules, f"{rule}: {name} is no longer defined in {home}"
        assert not extra, f"{rule}: {name} is defined again in {sorted(extra)}; call the one in {home}"


def test_the_childrens_queue_rows_are_written_in_one_place():
    """Only ``operators/fan_in/queue.py`` names Airflow's asset queue model: the insert that waits for a
    scheduler holding the rows (not ``ON CONFLICT DO NOTHING``, which loses the fire) is written once."""
    home = REPO / "operators/fan_in/queue.py"
    users = []
    for path in _sources():
        for node in ast.walk(_tree(path)):
            named = (isinstance(node, ast.Name) and node.id == "AssetDagRunQueue") or (
                isinstance(node, ast.alias) and node.name == "AssetDagRunQueue"
            )
            if named and path != home:
                users.append(f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')}")
    assert users == [], f"queue a child through tessera.operators.fan_in.queue.queue_children, not {users}"


_CLOCK_READS = {("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"), ("date", "today")}
_CLOCK_READS |= {("pendulum", "now"), ("pendulum", "today"), ("time", "time"), ("time", "time_ns")}


def _clock_reads(path: Path) -> list[tuple[int, str]]:
    """(line, call) of each read of the wall clock: ``datetime.now()``, ``pendulum.now()``, ``time.time()``..."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
            if (name, node.func.attr) in _CLOCK_READS:
                found.append((node.lineno, f"{name}.{node.func.attr}()"))
    return found


def test_the_clock_is_read_through_the_layers_door():
    """One reader of "now" per layer (Airflow's utcnow in its ``_airflow.py``), so a frozen clock freezes all."""
    reads = [
        f"{path.relative_to(REPO)}:{line} calls {call}; use utcnow from {DOORS[_folder(path)].relative_to(REPO)}"
        for path in _sources()
        if path not in DOORS.values()
        for line, call in _clock_reads(path)
    ]
    assert not reads, "\n".join(reads)


def _prefix_families(root: Path) -> dict[tuple[str, str], set[str]]:
    """Sibling modules grouped by the first word of their names: ``(folder, prefix) -> stems``, 3 or more."""
    families: dict[tuple[str, str], set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path.stem.startswith("__") or "__pycache__" in path.parts:
            continue
        folder = path.parent.relative_to(REPO).as_posix()
        families.setdefault((folder, path.stem.lstrip("_").split("_")[0]), set()).add(path.stem)
    return {key: stems for key, stems in families.items() if len(stems) >= 3}


def test_a_concept_that_outgrows_a_module_is_a_package_not_a_prefix_family():
    found = {key: stems for folder in FOLDERS for key, stems in _prefix_families(REPO / folder).items()}
    grown = [
        f"{folder}/: {', '.join(sorted(stems))} share the prefix {prefix!r}; make them a package "
        f"{folder}/{prefix}/ (its public names in __init__)"
        for (folder, prefix), stems in sorted(found.items())
    ]
    assert not grown, "\n".join(grown)


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The ``modules`` that ``path`` imports when it runs (at load or in a function), not under TYPE_CHECKING.

    An import for annotations only is no dependency: nothing of it runs. ``from . import sibling``
    depends on the sibling, not on the package's ``__init__``.
    """
    tree = _tree(path)
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING"
        for statement in node.body
        for inner in ast.walk(statement)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only or not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom):
            base = _package_of(path)[: len(_package_of(path)) - (node.level - 1)] if node.level else []
            module = ".".join([*base, node.module] if node.module else base) if node.level else node.module or ""
            submodules = [f"{module}.{alias.name}" for alias in node.names]
            names = [*submodules] if all(name in modules for name in submodules) else [module, *submodules]
        found.update(names)
    return found & modules


def _module_name(path: Path) -> str:
    parts = ["tessera", *path.relative_to(REPO).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_circles(paths: list[Path]) -> list[list[str]]:
    """The strongly connected groups of two or more modules in the import graph of ``paths`` (Tarjan)."""
    names = {_module_name(path): path for path in paths}
    graph = {name: sorted(_runtime_imports(path, set(names)) - {name}) for name, path in names.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(name: str) -> None:
        order[name] = low[name] = len(order)
        stack.append(name)
        for target in graph[name]:
            if target not in order:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], order[target])
        if low[name] == order[name]:
            group = stack[stack.index(name) :]
            del stack[stack.index(name) :]
            if len(group) > 1:
                circles.append(sorted(group))

    for name in graph:
        if name not in order:
            visit(name)
    return circles


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_import_circle_within_a_layer(folder: str):
    circles = _import_circles([path for path in _sources() if _folder(path) == folder])
    assert not circles, "import circles (a module imports, at load or in a function, one that imports it back):\n" + (
        "\n".join(" <-> ".join(circle) for circle in circles)
    )


SUPPORTED_YEARS_HOME = REPO / "timetables" / "_time" / "supported.py"
YEAR_BOUNDS = {1900, 2999, 3000}
"""The supported years' bounds: a literal one outside their home restates the fact (and drifts from it)."""


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            found |= {
                id(statement.value)
                for statement in body
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            }
    return found


def _year_literals(path: Path) -> list[str]:
    tree = _tree(path)
    prose = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in prose or isinstance(node.value, bool):
            continue
        if isinstance(node.value, int) and node.value in YEAR_BOUNDS:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value}")
        elif isinstance(node.value, str) and any(str(year) in node.value for year in YEAR_BOUNDS):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]!r}")
    return found


def test_the_supported_years_are_stated_in_one_home():
    repeated = [line for path in _sources() if path != SUPPORTED_YEARS_HOME for line in _year_literals(path)]
    assert not repeated, f"the supported years restated outside {SUPPORTED_YEARS_HOME.relative_to(REPO)}:\n" + (
        "\n".join(repeated)
    )


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


def test_every_timetable_constructor_has_full_type_hints():
    """Each parameter of each public timetable class's constructors is typed, its return type too."""
    import inspect

    import tessera.timetables as public
    from tessera.timetables.base import TesseraTimetable

    named = [getattr(public, name) for name in public.__all__]  # loaded on first use (PEP 562)
    classes = [
        c for c in named if isinstance(c, type) and issubclass(c, TesseraTimetable) and c is not TesseraTimetable
    ]
    constructors = [(c, "__init__", c.__init__) for c in classes]
    constructors += [
        (c, n, getattr(c, n)) for c in classes for n in dir(c) if inspect.ismethod(getattr(c, n)) and n[0] != "_"
    ]
    untyped = [
        f"{c.__name__}.{name}({p.name})" if p else f"{c.__name__}.{name} -> ?"
        for c, name, method in constructors
        for p in [*inspect.signature(method).parameters.values(), None]
        if (p is None and inspect.signature(method).return_annotation is inspect.Signature.empty)
        or (p is not None and p.name != "self" and p.annotation is inspect.Parameter.empty)
    ]
    assert {c.__name__ for c in classes} >= {"Every", "Calendar", "Cron", "Union"}
    assert len(constructors) > len(classes), "the calendar cadences' classmethods are checked too"
    assert not untyped, f"constructors without a type hint: {untyped}"


NAMES_HOME = REPO / "operators" / "tessera_names.py"
NAMED_ROLES = {"owner", "by"}
"""Keywords whose value is the audit log's owner (``Log(owner=...)``, ``set_paused(by=...)``)."""


def _tessera_in_a_named_role(path: Path) -> list[str]:
    """Each literal "tessera" written as an audit owner, a config section, or a constant named for one."""
    found = []
    for node in ast.walk(_tree(path)):
        literal = None
        if isinstance(node, ast.keyword) and node.arg in NAMED_ROLES:
            literal = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if getattr(node.func.value, "id", None) == "conf":  # conf.get("tessera", ...), conf.getint(...)
                literal = node.args[0]
        elif isinstance(node, ast.Assign):
            names = [target.id for target in node.targets if isinstance(target, ast.Name)]
            if any(name.endswith(("OWNER", "SECTION")) for name in names):
                literal = node.value
        if isinstance(literal, ast.Constant) and literal.value == "tessera":
            found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_the_audit_owner_and_the_config_section_are_stated_in_one_home():
    """Browse > Audit Log filtered by owner, and ``[tessera]`` in airflow.cfg, read the same everywhere."""
    repeated = [line for path in _sources() if path != NAMES_HOME for line in _tessera_in_a_named_role(path)]
    assert not repeated, f"tessera's name restated outside {NAMES_HOME.relative_to(REPO)}; import it:\n" + (
        "\n".join(repeated)
    )
