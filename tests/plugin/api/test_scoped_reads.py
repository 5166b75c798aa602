"""Every read of Airflow's records that the request-serving code makes goes through ``scoped_reads``.

A scan of every module under ``plugin/api`` (the routes and the domain they call) but the
``scoped_reads`` package: a query naming one of Airflow's models of runs, task instances, pools,
the audit log, XCom or import errors (``select(DagRun...)``, ``session.query(Log)``,
``session.get(TaskInstance, ...)``, a model's own query method such as ``DagRun.find``) fails the
test, which names the module, the line and the model. Such a read would not be limited to the
DAGs its caller may read; it belongs in :mod:`tessera.plugin.api.scoped_reads`, which takes the
caller's scope. A second scan follows the calls of every function of ``operators`` and
``plugin`` (outside ``plugin/api``) to find those that read these models, and fails when the
request code calls one of them other than through ``scoped_reads``.

``DagModel`` (and tags, serialized DAGs, DAG versions) are left out by design: the lists select
DAG rows with the caller's readable ids (``schedules``, ``load_fleet``, ``triggers``, ``broken``)
and a route reads the row of the DAG it authorized. ``tests/plugin/api/test_api_scope.py`` asks
every route as a user who may not read a planted DAG, which catches a leak through them too.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from ...conftest import REPO

API = REPO / "plugin" / "api"
EXPLAINER = REPO / "plugin" / "explainer"
"""The answer to "why", which the REST route serves: it reads on a caller's behalf as the routes' domain does."""
READER = API / "scoped_reads"
GUARDED = frozenset(
    {
        "DagRun",
        "DagRunNote",
        "Backfill",
        "BackfillDagRun",
        "TaskInstance",
        "TaskInstanceHistory",
        "TaskInstanceNote",
        "Pool",
        "Log",
        "XComModel",
        "XCom",
        "ParseImportError",
    }
)
"""Airflow's models whose rows belong to a DAG (or, for pools, are held by one) and Airflow shows per DAG."""
TABLES = re.compile(
    r"\b(dag_run|dag_run_note|backfill|backfill_dag_run|task_instance|task_instance_history|slot_pool|log|xcom|import_error)\b",
    re.IGNORECASE,
)
"""Their tables, as raw SQL (``text(...)``) would name them."""
QUERIES = frozenset(
    {
        *("select", "query", "get", "get_one", "exists", "with_only_columns", "add_columns"),
        # a statement's clauses: ``select(func.count()).where(TaskInstance.pool == pool)`` reads task instances
        *("where", "filter", "filter_by", "join", "outerjoin", "select_from", "order_by", "group_by", "having"),
    }
)
"""Calls that build or run a read when given a model or a column of one."""
PURE = frozenset({"deserialize_value", "serialize_value", "generate_run_id"})
"""A model's methods that read no rows (decoding a value the reader returned, making a run id)."""


def _guarded_names(tree: ast.Module) -> set[str]:
    """The guarded models' names as this module knows them (``from ... import DagRun as Run`` counts)."""
    names = set(GUARDED)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname for alias in node.names if alias.name in GUARDED and alias.asname)
    for node in ast.walk(tree):  # ``error = ParseImportError``: a shorter name in a function
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


def _model(node: ast.AST, names: set[str]) -> str | None:
    """The guarded model ``node`` names: ``DagRun``, ``models.DagRun``, ``DagRun.dag_id``, ``DagRun.__table__``."""
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and part.id in names:
            return part.id
        if isinstance(part, ast.Attribute) and part.attr in GUARDED:
            return part.attr
    return None


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _read_of(node: ast.Call, names: set[str]) -> str | None:
    """The guarded model (or table) the call reads, if it is a read of one."""
    called = _called(node.func)
    arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
    if called in QUERIES:
        return next(filter(None, (_model(argument, names) for argument in arguments)), None)
    if called == "text" and node.args and isinstance(node.args[0], ast.Constant):
        found = TABLES.search(str(node.args[0].value))
        return None if found is None else found.group(1)
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names:
        # a model's own query method: DagRun.find, TaskInstance.get_task_instance, Pool.get_pool...
        return None if func.attr in PURE else func.value.id
    return None


