"""The support table of the documentation says what the compatibility tier ran, per feature and Airflow release.

``docs/reference/support.json`` holds, per release, each feature row as the tier
(``scripts/compat.sh``) last ran it: ``yes`` or ``refused``; the tier fails when what it runs
differs from it. This test holds ``docs/reference/support.md``'s table to that file, its rows to
the tier's (:data:`tests.compat.FEATURE_TESTS`), a refused cell to the release
``tessera.timetables.support`` names for the feature, and the 3.3 column to the main suite, which
runs every row's tests on Airflow 3.3.
"""

from __future__ import annotations

import json

from tessera.timetables.support import FEATURES

from .compat import FEATURE_TESTS, NOT_RUN, SHIPPED
from .conftest import REPO

PAGE = REPO / "docs" / "reference" / "support.md"
RESULTS = REPO / "docs" / "reference" / "support.json"
COLUMNS = ("3.1", "3.2", "3.3")
WORDS = {"yes": "yes", "refused": "refused (needs {since})", "untested": "untested", "FAILED": "fails"}
"""How the page shows each result; ``fails``: the tier ran the row's tests there and some failed (a known
gap, listed on the page, so CI fails on a new failure or when one is fixed without updating the table)."""


def _table() -> dict[str, dict[str, str]]:
    rows = [line for line in PAGE.read_text().splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert header == ["feature", *(f"Airflow {release}" for release in COLUMNS)], header
    table = {}
    for line in rows[1:]:
        feature, *cells = (cell.strip() for cell in line.strip("|").split("|"))
        table[feature] = dict(zip(COLUMNS, cells))
    return table


def _expected_cell(row: str, result: str) -> str:
    since = {feature.name: feature.since_text for feature in FEATURES}.get(row, "")
    return WORDS[result].format(since=since)


def test_the_page_lists_the_rows_the_tier_runs():
    assert list(_table()) == [*FEATURE_TESTS, SHIPPED]


def test_each_older_release_column_is_what_the_tier_recorded():
    recorded = json.loads(RESULTS.read_text())["releases"]
    table = _table()
    for release in ("3.1", "3.2"):
        assert set(recorded[release]) == set(table), f"{RESULTS.name}: rows of {release} differ from the page"
        for row, result in recorded[release].items():
            assert table[row][release] == _expected_cell(row, result), (row, release)


def test_a_cell_is_untested_exactly_where_the_tier_says_why():
    recorded = json.loads(RESULTS.read_text())["releases"]
    for release in ("3.1", "3.2"):
        untested = {row for row, result in recorded[release].items() if result == "untested"}
        assert untested == set(NOT_RUN.get(release, {})), release


def test_a_cell_is_refused_exactly_where_the_feature_needs_a_newer_airflow():
    recorded = json.loads(RESULTS.read_text())["releases"]
    needs = {feature.name: feature.since for feature in FEATURES}
    for release in ("3.1", "3.2"):
        minor = tuple(map(int, release.split(".")))
        for row, result in recorded[release].items():
            assert (result == "refused") == (row in needs and minor < needs[row]), (row, release, result)


def test_the_main_suite_runs_every_row_on_airflow_3_3():
    assert {row: cells["3.3"] for row, cells in _table().items()} == dict.fromkeys([*FEATURE_TESTS, SHIPPED], "yes")
