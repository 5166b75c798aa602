"""What the Schedules page reads on each load, in one request: each DAG's next run, lane, status and trigger.

One request instead of four (``plan?count=1``, ``status``, ``triggers`` and the lanes): the
readable DAGs, their rows, stored versions and contradictions are read once, not once per
call; each row holds only what the page shows of the DAG's plan and status (half the bytes of
those answers); and a timeline is a lane per DAG (its runs as a few periodic segments, from the
public plan's ``lane``), not every run of the range, so the answer does not grow with how often
a DAG runs. The lanes run from the hour ``now`` is in (so a lane is computed once an hour, see
:func:`~.plans.next_and_lane`) for :data:`LANE_AHEAD`: the widest range the page shows (35 days,
from a little before now) and the next window after it.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
from pydantic import BaseModel, Field
from sqlalchemy.exc import SQLAlchemyError

from .._airflow import utcnow
from ..api.inputs import PAGE_ROWS
from ..cancellation import each
from ..scoped_reads import Scope, outcomes_and_queued, run_picks
from .broken import broken_dags
from .broken_rows import broken_page_rows, page_update
from .contradictions import all_contradictions
from .excluded import next_exclusion
from .filters import (
    EVERY_DAG,
    ORDERS_BY_ROW,
    PageQuery,
    dags_owing_windows,
    excluded_today,
    in_order,
    listed,
    tagged_ids,
)
from .models import (
    BrokenModel,
    ConditionModel,
    Contradiction,
    DagPlan,
    DagStatus,
    DropModel,
    ExcludedRun,
    Lane,
    Lateness,
    PauseNote,
    PlannedOccurrence,
    StaleParentModel,
)
from .outcomes import RunOutcome
from .pause_notes import add_pause_notes
from .plans import lane_start, next_and_lane, plain_instant
from .row_errors import UNKNOWN_LATENESS, plan_row, status_row, unavailable
from .runs import RunHistory, histories_of, run_histories
from .schedules import ScheduledDag, duration_text, scheduled_dags, shown_ids
from .status import (
    GroupedReads,
    StatusParts,
    Verdict,
    grouped_reads,
    owed_windows,
    parent_fires,
    status_parts,
    verdict,
)
from .triggers import describe

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

LANE_AHEAD = datetime.timedelta(days=71)


class PageRun(BaseModel):
    run_type: str
    run_after: datetime.datetime | None


class PageDag(BaseModel):
    """One row of the page: what it shows of the DAG's plan (``GET /api/v1/plan``) and status (``status``)."""

    dag_id: str
    summary: str
    timezone: str
    cadence_kind: str
    phase: str | None
    is_paused: bool
    trigger: str | None = Field(description='What an asset-driven DAG runs after: "after apc_daily and mpc_daily".')
    next: PlannedOccurrence | None = Field(description="The next run that starts after `now`.")
    lane: Lane | None = Field(description="Its runs from `lanes_after` to `lanes_until`; null without a tessera plan.")
    last_outcome: RunOutcome
    last_run: PageRun | None
    skip_reason: str | None
    consecutive_failures: int
    conditions: list[ConditionModel]
    lateness: Lateness
    stale_parents: list[StaleParentModel]
    error: str | None = Field(description="Why its plan or status could not be computed.")
    broken: BrokenModel | None = Field(default=None, description="Set while the DAG's file does not parse or is gone.")
    pause: PauseNote | None = Field(default=None, description="As in the status: why tessera paused it, with the note.")
    latest_drop: DropModel | None = Field(default=None, description="As in the status: its newest dropped fires.")
    owed_windows: int | None = Field(default=None, description="As in the status: how many dropped windows are owed.")
    next_exclusion: ExcludedRun | None = Field(
        default=None,
        description="The next occurrence within a year that its exclusions skip (a date, a holiday), and why.",
    )
    may: dict[str, bool] = Field(
        default_factory=dict,
        description="What the caller may do to the DAG from the page: `pause` (and unpause) and `backfill`; "
        "each action's own route authorizes it again.",
    )


class PageCounts(BaseModel):
    """How many of the DAGs that match the page's search and filters are each of these: the whole fleet's."""

    late: int
    not_ready: int = Field(description="A condition is False (spec invalid, or the newest run failed).")
    failed_last: int
    paused: int


class PageQueryEcho(BaseModel):
    """The search, tags, filters and sort the answer lists by (the page keeps them in its address)."""

    search: str | None
    tags: list[str]
    filters: list[str]
    sort: str


