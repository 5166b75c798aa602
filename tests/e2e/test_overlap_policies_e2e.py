"""Each ``overlap=`` policy of a plain timetable on a real scheduler: exactly the runs it promises, and its records.

One deployment on SQLite (API server, dag-processor, scheduler, LocalExecutor workers) runs the
DAGs of ``dags_overlap/overlap_policies.py`` side by side: ``Every("10s")``, each run 25 s, so
every run holds its slot across two or three ticks. From the stored runs (due, window,
created, start, end) each test works out what the README's "Overlap and pause on failure"
promises, tick by tick, and compares it with what the scheduler did:

- ``skip``: no tick due while a run is in flight ever runs; the next run is the first tick
  due once the slot freed, on time; the run's note and a ``tessera.schedule.skip`` event name
  the dropped ticks (``ConcurrencyForbidden``);
- ``buffer_one``: the first tick that finds the slot taken is never dropped: it runs as soon
  as the slot frees (note and ``tessera.schedule.queued`` say so); the ticks after it while it
  waits are dropped (``BufferFull``), recorded on the next run;
- ``buffer_all``: every tick runs, in order, one at a time, each as soon as the slot frees;
  nothing is dropped;
- ``allow_all`` (the default, ``max_active_runs`` Airflow's 16): every tick runs on time and
  runs overlap; nothing to record. With ``max_active_runs=2`` a tick past the cap waits and
  runs when a slot frees, oldest first, and its note says it was queued.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import one_deployment
from .harness import AirflowHome, _utc

# About 2.5 minutes on an idle machine: make test starts the longest deployments first (tests/conftest.py).
pytestmark = [pytest.mark.e2e, pytest.mark.minutes(2.5)]

DAGS = Path(__file__).resolve().parent / "dags_overlap"
PERIOD = datetime.timedelta(seconds=10)
PROMPT = datetime.timedelta(seconds=15)
"""How soon after its moment (due, or a slot freeing) a run starts: the scheduler's loop and SQLite's write lock."""
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
WAIT = 300
FINISHED = 3
"""Finished runs each DAG is observed for: two decisions after its first run."""

WHY = {
    "BufferFull": "a fire was already queued behind the run in flight (overlap {overlap})",
    "ConcurrencyForbidden": "max_active_runs runs were in flight (overlap skip)",
}


@dataclass(frozen=True)
class Run:
    """One scheduled ``dag_run`` row and its note."""

    run_id: str
    due: datetime.datetime
    window: tuple[datetime.datetime, datetime.datetime]
    state: str
    created: datetime.datetime
    start: datetime.datetime | None
    end: datetime.datetime | None
    note: str | None


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[AirflowHome]:
    """Its own deployment: eight worker slots, as the DAGs together hold up to eight sleeping tasks at once."""
    home = AirflowHome(tmp_path_factory.mktemp("airflow-overlap"), dags_source=DAGS)
    yield from one_deployment(
        home,
        request,
        AIRFLOW__CORE__PARALLELISM="8",
    )


def _runs(home: AirflowHome, dag_id: str) -> list[Run]:
    rows = home.query(
        "SELECT r.run_id, r.run_after, r.data_interval_start, r.data_interval_end, r.state, r.created_at,"
        " r.start_date, r.end_date, n.content FROM dag_run r LEFT JOIN dag_run_note n ON n.dag_run_id = r.id"
        " WHERE r.dag_id = ? AND r.run_type = 'scheduled' ORDER BY r.run_after",
        dag_id,
    )
    return [
        Run(run_id, _utc(due), (_utc(start), _utc(end)), state, _utc(created), _utc(began), _utc(ended), note)
        for run_id, due, start, end, state, created, began, ended, note in rows
    ]


def _observed(home: AirflowHome, dag_id: str) -> list[Run]:
    """The DAG's runs once :data:`FINISHED` have ended; a run's records are written when it starts."""

    def enough() -> list[Run] | None:
        runs = _runs(home, dag_id)
        return runs if sum(run.end is not None for run in runs) >= FINISHED else None

    home.wait_for(f"{dag_id} to be parsed", lambda: home.is_parsed(dag_id), timeout=WAIT)
    runs = home.wait_for(f"{FINISHED} finished runs of {dag_id}", enough, timeout=WAIT)
    finished = [run for run in runs if run.end is not None]
    assert runs[: len(finished)] == finished, "runs end oldest first"
    for run in finished:
        assert run.state == "success", run
        assert run.window[1] == run.due, "each run's window ends at its own tick"
    for before, run in zip(finished, finished[1:], strict=False):
        # dropped="cover" (the default): a dropped tick's window is evaluated by the next run.
        assert run.window[0] == before.window[1], "windows tile: the next run covers the dropped ticks"
    return finished


def _events(home: AirflowHome, dag_id: str, event: str) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for run_id, extra in home.query("SELECT run_id, extra FROM log WHERE dag_id = ? AND event = ?", dag_id, event):
        found.setdefault(run_id, []).append(json.loads(extra))
    return found


def _ticks_between(after: datetime.datetime, before: datetime.datetime) -> list[datetime.datetime]:
    """The 10 s ticks strictly between ``after`` and ``before``."""
    tick = _tick_after(after)
    found = []
    while tick < before:
        found.append(tick)
        tick += PERIOD
    return found


def _tick_after(moment: datetime.datetime) -> datetime.datetime:
    return EPOCH + ((moment - EPOCH) // PERIOD + 1) * PERIOD


def _tick_at_or_after(moment: datetime.datetime) -> datetime.datetime:
    return EPOCH - ((EPOCH - moment) // PERIOD) * PERIOD


def _at(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _check_records(
    home: AirflowHome,
    dag_id: str,
    runs: list[Run],
    expected: dict[str, tuple[datetime.datetime | None, str | None, list[datetime.datetime]]],
    *,
    overlap: str,
    slots: int,
) -> None:
    """Each run's note and audit-log events against ``expected``: run id -> (slot freed if queued, reason, dropped)."""
    skips, queued = _events(home, dag_id, "tessera.schedule.skip"), _events(home, dag_id, "tessera.schedule.queued")
    for run in runs:
        freed, reason, dropped = expected.get(run.run_id, (None, None, []))
        lines, want_skips, want_queued = [], [], []
        if freed is not None:
            lines.append(
                f"Queued: this fire came due at {_at(run.due)} while max_active_runs {slots} run(s) of {dag_id} "
                f"were in flight (overlap {overlap}); it was created when a slot freed at {_at(freed)}."
            )
            want_queued.append({"how": "queued", "due": run.due.isoformat(), "overlap": overlap})
        if dropped:
            assert reason is not None
            why = WHY[reason].format(overlap=overlap)
            span = _at(dropped[0]) + (f" to {_at(dropped[-1])}" if len(dropped) > 1 else "")
            lines.append(f"Skipped {len(dropped)} fire(s) due {span}: {reason}: {why}.")
            first, last = dropped[0].isoformat(), dropped[-1].isoformat()
            event = {"reason": reason, "count": len(dropped), "at_least": False, "first": first, "last": last}
            want_skips.append({**event, "message": why})
        # On a mismatch, every run's instants: what the note and the expectation were derived from.
        timeline = "\n".join(f"{r.run_id}: due {r.due} created {r.created} start {r.start} end {r.end}" for r in runs)
        assert run.note == ("\n".join(lines) or None), f"{run.run_id}: {run.note!r}\n{timeline}"
        assert skips.get(run.run_id, []) == want_skips, run
        assert queued.get(run.run_id, []) == want_queued, run


