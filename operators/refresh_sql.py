"""``RefreshSQLOperator``: re-run a query, materialise the result into a table, report a metadata receipt.

Three outcomes, each its own label on the receipt:

* **Refreshed**: the result differs from the last one written; the table now holds it.
* **No change**: the result is identical (same fingerprint, same query); nothing is
  rewritten. The data genuinely did not move.
* **Skipped**: another write to the same table landed between this run's read and its
  write, typically a run of a newer version of the DAG (a changed query). This run's
  older result is not written over it, so nothing is lost; the next run starts from
  the newer state. The task is marked skipped.

The receipt (``rows``, ``duration_seconds``, ``changed``, ``outcome``) is returned and
pushed as the XCom ``tessera_receipt``, which the tessera API shows next to the run.
It never contains the data.

How the collision is detected: a bookkeeping table (``tessera_refresh_state``, on the
target connection) holds, per target table, a generation counter, the fingerprint of the
rows last written and the fingerprint of the query that wrote them. A run reads the
generation before it queries; its write is a compare-and-set on that generation, in
the same transaction as the rows it replaces, so two writers can never both win.

Identifiers reach the target as SQL text, so each is quoted by the target's own
SQLAlchemy dialect: the result's column names always (they come from the source
database, so they are data, and a name such as ``"order"`` or ``"MixedCase"`` is
legitimate), the target table and the state table when the dialect requires it.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from airflow.providers.common.sql.hooks.sql import DbApiHook
from airflow.providers.common.sql.operators.sql import BaseSQLOperator

from ._airflow import AirflowSkipException, task_utcnow

if TYPE_CHECKING:
    from sqlalchemy.sql.compiler import IdentifierPreparer

RECEIPT_KEY = "tessera_receipt"
STATE_TABLE = "tessera_refresh_state"
REFRESHED, NO_CHANGE, SKIPPED = "Refreshed", "No change", "Skipped"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STATE_DDL = (
    "CREATE TABLE IF NOT EXISTS {state} (target VARCHAR(250) PRIMARY KEY, generation INTEGER NOT NULL,"
    " rows_fingerprint VARCHAR(64), query_fingerprint VARCHAR(64), row_count INTEGER, written_at VARCHAR(40))"
)


def table_parts(target_table: object) -> tuple[str, ...]:
    """``(name,)`` or ``(schema, name)`` of a target table; ValueError if it is not such a name."""
    if not isinstance(target_table, str):
        raise TypeError(f"target_table: {target_table!r}; give the table name as a string, e.g. 'daily_totals'")
    parts = tuple(target_table.split("."))
    if len(parts) > 2 or not all(_NAME.fullmatch(part) for part in parts):
        raise ValueError(
            f"target_table: {target_table!r}; give a table name such as 'daily_totals' or 'reporting.daily_totals'"
            " (ASCII letters, digits and underscores, not starting with a digit; the operator quotes it)"
        )
    return parts


def _is_template(value: object) -> bool:
    """Whether Airflow will render ``value`` with Jinja before ``execute`` (its value is unknown until then)."""
    return isinstance(value, str) and any(mark in value for mark in ("{{", "{%", "{#"))


def identifier_preparer(hook: DbApiHook, field: str) -> IdentifierPreparer:
    """The target dialect's identifier quoting, from the SQLAlchemy engine the hook describes.

    No engine, no write: quoting by hand would get some dialect's escape or case rule wrong.
    Building the engine does not connect.
    """
    try:
        return hook.get_sqlalchemy_engine().dialect.identifier_preparer
    except Exception as exc:  # each hook fails its own way (NotImplementedError, ImportError, ArgumentError)
        raise ValueError(
            f"{field}: {hook.get_conn_id()!r} gives no SQLAlchemy dialect to quote identifiers with ({exc});"
            " use a connection whose hook supports get_sqlalchemy_engine()"
        ) from exc


class _Quoted(NamedTuple):
    """The SQL text naming the target, every identifier in it quoted by the target's dialect."""

    table: str
    state: str
    insert: str
    """The INSERT of one result row."""


