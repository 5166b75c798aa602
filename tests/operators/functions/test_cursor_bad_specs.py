"""A broken cursor-function spec is an import error naming the field; the status reports SpecValid=False."""

from __future__ import annotations

import textwrap

import pytest

from tessera.operators.functions.status import function_status

BAD_DAG = """
from airflow.sdk import DAG
from tessera.operators.functions.operator import CursorFunctionOperator, cursor_function
from tessera.operators.functions.http import HttpFunction
from tessera.timetables import Every

with DAG(dag_id="cursor_bad", schedule=Every("1h"), start_date=None):
    {task}
"""

BAD_SPECS = [
    pytest.param(
        'CursorFunctionOperator(task_id="f", function=len, input={"region": 7},'
        ' input_schema={"properties": {"region": {"type": "string"}}})',
        ["input: {'region': 7}", "fails input_schema at $.region", "is not of type 'string'"],
        "InputInvalid",
        id="input-fails-input-schema",
    ),
    pytest.param(
        'CursorFunctionOperator(task_id="f", function=len, cursor_from="cursor", cursor_into="/cursor")',
        ["cursor_from: 'cursor' is not a JSON Pointer", "'/cursor'"],
        "CursorPointerInvalid",
        id="cursor-pointer-not-a-json-pointer",
    ),
    pytest.param(
        'CursorFunctionOperator(task_id="f", function=len, output_schema={"required": "cursor"})',
        ["output_schema: does not compile", "$.required"],
        "OutputSchemaInvalid",
        id="output-schema-does-not-compile",
    ),
    pytest.param(
        'CursorFunctionOperator(task_id="f", function=len, concurrency="Replace")',
        ["concurrency: 'Replace'", "'Forbid'"],
        "ConcurrencyInvalid",
        id="no-replace-policy",
    ),
    pytest.param(
        'cursor_function(input={"n": 1}, input_schema={"properties": {"n": {"type": "string"}}})(len)()',
        ["input: {'n': 1}"],
        "InputInvalid",
        id="decorator-validates-too",
    ),
    pytest.param(
        'CursorFunctionOperator(task_id="f", function=HttpFunction("", "/x"))',
        ["conn_id: ''"],
        "FunctionInvalid",
        id="http-function-without-connection",
    ),
    pytest.param(
        'CursorFunctionOperator(task_id="f", function=HttpFunction("svc", "/x", max_response_bytes=0))',
        ["max_response_bytes: 0; give a whole number of bytes from 1 to 268435456"],
        "FunctionInvalid",
        id="http-function-response-cap",
    ),
    pytest.param(
        'CursorFunctionOperator(task_id="f", function=len, output_schema={"pattern": "(?=a)"})',
        ["output_schema: at $.pattern: '(?=a)' is not a regular expression RE2 can run"],
        "OutputSchemaInvalid",
        id="pattern-re2-cannot-run",
    ),
    pytest.param(
        'CursorFunctionOperator(task_id="f", function=len, input={"s": "' + "a" * 35 + '!"},'
        ' input_schema={"properties": {"s": {"pattern": "^(a+)+$"}}})',
        ["input: {'s': 'aaaa", "fails input_schema at $.s: does not match the pattern '^(a+)+$'"],
        "InputInvalid",
        id="catastrophic-pattern-checked-at-parse-time",
    ),
    pytest.param(
        'CursorFunctionOperator(task_id="a", function=len, cursor_from="/c", cursor_into="/c")\n'
        '    CursorFunctionOperator(task_id="b", function=len, cursor_from="/c", cursor_into="/c")',
        ["store: 'cursor_bad-state' is already the cursor store of task 'a'"],
        "StoreInvalid",
        id="two-functions-one-store",
    ),
]


@pytest.mark.parametrize("task, fragments, reason", BAD_SPECS)
def test_bad_spec_is_an_import_error_naming_the_field_and_its_reason(
    tmp_path, task: str, fragments: list[str], reason: str
) -> None:
    from tessera.operators.functions.spec_reasons import spec_reason
    from tests.compat.airflow_names import DagBag

    (tmp_path / "cursor_bad.py").write_text(textwrap.dedent(BAD_DAG).format(task=task))
    bag = DagBag(str(tmp_path))
    assert bag.dags == {}
    (error,) = bag.import_errors.values()
    for fragment in fragments:
        assert fragment in error, error
    # What the status does with the import error the dag-processor stored: its last line.
    assert spec_reason(error.strip().splitlines()[-1]) == reason


def test_a_dag_whose_spec_breaks_reports_spec_valid_false_and_not_ready(cursor_dags) -> None:
    dag_id = "cursor_t_breaks"
    dag = cursor_dags.add(dag_id)
    cursor_dags.fire(dag)
    status = function_status(dag_id)
    assert [c.status for c in status.conditions] == ["True", "True"]

    path = cursor_dags.folder / f"{dag_id}.py"
    path.write_text(path.read_text().replace('cursor_into="/cursor"', 'cursor_into="cursor"'))
    cursor_dags.load(path)

    status = function_status(dag_id)
    spec_valid, ready = status.conditions
    assert (spec_valid.status, spec_valid.reason) == ("False", "CursorPointerInvalid")
    assert "cursor_into: 'cursor' is not a JSON Pointer" in spec_valid.message
    assert (ready.status, ready.reason) == ("False", "CursorPointerInvalid")  # Ready mirrors it


def test_a_cron_that_breaks_reports_cron_invalid_with_the_refusal_as_message(cursor_dags) -> None:
    dag_id = "cursor_t_cron_breaks"
    cursor_dags.add(dag_id, schedule='Cron("0 6 * * *")')
    path = cursor_dags.folder / f"{dag_id}.py"
    path.write_text(path.read_text().replace('Cron("0 6 * * *")', 'Cron("61 6 * * *")'))
    cursor_dags.load(path)

    spec_valid, ready = function_status(dag_id).conditions
    assert (spec_valid.status, spec_valid.reason, ready.reason) == ("False", "CronInvalid", "CronInvalid")
    assert "expression: '61 6 * * *' has an invalid minute field" in spec_valid.message


def test_an_http_function_whose_connection_is_missing_is_not_spec_valid_before_any_fire(
    cursor_dags, monkeypatch
) -> None:
    dag_id = "cursor_t_http_no_conn"
    cursor_dags.add(dag_id, function='HttpFunction("tessera_t_absent", "/fn")', prelude=HTTP_PRELUDE)
    spec_valid, ready = function_status(dag_id).conditions
    assert (spec_valid.status, spec_valid.reason, ready.reason) == ("False", "ConnectionMissing", "ConnectionMissing")
    assert "conn_id: 'tessera_t_absent' is not a defined Airflow connection" in spec_valid.message

    monkeypatch.setenv("AIRFLOW_CONN_TESSERA_T_ABSENT", "http://example.com")
    assert function_status(dag_id).condition("SpecValid").status == "True"


HTTP_PRELUDE = "from tessera.operators.functions.http import HttpFunction"
