"""``--patch OUT``: a unified diff that rewrites each DAG's ``schedule=`` to its proposed tessera schedule.

A DAG's schedule is rewritten only where the file states it as a literal in the DAG's own call:
``DAG("etl", schedule="0 6 * * *")``, ``@dag(schedule=timedelta(hours=6))`` or an Airflow
timetable built from literals, found with :mod:`ast` (never by pattern over the text). Anything
else is listed with the reason and left alone: a schedule computed when the file is parsed (a
name, an expression, a function's answer), a DAG whose id is not a literal or that is made in a
loop or a function (dynamic DAGs), a DAG defined twice. The rewritten file must parse again,
and gets one import line for the names it uses.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from dataclasses import dataclass

MAX_SOURCE_BYTES = 1 << 20
"""The largest DAG file rewritten (a DAG file is a few kB; a larger one is generated, not written)."""
DAG_CALLS = {"DAG", "dag"}
LITERAL_CALLS = {
    "timedelta",
    "relativedelta",
    "CronTriggerTimetable",
    "CronDataIntervalTimetable",
    "DeltaDataIntervalTimetable",
    "DeltaTriggerTimetable",
    "MultipleCronTriggerTimetable",
    "CronPartitionTimetable",
}
"""The calls a schedule may be built from and still be a literal: Airflow's timetables and durations."""


@dataclass(frozen=True, slots=True)
class Site:
    """Where one DAG's schedule is written in its file, or why it cannot be rewritten (then ``value`` is None)."""

    value: ast.expr | None
    reason: str = ""


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _is_literal(node: ast.expr) -> bool:
    """A constant, or a call of a duration or an Airflow timetable with literal arguments only."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _is_literal(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_literal(item) for item in node.elts)
    if isinstance(node, ast.Call) and _name(node.func) in LITERAL_CALLS:
        return all(_is_literal(arg) for arg in node.args) and all(
            keyword.arg is not None and _is_literal(keyword.value) for keyword in node.keywords
        )
    return False


def _dag_calls(tree: ast.Module) -> Iterator[tuple[ast.Call, str | None, bool]]:
    """Each ``DAG(...)``/``@dag(...)`` call: the call, its literal DAG id (None: computed), if made repeatedly."""

    def visit(node: ast.AST, repeated: bool) -> Iterator[tuple[ast.Call, str | None, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in child.decorator_list:
                    if isinstance(decorator, ast.Call) and _name(decorator.func) in DAG_CALLS:
                        yield decorator, _dag_id(decorator) or child.name, repeated
                # A DAG made inside a function is made once per call: as dynamic as a loop's.
                yield from visit(child, True)
                continue
            if isinstance(child, ast.Call) and _name(child.func) in DAG_CALLS:
                yield child, _dag_id(child), repeated
            loop = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
            yield from visit(child, repeated or isinstance(child, loop))

    yield from visit(tree, False)


def _dag_id(call: ast.Call) -> str | None:
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    for keyword in call.keywords:
        if keyword.arg == "dag_id":
            value = keyword.value
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
    return None


def schedule_sites(tree: ast.Module, dag_ids: list[str]) -> dict[str, Site]:
    """Where each of ``dag_ids`` (the DAGs the file made when imported) states its schedule, or why not."""
    found: dict[str, list[tuple[ast.Call, bool]]] = {}
    for call, dag_id, repeated in _dag_calls(tree):
        if dag_id is not None:
            found.setdefault(dag_id, []).append((call, repeated))
    sites = {}
    for dag_id in dag_ids:
        calls = found.get(dag_id, [])
        if not calls:
            sites[dag_id] = Site(None, "dynamic DAG: its id is computed when the file is parsed")
        elif len(calls) > 1:
            sites[dag_id] = Site(None, f"the file has {len(calls)} DAG calls with this id")
        elif calls[0][1]:
            sites[dag_id] = Site(None, "dynamic DAG: made in a loop or a function")
        else:
            schedule = next((k.value for k in calls[0][0].keywords if k.arg == "schedule"), None)
            if schedule is None:
                sites[dag_id] = Site(None, "no schedule= keyword in its DAG call")
            elif not _is_literal(schedule):
                sites[dag_id] = Site(None, "schedule computed at parse time (not a literal in the DAG call)")
            else:
                sites[dag_id] = Site(schedule)
    return sites


def _offset(lines: list[str], line: int, column: int) -> int:
    """The character offset of ``ast``'s (1-based line, UTF-8 byte column) in the joined ``lines``."""
    text = lines[line - 1]
    return sum(len(x) for x in lines[: line - 1]) + len(text.encode("utf-8")[:column].decode("utf-8"))


def rewritten(source: str, replacements: list[tuple[ast.expr, str]], names: set[str]) -> str:
    """``source`` with each node's text replaced, and an import of ``names`` after its first imports."""
    lines = source.splitlines(keepends=True)
    text = source
    spans = sorted(
        (
            (
                _offset(lines, n.lineno, n.col_offset),
                _offset(lines, n.end_lineno or n.lineno, n.end_col_offset or 0),
                new,
            )
            for n, new in replacements
        ),
        reverse=True,
    )
    for start, end, new in spans:  # from the end, so earlier offsets stay right
        text = text[:start] + new + text[end:]
    tree = ast.parse(source)
    body = tree.body
    first = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    imports = [n for n in body[first:] if isinstance(n, (ast.Import, ast.ImportFrom))]
    after_line = max((n.end_lineno or n.lineno for n in imports), default=body[0].end_lineno if first else 0)
    new_lines = text.splitlines(keepends=True)
    if after_line and not new_lines[after_line - 1].endswith("\n"):
        new_lines[after_line - 1] += "\n"
    statement = f"from tessera.timetables import {', '.join(sorted(names))}\n"
    return "".join([*new_lines[:after_line], statement, *new_lines[after_line:]])


def unified_diff(relative: str, old: str, new: str) -> str:
    """The diff ``git apply`` and ``patch -p1`` take, run from the DAG folder."""
    diff = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{relative}", f"b/{relative}"
    )
    # A last line without a newline must say so, or the patch does not apply.
    return "".join(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in diff)