def _max_active_runs(home: AirflowHome, dag_id: str) -> int:
    ((value,),) = home.query("SELECT max_active_runs FROM dag WHERE dag_id = ?", dag_id)
    return value


def _started_at(run: Run, moment: datetime.datetime) -> None:
    """``run`` started at ``moment`` (its due instant, or when a slot freed for it), as promptly as a scheduler can."""
    assert run.start is not None and moment <= run.start < moment + PROMPT, (run, moment)


# -- skip -----------------------------------------------------------------------------------------------


def test_skip_runs_no_tick_that_found_the_run_in_flight_and_records_each(stack: AirflowHome) -> None:
    dag_id = "e2e_overlap_skip"
    runs = _observed(stack, dag_id)
    assert _max_active_runs(stack, dag_id) == 1
    expected = {}
    for before, run in zip(runs, runs[1:], strict=False):
        assert before.end is not None
        # The first tick due once the slot freed; every tick before it found the run in flight.
        assert run.due == _tick_at_or_after(before.end), (before, run)
        _started_at(run, run.due)
        dropped = _ticks_between(before.due, run.due)
        assert dropped, "a 25 s run outlasts its 10 s period"
        expected[run.run_id] = (None, "ConcurrencyForbidden", dropped)
    _check_records(stack, dag_id, runs, expected, overlap="skip", slots=1)