class PageResponse(BaseModel):
    now: datetime.datetime = Field(description="The instant each DAG's next run starts after.")
    lanes_after: datetime.datetime = Field(description="Where every DAG's lane starts: the hour `now` is in.")
    lanes_until: datetime.datetime = Field(description="Where every DAG's lane ends (71 days after `lanes_after`).")
    dags: list[PageDag] = Field(description="`limit` rows from `offset` of the matching tessera DAGs, in `sort` order.")
    total: int = Field(description="How many rows all the pages hold: every readable tessera DAG that matches.")
    fleet_total: int = Field(
        description="Every readable tessera DAG, broken ones too, whatever the search and filters."
    )
    counts: PageCounts = Field(description="Of the `total` matching DAGs, how many are late, not ready, ...")
    offset: int = Field(description="The position of the first row here among all of them (0: the first page).")
    query: PageQueryEcho
    contradictions: list[Contradiction] = Field(description="Every contradiction visible to the caller.")
    plan_check: str = Field(description="As in ``GET /api/v1/plan``.")


def _plain(value: Any) -> Any:
    """What msgspec cannot encode by itself: a model (its fields), pendulum's datetimes (as plain ones)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, datetime.datetime):  # pendulum's DateTime
        return plain_instant(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


_ENCODER = msgspec.json.Encoder(enc_hook=_plain)


def encode(page: dict[str, Any]) -> bytes:
    """The page as JSON: the shape of :class:`PageResponse`, encoded without building its models.

    The rows are plain dicts and the lanes the public plan's own values (a dataclass encodes as its
    fields): building a model per run, segment and row cost more than everything else in the answer.
    """
    return _ENCODER.encode(page)


def _run(last: Any) -> dict[str, Any] | None:
    return None if last is None else {"run_type": str(last.run_type), "run_after": last.run_after}


def _row(
    item: ScheduledDag, next_run: Any, lane: Any, parts: StatusParts, last: Any, *, now: datetime.datetime
) -> dict[str, Any]:
    trigger = describe(item.model.asset_expression)  # the asset condition is on the DAG row already read
    plan = item.plan
    return {
        "dag_id": item.dag_id,
        "summary": item.summary,
        "timezone": item.timezone,
        "cadence_kind": item.cadence_kind,
        "phase": None if plan is None else duration_text(plan.phase),
        "is_paused": bool(item.model.is_paused),
        "trigger": None if trigger is None else trigger.text,
        "next": next_run,
        "lane": lane,
        "last_outcome": parts.outcome.last_outcome,
        "last_run": _run(last),
        "skip_reason": parts.outcome.skip_reason,
        "consecutive_failures": parts.outcome.consecutive_failures,
        "conditions": parts.outcome.conditions,
        "lateness": parts.lateness,
        "stale_parents": parts.stale_parents,
        "error": None,
        "broken": None,
        "next_exclusion": next_exclusion(item.timetable, after=now),
    }


def _broken_row(plan: DagPlan, status: DagStatus) -> dict[str, Any]:
    """The row of a DAG whose plan or status could not be computed: what those answers say, with the error."""
    return {
        "dag_id": plan.dag_id,
        "summary": plan.summary,
        "timezone": plan.timezone,
        "cadence_kind": plan.cadence_kind,
        "phase": plan.phase,
        "is_paused": plan.is_paused,
        "trigger": None,
        "next": plan.occurrences[0] if plan.occurrences else None,
        "lane": plan.lane,
        "last_outcome": status.last_outcome,
        "last_run": _run(status.last_run),
        "skip_reason": status.skip_reason,
        "consecutive_failures": status.consecutive_failures,
        "conditions": status.conditions,
        "lateness": status.lateness,
        "stale_parents": status.stale_parents,
        "error": plan.error or status.error,
        "broken": status.broken,
        "next_exclusion": None,
    }


@dataclass(frozen=True)
class _Judged:
    """A live DAG's verdict, judged for the filters and counts; its row is built only if it is listed."""

    item: ScheduledDag
    verdict: Verdict
    at: datetime.datetime
    """The instant it was judged at (as the status judges each DAG at its own): its whole status is judged there too."""
    parts: StatusParts | None = None
    """Its whole status, when it was computed with the verdict (every row is listed: see :func:`page_data`)."""


def _facts(judged: _Judged) -> dict[str, Any]:
    """What the filters, the counts and the sorts read of a row (the row itself is built once listed)."""
    found = judged.verdict
    return {
        "dag_id": judged.item.dag_id,
        "is_paused": bool(judged.item.model.is_paused),
        "last_outcome": found.last_outcome,
        "conditions": found.conditions,
        "lateness": found.lateness,
        "next": None,
    }


