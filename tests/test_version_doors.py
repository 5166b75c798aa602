"""Nothing but the doors names what differs between the Airflow releases tessera supports (3.1, 3.2, 3.3).

A name that moved, arrived or changed between those releases (the running version itself,
``next_dagrun_info_v2``, the partition fields, the Task SDK's execution-time modules, the homes
of ``DagBag``, the serializers, the exceptions and the metrics) is used only in a layer's
``_airflow.py``; ``tessera.timetables.support`` passes the timetables door's bridges on to the
layers above, and ``tests/compat/airflow_names.py`` is the tests' door. Anything else using one
would break on a release the main suite does not run (3.3), and only the compatibility tier
would notice; this test notices first, naming the line and the door to use.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import REPO

MODULES = (
    "airflow.version",
    "airflow.sdk.execution_time",
    "airflow.sdk.exceptions",
    "airflow.sdk.configuration",
    "airflow.sdk.observability",
    "airflow.observability",
    "airflow.stats",
    "airflow.state",
    "airflow._shared.state",
    "airflow.dag_processing.dagbag",
    "airflow.serialization.decoders",
    "airflow.partition_mappers",
)
"""Airflow modules that exist on some supported releases only, or whose contents differ between them."""
NAMES = {
    "__version__": "the running Airflow: read once, in timetables/_airflow.py (AIRFLOW)",
    "DagSerialization": "plugin door's stored_dag (SerializedDAG on 3.1)",
    "SerializedDAG": "plugin door's stored_dag",
    "decode_timetable": "plugin door's decode_timetable",
    "DagBag": "plugin door's dag_bag_class",
    "InvalidPartitionKeyError": "timetables door (Airflow 3.3)",
    "RetryPolicy": "operators door (Airflow 3.3)",
    "RetryDecision": "operators door (Airflow 3.3)",
    "get_dialect_name": "operators door's dialect_name (Airflow 3.2)",
    "AirflowFailException": "operators door (airflow.sdk.exceptions from 3.2)",
    "AirflowSkipException": "operators door (airflow.sdk.exceptions from 3.2)",
    "AirflowTaskTimeout": "operators door (airflow.sdk.exceptions from 3.2)",
    "get_state_backend": "operators door's asset_state_backend (Airflow 3.3)",
    "_do_dry_run": "the tests' door's airflows_dry_run (3.1 answers logical dates, 3.2 on run infos)",
}
"""Names that moved or arrived between the supported releases, imported from any Airflow module."""
MEMBERS = {
    "next_dagrun_info_v2": "tessera.timetables.support.next_run_info (Airflow 3.2 added it)",
    "partition_key": "timetables door's run_info, or plugin door's run_column (Airflow 3.2 added it)",
    "partition_date": "tessera.timetables.support.partition_date_of (Airflow 3.2 added it)",
    "created_at": "operators door's run_created_at/run_created_columns, plugin door's run_column (3.2 added it)",
    "AWAITING_INPUT": "operators door's task_states (Airflow 3.3 added the state)",
    "allowed_run_types": "plugin door's allowed_run_types (Airflow 3.2 added it)",
    "timetable_type": "plugin door's tessera_timetable / has_tessera_timetable (Airflow 3.2 added the column)",
}
"""Members of Airflow's runs, run infos and timetables (read, called or passed) that only some releases have."""
OWNERS = {
    "next_dagrun_info_v2": None,  # any timetable's but tessera's own (self): Airflow's built-ins lack it on 3.1
    "partition_key": {"DagRun", "DagRunInfo", "info", "dag_run", "dr"},
    "partition_date": {"DagRun", "DagRunInfo", "info", "dag_run", "dr"},
    "created_at": {"DagRun", "dag_run", "dr"},  # DagVersion's and Backfill's are on every release
    "AWAITING_INPUT": {"TaskInstanceState", "State", "DagRunState"},
    "allowed_run_types": {"dag", "dag_model", "DagModel", "stored"},
    "timetable_type": None,  # DagModel's, under any name: 3.1's rows lack it (a local variable is no attribute)
}
"""The names (in tessera's code) whose member it is, per member; None: any name but ``self``."""

