"""Waves of one fire (MAX_WAVE_CONCURRENT): which pipelines may run now, decided in the scheduler.

A schedule with ``max_wave_concurrent=W`` splits its pipelines, ordered by DAG id,
into waves of ``W``. Every run of a fire is created and started as usual, but its
first task is the wave gate (:mod:`~tessera.operators.schedules.wave_gate`): a
deferred task that waits in the triggerer, holding no worker slot, until its wave
is open. Wave 0 opens with the fire; wave N+1 opens once every pipeline of wave N
has finished this fire.

Fail-fast: a pipeline of an open wave whose run fails (its retries exhausted, so the
run itself failed) cancels every wave that has not opened yet. Their gates fail with
the reason, so their real tasks end ``upstream_failed`` and never start, and each run
involved says why in its note: work that must not run on bad upstream data stays
behind its parent in one schedule. A cancelled fire still completes (its runs are
terminal), so AFTER children are released as usual.

The scheduler-side listener keeps the plan in the schedule asset's state store
under ``waves``: ``{"fire", "waves", "open", "members", "cancelled"}``, where ``members``
maps ``"<dag_id>/<run_id>"`` to the wave of that run and ``cancelled`` is ``None`` or
``{"by": <member that failed>, "waves": [<wave>, ...], "note": <why>}``. The gates read
it from there. A run missing from ``members`` belongs to an older fire than the plan and
is not held: a late straggler must not wait for a wave plan that moved on. A cancelled
run stays cancelled when the next fire starts a new plan: the new plan carries it in
``carried`` (``{member: note}``, the newest ``CARRIED_LIMIT``), so a gate that had not
yet seen the cancellation cannot slip through.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..run_notes import append
from .fires import fire_complete
from .runs import (
    dag_of,
    pipeline_run,
    pipelines_of,
    record_of_run,
    runs_by_pipeline,
    schedule_asset_id,
)
from .state import read_state, write_state

if TYPE_CHECKING:
    from airflow.models.dagrun import DagRun
    from sqlalchemy.orm import Session

WAVES_KEY = "waves"
CARRIED_LIMIT = 100
"""Cancelled runs of earlier fires a plan remembers; an older one has long been failed by its gate."""
GATE_TASK_ID = "tessera_wave_gate"

log = logging.getLogger(__name__)


def split_waves(pipelines: Sequence[str], width: int) -> list[list[str]]:
    """Pipelines in DAG-id order, ``width`` per wave (0 = one wave holding them all)."""
    ordered = sorted(set(pipelines))
    if not width:
        return [ordered]
    return [ordered[i : i + width] for i in range(0, len(ordered), width)]


GateState = Literal["open", "wait", "cancelled"]


def cancel_reason(plan: dict[str, Any] | None, member: str) -> str | None:
    """Why run ``member`` was cancelled by fail-fast (its note), or ``None`` if it was not."""
    if not plan:
        return None
    if member in plan.get("carried", {}):
        return plan["carried"][member]
    cancelled = plan.get("cancelled") or {}
    if member in plan.get("members", {}) and plan["members"][member] in cancelled.get("waves", ()):
        return cancelled["note"]
    return None


def gate_state(plan: dict[str, Any] | None, member: str) -> GateState:
    """What the gate of run ``member`` (``"<dag_id>/<run_id>"``) does: pass, keep waiting, or fail."""
    if cancel_reason(plan, member) is not None:
        return "cancelled"
    if not plan or member not in plan.get("members", {}):
        return "open"
    return "open" if plan["members"][member] <= plan.get("open", 0) else "wait"


def gate_open(plan: dict[str, Any] | None, member: str) -> bool:
    """Whether the run ``member`` (``"<dag_id>/<run_id>"``) may pass its wave gate."""
    return gate_state(plan, member) == "open"


def cancel_note(plan: dict[str, Any], *, failed: str, waves: Sequence[int], schedule: str) -> str:
    """The run note of a fail-fast cancellation: the member that failed and the waves it cancelled."""
    named = ", ".join(f"wave {w + 1} ({', '.join(plan['waves'][w])})" for w in waves)
    return (
        f"Fail-fast: {failed} failed in wave {plan['members'][failed] + 1} of schedule "
        f"{schedule}'s fire {plan['fire']}; cancelled {named}: their pipelines do not run this fire."
    )


def _carried(old: dict[str, Any] | None) -> dict[str, str]:
    """The cancelled runs a new plan keeps from the one it replaces (the newest ``CARRIED_LIMIT``)."""
    if not old:
        return {}
    carried = dict(old.get("carried", {}))
    cancelled = old.get("cancelled") or {}
    for member, wave in old.get("members", {}).items():
        if wave in cancelled.get("waves", ()):
            carried[member] = cancelled["note"]
    return dict(list(carried.items())[-CARRIED_LIMIT:])


def _context(dag_run: DagRun, session: Session, *, starting: bool) -> tuple[dict[str, Any], int, str] | None:
    """(record, schedule asset id, fire) for a fire of a wave-gated schedule's pipeline, else None."""
    record = record_of_run(dag_run, session)
    if record is None or not record.get("max_wave_concurrent"):
        return None
    if starting and GATE_TASK_ID not in getattr(dag_of(dag_run, session), "task_dict", {GATE_TASK_ID: None}):
        log.warning(
            "%s is a pipeline of wave-gated schedule %s but has no wave gate, so nothing holds it; "
            "call ScheduleSet.apply(dag) after its tasks",
            dag_run.dag_id,
            record["name"],
        )
    mine = pipeline_run(dag_run)
    asset_id = schedule_asset_id(record["name"], session, lock=True)
    if mine is None or asset_id is None:
        return None
    return record, asset_id, mine.fire


