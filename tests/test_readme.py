"""Every schedule the documentation tells users to write constructs; nothing published is a placeholder."""

from __future__ import annotations

import re

import pytest

import tessera.timetables as timetables
from tessera.operators.backoff import backoff

from .conftest import REPO

TABLE = (REPO / "docs" / "which-schedule.md").read_text()
"""The "Which schedule do I write" table: what users copy first."""
# A `|` inside a table cell is written `\|` (the union operator); the code is what the escape stands for.
SNIPPETS = [
    s.replace("\\|", "|")
    for s in re.findall(r"`([^`]+)`", TABLE)
    if s.startswith(("Every(", "Every.", "Cron(", "Union("))
]


def test_readme_lists_schedules():
    assert len(SNIPPETS) >= 10


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_readme_schedule_snippet_constructs(snippet):
    namespace = {name: getattr(timetables, name) for name in timetables.__all__}
    schedule = eval(snippet, namespace)  # the documentation's own text, not user input
    assert isinstance(schedule, timetables.TesseraTimetable)
    if hasattr(schedule, "period"):  # interval and calendar cadences: the backoff row applies to them
        args = backoff(schedule)
        assert args["retry_delay"] <= args["max_retry_delay"] == schedule.period


PLACEHOLDER = re.compile(r"\b(EXAMPLES_HERE|TODO|TBD|FIXME|XXX)\b|[A-Z]+_HERE\b")
"""Text left for later: a reader must never meet it in what the project publishes."""


def _published() -> list:
    pages = [REPO / "README.md", REPO / "SECURITY.md", *sorted((REPO / "bench").glob("*.md"))]
    site = [page for page in (REPO / "docs").rglob("*") if page.suffix in (".md", ".rst") and "_build" not in str(page)]
    return pages + sorted(site)


@pytest.mark.parametrize("page", _published(), ids=lambda page: str(page.relative_to(REPO)))
def test_no_placeholder_is_published(page):
    found = [
        f"{page.name}:{number}: {line.strip()[:80]}"
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if PLACEHOLDER.search(line)
    ]
    assert not found, "placeholder text in published documentation:\n" + "\n".join(found)
