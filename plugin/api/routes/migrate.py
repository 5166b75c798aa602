"""``GET /api/v1/migrate``: what moving the caller's readable DAGs to tessera changes, run by run.

The report of ``tessera migrate`` (:mod:`tessera.plugin.migrate`) for the DAGs the deployment
stored, a page of them at a time: each side of a DAG steps at most
:data:`~tessera.plugin.migrate.RUN_BUDGET` runs over the range, so one page costs at most ``limit`` DAGs'
comparisons, and the work stops at the next DAG when the caller leaves.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from airflow.api_fastapi.common.db.common import SessionDep
from fastapi import Query

from tessera.plugin.errors import Unprocessable
from tessera.plugin.fleet.load.dags import fleet

from ..._airflow import utcnow
from ...migrate.models import MigrateReport
from ...migrate.proposals import VARIANTS
from ...migrate.report import DEFAULT_RANGE, MAX_RANGE, migrate_stored
from ..inputs import After, PageOffset, Until
from .costs import ReadableFleet
from .guarded import READABLE_DAGS, Budget, guarded_router, route
from .refusals import SIGNED_IN

router = guarded_router(tags=["migrate"], responses=SIGNED_IN)

MAX_MIGRATE_DAGS = 200
"""The most DAGs one request compares (each up to a year of runs, on five schedules)."""
Variant = Annotated[
    Literal[VARIANTS],  # type: ignore[valid-type]  # the variants' one list, as the CLI's choices
    Query(description="The variant the `after` histogram counts (default exact)."),
]
MigrateLimit = Annotated[
    int, Query(ge=1, le=MAX_MIGRATE_DAGS, description=f"How many DAGs at most (1 to {MAX_MIGRATE_DAGS}).")
]


@route(
    router,
    "GET",
    "/api/v1/migrate",
    scope=READABLE_DAGS,
    budget=Budget.by_parameter("DAGs", MAX_MIGRATE_DAGS, "limit"),
)
def get_migrate(
    session: SessionDep,
    mine: ReadableFleet,
    after: After = None,
    until: Until = None,
    offset: PageOffset = 0,
    limit: MigrateLimit = 50,
    variant: Variant = "exact",
) -> MigrateReport:
    """A page of the readable DAGs (by DAG id, paused ones too): each one's runs now and on tessera.

    Over ``after`` (default now) to ``until`` (default 365 days later, at most 400) and every clock
    change of each DAG's zone: the runs that appear, disappear or move and the windows that change
    on each proposed schedule, a verdict per DAG, and the page's start-time histogram before and
    after. The stored DAGs carry no source, so whether a DAG reads its windows is unknown (``null``)
    and a window that changes counts; ``tessera migrate DAG_FOLDER`` reads the files and writes the patch.
    """
    since = (after or utcnow()).astimezone(datetime.timezone.utc)
    end = (until or since + DEFAULT_RANGE).astimezone(datetime.timezone.utc)
    if not datetime.timedelta(0) < end - since <= MAX_RANGE:
        raise Unprocessable(
            f"`until`: {end.isoformat()}; give an instant after `after` ({since.isoformat()}) by at most "
            f"{MAX_RANGE.days} days"
        )
    # A page of the active DAGs' rows first (a stale one the caller may read took a place on the page, which then
    # held fewer than `limit` DAGs, or none, with more after it): only their stored DAGs are read and decoded.
    dags, _ = fleet(session, readable=mine, include_paused=True, offset=offset, limit=limit)
    return migrate_stored(dags, since=since, until=end, variant=variant)
