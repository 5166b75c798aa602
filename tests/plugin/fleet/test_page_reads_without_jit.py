"""The page's reads of the runs are planned without PostgreSQL's JIT compiler, for their transaction only.

At 3,000 DAGs the picks of a page's 1,000 listed DAGs cost 106,000 by PostgreSQL's estimate, past
its ``jit_above_cost``, and compiling them took 86 to 178 ms of a 159 to 292 ms statement (69 to
81 ms without it; ``bench/RESULTS.md``). On a real PostgreSQL server (``scripts/postgres.sh``)
with Airflow's tables: the grouped reads turn JIT off with one ``SET LOCAL`` per transaction, the
next transaction plans with it again, and the answers are those of the same reads with JIT on.
"""

from __future__ import annotations

import datetime
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(
    not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")), reason="no PostgreSQL server binaries"
)
IDS = [f"jit_{n}" for n in range(3)]


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    from airflow.models import import_all_models
    from airflow.models.base import Base
    from sqlalchemy import create_engine

    import_all_models()  # every table Base's metadata names, so that their foreign keys resolve

    script = str(REPO / "scripts" / "postgres.sh")
    done = subprocess.run(["bash", script, "start"], capture_output=True, text=True, check=True)
    found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    engine = create_engine(found["TESSERA_PG_URL"])
    try:
        Base.metadata.create_all(engine)  # Airflow's tables, as its migrations leave them
        yield engine
    finally:
        engine.dispose()
        subprocess.run(["bash", script, "stop", found["TESSERA_PG_DATA"]], check=False)


def _plant(engine: Any) -> None:
    from airflow.models.dag import DagModel
    from airflow.models.dagbundle import DagBundleModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunType
    from sqlalchemy.orm import Session

    start = datetime.datetime(2026, 3, 2, tzinfo=datetime.timezone.utc)
    with Session(engine) as session:
        session.add(DagBundleModel(name="dags-folder"))
        session.flush()
        for dag_id in IDS:
            session.add(DagModel(dag_id=dag_id, bundle_name="dags-folder"))
        session.flush()
        for n, dag_id in enumerate(IDS):
            for k in range(n + 2):
                at = start + datetime.timedelta(hours=k)
                run = DagRun(dag_id, f"scheduled__{k}", logical_date=at, run_after=at, run_type=DagRunType.SCHEDULED,
                             state=DagRunState.FAILED if k == n + 1 and n != 1 else DagRunState.SUCCESS,
                             data_interval=(at, at + datetime.timedelta(hours=1)), start_date=at)  # fmt: skip
                run.end_date = at + datetime.timedelta(minutes=5)
                session.add(run)
        session.commit()


def test_the_run_reads_turn_jit_off_once_per_transaction_and_answer_as_with_it(engine: Any) -> None:
    from sqlalchemy import event, text
    from sqlalchemy.orm import Session

    from tessera.plugin.scoped_reads import Scope, outcomes_and_queued, run_picks

    _plant(engine)
    scope = Scope.of(IDS)
    with Session(engine) as session:  # the same reads with JIT on: what the answers must be
        with_jit = (run_picks(session, scope, IDS), outcomes_and_queued(session, scope, IDS, picked=IDS[:2]))
    sent: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda conn, cursor, statement, *rest: sent.append(statement))
    with Session(engine) as session:
        assert session.execute(text("SHOW jit")).scalar() == "on"  # the server's default, which stays
        answers = (run_picks(session, scope, IDS), outcomes_and_queued(session, scope, IDS, picked=IDS[:2]))
        assert session.execute(text("SHOW jit")).scalar() == "off"
        assert sum(statement == "SET LOCAL jit = off" for statement in sent) == 1, sent
        session.commit()
        assert session.execute(text("SHOW jit")).scalar() == "on"  # SET LOCAL ended with its transaction
        run_picks(session, scope, IDS)
        assert sum(statement == "SET LOCAL jit = off" for statement in sent) == 2, sent
    assert [list(map(tuple, found)) for found in answers] == [list(map(tuple, found)) for found in with_jit]
    picks = {row.dag_id: row for row in answers[0]}
    assert {dag_id: picks[dag_id].failed for dag_id in IDS} == {"jit_0": 1, "jit_1": 0, "jit_2": 1}
    listed = {row.dag_id: row for row in answers[1]}
    assert listed["jit_0"].fire_id == picks["jit_0"].fire_id and listed["jit_2"].fire_id is None
