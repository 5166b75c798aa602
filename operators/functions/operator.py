"""The cursor-carrying function operator, and its TaskFlow decorator ``@cursor_function``.

A fire calls the function with the frozen input, the stored cursor spliced in at
``cursor_into``; a clean answer's cursor (at ``cursor_from``) is saved for the
next fire. Only a clean success moves the cursor; see
:mod:`tessera.operators.functions.fire` for the rule and
:mod:`tessera.operators.functions.record` for what each fire leaves for the status page.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

from airflow.sdk import BaseOperator

from tessera.timetables.rules import excerpt

from .._airflow import AirflowTaskTimeout, task_utcnow
from . import metrics
from .fire import CursorFire, CursorWriteFailed, DispatchStartFailed, FireFailed, error_summary, output_without_cursor
from .http import HttpFunction
from .policy import DISPATCH_POOL, Concurrency, is_dry_run
from .record import RECORD_KEY, FireRecord, Outcome, Phase, SkipReason, iso
from .spec import FunctionSpec
from .store import CursorStore, default_store

log = logging.getLogger(__name__)


class CursorFunctionOperator(BaseOperator):
    """Run ``function`` on frozen ``input``, carrying a cursor from each clean fire to the next.

    Everything is validated when the DAG is parsed: a bad input, schema or pointer is
    a ``ValueError`` naming the field, so the DAG shows as an import error.

    :param function: a callable taking the input (one JSON value) and returning the
        output, or an :class:`~tessera.operators.functions.http.HttpFunction`.
    :param input: frozen parameters (JSON).
    :param input_schema: JSON Schema for the input, cursor spliced in; checked at parse
        time with ``initial`` and at every fire with the stored cursor.
    :param output_schema: JSON Schema the output must satisfy for a fire to count.
    :param cursor_from: JSON Pointer to the new cursor in the output (``"/cursor"``).
    :param cursor_into: JSON Pointer where the input receives the cursor (``"/cursor"``).
    :param initial: the cursor before the first clean fire, or after the store was lost.
    :param store: a :class:`~tessera.operators.functions.store.CursorStore`; default the
        Airflow Variable ``<dag_id>-state``.
    :param concurrency: ``"Forbid"`` (default: a tick during a fire is skipped) or
        ``"Allow"`` (fires overlap; concurrent cursor saves are last-write-wins).

    The task returns (and pushes as its ``return_value`` XCom) the output without its cursor:
    the value at ``cursor_from`` is taken out (see
    :func:`~tessera.operators.functions.fire.output_without_cursor`), since every viewer of the
    DAG reads its XComs while the cursor's store may need more.

    A run whose conf is ``{"dry_run": true}`` (``airflow dags test DAG -c '{"dry_run": true}'``)
    calls the function with the stored cursor and validates the output, but saves nothing.
    The task goes to the ``tessera_dispatch`` pool, whose slots are the deployment-wide cap.
    """

    ui_color = "#dbe8f6"
    # Serialized with the DAG (template fields are), so the status page knows where the
    # cursor lives without ever reading it; it holds no Jinja, so rendering keeps it as is.
    # Likewise the HTTP function's connection id, so the status and the admission can tell a
    # missing connection before a fire (None for a plain callable).
    template_fields: Sequence[str] = ("cursor_store", "http_conn_id")
    template_fields_renderers = {"cursor_store": "json"}

    def __init__(
        self,
        *,
        function: Callable[[Any], Any],
        input: Any = None,
        input_schema: Any = None,
        output_schema: Any = None,
        cursor_from: str | None = None,
        cursor_into: str | None = None,
        initial: Any = None,
        store: CursorStore | None = None,
        concurrency: Concurrency | str = Concurrency.FORBID,
        **kwargs: Any,
    ) -> None:
        if not callable(function):
            raise TypeError(
                f"function: {excerpt(function)}; give a callable taking the input, or HttpFunction(conn_id, path)"
            )
        spec = FunctionSpec.build(
            input=input,
            input_schema=input_schema,
            output_schema=output_schema,
            cursor_from=cursor_from,
            cursor_into=cursor_into,
            initial=initial,
        )
        if store is not None and not isinstance(store, CursorStore):
            raise TypeError(
                f"store: {excerpt(store)}; give an object with location, read() and write() (a CursorStore)"
            )
        if store is not None and not spec.carries_cursor:
            raise ValueError(
                f"store: {excerpt(store)} given but no cursor; set cursor_from and cursor_into, or drop store"
            )
        policy = Concurrency.parse(concurrency)
        limit = kwargs.get("max_active_tis_per_dag")
        if policy is Concurrency.FORBID:
            if limit not in (None, 1):
                raise ValueError(
                    f"max_active_tis_per_dag: {excerpt(limit)} with concurrency='Forbid', which runs one fire "
                    "at a time; drop it, or use concurrency='Allow'"
                )
            kwargs["max_active_tis_per_dag"] = 1
        elif limit == 1:
            raise ValueError(
                "max_active_tis_per_dag: 1 with concurrency='Allow' would queue ticks behind a running fire; "
                "use concurrency='Forbid', which skips them instead"
            )
        kwargs.setdefault("pool", DISPATCH_POOL)
        super().__init__(**kwargs)
        self.function = function
        self.spec = spec
        self.store = store
        self.concurrency = policy
        self._check_store_is_own()
        location = self._store().location if self.has_dag() and spec.carries_cursor else None
        self.cursor_store = (
            None if location is None else {"provider": location.provider, "reference": location.reference}
        )
        self.http_conn_id = function.conn_id if isinstance(function, HttpFunction) else None

    def _store(self) -> CursorStore | None:
        if not self.spec.carries_cursor:
            return None
        return self.store if self.store is not None else default_store(self.dag_id)

    def _check_store_is_own(self) -> None:
        # Two functions writing one store would each resume from the other's cursor.
        if not self.has_dag() or (mine := self._store()) is None:
            return
        for task in self.dag.tasks:
            if task is not self and isinstance(task, CursorFunctionOperator) and (theirs := task._store()):
                if theirs.location == mine.location:
                    raise ValueError(
                        f"store: {mine.location.reference!r} is already the cursor store of task "
                        f"{task.task_id!r}; give this task its own, e.g. store=VariableStore('{self.dag_id}-"
                        f"{self.task_id}-state')"
                    )

    def execute(self, context: Any) -> Any:
        ti, dag_run = context["ti"], context["dag_run"]
        dry_run = is_dry_run(dag_run.conf) or context["params"].get("dry_run") is True
        store = self._store()
        fire = CursorFire(self.spec, store)
        started = task_utcnow()

        def record(phase: Phase, reason: str | None, message: str | None, outcome: Outcome | None = None) -> None:
            # Only what is not a clean success is written: a clean fire is its task's success.
            entry = FireRecord(phase, iso(started), outcome, reason, message, iso(task_utcnow()))
            try:
                ti.xcom_push(RECORD_KEY, entry.to_json())
            except Exception:
                # The fire's own error matters more; without a record the status reads Unknown.
                log.exception("tessera: could not record the fire's %s outcome", phase.value)

        def finish(outcome: Outcome, reason: str | None = None, message: str | None = None) -> None:
            if dry_run:
                record(Phase.DRY_RUN, reason, message, outcome)
                return
            if outcome is not Outcome.SUCCEEDED:
                record(Phase.FINISHED, reason, message, outcome)
            # A clean fire's 0 is sent once its success is stored (health.clean_fire_stored), not here:
            # sent now, a scheduler reading the database before the success lands would follow it stale.
            since = None if outcome is Outcome.SUCCEEDED else _seconds_since_last_success(ti)
            duration = task_utcnow() - started
            metrics.fire_finished(
                self.dag_id, self.task_id, outcome=outcome.value, duration=duration, since_success=since
            )

        try:
            prepared = fire.prepare()
        except DispatchStartFailed as error:
            log.error("tessera: fire not started: %s", error)
            if not dry_run:
                reason = SkipReason.DISPATCH_START_FAILED.value
                record(Phase.SKIPPED, reason, str(error))
                metrics.tick_skipped(self.dag_id, self.task_id, reason, in_task=True)
            raise
        except FireFailed as error:
            finish(Outcome.FAILED, error.reason, str(error))
            raise
        try:
            output = self.function(prepared.payload)
        except AirflowTaskTimeout:
            finish(Outcome.FAILED, "Timeout", "the function did not return within the task's execution_timeout")
            raise
        except FireFailed as error:  # e.g. an HTTP function's answer: its message is safe to record
            finish(Outcome.FAILED, error.reason, str(error))
            raise
        except BaseException as error:
            # Its text may quote the payload: the record keeps the type and where; Airflow logs the rest.
            message = f"the function raised {error_summary(error)}; its traceback is in the task log"
            finish(Outcome.FAILED, "FunctionError", message)
            raise
        try:
            concluded = fire.conclude(output, save=not dry_run, written_by=f"{ti.dag_id}/{ti.run_id}")
        except FireFailed as error:
            if isinstance(error, CursorWriteFailed):
                metrics.cursor_write_failed(self.dag_id, self.task_id)
            log.error("tessera: fire failed, the stored cursor is unchanged: %s", error)
            finish(Outcome.FAILED, error.reason, str(error))
            raise
        if dry_run:
            document = concluded.cursor_document
            size = "no cursor" if document is None else f"{len(document.encode())} bytes"
            log.info("tessera: dry run, output valid; new cursor (%s) NOT saved", size)
        finish(Outcome.SUCCEEDED)
        # The return-value XCom: every viewer reads it, so never the cursor the store keeps.
        return output_without_cursor(self.spec.cursor_from, concluded.output)


def _seconds_since_last_success(ti: Any) -> float | None:
    """Seconds since this task's previous successful try ended (None if never, or unknown)."""
    try:
        previous = ti.get_previous_ti(state="success")
    except Exception:
        return None
    if previous is None or previous.end_date is None:
        return None
    return (task_utcnow() - previous.end_date).total_seconds()


def cursor_function(python_callable: Callable[[Any], Any] | None = None, **operator_kwargs: Any) -> Any:
    """TaskFlow form of :class:`CursorFunctionOperator`: decorate the function, call it in a DAG.

    ::

        @cursor_function(input={"region": "emea"}, cursor_from="/cursor", cursor_into="/cursor",
                         initial={"since": "2026-01-01T00:00:00Z"})
        def digest(payload): ...

        digest()  # in a DAG: adds the task (id "digest"); its XComArg is the output without the cursor

    Keyword arguments given at the call override those of the decorator.
    """

    def decorate(function: Callable[[Any], Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def add_task(**overrides: Any) -> Any:
            kwargs = {
                "task_id": function.__name__,
                "doc_md": function.__doc__,
                **operator_kwargs,
                **overrides,
            }
            return CursorFunctionOperator(function=function, **kwargs).output

        return add_task

    return decorate if python_callable is None else decorate(python_callable)


__all__ = ["CursorFunctionOperator", "cursor_function"]
