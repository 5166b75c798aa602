"""Contract tests of the three doors to Airflow's private names (``<layer>/_airflow.py``).

Each name a door holds is checked against the installed Airflow: it still exists where the door
takes it from, and the parameters tessera passes (or, for an override, receives) are still there.
An Airflow upgrade that breaks one fails here with the name and the door file to port, not deep
inside a scheduler loop. ``tests/test_architecture.py`` checks nothing else uses those names.

Tessera runs on Airflow 3.1, 3.2 and 3.3 and the compatibility tier (``scripts/compat.sh``) runs
this file on each: a contract names the releases (``airflow``) where the door takes the name from
that home; on the others the door takes it from another home (another contract) or stands in for
it (:data:`STAND_INS`, where the feature built on it is refused at parse time).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass

import airflow
import pytest
from packaging.version import Version

import tessera.operators
import tessera.plugin
import tessera.timetables

DOORS = {layer: f"tessera.{layer}._airflow" for layer in ("timetables", "operators", "plugin")}
RELEASES = ("3.1", "3.2", "3.3")
"""The Airflow releases tessera supports (pyproject.toml: apache-airflow>=3.1,<3.4)."""
RUNNING = "{}.{}".format(*Version(airflow.__version__).release[:2])


@dataclass(frozen=True)
class Contract:
    """A door name and the Airflow name behind it.

    :param door: the layer whose door holds it;
    :param name: its name in the door;
    :param module: the Airflow module it comes from;
    :param attribute: its (dotted) name there;
    :param passed: the parameters tessera passes it, in that order when positional;
    :param positional: whether tessera passes them by position (then their order is checked too);
    :param reexported: whether the door holds the Airflow object itself (not a wrapper or a name);
    :param airflow: the releases on which the door takes the name from this home.
    """

    door: str
    name: str
    module: str
    attribute: str
    passed: tuple[str, ...] = ()
    positional: bool = False
    reexported: bool = False
    airflow: tuple[str, ...] = RELEASES

    def __str__(self) -> str:
        where = "" if self.airflow == RELEASES else f"@{'+'.join(self.airflow)}"
        return f"{self.door}.{self.name}{where}"


_TIMEZONE = "airflow._shared.timezones.timezone"
_FROM_32 = ("3.2", "3.3")
_SERIALIZED = "airflow.serialization.serialized_objects"
CONTRACTS = [
    Contract("timetables", "utcnow", _TIMEZONE, "utcnow", reexported=True),
    Contract(
        "timetables",
        "DECODE_PARTITION_DATE",
        "airflow.timetables.base",
        "Timetable._decode_partition_date",
        ("self", "partition_key"),
        positional=True,
        airflow=("3.3",),
    ),
    Contract(
        "timetables",
        "InvalidPartitionKeyError",
        "airflow.exceptions",
        "InvalidPartitionKeyError",
        reexported=True,
        airflow=("3.3",),
    ),
    Contract(
        "timetables",
        "run_info",
        "airflow.timetables.base",
        "DagRunInfo",
        ("run_after", "data_interval"),
        airflow=("3.1",),
    ),
    Contract(
        "timetables",
        "run_info",
        "airflow.timetables.base",
        "DagRunInfo",
        ("run_after", "data_interval", "partition_date", "partition_key"),
        airflow=_FROM_32,
    ),
    Contract(
        "timetables",
        "next_run_info",
        "airflow.timetables.base",
        "Timetable.next_dagrun_info_v2",
        ("self", "last_dagrun_info", "restriction"),
        airflow=_FROM_32,
    ),
    Contract(
        "timetables",
        "next_run_info",
        "airflow.timetables.base",
        "Timetable.next_dagrun_info",
        ("self", "last_automated_data_interval", "restriction"),
    ),
    Contract(
        "timetables", "partition_date_of", "airflow.timetables.base", "DagRunInfo.partition_date", airflow=_FROM_32
    ),
    Contract(
        "timetables",
        "stored_run_info",
        "airflow.timetables.base",
        "Timetable.next_run_info_from_dag_model",
        ("self", "dag_model"),
        airflow=_FROM_32,
    ),
    Contract(
        "timetables",
        "stored_run_info",
        "airflow.models.dag",
        "get_next_data_interval",
        ("timetable", "dag_model"),
        True,
        airflow=("3.1",),
    ),
    Contract("operators", "utcnow", _TIMEZONE, "utcnow", reexported=True),
    Contract("operators", "task_utcnow", "airflow.sdk._shared.timezones.timezone", "utcnow", reexported=True),
    Contract("operators", "asset_scope", "airflow._shared.state", "AssetScope", ("asset_id",), airflow=("3.3",)),
    Contract("operators", "runtime_task_instance", "airflow.sdk.execution_time.task_runner", "RuntimeTaskInstance"),
    Contract("operators", "asset_state_backend", "airflow.state", "get_state_backend", airflow=("3.3",)),
    Contract(
        "operators",
        "asset_state_accessor",
        "airflow.sdk.execution_time.context",
        "AssetStateStoreAccessor",
        ("uri",),
        airflow=("3.3",),
    ),
    *(
        Contract("operators", name, module, name, reexported=True, airflow=releases)
        for name in ("AirflowFailException", "AirflowSkipException", "AirflowTaskTimeout")
        for module, releases in (("airflow.sdk.exceptions", _FROM_32), ("airflow.exceptions", ("3.1",)))
    ),
    Contract("operators", "RetryPolicy", "airflow.sdk", "RetryPolicy", reexported=True, airflow=("3.3",)),
    Contract("operators", "RetryDecision", "airflow.sdk", "RetryDecision", reexported=True, airflow=("3.3",)),
    Contract("operators", "task_states", "airflow.utils.state", "TaskInstanceState.AWAITING_INPUT", airflow=("3.3",)),
    Contract("operators", "task_states", "airflow.utils.state", "TaskInstanceState.DEFERRED"),
    Contract(
        "operators",
        "dialect_name",
        "airflow.utils.sqlalchemy",
        "get_dialect_name",
        ("session",),
        True,
        airflow=_FROM_32,
    ),
    Contract("operators", "stats_and_conf", "airflow.observability.stats", "Stats", airflow=_FROM_32),
    Contract("operators", "stats_and_conf", "airflow.sdk.observability.stats", "Stats", airflow=_FROM_32),
    Contract("operators", "stats_and_conf", "airflow.sdk.configuration", "conf", airflow=_FROM_32),
    Contract("operators", "stats_and_conf", "airflow.stats", "Stats", airflow=("3.1",)),
    Contract("operators", "stats_and_conf", "airflow.configuration", "conf"),
    Contract("operators", "run_created_columns", "airflow.models.dagrun", "DagRun.created_at", airflow=_FROM_32),
    Contract("operators", "run_created_columns", "airflow.models.dagrun", "DagRun.queued_at"),
    Contract("operators", "run_created_at", "airflow.models.dagrun", "DagRun.created_at", airflow=_FROM_32),
    Contract("plugin", "run_column", "airflow.models.dagrun", "DagRun.partition_date", airflow=_FROM_32),
    Contract("plugin", "run_created", "airflow.models.dagrun", "DagRun.created_at", airflow=_FROM_32),
    Contract("plugin", "allowed_run_types", "airflow.models.dag", "DagModel.allowed_run_types", airflow=_FROM_32),
    Contract("plugin", "tessera_timetable", "airflow.models.dag", "DagModel.timetable_type", airflow=_FROM_32),
    Contract("plugin", "tessera_timetable", "airflow.models.dag", "DagTag.name"),
    Contract("plugin", "has_tessera_timetable", "airflow.models.dag", "DagModel.timetable_type", airflow=_FROM_32),
    Contract("plugin", "has_tessera_timetable", "airflow.models.dag", "DagModel.tags"),
    Contract("plugin", "timetable_needs_tag", "airflow.models.dag", "DagModel"),
    Contract("plugin", "dag_bag_class", "airflow.dag_processing.dagbag", "DagBag", airflow=_FROM_32),
    Contract("plugin", "dag_bag_class", "airflow.models.dagbag", "DagBag", airflow=("3.1",)),
    Contract("plugin", "decode_timetable", "airflow.serialization.decoders", "decode_timetable", airflow=_FROM_32),
    Contract("plugin", "decode_timetable", _SERIALIZED, "decode_timetable", airflow=("3.1",)),
    Contract("plugin", "stored_dag", _SERIALIZED, "DagSerialization.to_dict", airflow=_FROM_32),
    Contract("plugin", "stored_dag", _SERIALIZED, "SerializedDAG.to_dict", airflow=("3.1",)),
    Contract("plugin", "utcnow", _TIMEZONE, "utcnow", reexported=True),
    Contract("plugin", "coerce_datetime", _TIMEZONE, "coerce_datetime", ("v",), positional=True, reexported=True),
    Contract("plugin", "from_timestamp", _TIMEZONE, "from_timestamp", ("timestamp",), positional=True, reexported=True),
    Contract(
        "plugin",
        "validate_backfill_params",
        "airflow.models.backfill",
        "_validate_backfill_params",
        ("dag", "reverse", "from_date", "to_date", "reprocess_behavior", "dag_run_conf"),
        positional=True,
        airflow=_FROM_32,
    ),
    Contract(
        "plugin",
        "validate_backfill_params",
        "airflow.models.backfill",
        "_validate_backfill_params",
        ("dag", "reverse", "from_date", "to_date", "reprocess_behavior"),
        positional=True,
        airflow=("3.1",),
    ),
    Contract(
        "plugin",
        "dag_run_no_create_reason",
        "airflow.models.backfill",
        "_get_dag_run_no_create_reason",
        ("dr", "reprocess_behavior"),
        positional=True,
    ),
    Contract(
        "plugin",
        "commit_guards",
        "airflow.utils.sqlalchemy",
        "CommitProhibitorGuard._validate_commit",
        ("self", "_"),  # SQLAlchemy's before_commit passes the session, positionally
        positional=True,
    ),
    Contract(
        "plugin",
        "latest_by_version_select",
        "airflow.models.serialized_dag",
        "SerializedDagModel._latest_by_version_select",
        ("dag_ids",),
        positional=True,
        airflow=("3.3",),
    ),
    Contract("plugin", "latest_by_version_select", "airflow.models.dag_version", "DagVersion.version_number"),
]
STRUCTURAL = {
    ("timetables", "OVERRIDDEN"),
    ("timetables", "AIRFLOW"),
    ("timetables", "AIRFLOW_VERSION"),
    ("plugin", "TIMETABLE_PREFIX"),
    ("plugin", "TIMETABLE_TAG"),
}
"""Door names that are not Airflow names themselves (checked by the override and release tests below)."""
STAND_INS = {
    ("timetables", "DECODE_PARTITION_DATE"): ("3.1", "3.2"),
    ("timetables", "InvalidPartitionKeyError"): ("3.1", "3.2"),
    ("timetables", "partition_date_of"): ("3.1",),
    ("operators", "asset_scope"): ("3.1", "3.2"),
    ("operators", "asset_state_backend"): ("3.1", "3.2"),
    ("operators", "asset_state_accessor"): ("3.1", "3.2"),
    ("operators", "RetryPolicy"): ("3.1", "3.2"),
    ("operators", "RetryDecision"): ("3.1", "3.2"),
    ("operators", "dialect_name"): ("3.1",),
    ("operators", "task_states"): ("3.1", "3.2"),
    ("operators", "run_created_at"): ("3.1",),
    ("plugin", "run_column"): ("3.1",),
    ("plugin", "allowed_run_types"): ("3.1",),
    ("plugin", "run_created"): ("3.1",),
}
"""Door names with no Airflow home on some releases: the door stands in there (a fallback, or a name whose
feature ``tessera.timetables.support`` refuses at parse time)."""


def _changed(contract: Contract, what: str) -> str:
    return (
        f"Airflow {airflow.__version__} changed {contract.module}.{contract.attribute}: {what}; "
        f"update {contract.door}/_airflow.py ({contract.name}) and its callers"
    )


def _resolve(contract: Contract) -> object:
    try:
        found: object = importlib.import_module(contract.module)
    except ImportError as error:
        pytest.fail(_changed(contract, f"its module is gone ({error})"))
    for part in contract.attribute.split("."):
        if not hasattr(found, part):
            pytest.fail(_changed(contract, f"{part!r} is gone"))
        found = getattr(found, part)
    return found


@pytest.mark.parametrize("contract", CONTRACTS, ids=str)
def test_the_airflow_name_behind_each_door_name_still_takes_what_we_pass(contract: Contract):
    if RUNNING not in contract.airflow:
        pytest.skip(f"on Airflow {RUNNING} the door takes {contract.name} from another home")
    target = _resolve(contract)
    door = importlib.import_module(DOORS[contract.door])
    assert hasattr(door, contract.name), f"{DOORS[contract.door]} lost {contract.name}"
    if contract.reexported:
        assert getattr(door, contract.name) is target, f"{contract} is not {contract.module}.{contract.attribute}"
    if not callable(target) or not contract.passed:
        return  # a value, a class held as is (an exception), or a call that passes nothing
    parameters = inspect.signature(target).parameters
    missing = [name for name in contract.passed if name not in parameters]
    assert not missing, _changed(contract, f"no parameter {', '.join(missing)} any more (it takes {list(parameters)})")
    if contract.positional:
        order = list(parameters)[: len(contract.passed)]
        assert order == list(contract.passed), _changed(
            contract, f"its parameters are now {order}, not {contract.passed}"
        )
    required = [
        name
        for name, parameter in parameters.items()
        if parameter.default is inspect.Parameter.empty
        and parameter.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and name not in contract.passed
    ]
    assert not required, _changed(contract, f"it now requires {required}, which tessera does not pass")


def test_every_door_name_has_a_contract():
    """A name added to a door without a contract here would escape the upgrade check."""
    held = {(layer, name) for layer, door in DOORS.items() for name in importlib.import_module(door).__all__}
    checked = {(contract.door, contract.name) for contract in CONTRACTS} | STRUCTURAL
    assert held == checked


def test_every_door_name_has_a_home_or_a_stand_in_on_every_supported_release():
    """Porting to a release means naming, for each door name, where that release keeps it (or that it has none)."""
    missing = [
        f"{door}.{name} on Airflow {release}"
        for door, name in {(contract.door, contract.name) for contract in CONTRACTS}
        for release in RELEASES
        if not any(c.door == door and c.name == name and release in c.airflow for c in CONTRACTS)
        and release not in STAND_INS.get((door, name), ())
    ]
    assert missing == [], "add a Contract (its home there) or a STAND_INS entry for each"


def test_the_running_release_is_supported_and_read_once():
    from tessera.timetables._airflow import AIRFLOW, AIRFLOW_VERSION

    assert AIRFLOW_VERSION == airflow.__version__
    assert "{}.{}".format(*AIRFLOW) == RUNNING in RELEASES, f"Airflow {airflow.__version__} is not one of {RELEASES}"


def test_the_stand_ins_are_what_the_door_holds_where_airflow_has_no_home():
    """Where Airflow lacks a name, the door's stand-in works as far as tessera needs it (or refuses)."""
    if RUNNING not in STAND_INS[("operators", "RetryPolicy")]:
        pytest.skip(f"Airflow {RUNNING} has every name the door stands in for on older releases")
    from tessera.operators import _airflow as operators_door
    from tessera.timetables import _airflow as timetables_door

    assert issubclass(timetables_door.InvalidPartitionKeyError, ValueError)
    assert timetables_door.OVERRIDDEN == ()
    assert operators_door.RetryDecision is None and not hasattr(operators_door.RetryPolicy, "evaluate")


