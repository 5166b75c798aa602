"""The Schedules page's caches, filled when an API server worker starts rather than by its first visitor.

A worker's first page load used to pay for everything a load later reads from memory: building the
tessera app (importing its modules), decoding every tessera DAG's stored version
(:mod:`tessera.plugin.fleet.stored`), the schedule facts of every DAG's newest runs and stored next
run that its status reads, and the lanes of the rows shown (:mod:`tessera.plugin.fleet.memo`). At
1,000 DAGs that was 6x a warm load. :func:`warm_page` does the same work once, in a background
thread the API server's start launches (:mod:`tessera.plugin.api.mount`), on nobody's behalf: it
reads stored DAGs and runs and computes plans, answers no one and writes nothing.

Bounded: at most :data:`~tessera.plugin.api.inputs.MAX_FLEET_DAGS` DAGs are decoded and judged and
the lanes of the first page's :data:`~tessera.plugin.api.inputs.PAGE_ROWS` rows computed, as one
load would. Its statements run on an engine of its own, so they are never counted as a request's,
and a failure is logged, never raised: a worker that could not warm up answers as before, only
slower the first time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

WARMED = threading.Event()
"""Set once this process's warm-up has finished (or given up): what the tests and the bench wait for."""
_started = threading.Lock()


def warm_page(build_app: Callable[[], Any]) -> None:
    """Build the app with ``build_app``, decode every tessera DAG's stored version, compute the first page's lanes."""
    from airflow import settings
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from .._airflow import utcnow
    from ..api.inputs import MAX_FLEET_DAGS, PAGE_ROWS
    from ..scoped_reads import Scope
    from .overview import LANE_AHEAD
    from .plans import lane_start, next_and_lane
    from .runs import run_histories
    from .schedules import scheduled_dags, shown_ids
    from .status import grouped_reads, status_parts

    begin = time.perf_counter()
    build_app()
    # An engine of its own: the warm-up's statements are nobody's request (and one connection is enough).
    engine = create_engine(settings.engine.url, pool_size=1, max_overflow=0)
    try:
        with Session(engine) as session:
            ids = shown_ids(session, readable=None)[:MAX_FLEET_DAGS]
            items = scheduled_dags(session, readable=None, dag_ids=ids) if ids else []
            # Every DAG's status, as a load judges it for the filters and counts: this fills the schedule
            # facts of its newest runs and of its stored next run (memo). Nobody's scope: nothing is answered.
            scope = Scope.everything()
            histories = run_histories(session, scope, [item.dag_id for item in items])
            reads = grouped_reads(items, session, scope)
            now = utcnow()
            for item in items:
                if item.error is None:
                    status_parts(item, [], histories[item.dag_id], reads)
            for item in items[:PAGE_ROWS]:  # the first page's lanes, as a load computes them
                if item.error is None:
                    next_and_lane(item, now=now, lane_until=lane_start(now) + LANE_AHEAD)
    finally:
        engine.dispose()
    log.info("tessera: the Schedules page is warm (%d DAGs) after %.1f s", len(ids), time.perf_counter() - begin)


def start_warming(build_app: Callable[[], Any]) -> bool:
    """Run :func:`warm_page` in a daemon thread, once per process; False when it was started already."""
    if not _started.acquire(blocking=False):
        return False

    def run() -> None:
        try:
            warm_page(build_app)
        except Exception:  # a worker that cannot warm up still serves: its first load is the slow one
            log.warning("tessera: could not warm the Schedules page's caches", exc_info=True)
        finally:
            WARMED.set()

    threading.Thread(target=run, name="tessera-warm-page", daemon=True).start()
    return True