def _error_facts(plan: DagPlan, last_outcome: str | None) -> dict[str, Any]:
    """What the filters read of an error row (:func:`_broken_row`), before its runs are read: the same fields."""
    return {
        "dag_id": plan.dag_id,
        "is_paused": plan.is_paused,
        "last_outcome": last_outcome,  # what the error row's status reads of its runs (no plan, no functions)
        "conditions": unavailable(plan.error or "the status could not be computed"),
        "lateness": UNKNOWN_LATENESS,
        "next": plan.occurrences[0] if plan.occurrences else None,
    }


def _error_row(
    item: ScheduledDag,
    contradictions: list[Contradiction],
    history: RunHistory,
    reads: GroupedReads,
    *,
    now: datetime.datetime,
    plan: DagPlan | None = None,
) -> dict[str, Any]:
    """The row of a DAG whose plan or status cannot be computed, as the plan and the status answer it."""
    if plan is None:
        plan = _plan_row(item, contradictions, now=now)
    return _broken_row(plan, status_row(item, contradictions, history, reads))


def _fleet_size(session: Session, readable: Collection[str], broken: Collection[str]) -> int:
    """Every readable tessera DAG, live or broken, whatever the search: one count."""
    return len(set(shown_ids(session, readable=readable)).union(broken))


IN_SQL = frozenset({"paused"})
"""The filters applied to the DAG rows in SQL (:meth:`~.filters.PageQuery.rows_where`): they keep every row read."""


