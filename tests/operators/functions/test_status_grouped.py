"""The status of many cursor functions is read at once, in a number of queries that does not grow with them.

``function_statuses`` is what the Schedules page and ``/api/v1/status`` call for every function
they list; ``function_status`` is the same reading for one. Real fires (``dag.test()``) on the
worker's SQLite metadata database.
"""

from __future__ import annotations

from typing import Any

import pytest

from tessera.operators.functions.status import function_status, function_statuses

from ..conftest import CursorDags

PREFIX = "cursor_t_grouped_"


def statements_of(call: Any) -> tuple[int, Any]:
    """How many SQL statements ``call()`` ran on Airflow's engine, and what it returned."""
    from airflow.settings import engine
    from sqlalchemy import event

    statements: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        result = call()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len(statements), result


@pytest.fixture(scope="module")
def functions(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Four functions: fired twice (a failure, then a success), fired once and failed, never fired, and
    one behind HTTP whose connection no one defined."""
    cursor_dags = CursorDags(tmp_path_factory.mktemp("grouped-status"))
    dags = {name: cursor_dags.add(f"{PREFIX}{name}") for name in ("twice", "failed", "never")}
    cursor_dags.add(
        f"{PREFIX}http",
        prelude="from tessera.operators.functions.http import HttpFunction",
        function='HttpFunction("cursor_t_grouped_nowhere", "/f")',
    )
    cursor_dags.behave(f"{PREFIX}twice", mode="raise")
    cursor_dags.fire(dags["twice"])
    cursor_dags.behave(f"{PREFIX}twice", mode="ok")
    cursor_dags.fire(dags["twice"])
    cursor_dags.behave(f"{PREFIX}failed", mode="raise")
    cursor_dags.fire(dags["failed"])
    return [f"{PREFIX}{name}" for name in ("twice", "failed", "never", "http")]


def read(functions: list[tuple[str, str]], **options: Any) -> dict[tuple[str, str], Any]:
    from airflow.utils.session import create_session

    with create_session() as session:
        return function_statuses(functions, session=session, **options)


def test_many_statuses_cost_the_queries_of_one_and_say_what_each_alone_says(functions):
    one, _ = statements_of(lambda: read([(functions[0], "fn")]))
    many, statuses = statements_of(lambda: read([(d, "fn") for d in functions]))
    assert many <= one + 1, (one, many)  # + the import errors of none, the connections of one
    for dag_id in functions:
        alone = function_status(dag_id, "fn")
        assert statuses[dag_id, "fn"] == alone, dag_id
    twice, failed, never, http = (statuses[d, "fn"] for d in functions)
    assert (twice.last_outcome, twice.consecutive_failures, twice.history_examined) == ("Succeeded", 0, 2)
    assert (failed.last_outcome, failed.consecutive_failures) == ("Failed", 1)
    assert (never.last_outcome, never.history_examined) == (None, 0)
    assert http.condition("SpecValid").reason == "ConnectionMissing"
    assert "cursor_t_grouped_nowhere" in http.condition("SpecValid").message


def test_the_history_bound_holds_for_each_function_not_for_all_of_them(functions):
    statuses = read([(d, "fn") for d in functions], history=1)
    assert statuses[functions[0], "fn"].history_examined == 1  # the newest of its two runs: the success
    assert statuses[functions[0], "fn"].last_outcome == "Succeeded"
    assert statuses[functions[1], "fn"].history_examined == 1


def test_a_function_that_cannot_be_read_gets_its_error_and_the_others_their_status(functions):
    asked = [(functions[0], "fn"), (f"{PREFIX}no_such_dag", "fn"), (functions[1], "no_such_task")]
    statuses = read(asked)
    assert statuses[functions[0], "fn"].last_outcome == "Succeeded"
    assert isinstance(statuses[asked[1]], LookupError) and "no such DAG" in str(statuses[asked[1]])
    assert isinstance(statuses[asked[2]], LookupError) and "no such cursor function" in str(statuses[asked[2]])
