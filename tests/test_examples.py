"""Every example DAG loads with zero import errors and survives Airflow's own serialization."""

from __future__ import annotations

from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.serialization.serialized_objects import DagSerialization

from tessera.timetables import TesseraTimetable

from .conftest import EXAMPLES


@pytest.fixture(scope="module")
def bag() -> DagBag:
    return DagBag(str(EXAMPLES))


def test_examples_load_without_import_errors(bag):
    assert bag.import_errors == {}
    files_with_dags = {Path(dag.fileloc).name for dag in bag.dags.values()}
    example_files = {path.name for path in EXAMPLES.glob("*.py") if not path.name.startswith("_")}
    assert example_files <= files_with_dags, f"example files defining no DAG: {example_files - files_with_dags}"


def test_every_example_round_trips_and_knows_its_dag(bag):
    tessera_dags = 0
    for dag_id, dag in bag.dags.items():
        restored = DagSerialization.from_dict(DagSerialization.to_dict(dag))
        if isinstance(dag.timetable, TesseraTimetable):
            tessera_dags += 1
            assert restored.timetable.summary == dag.timetable.summary, dag_id
            assert restored.timetable == dag.timetable, dag_id
            assert restored.timetable.key is not None, f"{dag_id}: the dag policy did not bind the timetable"
    assert tessera_dags >= 1