def wave_started(dag_run: DagRun, session: Session) -> dict[str, Any] | None:
    """Place a starting run in its fire's wave plan (a new fire starts a new plan); return the plan."""
    found = _context(dag_run, session, starting=True)
    if found is None:
        return None
    record, asset_id, fire = found
    plan = read_state(asset_id, WAVES_KEY, session)
    if plan is not None and plan["fire"] > fire:
        return plan  # an older fire starting late is not held (see gate_open)
    if plan is None or plan["fire"] < fire:
        pipelines = [*pipelines_of(record["name"], session), dag_run.dag_id]
        plan = {
            "fire": fire,
            "waves": split_waves(pipelines, record["max_wave_concurrent"]),
            "open": 0,
            "members": {},
            "carried": _carried(plan),
        }
    wave = next((i for i, members in enumerate(plan["waves"]) if dag_run.dag_id in members), None)
    if wave is None:  # joined the schedule after this fire was planned: it runs in the last wave
        wave = len(plan["waves"]) - 1
    member = f"{dag_run.dag_id}/{dag_run.run_id}"
    plan["members"][member] = wave
    write_state(asset_id, WAVES_KEY, plan, session)
    if (reason := cancel_reason(plan, member)) is not None:  # started after the fail-fast: say so
        append(dag_run, reason, session=session)
    return plan


def wave_finished(dag_run: DagRun, session: Session) -> dict[str, Any] | None:
    """Open the next wave(s) once every pipeline of the open wave finished the fire; return the plan."""
    found = _context(dag_run, session, starting=False)
    if found is None:
        return None
    record, asset_id, fire = found
    plan = read_state(asset_id, WAVES_KEY, session)
    if plan is None or plan["fire"] != fire:
        return plan
    if str(dag_run.state) == "failed" and _fail_fast(plan, f"{dag_run.dag_id}/{dag_run.run_id}", record["name"]):
        write_state(asset_id, WAVES_KEY, plan, session)
        _note_cancelled(plan, dag_run, session)
        log.warning("Schedule %s: %s", record["name"], plan["cancelled"]["note"])
        return plan
    if plan.get("cancelled"):
        return plan  # a cancelled fire opens nothing more
    runs = runs_by_pipeline(record["name"], dag_run, session)
    opened = plan["open"]
    while opened < len(plan["waves"]) - 1:
        wave = plan["waves"][opened]
        if not fire_complete(fire, {dag_id: runs.get(dag_id, []) for dag_id in wave}):
            break
        opened += 1
    if opened != plan["open"]:
        plan["open"] = opened
        write_state(asset_id, WAVES_KEY, plan, session)
    return plan


def _fail_fast(plan: dict[str, Any], member: str, schedule: str) -> bool:
    """Cancel the waves not yet open because ``member`` failed; whether this changed the plan.

    Only a member of an open wave triggers it: a run of a later wave that fails on its own
    (its state set by hand, say) did no work on this fire's data, and a cancelled run's
    failure is the cancellation itself.
    """
    wave = plan["members"].get(member)
    if plan.get("cancelled") or wave is None or wave > plan["open"]:
        return False
    later = list(range(plan["open"] + 1, len(plan["waves"])))
    if not later:
        return False
    note = cancel_note(plan, failed=member, waves=later, schedule=schedule)
    plan["cancelled"] = {"by": member, "waves": later, "note": note}
    return True


def _note_cancelled(plan: dict[str, Any], failed: DagRun, session: Session) -> None:
    """Say why on the failed run and on every run of a cancelled wave that has started already."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    note = plan["cancelled"]["note"]
    append(failed, note, session=session)
    cancelled = set(plan["cancelled"]["waves"])
    for member, wave in plan["members"].items():
        if wave not in cancelled:
            continue
        dag_id, run_id = member.split("/", 1)
        run = session.scalar(select(DagRun).where(DagRun.dag_id == dag_id, DagRun.run_id == run_id))
        if run is not None:
            append(run, note, session=session)
