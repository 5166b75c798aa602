"""The verdict when a run answers the question: it ran, runs, waits (and for what), or ran without firing."""

from __future__ import annotations

import datetime

from tessera.operators.fan_in.freshness import STALE_NOTE
from tessera.operators.functions.record import Phase
from tessera.timetables.base import TesseraTimetable
from tessera.timetables.run_facts.record import RunRecord

from ..fleet.schedules import duration_text
from ..scoped_reads import RunRow, TaskRow
from .blockers import blocker_at, late_decision, pause_blocker
from .facts import Facts
from .models import Decision
from .waits import WavePlace
from .words import ago, names, run_record, run_words, trigger_words, when

"""How the AFTER release note starts when a parent was stale (``tessera.operators.fan_in.freshness``)."""


def _label(facts: Facts, run: RunRow) -> str:
    focus = facts.view.focus
    if run is facts.occurrence_run and focus is not None:
        return f"the {when(focus.nominal, facts.view.timezone)} occurrence"
    return f"the {run.run_type.replace('_', '-')} run"


def run_decision(facts: Facts, run: RunRow) -> Decision:
    """Why ``run`` (the subject) ran as it did, or what it waited for at T."""
    label = _label(facts, run)
    skipped = {task: rec for task, rec in facts.fire_records.items() if rec.phase is Phase.SKIPPED}
    if skipped:
        task, record = sorted(skipped.items())[0]
        decision = Decision(
            "fire_skipped",
            f"Ran without firing: {label} ran as {run.run_id!r}, but its cursor function {task!r} was skipped: "
            f"{record.reason} ({record.message}).",
        )
        logged = next((s for s in facts.skips if not s.passed_over and s.run_id == run.run_id), None)
        decision.add(
            "airflow",
            "skip",
            f"Recorded skip of {task!r}: {record.reason}: {record.message}",
            f"audit log #{logged.log_id} (tessera.skip)" if logged else f"fire record of {task!r} in {run.run_id!r}",
        )
    elif facts.replaced is not None and run.end_date is not None:
        decision = _replaced(facts, run, label)
    elif (timed_out := _timed_out(facts, run, label)) is not None:
        decision = timed_out
    elif run is facts.occurrence_run and run.created > facts.at and run.run_type != "backfill":
        # no run existed yet at T: what held it (a backfill's runs are created after their occurrences by design)
        decision = late_decision(facts, run, label)
    elif (held := _held(facts, run)) is not None:
        decision = held
    elif _queued_at(run, facts.at) and (full := _slots_full(facts, run, label)) is not None:
        decision = full
    elif (
        # a backfill's runs start whether or not the DAG is paused
        run.run_type != "backfill" and _queued_at(run, facts.at) and (pause := pause_blocker(facts, facts.at))
    ):
        decision = Decision(
            "paused",
            f"Queued: {label} was created as {run.run_id!r} but had not started at T: "
            f"{pause.text.replace(' when it came due at ', ' at ', 1)}; Airflow starts no run of a paused DAG, and "
            "starts this one once the DAG is unpaused.",
        )
        decision.add("airflow", "paused", pause.text[0].upper() + pause.text[1:] + ".", pause.record)
    elif run.run_type == "backfill":
        decision = _by_backfill(facts, run, label)
    elif run.run_type == "manual":
        decision = Decision(
            "manual_run", f"Manual run: {run.run_id!r}, {trigger_words(run)}; {_state_at(run, facts.at)}."
        )
    elif _queued_at(run, facts.at):
        decision = Decision("queued", f"Queued: {label} was created as {run.run_id!r} and had not started at T.")
    else:
        running = run.end_date is None or run.end_date > facts.at
        kinds = {"manual": "manual_run", "backfill": "backfill_run"}
        cause = kinds.get(run.run_type, "running" if running else "ran")
        how = f", {trigger_words(run)}" if run.run_type == "manual" else ""
        verb = "was running at T" if running else "ran"
        decision = Decision(cause, f"Ran: {label} {verb} as {run.run_id!r} ({run.state}{how}).")
    _changed_since(facts, decision)
    decision.add("airflow", "run", f"The {run_words(run)}.", run_record(run))
    if run.run_type == "manual":
        decision.add("airflow", "trigger", f"A manual run, {trigger_words(run)}.", run_record(run))
    _late(facts, run, decision)
    _backfill(facts, run, decision)
    _stale_parents(facts, decision)
    _recorded(facts, run, decision)
    return decision


