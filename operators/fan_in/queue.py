"""The queue rows that release an AFTER child: one per (parent asset, child), dated by its first pending fire.

Airflow creates a child's asset-triggered run once every parent asset has a row in
``asset_dag_run_queue`` for it, dates the run by the newest row (``run_after``), and then
deletes the rows it read. A parent fire that finds its row already there keeps it: the
child reacts once to however many fires a parent completed.

The insert must not *skip* a row another transaction holds. A scheduler creating the
child's run locks the rows it read (``SELECT ... FOR UPDATE``) and deletes them before it
commits. On PostgreSQL, ``ON CONFLICT DO NOTHING`` sees the locked row, counts it as the
conflict and returns at once; the row is then deleted, and the parent fire that landed in
between is queued nowhere: the child waits for that parent's *next* fire (a day, behind a
daily parent). ``ON CONFLICT DO UPDATE`` takes the row's lock instead, so it waits for that
scheduler; when the row turns out deleted it inserts a new one, and when the row is still
there the update writes back its own ``created_at``: the first pending fire keeps dating it.

Written here rather than through ``AssetManager.register_asset_change``, whose SQLite path
queues inside a SAVEPOINT that the scheduler's commit guard refuses while the listener runs,
and whose PostgreSQL path (3.3.2) inserts with ``DO NOTHING``, the race above.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._airflow import dialect_name

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def queue_children(rows: Iterable[tuple[int, str]], session: Session) -> None:
    """Queue each ``(parent asset id, child dag id)``; a row already pending keeps its date (see module)."""
    from airflow.models.asset import AssetDagRunQueue
    from sqlalchemy import insert

    values = [{"asset_id": asset_id, "target_dag_id": dag_id} for asset_id, dag_id in rows]
    if not values:
        return
    table = AssetDagRunQueue.__table__
    dialect = dialect_name(session)
    if dialect in ("postgresql", "sqlite"):
        statement = (
            importlib.import_module(f"sqlalchemy.dialects.{dialect}")
            .insert(table)
            .values(values)
            .on_conflict_do_update(
                index_elements=[table.c.asset_id, table.c.target_dag_id],
                set_={"created_at": table.c.created_at},
            )
        )
    else:  # MySQL (not a supported metadata database): no conflict clause in common with the two above
        statement = insert(table).values(values).prefix_with("IGNORE")
    session.execute(statement)
