"""The one run-note writer: the whole note within Airflow's column, the newest lines kept, one instant format.

The cap is checked at its edges with pinned text (a note of exactly the limit, one character
more, a single line longer than the column, characters beyond ASCII, a count carried on by a later
append); the limit itself is checked against Airflow's model and the DDL it creates on PostgreSQL.
The writes (note and audit entries) go through a real session of the metadata DB.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tessera.operators.run_notes import NOTE_LIMIT, Audit, append, at, capped, dropped_line


def test_the_limit_is_airflows_note_column_as_postgresql_creates_it():
    from airflow.models.dagrun import DagRunNote
    from sqlalchemy.dialects import postgresql
    from sqlalchemy.schema import CreateTable

    assert NOTE_LIMIT == DagRunNote.__table__.c.content.type.length == 1000
    ddl = str(CreateTable(DagRunNote.__table__).compile(dialect=postgresql.dialect()))
    assert f"content VARCHAR({NOTE_LIMIT})" in ddl


def test_an_instant_is_written_in_utc_to_the_second():
    moment = datetime.datetime(2026, 3, 29, 3, 30, 15, 999, tzinfo=ZoneInfo("Europe/Amsterdam"))
    assert at(moment) == "2026-03-29 01:30:15 UTC"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(["a" * 499, "b" * 500], "a" * 499 + "\n" + "b" * 500, id="exactly-the-limit"),
        pytest.param(
            ["a" * 500, "b" * 500], "… 1 earlier line dropped\n" + "b" * 500, id="one-over-drops-the-oldest-line"
        ),
        pytest.param(
            ["x" * 10] * 100,
            "… 12 earlier lines dropped\n" + "\n".join(["x" * 10] * 88),
            id="many-lines-keep-the-newest-that-fit",
        ),
        pytest.param(["a" * 1000], "a" * 1000, id="one-line-of-the-limit"),
        pytest.param(["a" * 1001], "a" * 999 + "…", id="one-line-over-keeps-its-start"),
        pytest.param(["old", "n" * 5000], "… 1 earlier line dropped\n" + "n" * 974 + "…", id="a-huge-newest-line"),
        pytest.param(["é" * 1000], "é" * 1000, id="accents-count-as-characters"),
        pytest.param(["🙂" * 500, "😀" * 500], "… 1 earlier line dropped\n" + "😀" * 500, id="emoji-over-by-one"),
        pytest.param(
            ["… 7 earlier lines dropped", "c" * 600, "d" * 400],
            "… 8 earlier lines dropped\n" + "d" * 400,
            id="a-count-is-carried-on",
        ),
        pytest.param(["… 7 earlier lines dropped", "e"], "… 7 earlier lines dropped\ne", id="a-count-is-kept"),
    ],
)
def test_the_note_keeps_the_newest_lines_within_the_column(lines: list[str], expected: str):
    note = capped(lines)
    assert note == expected
    assert len(note) <= NOTE_LIMIT


def test_the_count_line_reads_well():
    assert [dropped_line(n) for n in (1, 2, 100)] == [
        "… 1 earlier line dropped",
        "… 2 earlier lines dropped",
        "… 100 earlier lines dropped",
    ]


@pytest.fixture
def held_run(airflow_db: str) -> Iterator[tuple[Any, Any]]:
    """A stored dag run held by a session; its rows and audit entries are removed after the test."""
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    with create_session() as session:
        run = DagRun(dag_id="run_notes_probe", run_id="manual__notes", run_type="manual")
        session.add(run)
        session.flush()
        yield run, session
        session.rollback()
    with create_session() as cleanup:
        for model in (DagRun, Log):
            cleanup.execute(delete(model).where(model.dag_id == "run_notes_probe"))


def test_lines_are_appended_and_their_audit_entries_added_in_the_runs_session(held_run):
    from airflow.models.log import Log
    from sqlalchemy import select

    run, session = held_run
    run.note = "A person wrote this."
    note = append(
        run,
        "first\nsecond",
        "",
        "third",
        session=session,
        audit=[Audit("tessera.probe", {"n": 1}), Audit("tessera.probe", '{"n": 2}')],
    )
    assert note == run.note == "A person wrote this.\nfirst\nsecond\nthird"
    session.flush()
    extras = session.scalars(select(Log.extra).where(Log.dag_id == run.dag_id).order_by(Log.id)).all()
    assert [json.loads(extra) for extra in extras] == [{"n": 1}, {"n": 2}]
    owners = set(session.scalars(select(Log.owner).where(Log.dag_id == run.dag_id)))
    assert owners == {"tessera"}


def test_appends_past_the_column_keep_the_newest_and_count_every_dropped_line(held_run):
    run, session = held_run
    for attempt in range(1, 101):  # RETRIES 100, its documented maximum: 100 lines of about 90 characters
        append(
            run,
            f"Retry: attempt {attempt} of 101 failed (a task failed); attempt {attempt + 1} may start.",
            session=session,
        )
    lines = run.note.split("\n")
    assert len(run.note) <= NOTE_LIMIT
    assert lines[0] == dropped_line(100 - len(lines) + 1)
    assert lines[-1].startswith("Retry: attempt 100 of 101")
    assert [int(line.split()[2]) for line in lines[1:]] == list(range(100 - len(lines) + 2, 101))


def test_nothing_to_add_leaves_the_note_alone(held_run):
    run, session = held_run
    assert append(run, "", session=session) is None
    assert run.dag_run_note is None