def _replaced(facts: Facts, run: RunRow, label: str) -> Decision:
    """``cancel_other`` failed the run when a newer scheduled run started (its note and audit-log entry say so)."""
    replaced = facts.replaced
    assert replaced is not None
    by = f"run {replaced.by!r}" if replaced.by else "a newer scheduled run"
    running = "was running at T" if run.end_date is not None and run.end_date > facts.at else "ran"
    decision = Decision(
        "replaced",
        f"Replaced: {label} {running} as {run.run_id!r} and was failed at {when(run.end_date)} when {by} started: "
        "overlap cancel_other runs the newest fire (Superseded).",
    )
    decision.add(
        "airflow", "replaced", replaced.line or f"Replaced by {by} (overlap cancel_other).", "; ".join(replaced.records)
    )
    return decision


_TIMEOUT_NOTE = "(it ran past its TIMEOUT)"
"""How a declared schedule's retry note says an attempt timed out (``run_retries.RETRIED_CAUSES``)."""


def _timed_out(facts: Facts, run: RunRow, label: str) -> Decision | None:
    """A run Airflow failed for running past its ``dagrun_timeout``: failed, and it ran at least that long.

    Airflow records no reason on the run (it fails it and skips its unfinished tasks), so the
    run's own times against the timeout in force are the proof; a declared schedule's retry note
    says it too.
    """
    timeout = None if facts.definition is None else facts.definition.run_timeout
    if run.state != "failed" or run.start_date is None or run.end_date is None or run.end_date > facts.at:
        return None
    noted = _TIMEOUT_NOTE in (facts.note or "")
    if not noted and (timeout is None or run.end_date - run.start_date < timeout):
        return None
    limit = f"its dagrun_timeout of {duration_text(timeout)}" if timeout is not None else "its TIMEOUT"
    skipped = [task.task_id for task in facts.tasks if task.state == "skipped"]
    tasks = f"; its unfinished tasks were skipped ({names(skipped[:5])})" if skipped else ""
    decision = Decision(
        "timed_out",
        f"Timed out: {label} ran as {run.run_id!r} from {when(run.start_date)} to {when(run.end_date)}, past "
        f"{limit}: Airflow failed the run{tasks}.",
    )
    decision.add(
        "airflow",
        "timed_out",
        f"The run lasted {ago(run.start_date, run.end_date)}; {limit} is the longest a run may take.",
        f"{run_record(run)}; dag_version {facts.definition.version.number}" if facts.definition else run_record(run),
    )
    return decision


def _held(facts: Facts, run: RunRow) -> Decision | None:
    """A task of the run waited at T: at its wave gate, or for a pool slot."""
    gate = facts.gate
    if gate is not None and gate.end_date is not None and gate.end_date > facts.at:
        return _gate_ended(facts, run, gate)
    wave = facts.wave
    if wave is not None and wave.wave is not None and wave.open is not None and wave.wave > wave.open:
        members = _wave_members(wave, wave.open) if 0 <= wave.open < len(wave.waves) else "the open wave"
        decision = Decision(
            "waiting_wave_gate",
            f"Waiting: run {run.run_id!r} is held at its wave gate: it is in wave {wave.wave} of schedule "
            f"{wave.schedule!r}, which opens when wave {wave.open} ({members}) has finished.",
        )
        decision.add(
            "airflow",
            "wave",
            f"Wave plan of {wave.schedule!r}: open wave {wave.open}, this run's wave {wave.wave}.",
            f"state store of asset x-tessera-schedule://{wave.schedule} (waves)",
        )
        return decision
    occupancy = facts.pool
    if occupancy is not None and occupancy.slots == 0:
        decision = Decision(
            "waiting_pool",
            f"Waiting: run {run.run_id!r} was running but a task waited for a slot of pool {occupancy.pool!r}, "
            "which has 0 slots: none of its tasks can run until the pool is given a slot.",
        )
        decision.add(
            "airflow", "pool", f"Pool {occupancy.pool!r} has {occupancy.slots} slots.", f"pool {occupancy.pool!r}"
        )
        return decision
    # -1 slots: unlimited (Airflow's convention), never full
    if occupancy is not None and occupancy.slots is not None and 0 < occupancy.slots <= occupancy.held:
        pool, slots, shown = occupancy.pool, occupancy.slots, occupancy.holders[:5]
        held = f"held by {names([f'{h.dag_id}.{h.task.task_id} ({h.run_id})' for h in shown])}"
        if occupancy.hidden:
            # Airflow answers this caller 403 for those task instances: how many, never which.
            others = f"{occupancy.hidden} by {'a DAG' if occupancy.hidden == 1 else 'DAGs'} you may not read"
            held = f"held: {others}" if not shown else f"{held}, and {others}"
        decision = Decision(
            "waiting_pool",
            f"Waiting: run {run.run_id!r} was running but a task waited for a slot of pool {pool!r} "
            f"({slots} slot{'s' if slots != 1 else ''}, all {held}).",
        )
        for holder in shown:
            decision.add(
                "airflow",
                "pool",
                f"{holder.dag_id}.{holder.task.task_id} held a slot of {pool!r} from {when(holder.task.start_date)}.",
                f"task_instance {holder.dag_id}.{holder.task.task_id} in {holder.run_id!r}",
            )
        if occupancy.hidden:
            decision.add(
                "airflow",
                "pool",
                f"{occupancy.hidden} slot{'s' if occupancy.hidden != 1 else ''} of {pool!r} held by task instances "
                "of DAGs you may not read (not named, as Airflow does not show them to you).",
                f"task_instance (pool {pool!r})",
            )
        return decision
    return None


