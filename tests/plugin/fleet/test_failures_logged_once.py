"""A DAG that fails the same way on every request is logged in full once, not on every page load."""

from __future__ import annotations

import logging

import pytest

from tessera.plugin.fleet import failures


@pytest.fixture(autouse=True)
def _fresh_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(failures, "_logged", set())


def _broken() -> Exception:
    try:
        try:
            raise ValueError("every: 7m does not divide a day evenly")
        except ValueError as cause:
            raise RuntimeError("could not decode the timetable") from cause
    except RuntimeError as error:
        return error


def test_the_same_failure_is_logged_in_full_once_then_quietly(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=failures.log.name)
    error = _broken()
    lines = [failures.failure("reading the stored DAG", "broken_dag", error) for _ in range(3)]
    said = (
        "reading the stored DAG failed: RuntimeError: could not decode the timetable "
        "(because ValueError: every: 7m does not divide a day evenly)"
    )
    assert lines == [said, said, said]  # the row says it every time
    records = [r for r in caplog.records if r.name == failures.log.name]
    assert [r.levelno for r in records] == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    assert records[0].exc_info is not None and records[1].exc_info is None
    assert "again" in records[1].getMessage() and "'broken_dag'" in records[0].getMessage()


def test_another_failure_or_another_dag_is_logged_again(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=failures.log.name)
    failures.failure("reading the stored DAG", "a", ValueError("one"))
    failures.failure("reading the stored DAG", "a", ValueError("two"))
    failures.failure("reading the stored DAG", "b", ValueError("one"))
    failures.failure("computing the plan", "a", ValueError("one"))
    assert [r.levelno for r in caplog.records if r.name == failures.log.name] == [logging.WARNING] * 4


def test_the_memory_of_what_was_logged_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(failures, "REMEMBERED", 10)
    for i in range(25):
        failures.failure("reading the stored DAG", f"dag_{i}", ValueError("x"))
        assert len(failures._logged) <= 10