def page_data(
    session: Session,
    user: Any,
    readable: Collection[str],
    *,
    now: datetime.datetime,
    offset: int = 0,
    limit: int = PAGE_ROWS,
    query: PageQuery = EVERY_DAG,
) -> dict[str, Any]:
    """A page of rows for ``user``, who may read ``readable``, as of ``now`` (a :class:`PageResponse`).

    The rows are the readable tessera DAGs, live or broken, that ``query`` finds and keeps, in its
    order (:mod:`tessera.plugin.fleet.filters`); this answer holds ``limit`` of them from ``offset``,
    and counts all of them. Every matching DAG's :class:`~.status.Verdict` is judged (what the
    filters and the counts read: late, not ready, failed last), from one light grouped read of the
    runs; the whole status, next run and lane of the listed ones only (the next run of all when
    sorting by it). When every matching row is listed anyway, the whole statuses are read at once
    and the verdicts taken from them; when the listed rows are known before the runs are read (no
    filter, an order by DAG id or next run: :func:`_predicted`), their picks come with the light
    read. A fixed number of queries, whatever the fleet and the query.
    Each row is derived by the same functions as the plan and the status (the next run and lane of
    :mod:`.plans`, the outcome, lateness and stale parents of :func:`~.status.status_parts`),
    computing only what the page shows. A DAG whose row cannot be computed is answered as the plan
    and status answer it: with its error (:mod:`.row_errors`).
    """
    scope = Scope.of(readable)
    contradictions, check = all_contradictions(session, user, readable)
    # A DAG whose file broke keeps its row, with the reason and since when, as in the plan and status.
    broken = broken_dags(session, scope)
    live = shown_ids(session, readable=readable, where=query.rows_where())
    found_broken = [dag_id for dag_id in broken if query.matches_id(dag_id)]
    if query.tags:
        found_broken = sorted(tagged_ids(session, found_broken, query.tags))
    # readable=None: the ids were read with the caller's rights just above
    items = scheduled_dags(session, readable=None, dag_ids=live) if live else []
    # Every row is listed (no filter judged in memory, one page holds them all): their whole statuses at once.
    whole = offset == 0 and len(items) + len(found_broken) <= limit and query.filters <= IN_SQL
    histories = run_histories(session, scope, [item.dag_id for item in items]) if whole else {}
    reads = grouped_reads(items, session, scope, parents_of=None if whole else ())
    rows: dict[str, dict[str, Any]] = {}
    judged: dict[str, _Judged] = {}  # live rows: their facts in `rows` until listed
    unjudged: dict[str, tuple[ScheduledDag, DagPlan]] = {}  # error rows whose runs are read once listed
    live_ids = {item.dag_id for item in items}
    added = broken_page_rows(
        session, scope, broken, [dag_id for dag_id in found_broken if dag_id not in live_ids], after=now
    )
    planned: dict[str, tuple[Any, Any]] = {}  # next runs and lanes computed for the order: a listed row's too
    if query.sort == "next_run":  # the order needs every row's next run (kept for an hour: see .plans)
        for item in each(items):
            if item.error is None and (found_plan := _planned(item, now=now)) is not None:
                planned[item.dag_id] = found_plan
    error_plans = {item.dag_id: _plan_row(item, contradictions, now=now) for item in items if item.error is not None}
    # The rows a page lists, when its order reads no status: their picks come with the verdicts' read.
    predicted: set[str] = set()
    if not whole and not query.filters and query.sort in ORDERS_BY_ROW:
        predicted = _predicted(items, planned, error_plans, added, query, offset=offset, limit=limit)
    if whole:
        for item in each(items):  # stops when the caller leaves (the status of every matching DAG)
            history, at = histories[item.dag_id], utcnow()
            parts = _parts(item, contradictions, history, reads, now=at)
            if parts is None:
                plan = error_plans.get(item.dag_id)
                rows[item.dag_id] = _error_row(item, contradictions, history, reads, now=now, plan=plan)
            else:
                judged[item.dag_id] = _Judged(item, Verdict.of(parts), at, parts)
                rows[item.dag_id] = _facts(judged[item.dag_id])
    else:
        found_picks = outcomes_and_queued(session, scope, [item.dag_id for item in items], picked=predicted)
        picks = {pick.dag_id: pick for pick in found_picks}
        for item in each(items):  # stops when the caller leaves (the verdict of every matching DAG)
            pick, at = picks.get(item.dag_id), utcnow()
            found = _verdict(item, contradictions, reads, pick, now=at)
            if found is None:
                plan = error_plans.get(item.dag_id) or _plan_row(item, contradictions, now=now)
                unjudged[item.dag_id] = (item, plan)
                rows[item.dag_id] = _error_facts(plan, None if pick is None else pick.outcome)
            else:
                judged[item.dag_id] = _Judged(item, found, at)
                rows[item.dag_id] = _facts(judged[item.dag_id])
    rows.update((plan.dag_id, _broken_row(plan, status)) for plan, status in added)
    for dag_id, row in rows.items():
        if dag_id in broken:
            row.update(page_update(broken[dag_id]))
    if query.sort == "next_run":
        for dag_id in judged:
            rows[dag_id]["next"] = planned[dag_id][0] if dag_id in planned else None
    computed = {
        "excluded_today": excluded_today({item.dag_id: item.timetable for item in items}, now)
        if "excluded_today" in query.filters
        else set(),
        "owed": dags_owing_windows(reads.owed, reads.drops) if "owed" in query.filters else set(),
    }
    page = listed(rows.values(), query, offset=offset, limit=limit, computed=computed)
    if not whole:  # the whole statuses of the listed rows only: their runs and their parents' fires
        shown = [row["dag_id"] for row in page.rows if row["dag_id"] in judged or row["dag_id"] in unjudged]
        # read with the verdicts when predicted (a DAG without a pick has no runs); the others' now
        picked = [picks[dag_id] for dag_id in shown if dag_id in predicted and dag_id in picks]
        unpicked = [dag_id for dag_id in shown if dag_id not in predicted]
        histories = histories_of(session, scope, shown, picked + run_picks(session, scope, unpicked))
        listed_items = [judged[dag_id].item for dag_id in shown if dag_id in judged]
        reads = dataclasses.replace(reads, completed=parent_fires(listed_items, session))
    listed_rows = []
    for row in each(page.rows):  # the listed rows, built whole: their next run and lane too
        dag_id = row["dag_id"]
        if dag_id in judged or dag_id in unjudged:
            if dag_id in judged:
                row = _full_row(
                    judged[dag_id], contradictions, histories[dag_id], reads, now=now, planned=planned.get(dag_id)
                )
            else:
                item, plan = unjudged[dag_id]
                row = _error_row(item, contradictions, histories[dag_id], reads, now=now, plan=plan)
            if dag_id in broken:
                row.update(page_update(broken[dag_id]))
        listed_rows.append(row)
    add_pause_notes(session, listed_rows)  # one query for every paused DAG listed, none while none is paused
    return {
        "now": now,
        "lanes_after": lane_start(now),
        "lanes_until": lane_start(now) + LANE_AHEAD,
        "dags": listed_rows,
        "total": page.matching,
        "fleet_total": _fleet_size(session, readable, broken) if query.narrows_rows else len(set(live).union(broken)),
        "counts": page.counts,
        "offset": offset,
        "query": query.as_dict(),
        "contradictions": contradictions,
        "plan_check": check,
    }