def _gate_ended(facts: Facts, run: RunRow, gate: TaskRow) -> Decision:
    """The run was held at its wave gate at T and has been released since: the gate task's times prove both."""
    wave = facts.wave
    place = ""
    if wave is not None and wave.wave is not None:
        place = f" (wave {wave.wave} of schedule {wave.schedule!r}; it opened when the waves before it had finished)"
    began = gate.start_date or gate.scheduled
    decision = Decision(
        "waiting_wave_gate",
        f"Waiting: run {run.run_id!r} was held at its wave gate at T{place}: the gate held it from {when(began)} "
        f"until {when(gate.end_date)}, "
        + ("when its wave opened." if gate.state == "success" else f"when the gate ended {gate.state or 'unfinished'}.")
        + (f" {wave.cancelled}" if wave is not None and wave.cancelled and gate.state != "success" else ""),
    )
    decision.add(
        "airflow",
        "wave_gate",
        f"The gate task {gate.task_id!r} waited from {when(began)} to {when(gate.end_date)} ({gate.state}).",
        f"task_instance {facts.dag_id}.{gate.task_id} in {run.run_id!r}",
    )
    return decision


def _wave_members(wave: WavePlace, index: int) -> str:
    """A wave's pipelines: those the caller may read by name, the others counted."""
    unread = wave.unread[index]
    if not unread:
        return names(wave.waves[index])
    others = f"{unread} {'DAG' if unread == 1 else 'DAGs'} you may not read"
    return f"{names(wave.waves[index])} and {others}" if wave.waves[index] else others


def _state_at(run: RunRow, at: datetime.datetime) -> str:
    """Where the run stood at T, and what it came to."""
    if run.end_date is not None and run.end_date <= at:
        return f"it ran from {when(run.start_date)} to {when(run.end_date)} ({run.state})"
    if run.start_date is not None and run.start_date <= at:
        return f"it was running at T (started {when(run.start_date)}; now {run.state})"
    started = when(run.start_date) if run.start_date is not None else "not yet"
    return f"it was queued at T (started {started}; now {run.state})"


def _by_backfill(facts: Facts, run: RunRow, label: str) -> Decision:
    backfill = next((b for b in facts.backfills if b.id == run.backfill_id), None)
    if backfill is None:
        return Decision("backfill_run", f"Backfilled: {label} was run by a backfill as {run.run_id!r} ({run.state}).")
    progress = f"completed {when(backfill.completed_at)}" if backfill.completed_at else "still in progress"
    return Decision(
        "backfill_run",
        f"Backfilled: {label} is run by backfill #{backfill.id} as {run.run_id!r} ({run.state} at T; "
        f"the backfill is {progress}).",
    )


def _queued_at(run: RunRow, at: datetime.datetime) -> bool:
    return run.start_date is None or run.start_date > at


def _slots_full(facts: Facts, run: RunRow, label: str) -> Decision | None:
    """A run queued at T because ``max_active_runs`` (MAX_CONCURRENT) runs of its DAG were running."""
    limit = facts.max_active_runs
    others = [r for r in facts.runs if r is not run and r.run_type != "backfill" and r.in_flight_at(facts.at)]
    running = [r for r in others if r.start_date is not None and r.start_date <= facts.at]
    if limit is None or len(running) < limit:
        return None
    decision = Decision(
        "queued_max_active_runs",
        f"Queued: {label} was created as {run.run_id!r} but waits: max_active_runs={limit} "
        f"(MAX_CONCURRENT) was reached by {names([r.run_id for r in running[:5]])}.",
    )
    for other in running[:5]:
        decision.add("airflow", "occupied", f"The {run_words(other)} held a slot.", run_record(other))
    return decision


