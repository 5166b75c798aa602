"""The migration's own rules, checked on its source, and its patch writer on the DAG files people write.

* The "before" side is Airflow's own timetables: in ``plugin/migrate`` only :mod:`.current`'s
  ``airflow_runs`` asks ``next_dagrun_info``, and no module imports a cron or recurrence library
  (croniter, dateutil's rrule, pendulum's stepping) that would make it a reimplementation.
* The "after" side is tessera's public plan: only :mod:`.compare` asks ``upcoming``.
* Every run stepped is charged to the DAG's run budget (:data:`~tessera.plugin.migrate.RUN_BUDGET`):
  Airflow's side is stepped only by ``_Airflow.runs`` and tessera's only inside ``_walk``, the two
  places that count what they step against it.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tessera.plugin.migrate.patch import rewritten, schedule_sites, unified_diff

from ...conftest import REPO

PACKAGE = REPO / "plugin" / "migrate"
NO_REIMPLEMENTATION = ("croniter", "dateutil.rrule", "cron_descriptor")


def _calls(path: Path, attribute: str) -> list[str]:
    """``module:function`` of each function in ``path`` that calls ``.attribute(...)`` or ``attribute(...)``.

    The innermost function names the caller (a helper nested in ``_walk`` is ``_walk.compared``).
    """
    found = []

    def visit(node: ast.AST, where: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            where = f"{where}.{node.name}" if where else node.name
        if isinstance(node, ast.Call) and attribute in (
            getattr(node.func, "attr", None),
            getattr(node.func, "id", None),
        ):
            found.append(f"{path.stem}:{where or '<module>'}")
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(ast.parse(path.read_text()), "")
    return sorted(set(found))


def test_airflow_runs_is_the_one_caller_of_next_dagrun_info_and_the_plan_is_read_in_compare():
    modules = sorted(PACKAGE.glob("*.py"))
    assert [c for m in modules for c in _calls(m, "next_dagrun_info")] == ["current:airflow_runs"]
    assert [c for m in modules for c in _calls(m, "next_dagrun_info_v2")] == []
    assert [c for m in modules for c in _calls(m, "upcoming")] == ["compare:_tessera_runs"]


def test_every_run_stepped_is_charged_to_the_run_budget():
    modules = sorted(PACKAGE.glob("*.py"))
    assert [c for m in modules for c in _calls(m, "airflow_runs")] == ["compare:runs"]
    assert [c for m in modules for c in _calls(m, "_tessera_runs")] == ["compare:_walk.compared"]


def test_no_module_of_the_migration_imports_a_cron_or_recurrence_library():
    for module in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            bad = [name for name in names if name.startswith(NO_REIMPLEMENTATION)]
            assert not bad, f"{module.name}:{node.lineno} imports {bad}: step Airflow's own timetable instead"


def _sites(source: str, *dag_ids: str) -> dict[str, str]:
    sites = schedule_sites(ast.parse(textwrap.dedent(source)), list(dag_ids))
    return {dag_id: site.reason or ast.unparse(site.value) for dag_id, site in sites.items()}


@pytest.mark.parametrize(
    ("source", "dag_id", "found"),
    [
        pytest.param('with DAG("a", schedule="0 6 * * *"):\n    pass\n', "a", "'0 6 * * *'", id="with-dag"),
        pytest.param(
            "@dag(schedule=timedelta(hours=6))\ndef b():\n    pass\n", "b", "timedelta(hours=6)", id="decorator"
        ),
        pytest.param('x = DAG(dag_id="c", schedule=S)\n', "c", "schedule computed at parse time", id="a-name"),
        pytest.param('x = DAG("d", schedule="@daily" if X else None)\n', "d", "schedule computed", id="expression"),
        pytest.param(
            'for i in range(3):\n    DAG(f"e{i}", schedule="0 6 * * *")\n', "e0", "dynamic DAG: its id", id="ids"
        ),
        pytest.param('for s in S:\n    DAG("f", schedule=s)\n', "f", "dynamic DAG: made in a loop", id="loop"),
        pytest.param(
            'def g():\n    return DAG("g", schedule="0 6 * * *")\n', "g", "dynamic DAG: made in a loop or", id="fn"
        ),
        pytest.param('DAG("h")\n', "h", "no schedule= keyword", id="no-schedule"),
    ],
)
def test_a_schedule_is_rewritten_only_where_the_file_states_it_as_a_literal(source, dag_id, found):
    assert _sites(source, dag_id)[dag_id].startswith(found)


def test_the_rewrite_keeps_everything_else_and_imports_once_after_the_imports():
    source = '"""Doc."""\nfrom airflow.sdk import DAG\n\nwith DAG("é", schedule="0 6 * * *", tags=["ü"]):\n    pass'
    tree = ast.parse(source)
    value = schedule_sites(tree, ["é"])["é"].value
    new = rewritten(source, [(value, "Cron('0 6 * * *', timezone='UTC')")], {"Cron"})
    assert new == (
        '"""Doc."""\nfrom airflow.sdk import DAG\nfrom tessera.timetables import Cron\n\n'
        "with DAG(\"é\", schedule=Cron('0 6 * * *', timezone='UTC'), tags=[\"ü\"]):\n    pass"
    )
    diff = unified_diff("x.py", source, new)
    assert diff.endswith("+    pass\n\\ No newline at end of file\n") or diff.endswith("\\ No newline at end of file\n")