def test_dialect_name_and_run_created_read_the_metadata_database_on_every_release(airflow_db):
    """The door's bridges for names 3.1 lacks (get_dialect_name, DagRun.created_at), run against a real DB."""
    from airflow import settings
    from sqlalchemy import func, select

    from tessera.operators._airflow import dialect_name, run_created_columns
    from tessera.plugin._airflow import run_created

    session = settings.NonScopedSession()
    try:
        assert dialect_name(session) == "sqlite"
        # Both read as SQL on this release (a name it lacks would fail here), whatever runs other tests left.
        session.execute(select(func.coalesce(*run_created_columns())).limit(1)).all()
        session.execute(select(run_created()).limit(1)).all()
    finally:
        session.close()


TWO_TIMETABLES = """
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.timetables import Every

with DAG("door_tessera_timetable", schedule=Every("1h"), start_date=None, tags=["team"]):
    EmptyOperator(task_id="work")
with DAG("door_cron_timetable", schedule="0 * * * *", start_date=None, tags=["team"]):
    EmptyOperator(task_id="work")
"""


def test_the_tessera_timetable_rule_picks_tesseras_dags_as_stored_on_every_release(airflow_db, tmp_path):
    """``tessera_timetable`` (SQL) and ``has_tessera_timetable`` (a row) pick the DAG with a tessera timetable,
    not the cron one, on rows stored as the dag-processor stores them: by ``timetable_type`` from 3.2, by the
    tag the dag policy gives on 3.1, where the rows have no such column (from 3.2 it adds no tag)."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tessera.plugin._airflow import TIMETABLE_TAG, has_tessera_timetable, tessera_timetable, timetable_needs_tag
    from tests.compat.airflow_names import DagBag, sync_bag_to_db

    path = tmp_path / "door_timetables.py"
    path.write_text(TWO_TIMETABLES)
    DagBundlesManager().sync_bundles_to_db()
    bag = DagBag(str(path))
    assert bag.import_errors == {}
    policy_tag = {TIMETABLE_TAG} if timetable_needs_tag() else set()  # the dag policy's, on 3.1 only
    assert bag.dags["door_tessera_timetable"].tags == {"team", *policy_tag}
    assert bag.dags["door_cron_timetable"].tags == {"team"}
    sync_bag_to_db(bag, "dags-folder", None)
    ids = ["door_tessera_timetable", "door_cron_timetable"]
    with create_session() as session:
        picked = session.scalars(select(DagModel.dag_id).where(DagModel.dag_id.in_(ids), tessera_timetable()))
        assert list(picked) == ["door_tessera_timetable"]
        rows = {dag_id: session.get(DagModel, dag_id) for dag_id in ids}
        assert {dag_id: has_tessera_timetable(row) for dag_id, row in rows.items()} == {
            "door_tessera_timetable": True,
            "door_cron_timetable": False,
        }


def test_the_overridden_airflow_methods_still_exist_with_the_same_parameters():
    from tessera.timetables._airflow import OVERRIDDEN

    for base, name in OVERRIDDEN:
        theirs = getattr(base, name, None)
        assert callable(theirs), (
            f"Airflow {airflow.__version__} removed {base.__qualname__}.{name}, which tessera overrides; "
            "update timetables/_airflow.py and the overriding method"
        )


def _tessera_classes() -> list[type]:
    classes: dict[str, type] = {}
    for package in (tessera.timetables, tessera.operators, tessera.plugin):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if inspect.isclass(value) and value.__module__ == info.name:
                    classes[f"{value.__module__}.{value.__qualname__}"] = value
    return list(classes.values())


def test_every_override_of_a_private_airflow_method_is_named_in_its_layers_door():
    """A private Airflow method tessera redefines (Airflow calls ours instead) is listed in ``OVERRIDDEN``."""
    named = {}
    for layer, door in DOORS.items():
        for base, name in getattr(importlib.import_module(door), "OVERRIDDEN", ()):
            named.setdefault(layer, set()).add((base, name))
    unnamed = []
    for cls in _tessera_classes():
        layer = cls.__module__.split(".")[1]
        theirs = [base for base in cls.__mro__ if base.__module__.split(".")[0] == "airflow"]
        for ours in (base for base in cls.__mro__ if base.__module__.split(".")[0] == "tessera"):
            for name, value in vars(ours).items():
                if not (name.startswith("_") and not name.startswith("__")) or not inspect.isfunction(value):
                    continue
                for base in theirs:
                    if name in vars(base) and (base, name) not in named.get(layer, set()):
                        unnamed.append(f"{ours.__module__}.{ours.__qualname__}.{name} overrides {base.__qualname__}")
    assert not unnamed, f"name each in OVERRIDDEN of its layer's _airflow.py: {sorted(set(unnamed))}"


def test_the_overrides_take_what_airflow_passes():
    from tessera.timetables._airflow import OVERRIDDEN

    checked = 0
    for base, name in OVERRIDDEN:
        theirs = list(inspect.signature(getattr(base, name)).parameters)
        for cls in _tessera_classes():
            ours = getattr(cls, name, None)
            if base in cls.__mro__ and getattr(ours, "__module__", "").startswith("tessera."):
                checked += 1
                assert list(inspect.signature(ours).parameters) == theirs, (
                    f"Airflow {airflow.__version__} changed {base.__qualname__}.{name}: it now takes {theirs}, "
                    f"{ours.__qualname__} {list(inspect.signature(ours).parameters)}; "
                    "update timetables/_airflow.py and the override"
                )
    if not OVERRIDDEN:
        pytest.skip(f"Airflow {RUNNING} has no private method tessera overrides")
    assert checked, "no tessera class overrides what OVERRIDDEN names; drop it from timetables/_airflow.py"


def test_the_commit_guard_is_found_on_its_session_and_lets_one_announced_savepoint_release_through(airflow_db):
    """What ``plugin/_airflow.py``'s ``commit_guards`` relies on: the guard's bound listener on the session,
    a savepoint's release seen by it as a commit, and ``expected_commit`` letting exactly one through."""
    from airflow import settings
    from airflow.utils.sqlalchemy import prohibit_commit

    from tessera.plugin._airflow import commit_guards

    session = settings.NonScopedSession()
    try:
        assert commit_guards(session) == []
        with prohibit_commit(session) as guard:
            assert commit_guards(session) == [guard]
            with pytest.raises(RuntimeError, match="UNEXPECTED COMMIT"):
                with session.begin_nested():
                    pass  # released unannounced: refused, as in the scheduler
            guard.expected_commit = True
            with session.begin_nested():
                pass
            assert guard.expected_commit is False, "the guard let one release through and forgot it"
        assert commit_guards(session) == []
    finally:
        session.rollback()
        session.close()