def _changed_since(facts: Facts, decision: Decision) -> None:
    """A run made under a schedule that has changed since: say which one decided it."""
    then, now = facts.dag.then, facts.dag.now
    if then is None or now is None or then.version.number == now.version.number or then.summary == now.summary:
        return
    decision.verdict = (
        decision.verdict.rstrip(".") + f", under the schedule in force then ({then.summary}, "
        f"dag_version {then.version.number}); it has changed since to {now.summary} (dag_version {now.version.number})."
    )


def _late(facts: Facts, run: RunRow, decision: Decision) -> None:
    focus = facts.view.focus
    if run is not facts.occurrence_run or focus is None or run.queued_at is None:
        return
    if (run.queued_at - focus.run_after).total_seconds() > 60 and run.created <= facts.at:
        late = ago(focus.run_after, run.queued_at)
        blocker = blocker_at(facts, focus.run_after)
        why = "" if blocker is None else f": {blocker.text}"
        record = None if blocker is None else blocker.record
        decision.add(
            "airflow", "late", f"It was created {late} after it came due ({when(focus.run_after)}){why}.", record
        )


def _backfill(facts: Facts, run: RunRow, decision: Decision) -> None:
    for backfill in facts.backfills:
        if backfill.id == run.backfill_id or (backfill.created_at <= facts.at and backfill.completed_at is None):
            done = f"completed {when(backfill.completed_at)}" if backfill.completed_at else "still in progress"
            by = f" by {backfill.triggering_user}" if backfill.triggering_user else ""
            decision.add(
                "airflow",
                "backfill",
                f"Backfill #{backfill.id} ({when(backfill.from_date)} to {when(backfill.to_date)}), created{by} "
                f"{when(backfill.created_at)}, {done}.",
                f"backfill #{backfill.id}",
            )


def _stale_parents(facts: Facts, decision: Decision) -> None:
    """The AFTER release note's stale-parent lines (tessera writes them; the run proceeded anyway)."""
    lines = (facts.note or "").splitlines()
    # Anywhere in the note: other steps' lines (or the count of lines dropped at the column's limit) may come first.
    start = next((index for index, line in enumerate(lines) if line.startswith(STALE_NOTE)), None)
    if start is None:
        return
    stale = []
    for line in lines[start + 1 :]:
        if not line.startswith("- "):
            break
        stale.append(line[2:])
    parents = names([line.split(":", 1)[0] for line in stale])
    decision.verdict = decision.verdict.rstrip(".") + f", with a warning: stale parent {parents}."
    decision.add("airflow", "stale_parent", f"{lines[start]} {'; '.join(stale)}", "the run's note")


def _recorded(facts: Facts, run: RunRow, decision: Decision) -> None:
    """What the run recorded of its schedule when it was created (its id), and whether the stored one differs."""
    record = RunRecord.of(run.run_id)
    if record is None:
        return
    said = (
        f"phase {duration_text_us(record.phase)}, delay {duration_text_us(record.delay)} and interval "
        f"{duration_text_us(record.interval)}"
    )
    decision.add("schedule", "run_record", f"Run {run.run_id!r} recorded {said} when it was created.", run_record(run))
    timetable = None if facts.definition is None else facts.definition.timetable
    if not isinstance(timetable, TesseraTimetable) or run.data_interval_end is None:
        return
    plan = timetable.plan
    stored = (plan.phase, plan.delay, plan.run_of(run.data_interval_end).interval_ms * 1000)
    if stored == (_us(record.phase), _us(record.delay), record.interval) or "changed since" in decision.verdict:
        return
    decision.verdict = (
        decision.verdict.rstrip(".") + f", under the schedule it recorded ({said}); the definition stored for T "
        f"now says {facts.definition.summary}, so the schedule has changed since."  # type: ignore[union-attr]
    )


def _us(us: int) -> datetime.timedelta:
    return datetime.timedelta(microseconds=us)


def duration_text_us(us: int) -> str:
    from datetime import timedelta

    return duration_text(timedelta(microseconds=us))