def _plan_row(item: ScheduledDag, contradictions: list[Contradiction], *, now: datetime.datetime) -> DagPlan:
    """The plan of a DAG whose status cannot be judged, as its error row shows it (with its lane)."""
    until = lane_start(now) + LANE_AHEAD
    return plan_row(item, after=now, count=1, until=None, contradictions=contradictions, lane_until=until)


def _first(plan: DagPlan) -> Any:
    return plan.occurrences[0] if plan.occurrences else None


def _predicted(
    items: list[ScheduledDag],
    planned: dict[str, tuple[Any, Any]],
    error_plans: dict[str, DagPlan],
    added: list[tuple[DagPlan, DagStatus]],
    query: PageQuery,
    *,
    offset: int,
    limit: int,
) -> set[str]:
    """The ids of the rows a page lists, known before any run is read: no filter, and an order by a
    row's own fields (:data:`~.filters.ORDERS_BY_ROW`), from the fields its rows are ordered by.

    A live DAG's next run is its plan's (``planned``), an error row's and a broken DAG's their plan's
    first, as :func:`page_data` fills them. A DAG whose verdict fails once its runs are read becomes
    an error row (its next run then its plan's): if that moves another row onto the page, that row's
    runs are read apart (:func:`page_data`), so the answer never depends on this guess.
    """
    rows = [
        {
            "dag_id": item.dag_id,
            "next": _first(error_plans[item.dag_id])
            if item.dag_id in error_plans
            else (planned[item.dag_id][0] if item.dag_id in planned else None),
        }
        for item in items
    ]
    rows += [{"dag_id": plan.dag_id, "next": _first(plan)} for plan, _ in added]
    return {row["dag_id"] for row in in_order(rows, query.sort)[offset : offset + limit]}


def _parts(
    item: ScheduledDag,
    contradictions: list[Contradiction],
    history: RunHistory,
    reads: GroupedReads,
    *,
    now: datetime.datetime,
) -> StatusParts | None:
    """The DAG's whole status, or None when it cannot be computed (its row is then the error row)."""
    if item.error is not None:
        return None
    try:
        return status_parts(item, contradictions, history, reads, now=now)
    except SQLAlchemyError:
        raise
    except Exception:
        return None  # answered as the plan and the status answer it: with the error, which they log


def _verdict(
    item: ScheduledDag, contradictions: list[Contradiction], reads: GroupedReads, pick: Any, *, now: datetime.datetime
) -> Verdict | None:
    """The DAG's verdict from its light pick (None: no runs), or None when it cannot be computed."""
    if item.error is not None:
        return None
    try:
        return verdict(
            item,
            contradictions,
            reads.cursors,
            last_outcome=None if pick is None else pick.outcome,
            unstarted=pick if pick is not None and pick.run_id is not None else None,
            now=now,
        )
    except SQLAlchemyError:
        raise
    except Exception:
        return None  # its row is the error row, which logs the error when it is listed


def _planned(item: ScheduledDag, *, now: datetime.datetime) -> tuple[Any, Any] | None:
    """The DAG's next run as the page lists it and its lane (:func:`~.plans.next_and_lane`), or None when
    they cannot be computed (its row then says why)."""
    try:
        return next_and_lane(item, now=now, lane_until=lane_start(now) + LANE_AHEAD)
    except SQLAlchemyError:
        raise
    except Exception:
        return None


def _full_row(
    found: _Judged,
    contradictions: list[Contradiction],
    history: RunHistory,
    reads: GroupedReads,
    *,
    now: datetime.datetime,
    planned: tuple[Any, Any] | None = None,
) -> dict[str, Any]:
    """A listed live DAG's row: its whole status, its next run and lane; or its error row.

    ``planned``: its next run and lane when the order computed them already (:func:`_planned`).
    """
    item = found.item
    parts = found.parts if found.parts is not None else _parts(item, contradictions, history, reads, now=found.at)
    if parts is None:
        return _error_row(item, contradictions, history, reads, now=now)
    if planned is None and (planned := _planned(item, now=now)) is None:
        return _error_row(item, contradictions, history, reads, now=now)
    next_run, lane = planned
    row = _row(item, next_run, lane, parts, history.last_run, now=now)
    # What the fires it did not run left: the newest drop (its reason and record) and the windows owed.
    row["latest_drop"] = parts.drop
    row["owed_windows"] = owed_windows(item, reads)
    return row