def bypasses(path: Path, root: Path = REPO) -> Iterator[str]:
    """Each read in ``path`` of a guarded model: ``file:line: call(...) reads Model ...``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names, seen = _guarded_names(tree), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (model := _read_of(node, names)) is not None and node.lineno not in seen:
            seen.add(node.lineno)  # a statement's select and its where: one read
            where = f"{path.relative_to(root)}:{node.lineno}"
            yield f"{where}: {_called(node.func)}(...) reads {model} outside scoped_reads; move it there"


def _request_modules() -> list[Path]:
    served = [*API.rglob("*.py"), *EXPLAINER.rglob("*.py")]
    return sorted(path for path in served if READER not in path.parents)


def test_no_module_serving_requests_reads_airflows_records_outside_the_scoped_reader() -> None:
    found = [line for path in _request_modules() for line in bypasses(path)]
    assert not found, "\n".join(found)


# -- the same reads one call away: a function of another package the request code calls ------------------


def _module_name(path: Path) -> str:
    """``operators/pauses.py`` -> ``tessera.operators.pauses`` (the three folders are tessera's subpackages)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(("tessera", *parts[: -1 if parts[-1] == "__init__" else None]))


def _functions(tree: ast.Module) -> dict[str, ast.AST]:
    return {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _imported(tree: ast.AST, module: str) -> dict[str, str]:
    """Local name -> ``module.function`` of every ``from X import f`` in ``tree`` (relative ones resolved)."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.rsplit(".", node.level)[0]
                base = f"{package}.{base}" if base else package
            for alias in node.names:
                found[alias.asname or alias.name] = f"{base}.{alias.name}"
    return found


def _calls(node: ast.AST) -> set[str]:
    return {_called(call.func) or "" for call in ast.walk(node) if isinstance(call, ast.Call)}


def project_readers() -> dict[str, str]:
    """Every function of tessera outside ``plugin/api`` that reads a guarded model, itself or through a call.

    ``module.function`` -> the read that makes it one (``file:line ...`` of the first found). Calls are
    followed by name within a module and through ``from X import f``, until nothing changes.
    """
    modules = {}
    for folder in ("operators", "plugin", "timetables"):
        for path in (REPO / folder).rglob("*.py"):
            if API not in path.parents:
                tree = ast.parse(path.read_text(), filename=str(path))
                modules[_module_name(path)] = (path, tree)
    readers: dict[str, str] = {}
    for module, (path, tree) in modules.items():
        names = _guarded_names(tree)
        for name, function in _functions(tree).items():
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and (model := _read_of(node, names)) is not None:
                    readers[f"{module}.{name}"] = f"{path.relative_to(REPO)}:{node.lineno} reads {model}"
                    break
    changed = True
    while changed:  # each pass adds at least one function, and there are finitely many
        changed = False
        for module, (_, tree) in modules.items():
            imported = _imported(tree, module)
            for name, function in _functions(tree).items():
                qualified = f"{module}.{name}"
                if qualified in readers:
                    continue
                for called in _calls(function):
                    target = imported.get(called, f"{module}.{called}")
                    if target in readers:
                        readers[qualified] = f"calls {target}, which {readers[target].split(' ', 1)[1]}"
                        changed = True
                        break
    return readers


def test_no_module_serving_requests_calls_a_reader_of_another_package_but_through_the_scoped_reader() -> None:
    """A function of ``operators`` or ``plugin`` reading runs, the audit log... is called through ``scoped_reads``."""
    readers = project_readers()
    found = []
    for path in _request_modules():
        tree = ast.parse(path.read_text(), filename=str(path))
        imported = _imported(tree, _module_name(path))
        for local in sorted(_calls(tree)):
            target = imported.get(local)
            if target in readers:
                found.append(
                    f"{path.relative_to(REPO)}: calls {target} ({readers[target]}); call it through scoped_reads"
                )
    assert not found, "\n".join(found)


def test_the_scan_finds_each_kind_of_read(tmp_path: Path) -> None:
    """The scan itself: each way of reading a guarded model is found, under another name too; a DAG row is not."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from airflow.models.taskinstance import TaskInstance as TI\n"
        "from airflow.models import dagrun\n"
        "error = ParseImportError\n"
        "session.execute(select(DagModel.dag_id).outerjoin(error, error.filename == DagModel.relative_fileloc))\n"
        "session.scalar(select(func.count()).where(TI.pool == 'p'))\n"
        "session.execute(select(dagrun.DagRun.run_id))\n"
        "session.query(Log).all()\n"
        "session.get(Pool, 1)\n"
        "DagRun.find(dag_id='x')\n"
        "session.execute(text('SELECT extra FROM log WHERE dag_id = :d'))\n"
        "session.scalar(select(DagModel.dag_id))\n"
        "XComModel.deserialize_value(row)\n"
    )
    found = [line.split(": ", 1)[1].split(" outside")[0] for line in bypasses(probe, tmp_path)]
    assert sorted(found) == sorted(
        [
            "where(...) reads TI",
            "select(...) reads DagRun",
            "query(...) reads Log",
            "get(...) reads Pool",
            "find(...) reads DagRun",
            "text(...) reads log",
            "outerjoin(...) reads error",
        ]
    )


def test_no_module_serving_requests_reads_in_the_scope_of_every_dag() -> None:
    """``Scope.everything()`` is the CLI's (it reads the database it was pointed at); a request has a caller."""
    found = []
    for path in _request_modules():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Attribute) and node.attr == "everything":
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: Scope.everything(); give the caller's scope")
    assert not found, "\n".join(found)


def test_a_requests_scope_asks_the_auth_manager_once_and_only_past_the_routes_own_dag() -> None:
    """Asking costs a query over every DAG: a read of the route's own DAG does not ask, the first other one does."""
    from tessera.plugin.api.scoped_reads import Scope

    asked = []

    def readable() -> set[str]:
        asked.append(1)
        return {"mine", "another"}

    scope = Scope.of_caller(readable, route_dag="route_dag")
    assert scope.allows("route_dag") and not asked
    assert scope.only(["another", "hidden", "route_dag", "another"]) == ["another", "route_dag"]
    assert not scope.allows("hidden") and len(asked) == 1
    assert Scope.of({"a"}).only(["a", "b"]) == ["a"]
    assert Scope.everything().allows("anything")
