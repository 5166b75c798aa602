"""The task's return-value XCom never holds the new cursor: every viewer reads XComs, the cursor's store may need more.

SECURITY.md: a cursor is as private as the Variable (or store) that holds it. The
output a fire pushes for downstream tasks is the function's output with the value at
``cursor_from`` taken out.
"""

from __future__ import annotations

from typing import Any

import pytest

from tessera.operators.functions.fire import output_without_cursor
from tessera.operators.functions.json_pointer import JsonPointer

from ..conftest import stored_cursor


def _return_value(dag_id: str, run_id: str) -> Any:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        row = session.scalar(
            select(XComModel).where(
                XComModel.dag_id == dag_id, XComModel.run_id == run_id, XComModel.key == "return_value"
            )
        )
        return None if row is None else XComModel.deserialize_value(row)


def test_a_clean_fire_pushes_its_output_without_the_cursor(cursor_dags) -> None:
    dag_id = "cursor_t_return_value"
    dag = cursor_dags.add(dag_id)
    ti = cursor_dags.fire(dag)
    assert ti.state == "success"
    assert stored_cursor(f"{dag_id}-state") == {"n": 1}  # saved where the op role reads it ...
    assert _return_value(dag_id, ti.run_id) == {"count": 1}  # ... and not where every viewer does


@pytest.mark.parametrize(
    "pointer, output, shared",
    [
        pytest.param("/cursor", {"count": 3, "cursor": {"since": "s3cr3t"}}, {"count": 3}, id="member"),
        pytest.param("/state/next", {"state": {"next": "t0k", "n": 1}, "x": 2}, {"state": {"n": 1}, "x": 2}, id="deep"),
        pytest.param("/pages/1", {"pages": ["a", "t0k", "c"]}, {"pages": ["a", None, "c"]}, id="array-item"),
        pytest.param("", {"since": "s3cr3t"}, None, id="the-whole-output-is-the-cursor"),
    ],
)
def test_the_cursor_is_taken_out_and_the_output_itself_is_untouched(pointer: str, output: Any, shared: Any) -> None:
    before = repr(output)
    assert output_without_cursor(JsonPointer.parse("cursor_from", pointer), output) == shared
    assert repr(output) == before  # the validated output (and what the store saved) is not mutated


def test_without_a_cursor_the_output_is_pushed_as_returned() -> None:
    output = {"count": 3}
    assert output_without_cursor(None, output) is output