# -- buffer_one -----------------------------------------------------------------------------------------


def test_buffer_one_runs_the_first_tick_that_finds_the_slot_taken_and_drops_the_rest(stack: AirflowHome) -> None:
    dag_id = "e2e_overlap_buffer_one"
    runs = _observed(stack, dag_id)
    assert _max_active_runs(stack, dag_id) == 1
    expected = {}
    took = runs[0].due  # when the run took the slot: its due instant, or when the run before it freed the slot
    for before, run in zip(runs, runs[1:], strict=False):
        assert before.end is not None
        # Never dropped: the first tick after the run took the slot (due while it is in flight here).
        first = _tick_after(took)
        assert first < before.end, "a 25 s run outlasts its 10 s period"
        assert run.due == first, (before, run)
        assert run.created >= before.end, "queued until the slot freed"
        _started_at(run, before.end)
        # Ticks due while this run itself was queued: a tick was already waiting, so they are dropped.
        expected[run.run_id] = (before.end, "BufferFull", _ticks_between(before.due, run.due))
        took = before.end
    assert any(dropped for _, _, dropped in expected.values()), "some tick came while one was queued"
    _check_records(stack, dag_id, runs, expected, overlap="buffer_one", slots=1)


# -- buffer_all -----------------------------------------------------------------------------------------


def test_buffer_all_runs_every_tick_in_order_one_at_a_time(stack: AirflowHome) -> None:
    dag_id = "e2e_overlap_buffer_all"
    runs = _observed(stack, dag_id)
    assert _max_active_runs(stack, dag_id) == 1
    expected = {}
    for before, run in zip(runs, runs[1:], strict=False):
        assert before.end is not None
        assert run.due == before.due + PERIOD, "every tick runs"
        assert run.due < before.end, "a 25 s run outlasts its 10 s period"
        assert run.created >= before.end, "queued until the slot freed"
        _started_at(run, before.end)
        expected[run.run_id] = (before.end, None, [])
    _check_records(stack, dag_id, runs, expected, overlap="buffer_all", slots=1)


# -- allow_all ------------------------------------------------------------------------------------------


def test_allow_all_by_default_runs_every_tick_on_time_overlapping(stack: AirflowHome) -> None:
    dag_id = "e2e_overlap_allow_all"
    runs = _observed(stack, dag_id)
    assert _max_active_runs(stack, dag_id) == 16, "Airflow's default max_active_runs is kept"
    for before, run in zip(runs, runs[1:], strict=False):
        assert run.due == before.due + PERIOD, "every tick runs"
        _started_at(run, run.due)
        assert before.end is not None and run.start is not None and run.start < before.end, "runs overlap"
    _check_records(stack, dag_id, runs, {}, overlap="allow_all", slots=16)


def _slot_free(run: Run, earlier: list[Run], slots: int) -> datetime.datetime:
    """When a slot freed for ``run``: the first moment from its due instant with fewer than ``slots`` elders unfinished.

    Every elder is due before it and takes a slot ahead of it (oldest first), created or not yet:
    two slots that free in the same moment serve the elder and this run, though Airflow creates
    one run per scheduler loop and so creates this one a loop later.
    """

    def taken(moment: datetime.datetime) -> int:
        return sum(other.end is None or moment < other.end for other in earlier)

    moments = [run.due] + sorted(other.end for other in earlier if other.end is not None and other.end > run.due)
    return next(moment for moment in moments if taken(moment) < slots)


def test_allow_all_past_max_active_runs_queues_every_tick_oldest_first(stack: AirflowHome) -> None:
    dag_id = "e2e_overlap_allow_all_2"
    runs = _observed(stack, dag_id)
    assert _max_active_runs(stack, dag_id) == 2, "the DAG's own max_active_runs is kept"
    expected = {}
    for index, (before, run) in enumerate(zip(runs, runs[1:], strict=False), start=1):
        assert run.due == before.due + PERIOD, "every tick runs, oldest first"
        freed = _slot_free(run, runs[:index], slots=2)
        _started_at(run, freed)
        if freed > run.due:
            assert run.created >= freed, "queued until a slot freed"
            expected[run.run_id] = (freed, None, [])
    assert expected, "some tick found both slots taken"
    _check_records(stack, dag_id, runs, expected, overlap="allow_all", slots=2)