def fingerprint(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """SHA-256 of the result, independent of row order (a query without ORDER BY may return any order)."""
    encoded = sorted(json.dumps(list(row), default=str, separators=(",", ":")) for row in rows)
    return hashlib.sha256(json.dumps([list(columns), encoded]).encode()).hexdigest()


class RefreshSQLOperator(BaseSQLOperator):
    """Re-run ``sql`` through ``conn_id`` and replace the rows of ``target_table`` with its result.

    :param sql: the query (templated).
    :param target_table: the table the result is materialised into (``name`` or ``schema.name``, checked
        when the DAG is parsed unless it is a Jinja template, and again once rendered). Quoted only where
        the dialect requires it (a reserved word, capitals), so an all-lowercase name matches a table
        created unquoted; a name with capitals is case-sensitive.
    :param conn_id: the Airflow connection to query (any common-sql database).
    :param target_conn_id: where the target table lives; default: ``conn_id``.
    :param target_ddl: a statement that creates the target table if it is missing, e.g.
        ``CREATE TABLE IF NOT EXISTS totals (day TEXT, total REAL)``; without it the table must exist.
    """

    template_fields: Sequence[str] = (*BaseSQLOperator.template_fields, "sql", "target_table")
    template_ext: Sequence[str] = (".sql",)
    ui_color = "#d6eaf8"

    def __init__(
        self,
        *,
        sql: str,
        target_table: str,
        conn_id: str,
        target_conn_id: str | None = None,
        target_ddl: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(conn_id=conn_id, **kwargs)
        if not isinstance(sql, str) or not sql.strip():
            raise ValueError(f"sql: {sql!r}; give the query to re-run, e.g. 'SELECT day, SUM(n) FROM t GROUP BY day'")
        if not _is_template(target_table):
            table_parts(target_table)
        self.sql = sql
        self.target_table = target_table
        self.target_conn_id = target_conn_id
        self.target_ddl = target_ddl

    def execute(self, context: Any) -> dict[str, Any]:
        parts = table_parts(self.target_table)  # rendered by now
        started = time.monotonic()
        source = self.get_db_hook()
        target = source if self.target_conn_id is None else self.get_hook(self.target_conn_id, self.hook_params)
        assert isinstance(target, DbApiHook)
        quoting = identifier_preparer(target, "conn_id" if self.target_conn_id is None else "target_conn_id")
        *schema, name = parts
        table = ".".join([*map(quoting.quote_schema, schema), quoting.quote(name)])
        state = quoting.quote(STATE_TABLE)
        target.run([_STATE_DDL.format(state=state), *([self.target_ddl] if self.target_ddl else [])], autocommit=True)
        seen = self._generation(target, state)
        rows = source.get_records(self.sql)
        columns = [column[0] for column in (source.last_description or ())]
        # Always quoted: the name comes from the source database, and the driver reports it exactly as stored.
        insert = (
            f"INSERT INTO {table} ({', '.join(quoting.quote_identifier(column) for column in columns)})"
            f" VALUES ({', '.join([target.placeholder] * len(columns))})"
        )
        query = hashlib.sha256(f"{self.sql}\n{self.target_table}".encode()).hexdigest()
        quoted = _Quoted(table, state, insert)
        outcome, why = self._write(
            target, quoted, columns, rows, seen=seen, rows_fp=fingerprint(columns, rows), query=query
        )
        receipt = {
            "outcome": outcome,
            "rows": len(rows),
            "duration_seconds": round(time.monotonic() - started, 3),
            "changed": outcome == REFRESHED,
        }
        context["ti"].xcom_push(key=RECEIPT_KEY, value=receipt)
        self.log.info("refresh of %s: %s (%d rows) %s", self.target_table, outcome, len(rows), why)
        if outcome == SKIPPED:
            raise AirflowSkipException(f"{self.target_table}: {why}")
        return receipt

    def _generation(self, hook: DbApiHook, state: str) -> int:
        """The target's generation now, creating its state row (generation 0) on first use."""
        select = f"SELECT generation FROM {state} WHERE target = {hook.placeholder}"
        row = hook.get_first(select, parameters=(self.target_table,))
        if row is None:
            insert = f"INSERT INTO {state} (target, generation) VALUES ({hook.placeholder}, 0)"
            try:
                hook.run(insert, parameters=(self.target_table,), autocommit=True)
            except Exception:  # a concurrent first run inserted it: fine, unless the row is still missing
                if hook.get_first(select, parameters=(self.target_table,)) is None:
                    raise
            row = (0,)
        return int(row[0])

    def _write(
        self,
        hook: DbApiHook,
        quoted: _Quoted,
        columns: list[str],
        rows: list[Any],
        *,
        seen: int,
        rows_fp: str,
        query: str,
    ) -> tuple[str, str]:
        """Compare-and-set the state row and replace the rows, in one transaction."""
        mark, state = hook.placeholder, quoted.state
        now = task_utcnow().isoformat()
        conn = hook.get_conn()
        try:
            cur = conn.cursor()
            cur.execute(
                f"SELECT generation, rows_fingerprint, query_fingerprint FROM {state} WHERE target = {mark}",
                (self.target_table,),
            )
            generation, last_rows, last_query = cur.fetchone()
            if generation != seen:
                conn.rollback()
                who = "a run of this query" if last_query == query else "a run with a different query (a newer DAG)"
                return (
                    SKIPPED,
                    f"{who} wrote generation {generation} after this run read {seen}; kept its result",
                )
            if (last_rows, last_query) == (rows_fp, query):
                conn.rollback()
                return NO_CHANGE, "the result is identical to the one last written"
            # The compare-and-set: it matches no row if another writer got here first.
            cur.execute(
                f"UPDATE {state} SET generation = {mark}, rows_fingerprint = {mark},"
                f" query_fingerprint = {mark}, row_count = {mark}, written_at = {mark}"
                f" WHERE target = {mark} AND generation = {mark}",
                (seen + 1, rows_fp, query, len(rows), now, self.target_table, seen),
            )
            if cur.rowcount != 1:
                conn.rollback()
                return SKIPPED, "another run wrote at the same moment; kept its result"
            cur.execute(f"DELETE FROM {quoted.table}")
            if rows:
                try:
                    cur.executemany(quoted.insert, list(rows))
                except Exception as exc:  # rolled back below: the table keeps its rows
                    raise ValueError(
                        f"sql: its result columns {columns!r} could not be written into {self.target_table!r}"
                        f" ({exc}); name every result column after a column of the target table (alias it with AS)"
                    ) from exc
            conn.commit()
            return REFRESHED, f"generation {seen + 1}"
        except Exception:
            conn.rollback()
            raise
        finally:
            conn.close()
