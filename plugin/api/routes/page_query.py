"""The search, tags, filters and sort ``GET /api/v1/page`` takes, read from its query string.

Read as plain text and judged by :meth:`tessera.plugin.fleet.filters.PageQuery.parse`, which
names the parameter, the value and the fix in every refusal (422), in the API's own words.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from ...fleet.filters import FILTERS, MAX_SEARCH, MAX_TAG, MAX_TAGS, SORTS, PageQuery

Search = Annotated[
    str | None,
    Query(description=f"Only the DAGs whose id holds this text, whatever its case (at most {MAX_SEARCH} characters)."),
]
Tags = Annotated[
    list[str],
    Query(
        alias="tag",
        description=f"Only the DAGs with any of these tags (repeat `tag`; at most {MAX_TAGS}, each {MAX_TAG} long).",
    ),
]
Filters = Annotated[
    list[str],
    Query(
        alias="filter",
        description="Only the DAGs that pass every filter given (repeat `filter`): "
        + "; ".join(f"`{name}`: {meaning}" for name, meaning in FILTERS.items()),
    ),
]
Sort = Annotated[
    str | None,
    Query(description="The order: " + "; ".join(f"`{name}`: {meaning}" for name, meaning in SORTS.items())),
]


def page_query(search: Search = None, tags: Tags = [], filters: Filters = [], sort: Sort = None) -> PageQuery:  # noqa: B006 - FastAPI copies a list default
    """The caller's :class:`PageQuery`, refused (422) naming what to fix."""
    return PageQuery.parse(search=search, tags=tags, filters=filters, sort=sort)


PageQueryDep = Annotated[PageQuery, Depends(page_query)]
