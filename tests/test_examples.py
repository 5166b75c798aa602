"""Every example DAG loads with zero import errors and survives Airflow's own serialization."""

from __future__ import annotations

from pathlib import Path

import pytest

from tessera.timetables import TesseraTimetable
from tests.compat.airflow_names import DagBag, DagSerialization

from .compat import check_example_errors, examples_refused
from .conftest import EXAMPLES


@pytest.fixture(scope="module")
def bag() -> DagBag:
    return DagBag(str(EXAMPLES))


def test_examples_load_without_import_errors(bag):
    errors = {Path(path).name: text for path, text in bag.import_errors.items()}
    check_example_errors(errors)  # none, or on an older Airflow the examples of features it lacks (tests/compat)
    refused = examples_refused()
    files_with_dags = {Path(dag.fileloc).name for dag in bag.dags.values()}
    example_files = {path.name for path in EXAMPLES.glob("*.py") if not path.name.startswith("_")}
    assert example_files - set(refused) <= files_with_dags, (
        f"example files defining no DAG: {example_files - files_with_dags}"
    )


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