DOORS = {REPO / folder / "_airflow.py" for folder in ("timetables", "operators", "plugin")} | {
    REPO / "timetables" / "support" / "__init__.py",
    REPO / "tests" / "compat" / "airflow_names.py",
    Path(__file__),
    REPO / "tests" / "test_airflow_doors.py",
}
"""Where the names may appear: the doors, the module passing the timetables door's bridges on, the tests' door,
this test and the doors' contract tests."""


def _sources() -> list[Path]:
    """The product's modules and the tests' (whose imports only are checked: a test may step tessera's own
    timetables by ``next_dagrun_info_v2``, which they have on every release); not a test module gated on
    a feature's release as it starts (``module_needs``), which may use that release's names."""
    found = [
        path for folder in ("timetables", "operators", "plugin", "tests") for path in (REPO / folder).rglob("*.py")
    ]
    return sorted(
        path
        for path in found
        if path not in DOORS and "__pycache__" not in path.parts and "\nmodule_needs(" not in path.read_text()
    )


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _sensitive(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in MODULES)


def version_sensitive_uses(path: Path) -> list[tuple[int, str]]:
    """(line, what) of each version-sensitive Airflow name ``path`` uses (see the module docstring)."""
    tree = ast.parse(path.read_text(), str(path))
    product = not path.is_relative_to(REPO / "tests")
    airflow_bound = {"airflow"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"imports {a.name}") for a in node.names if _sensitive(a.name)]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "airflow":
            airflow_bound.update(alias.asname or alias.name for alias in node.names)
            if _sensitive(node.module or ""):
                found.append((node.lineno, f"imports from {node.module}"))
            found += [(node.lineno, f"imports {node.module}.{a.name}") for a in node.names if a.name in NAMES]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__version__" and _root(node) in airflow_bound:
            found.append((node.lineno, "reads airflow.__version__"))
        elif product and isinstance(node, ast.Attribute) and node.attr in MEMBERS:
            root, owners = _root(node.value), OWNERS[node.attr]
            gated = root in owners if owners is not None else root not in ("self", "cls")
            if gated and isinstance(node.ctx, ast.Load):
                found.append((node.lineno, f"reads {ast.unparse(node)}"))
        elif product and isinstance(node, ast.Call) and _root(node.func) == "DagRunInfo":
            # Its fields differ on each release (3.1: two; 3.2: four, all required; 3.3: defaults).
            found.append((node.lineno, "builds a DagRunInfo (use tessera.timetables.support.run_info)"))
    return found


def test_no_version_sensitive_airflow_name_is_used_outside_its_door():
    wrong = [
        f"{path.relative_to(REPO)}:{line} {what}, which differs between Airflow 3.1, 3.2 and 3.3; "
        f"go through its door ({_door_hint(what)})"
        for path in _sources()
        for line, what in version_sensitive_uses(path)
    ]
    assert wrong == [], "\n".join(wrong)


def _door_hint(what: str) -> str:
    for name, door in {**NAMES, **MEMBERS}.items():
        if what.endswith(name) or f".{name}" in what or f"{name}=" in what:
            return door
    return "the layer's _airflow.py, with a contract in tests/test_airflow_doors.py"


def test_the_check_sees_each_kind_of_use(tmp_path: Path):
    """The finder itself, on a planted module: each kind of use is found, a tessera attribute is not."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import airflow\nfrom airflow.sdk.execution_time.context import AssetStateStoreAccessor\n"
        "from airflow.exceptions import InvalidPartitionKeyError\nfrom airflow.timetables.base import DagRunInfo\n"
        "v = airflow.__version__\ninfo = DagRunInfo(run_after=1, data_interval=None, partition_key='k')\n"
        "nxt = timetable.next_dagrun_info_v2(last_dagrun_info=None, restriction=None)\n"
        "when = dag_run.created_at\nself.partition_key = 'ours'\n"
        "ours = select(DagModel.dag_id).where(DagModel.timetable_type.startswith('tessera.'))\n"
    )
    found = {what for _, what in version_sensitive_uses(planted)}
    assert found == {
        "imports from airflow.sdk.execution_time.context",
        "imports airflow.exceptions.InvalidPartitionKeyError",
        "reads airflow.__version__",
        "builds a DagRunInfo (use tessera.timetables.support.run_info)",
        "reads timetable.next_dagrun_info_v2",
        "reads dag_run.created_at",
        "reads DagModel.timetable_type",
    }
