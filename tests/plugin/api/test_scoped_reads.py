"""Every read of Airflow's records that the request-serving code makes goes through ``scoped_reads``.

A scan of every module under ``plugin/api`` (the routes and the domain they call) but
``scoped_reads`` itself: a query naming one of Airflow's models of runs, task instances, pools,
the audit log, XCom or import errors (``select(DagRun...)``, ``session.query(Log)``,
``session.get(TaskInstance, ...)``, a model's own query method such as ``DagRun.find``) fails the
test, which names the module, the line and the model. Such a read would not be limited to the
DAGs its caller may read; it belongs in :mod:`tessera.plugin.api.scoped_reads`, which takes the
caller's scope.

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
READER = API / "scoped_reads.py"
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
    return sorted(path for path in API.rglob("*.py") if path != READER)


def test_no_module_serving_requests_reads_airflows_records_outside_the_scoped_reader() -> None:
    found = [line for path in _request_modules() for line in bypasses(path)]
    assert not found, "\n".join(found)


def test_the_scan_finds_each_kind_of_read(tmp_path: Path) -> None:
    """The scan itself: each way of reading a guarded model is found, under another name too; a DAG row is not."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from airflow.models.taskinstance import TaskInstance as TI\n"
        "from airflow.models import dagrun\n"
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
        ]
    )
