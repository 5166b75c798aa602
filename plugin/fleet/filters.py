"""Which of the caller's DAGs the Schedules page lists, and in which order: its search, filters and sort.

The one place that decides what ``GET /api/v1/page?search=&tag=&filter=&sort=`` lists; the page
sends the same words and keeps them in its address, so a link to "late DAGs tagged team-x, most
late first" shows the same rows to whoever opens it (each caller sees only what they may read).

Two kinds of condition:

* what the DAG row says (its id, its tags, whether it is paused) is applied in SQL, so a search
  reads only the DAGs it finds (:func:`PageQuery.rows_where`);
* what is computed from the plan and the runs (late, not ready, failed last, paused, excluded
  today, owing windows) is judged on each row of the whole matching fleet, in memory: its
  verdict (:func:`~.status.verdict`, from one light grouped read of every matching DAG's runs),
  the status fields the whole status would give it; the whole status is read for the listed rows
  only. The number of SQL statements does not depend on the fleet, nor on the filters chosen
  (:func:`listed`).

The counts of the answer are the whole matching fleet's, never a page's.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from airflow.models.dag import DagModel, DagTag
from sqlalchemy import ColumnElement, and_, func, select

from tessera.timetables.base import TesseraTimetable

from ..errors import Unprocessable

MAX_SEARCH = 250
"""The longest search: Airflow's ``dag_id`` column holds at most 250 characters."""
MAX_TAGS = 10
"""The most tags one query names (a DAG matches when it has any of them)."""
MAX_TAG = 100
"""The longest tag: Airflow's ``dag_tag.name`` column holds at most 100 characters."""

FILTERS = {
    "late": "its run is late (the lateness rule of the status)",
    "not_ready": "a condition is False (its spec is invalid, or its newest run failed)",
    "failed_last": "its newest finished run (or fire) failed",
    "paused": "it is paused",
    "excluded_today": "its schedule skips an occurrence today (UTC) for its exclusions",
    "owed": "it owes windows it has not run, or dropped some",
}
"""Each filter the page offers, and what a DAG must be to pass it; several filters must all hold."""
SORTS = {
    "dag_id": "by DAG id",
    "lateness": "the latest first, then the DAGs that are not late, by DAG id",
    "next_run": "the soonest next run first (when it may start), DAGs without one last",
}
"""Each order the page offers."""
DEFAULT_SORT = "dag_id"


def _shown(value: str) -> str:
    return ascii(value if len(value) <= 40 else value[:40] + "...")


@dataclass(frozen=True)
class PageQuery:
    """A caller's search, tags, filters and sort, validated: build one with :meth:`parse`."""

    search: str | None = None
    """A substring of the DAG id, matched without regard to case."""
    tags: tuple[str, ...] = ()
    """A DAG matches when it has any of these tags."""
    filters: frozenset[str] = frozenset()
    sort: str = DEFAULT_SORT

    @classmethod
    def parse(cls, *, search: str | None, tags: Sequence[str], filters: Sequence[str], sort: str | None) -> PageQuery:
        """The query the parameters ask for; :class:`Unprocessable` naming the parameter, the value and the fix."""
        if search is not None and len(search) > MAX_SEARCH:
            raise Unprocessable(
                f"`search`: {_shown(search)} is {len(search)} characters; a DAG id has at most {MAX_SEARCH}: "
                "search for a shorter part of it"
            )
        if len(tags) > MAX_TAGS:
            raise Unprocessable(f"`tag`: {len(tags)} tags given; name at most {MAX_TAGS} (a DAG with any matches)")
        for tag in tags:
            if not tag or len(tag) > MAX_TAG:
                raise Unprocessable(f"`tag`: {_shown(tag)}; a tag is 1 to {MAX_TAG} characters, as Airflow stores them")
        for name in filters:
            if name not in FILTERS:
                raise Unprocessable(
                    f"`filter`: {_shown(name)} is not a filter; use one of {', '.join(FILTERS)} "
                    "(repeat `filter` to combine them)"
                )
        if sort is not None and sort not in SORTS:
            raise Unprocessable(f"`sort`: {_shown(sort)} is not an order; use one of {', '.join(SORTS)}")
        return cls(
            search=search or None,
            tags=tuple(sorted(set(tags))),
            filters=frozenset(filters),
            sort=sort or DEFAULT_SORT,
        )

    @property
    def narrows_rows(self) -> bool:
        """Whether the DAG rows are narrowed in SQL (then the fleet's size is counted apart)."""
        return self.search is not None or bool(self.tags) or "paused" in self.filters

    def rows_where(self) -> list[ColumnElement[bool]]:
        """The SQL conditions on Airflow's ``dag`` rows: the id search and the tags."""
        where: list[ColumnElement[bool]] = []
        if self.search is not None:
            # autoescape: a "_" or "%" in the search is looked for as itself, not as a LIKE wildcard
            where.append(func.lower(DagModel.dag_id).contains(self.search.lower(), autoescape=True))
        if self.tags:
            where.append(DagModel.dag_id.in_(select(DagTag.dag_id).where(DagTag.name.in_(self.tags))))
        if "paused" in self.filters:  # on the row too: the DAGs that are not paused are never read
            where.append(DagModel.is_paused.is_(True))
        return where

    def matches_id(self, dag_id: str) -> bool:
        """The id search, for the rows not read from ``dag`` with :meth:`rows_where` (broken DAGs)."""
        return self.search is None or self.search.lower() in dag_id.lower()

    def as_dict(self) -> dict[str, Any]:
        """The query as the answer echoes it (what the page writes into its address)."""
        return {"search": self.search, "tags": list(self.tags), "filters": sorted(self.filters), "sort": self.sort}


