"""The tests' door to the Airflow names that moved between 3.1, 3.2 and 3.3 (as the product's ``_airflow.py``).

Tests import these from here, so the fast tier runs unchanged on each release the
compatibility tier installs; ``tests/test_architecture.py`` keeps the moved names out of the
other test files as it keeps them out of the product's.
"""

from __future__ import annotations

import datetime
import importlib
from types import ModuleType
from typing import Any

try:  # Airflow 3.2 and 3.3
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db
    from airflow.serialization.decoders import decode_timetable
    from airflow.serialization.serialized_objects import DagSerialization
except ImportError:  # Airflow 3.1
    from airflow.models.dagbag import DagBag, sync_bag_to_db  # type: ignore[no-redef,attr-defined]
    from airflow.serialization.serialized_objects import SerializedDAG as DagSerialization  # type: ignore[no-redef]
    from airflow.serialization.serialized_objects import decode_timetable  # type: ignore[no-redef]

from tessera.timetables._airflow import InvalidPartitionKeyError

try:  # Airflow 3.2 split metrics into the core's and the Task SDK's
    from airflow._shared.observability.metrics.base_stats_logger import NoStatsLogger
    from airflow.sdk._shared.observability.metrics.base_stats_logger import NoStatsLogger as TaskNoStatsLogger
except ImportError:  # Airflow 3.1: one metrics package for both
    from airflow.metrics.base_stats_logger import NoStatsLogger  # type: ignore[no-redef]

    TaskNoStatsLogger = NoStatsLogger  # type: ignore[misc,assignment]


def load_configuration() -> None:
    """Load the configuration Airflow's task code reads (the Task SDK's from 3.2 on; the core's on 3.1).

    Loading it in unit-test mode logs "Unit test configuration loaded" to stdout once per process:
    the tests load it at collection, so the line never lands in a test's captured output.
    """
    try:
        importlib.import_module("airflow.sdk.configuration")
    except ImportError:  # Airflow 3.1: the core's configuration, loaded with airflow itself
        importlib.import_module("airflow.configuration")


def _stats_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:  # Airflow 3.1: one airflow.stats for the core and task code
        return importlib.import_module("airflow.stats")


def core_stats() -> ModuleType:
    """The core processes' ``Stats`` module (``airflow.observability.stats``; ``airflow.stats`` on 3.1)."""
    return _stats_module("airflow.observability.stats")


def task_stats() -> ModuleType:
    """The Task SDK's ``Stats`` module (``airflow.sdk.observability.stats``; ``airflow.stats`` on 3.1)."""
    return _stats_module("airflow.sdk.observability.stats")


def settle_task_stats() -> None:
    """Import what initialises the Task SDK's ``Stats`` on import (``airflow.sdk.serde``, Airflow 3.2), so a
    backend set after it stays; Airflow 3.1 initialises it on first use only."""
    try:
        importlib.import_module("airflow.sdk.serde")
    except ImportError:  # Airflow 3.1
        pass


def initialize_stats(stats: ModuleType, factory: Any) -> None:
    """Route ``stats``' ``Stats`` to a backend ``factory`` builds, without the legacy per-DAG names.

    ``initialize`` arrived in Airflow 3.3; before it, ``Stats`` builds its backend from its class's
    ``factory`` on first use, so the factory is set and the built backend dropped.
    """
    initialize = getattr(stats, "initialize", None)
    if initialize is not None:
        initialize(factory=factory, export_legacy_names=False)
        return
    type.__setattr__(stats.Stats, "factory", factory)
    type.__setattr__(stats.Stats, "instance", None)


def airflows_dry_run(
    dag_id: str, from_date: datetime.datetime, to_date: datetime.datetime, reprocess_behavior: str
) -> list[Any]:
    """Airflow's backfill dry run (``airflow.models.backfill._do_dry_run``): the ``DagRunInfo`` of each run it
    would create, oldest first.

    From Airflow 3.2 it returns those; 3.1 returns only their logical dates, so there the infos are Airflow's
    own list of the range (``_get_info_list``, of the stored DAG the dry run reads) at the dates it kept.
    """
    from airflow.models.backfill import ReprocessBehavior, _do_dry_run
    from airflow.utils.session import create_session

    with create_session() as session:
        kept = list(
            _do_dry_run(
                dag_id=dag_id,
                from_date=from_date,
                to_date=to_date,
                reverse=False,
                reprocess_behavior=ReprocessBehavior(reprocess_behavior),
                session=session,
            )
        )
        if not kept or hasattr(kept[0], "run_after"):  # Airflow 3.2 and 3.3: the infos themselves
            return kept
        from airflow.models.backfill import _get_info_list
        from airflow.models.serialized_dag import SerializedDagModel

        dag = session.scalar(SerializedDagModel.latest_item_select_object(dag_id)).dag
        dates = set(kept)
        listed = _get_info_list(from_date=from_date, to_date=to_date, reverse=False, dag=dag)
        return [info for info in listed if info.logical_date in dates]


def partition_fields(info: Any) -> dict[str, Any]:
    """A ``DagRunInfo``'s partition fields as ``DagRun`` takes them (Airflow 3.2 added both); none on 3.1,
    whose runs have no partitions."""
    if not hasattr(info, "partition_key"):  # Airflow 3.1
        return {}
    return {"partition_key": info.partition_key, "partition_date": info.partition_date}


def config_list_values() -> tuple[str, ...]:
    """What makes ``airflow config list`` print the options' values: ``--show-values`` from Airflow 3.2, which
    hides them without it; 3.1 prints them unasked and has no such flag."""
    from airflow.cli import cli_config

    return ("--show-values",) if hasattr(cli_config, "ARG_CONFIG_SHOW_VALUES") else ()


def provider_default_source(distribution: str) -> str:
    """How ``airflow config list --include-sources`` names the source of a default a provider declares: from
    Airflow 3.2 (whose configuration parser moved to ``airflow._shared``), the provider metadata's fallback;
    on 3.1, ``default-`` and the provider's distribution."""
    try:
        importlib.import_module("airflow._shared.configuration.parser")
    except ImportError:  # Airflow 3.1
        return f"default-{distribution}"
    return "provider-metadata-fallback-defaults"


__all__ = [
    "DagBag",
    "DagSerialization",
    "InvalidPartitionKeyError",
    "NoStatsLogger",
    "TaskNoStatsLogger",
    "airflows_dry_run",
    "config_list_values",
    "core_stats",
    "decode_timetable",
    "initialize_stats",
    "partition_fields",
    "provider_default_source",
    "settle_task_stats",
    "sync_bag_to_db",
    "task_stats",
]
