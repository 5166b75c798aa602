"""Real fires on the real metadata DB: the cursor advances only on a clean success, and the status says so."""

from __future__ import annotations

from tessera.operators.functions import metrics
from tessera.operators.functions.status import function_status
from tests.compat import not_run_here

from ..conftest import fire_record, stored_cursor

pytestmark = not_run_here("Cursor functions")  # Airflow 3.2.2's dag.test() fails every task (tests.compat.NOT_RUN)


def test_cursor_advances_only_on_clean_success_and_failed_windows_are_retried(cursor_dags, recorded_stats):
    dag = cursor_dags.add("cursor_t_sequence")
    key = "cursor_t_sequence-state"

    ti = cursor_dags.fire(dag)
    assert (ti.state, stored_cursor(key)) == ("success", {"n": 1})
    status = function_status("cursor_t_sequence")
    assert (status.last_outcome, status.consecutive_failures) == ("Succeeded", 0)
    assert status.condition("Ready").status == "True"
    assert status.state.reference == key and status.state.last_written is not None

    expected_reason = {"raise": "FunctionError", "invalid": "OutputInvalid", "huge": "CursorTooLarge"}
    for failures, mode in enumerate(["raise", "invalid", "huge"], start=1):
        cursor_dags.behave("cursor_t_sequence", mode=mode)
        ti = cursor_dags.fire(dag)
        assert ti.state == "failed", mode
        assert stored_cursor(key) == {"n": 1}, mode
        assert cursor_dags.calls("cursor_t_sequence")[-1]["cursor"] == {"n": 1}, mode  # the same window again
        record = fire_record("cursor_t_sequence", ti.run_id)
        assert (record["outcome"], record["reason"]) == ("Failed", expected_reason[mode])
        status = function_status("cursor_t_sequence")
        assert (status.last_outcome, status.consecutive_failures) == ("Failed", failures), mode
        ready = status.condition("Ready")
        assert (ready.status, ready.reason) == ("False", expected_reason[mode]), mode

    assert "65536 bytes (64 KiB)" in record["message"]  # the 70 KiB cursor failed loudly, naming the cap

    cursor_dags.behave("cursor_t_sequence", mode="ok")
    ti = cursor_dags.fire(dag)
    assert cursor_dags.calls("cursor_t_sequence")[-1]["cursor"] == {"n": 1}
    assert (ti.state, stored_cursor(key)) == ("success", {"n": 2})
    status = function_status("cursor_t_sequence")
    assert (status.last_outcome, status.consecutive_failures) == ("Succeeded", 0)
    assert status.last_fire_time is not None and status.last_skip_reason is None

    outcomes = [tags["outcome"] for _, _, tags in recorded_stats.of(metrics.FIRES, "cursor_t_sequence")]
    assert outcomes == ["Succeeded", "Failed", "Failed", "Failed", "Succeeded"]
    assert len(recorded_stats.of(metrics.FIRE_DURATION, "cursor_t_sequence")) == 5
    since = [value for _, value, _ in recorded_stats.of(metrics.SECONDS_SINCE_LAST_SUCCESS, "cursor_t_sequence")]
    assert since[0] == 0 and since[-1] == 0 and all(value > 0 for value in since[1:-1])


def test_dry_run_calls_the_function_with_the_stored_cursor_but_saves_nothing(cursor_dags):
    dag = cursor_dags.add("cursor_t_dry")
    cursor_dags.fire(dag)
    ti = cursor_dags.fire(dag, conf={"dry_run": True})
    assert ti.state == "success"
    assert cursor_dags.calls("cursor_t_dry")[-1]["cursor"] == {"n": 1}
    assert stored_cursor("cursor_t_dry-state") == {"n": 1}
    assert fire_record("cursor_t_dry", ti.run_id)["phase"] == "dry_run"
    cursor_dags.behave("cursor_t_dry", mode="raise")
    assert cursor_dags.fire(dag, conf={"dry_run": True}).state == "failed"
    status = function_status("cursor_t_dry")
    assert (status.last_outcome, status.consecutive_failures) == ("Succeeded", 0)  # dry runs are not fires


def test_unreadable_store_fails_to_start_without_counting_a_failure_and_a_lost_store_restarts(cursor_dags):
    from airflow.models.variable import Variable

    dag = cursor_dags.add("cursor_t_store")
    key = "cursor_t_store-state"
    cursor_dags.fire(dag)
    Variable.set(key, "{half a cursor")  # a bad hand edit in the UI
    calls = len(cursor_dags.calls("cursor_t_store"))

    ti = cursor_dags.fire(dag)
    assert ti.state == "failed"
    assert len(cursor_dags.calls("cursor_t_store")) == calls  # the function was never called
    record = fire_record("cursor_t_store", ti.run_id)
    assert (record["phase"], record["reason"]) == ("skipped", "DispatchStartFailed")
    assert "not JSON" in record["message"]
    status = function_status("cursor_t_store")
    assert (status.last_skip_reason, status.last_outcome, status.consecutive_failures) == (
        "DispatchStartFailed",
        "Succeeded",
        0,
    )
    ready = status.condition("Ready")
    assert (ready.status, ready.reason) == ("False", "DispatchStartFailed") and "not JSON" in ready.message

    Variable.delete(key)  # the store is lost: the next fire reprocesses from initial
    assert cursor_dags.fire(dag).state == "success"
    assert cursor_dags.calls("cursor_t_store")[-1]["cursor"] == {"n": 0}
    assert stored_cursor(key) == {"n": 1}
    assert function_status("cursor_t_store").condition("Ready").status == "True"


READ_ONLY_STORE = """
from tessera.operators.functions.store import VariableStore


class ReadOnlyStore(VariableStore):
    def write(self, document, *, written_by):
        raise PermissionError("this store is read-only")
"""


def test_a_cursor_that_cannot_be_saved_fails_the_fire_even_though_the_function_succeeded(cursor_dags, recorded_stats):
    dag = cursor_dags.add("cursor_t_readonly", prelude=READ_ONLY_STORE, extra='store=ReadOnlyStore("ro-cursor"),')
    ti = cursor_dags.fire(dag)
    assert ti.state == "failed"
    assert stored_cursor("ro-cursor") is None
    record = fire_record("cursor_t_readonly", ti.run_id)
    assert (record["outcome"], record["reason"]) == ("Failed", "CursorWriteFailed")
    # The store's own text could quote the cursor: the record names the error's type and where it was raised.
    assert "PermissionError, raised at cursor_t_readonly.py" in record["message"]
    assert len(recorded_stats.of(metrics.CURSOR_WRITE_FAILURES, "cursor_t_readonly")) == 1
    status = function_status("cursor_t_readonly")
    assert (status.last_outcome, status.consecutive_failures) == ("Failed", 1)
    assert (status.state.provider, status.state.reference, status.state.last_written) == (
        "airflow-variable",
        "ro-cursor",
        None,
    )