EVERY_DAG = PageQuery()
"""No search, no filter, by DAG id: the page as it opens."""


def tagged_ids(session: Any, dag_ids: Collection[str], tags: Collection[str]) -> set[str]:
    """Which of ``dag_ids`` have any of ``tags``: one query (for the rows :meth:`PageQuery.rows_where` did not read)."""
    if not dag_ids or not tags:
        return set(dag_ids) if not tags else set()
    query = select(DagTag.dag_id).where(and_(DagTag.dag_id.in_(sorted(dag_ids)), DagTag.name.in_(sorted(tags))))
    return set(session.scalars(query))


# -- what is computed of each row ----------------------------------------------------------------


def is_late(row: Mapping[str, Any]) -> bool:
    return bool(row["lateness"].late)


def is_not_ready(row: Mapping[str, Any]) -> bool:
    """A condition is False: the page's "not ready" (a spec that cannot fire, a newest run that failed)."""
    return any(condition.status == "False" for condition in row["conditions"])


def failed_last(row: Mapping[str, Any]) -> bool:
    return row["last_outcome"] == "failed"


def is_paused(row: Mapping[str, Any]) -> bool:
    return bool(row["is_paused"])


COUNTED: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "late": is_late,
    "not_ready": is_not_ready,
    "failed_last": failed_last,
    "paused": is_paused,
}
"""The filters judged from a row's own fields, which the answer also counts over the matching fleet."""


def excluded_today(timetables: Mapping[str, Any], now: datetime.datetime) -> set[str]:
    """The DAGs whose schedule skips an occurrence today (the UTC day ``now`` is in) for its exclusions.

    Asked of each tessera timetable's public plan (``excluded``), one occurrence at most: no query.
    """
    start = datetime.datetime(now.year, now.month, now.day, tzinfo=datetime.timezone.utc)
    after, until = start - datetime.timedelta(microseconds=1), start + datetime.timedelta(days=1, microseconds=-1)
    return {
        dag_id
        for dag_id, timetable in timetables.items()
        if isinstance(timetable, TesseraTimetable) and timetable.plan.excluded(after=after, until=until, count=1)
    }


def dags_owing_windows(owed: Mapping[str, int], dropped: Mapping[str, Any]) -> set[str]:
    """The ``owed`` filter: the DAGs that owe windows (``owed``: counted, see :func:`~.status.owed_counts`)
    or whose newest record says fires were dropped (``dropped``: :func:`~.status.latest_drops`)."""
    return {dag_id for dag_id, count in owed.items() if count} | set(dropped)


@dataclass(frozen=True)
class Listed:
    """The rows one page shows, and the counts of every row that matches."""

    rows: list[dict[str, Any]]
    matching: int
    counts: dict[str, int]


_NEVER = datetime.datetime.max.replace(tzinfo=datetime.timezone.utc)


def _starts(run: Any) -> datetime.datetime:
    """When a row's next run may start (a computed row's fields, or an error row's planned occurrence)."""
    if run is None:
        return _NEVER
    return run["run_after"] if isinstance(run, Mapping) else run.run_after


def _sort_key(sort: str) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    if sort == "lateness":
        return lambda row: (-(row["lateness"].late_by_seconds or 0) if is_late(row) else 1, row["dag_id"])
    if sort == "next_run":
        return lambda row: (_starts(row["next"]), row["dag_id"])
    return lambda row: (row["dag_id"],)


def in_order(rows: Iterable[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    """``rows`` in the order ``sort`` names (the one order :func:`listed` lists them in)."""
    return sorted(rows, key=_sort_key(sort))


ORDERS_BY_ROW = frozenset({"dag_id", "next_run"})
"""The orders that read no status field (the DAG id, the next run): without a filter, the rows a page
lists are known before any run is read."""


def listed(
    rows: Iterable[dict[str, Any]],
    query: PageQuery,
    *,
    offset: int,
    limit: int,
    computed: Mapping[str, set[str]],
) -> Listed:
    """The rows that pass ``query``'s filters, in its order, ``limit`` from ``offset``, and the counts of them all.

    ``rows`` hold each DAG's status fields (and ``next`` when sorting by it); ``computed`` holds, per
    filter that is not a row's own field (``excluded_today``, ``owed``), the DAG ids that pass it.
    """
    checks = [
        COUNTED[name] if name in COUNTED else (lambda row, ids=computed[name]: row["dag_id"] in ids)
        for name in sorted(query.filters)
    ]
    kept = [row for row in rows if all(check(row) for check in checks)]
    counts = {name: sum(1 for row in kept if judge(row)) for name, judge in COUNTED.items()}
    kept = in_order(kept, query.sort)
    return Listed(kept[offset : offset + limit], len(kept), counts)
