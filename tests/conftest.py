"""Test settings shared by every tier: an isolated AIRFLOW_HOME on SQLite, set before Airflow is imported."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "dags_examples"

_home = Path(os.environ.get("TESSERA_TEST_AIRFLOW_HOME") or tempfile.mkdtemp(prefix="tessera-airflow-home-"))
os.environ["AIRFLOW_HOME"] = str(_home)
os.environ.setdefault("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", f"sqlite:///{_home / 'airflow.db'}")
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(EXAMPLES)
os.environ["AIRFLOW__CORE__UNIT_TEST_MODE"] = "True"
os.environ.setdefault("AIRFLOW__SCHEDULER__STANDALONE_DAG_PROCESSOR", "True")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# CI must not fail one run in three on a new random example: there every property test runs the
# same derandomized examples, with no example database. Locally they explore at random.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def airflow_db():
    """A migrated metadata database (SQLite under the test AIRFLOW_HOME), created once per session."""
    from airflow.utils import db

    db.initdb()
    return os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
