"""Contract tests of the three doors to Airflow's private names (``<layer>/_airflow.py``).

Each name a door holds is checked against the installed Airflow: it still exists where the door
takes it from, and the parameters tessera passes (or, for an override, receives) are still there.
An Airflow upgrade that breaks one fails here with the name and the door file to port, not deep
inside a scheduler loop. ``tests/test_architecture.py`` checks nothing else uses those names.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass

import airflow
import pytest

import tessera.operators
import tessera.plugin
import tessera.timetables

DOORS = {layer: f"tessera.{layer}._airflow" for layer in ("timetables", "operators", "plugin")}


@dataclass(frozen=True)
class Contract:
    """A door name and the Airflow name behind it.

    :param door: the layer whose door holds it;
    :param name: its name in the door;
    :param module: the Airflow module it comes from;
    :param attribute: its (dotted) name there;
    :param passed: the parameters tessera passes it, in that order when positional;
    :param positional: whether tessera passes them by position (then their order is checked too);
    :param reexported: whether the door holds the Airflow object itself (not a wrapper or a name).
    """

    door: str
    name: str
    module: str
    attribute: str
    passed: tuple[str, ...] = ()
    positional: bool = False
    reexported: bool = False

    def __str__(self) -> str:
        return f"{self.door}.{self.name}"


_TIMEZONE = "airflow._shared.timezones.timezone"
CONTRACTS = [
    Contract("timetables", "utcnow", _TIMEZONE, "utcnow", reexported=True),
    Contract(
        "timetables",
        "DECODE_PARTITION_DATE",
        "airflow.timetables.base",
        "Timetable._decode_partition_date",
        ("self", "partition_key"),
        positional=True,
    ),
    Contract("operators", "utcnow", _TIMEZONE, "utcnow", reexported=True),
    Contract("operators", "task_utcnow", "airflow.sdk._shared.timezones.timezone", "utcnow", reexported=True),
    Contract("operators", "asset_scope", "airflow._shared.state", "AssetScope", ("asset_id",)),
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
    ),
]
STRUCTURAL = {("timetables", "OVERRIDDEN")}
"""Door names that are not Airflow names themselves (checked by the override tests below)."""


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
    target = _resolve(contract)
    door = importlib.import_module(DOORS[contract.door])
    assert hasattr(door, contract.name), f"{DOORS[contract.door]} lost {contract.name}"
    if contract.reexported:
        assert getattr(door, contract.name) is target, f"{contract} is not {contract.module}.{contract.attribute}"
    if not callable(target):
        return
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
