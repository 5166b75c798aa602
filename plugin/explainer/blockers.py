"""An occurrence came due and has no run: which condition stopped it, and what the catch-up policy did after.

The conditions, checked at the instant the occurrence came due, each with the record that
proves it: the DAG's file broken or missing (tessera's parse record, the import error), the DAG
paused (Airflow's audit log), no scheduler heartbeating (the job table), ``max_active_runs``
reached (the runs holding it). When the condition ended before T, the catch-up policy decided
whether the occurrence still ran: a newer one was due by then (``passed_over``), or it had been
due longer than the starting deadline (``missed_deadline``). A condition the records cannot
decide names the record that is missing; nothing is guessed.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from tessera.operators.pauses.history import LoggedPause
from tessera.timetables.policies import missed_deadline

from ..fleet.broken import error_kind
from ..fleet.schedules import duration_text
from ..scoped_reads import RunRow
from .drops import Drop
from .facts import Facts
from .models import Decision
from .schedule import newer_due
from .words import ago, job_record, job_words, pause_words, run_record, when


@dataclass(frozen=True)
class Blocker:
    cause: str
    text: str
    record: str
    ended: datetime.datetime | None
    ended_words: str = ""


def _parse_blocker(facts: Facts, due: datetime.datetime) -> Blocker | None:
    entry = facts.parse
    if entry is not None and entry.blocks:
        ended = next((e.written for e in facts.parses if not e.blocks), None)
        since = when(entry.since or entry.written)
        record = f"audit log #{entry.log_id} (tessera.parse)"
        broken = facts.broken
        file = f" {entry.file!r}" if entry.file else (f" {broken.file!r}" if broken and broken.file else "")
        if entry.state == "broken":
            # the text of the error is Airflow's import error, which stays only while the file is broken
            same = broken is not None and broken.reason == entry.reason and broken.reason != "FileMissing"
            what = broken.error_words if same and broken else error_kind(entry.reason, entry.error_class)
            if same and broken and broken.record not in record:
                record = f"{record}; {broken.record}"
            text = f"the DAG file{file} failed to import ({what}) from {since}: Airflow creates no run of it then"
            return Blocker("broken", text, record, ended, "the file parsed again")
        if entry.file_gone:
            text = f"the DAG file{file} was deleted (FileMissing) from {since}: Airflow creates no run of it"
            return Blocker("file_missing", text, record, ended, "the file was back")
        how = (
            "its file was there but no longer defined it, or was not parsed in time"
            if entry.file_gone is False
            else "the file was gone, no longer defined it, or was not parsed in time"
        )
        text = (
            f"the DAG was stale from {since}: Airflow had not parsed it from its file{file} for longer than its "
            f"stale threshold ({how}), and creates no run of it"
        )
        return Blocker("file_missing", text, record, ended, "the file was back")
    broken = facts.broken
    if entry is None and broken is not None and broken.blocks and (broken.since or broken.last_parsed or due) <= due:
        cause = "file_missing" if broken.reason == "FileMissing" else "broken"
        if broken.since is None:
            facts_missing = "tessera's parse-state record (audit log event tessera.parse): when the problem began"
            if facts_missing not in facts.missing:
                facts.missing.append(facts_missing)
        file = f" {broken.file!r}" if broken.file else ""
        return Blocker(cause, f"the DAG's file{file} is broken: {broken.text}", broken.record, None)
    return None


def _via(pause: LoggedPause) -> str:
    if pause.record is not None:  # tessera's entry holds who, why and the note
        return pause_words(pause.record)
    event = pause.event
    if event.startswith("cli_"):
        return "with airflow dags pause"
    if event == "paused":
        return "by Airflow after max_consecutive_failed_dag_runs"
    return "through the UI or the REST API"


def pause_blocker(
    facts: Facts,
    due: datetime.datetime,
    entries: tuple[LoggedPause | None, list[LoggedPause]] | None = None,
) -> Blocker | None:
    """The pause the DAG was in at ``due``, from the audit log, or from its row when the log covers since then.

    ``entries``: the pause in force at some instant at or before ``due`` and the changes after it
    (default: those read around the occurrence).
    """
    first_entry, changes = entries if entries is not None else (facts.pause, facts.pauses)
    before = [p for p in [first_entry, *changes] if p is not None and p.at <= due]
    later = [p for p in changes if p.at > due]
    ended = next((p.at for p in later if not p.paused), None)
    if before:
        pause = before[-1]
        if not pause.paused:
            return None
        return Blocker(
            "paused",
            f"the DAG was paused when it came due at {when(due)} (paused {when(pause.at)} {_via(pause)})",
            f"audit log #{pause.log_id} ({pause.event})",
            ended,
            "it was unpaused",
        )
    if later:
        first = later[0]
        if first.paused:
            return None
        return Blocker(
            "paused",
            f"the DAG was paused when it came due at {when(due)}: the first change after is an unpause at "
            f"{when(first.at)}",
            f"audit log #{first.log_id} ({first.event})",
            ended,
            "it was unpaused",
        )
    model, first_version = facts.dag.model, facts.dag.first or (facts.dag.then.version if facts.dag.then else None)
    if not model.is_paused:
        return None
    floor = facts.audit_floor
    stored = first_version.created_at if first_version is not None else None
    if floor is not None and stored is not None and floor <= stored:
        return Blocker(
            "paused",
            f"the DAG was paused when it came due at {when(due)}: it is paused now and no unpause was logged since it "
            f"was first stored ({when(stored)})",
            "dag row (is_paused); audit log since " + when(floor),
            None,
        )
    if floor is not None and floor <= due:  # the log covers due..now and holds no change: paused all along
        return Blocker(
            "paused",
            f"the DAG was paused when it came due at {when(due)}: it is paused now and the audit log, which starts "
            f"{when(floor)}, before it came due, records no pause change since",
            "dag row (is_paused); audit log since " + when(floor),
            None,
        )
    facts.missing.append(
        f"an audit-log entry of the pause: the DAG is paused now, but the log (from {when(floor)}) records no pause "
        "or unpause (paused by a bulk PATCH, a database edit, or the entries were cleaned)"
    )
    return None


def _scheduler_blocker(facts: Facts, due: datetime.datetime) -> Blocker | None:
    cover = facts.scheduler
    if cover is None or cover.alive is not None:
        return None
    if cover.last_before is None and cover.next_after is None:
        facts.missing.append(f"a scheduler job around {when(due)} in the job table (oldest: {when(facts.job_floor)})")
        return None
    parts = []
    if cover.last_before is not None:
        parts.append(f"the last one before, {job_words(cover.last_before)}")
    if cover.next_after is not None:
        parts.append(f"the next, {job_words(cover.next_after)}")
    record = "; ".join(job_record(job) for job in (cover.last_before, cover.next_after) if job is not None)
    ended = None if cover.next_after is None else cover.next_after.start_date
    text = f"no scheduler was heartbeating at {when(due)} ({'; '.join(parts)})"
    return Blocker("scheduler_down", text, record, ended, "a scheduler started again")


def _scheduler_words(facts: Facts) -> str:
    """What the job table says of the schedulers at the instant, for a verdict that found no blocker.

    Only a job heartbeating then proves one was; with no job around then the table cannot tell.
    """
    cover = facts.scheduler
    if cover is not None and cover.alive is not None:
        return "a scheduler was heartbeating"
    return "no scheduler job around then is in the job table (whether one was heartbeating is not known)"


def _slots_blocker(facts: Facts, due: datetime.datetime) -> Blocker | None:
    limit = facts.max_active_runs
    if limit is None or len(facts.active) < limit:
        return None
    holders = facts.active[:limit]
    ends = [run.end_date for run in holders]
    ended = None if None in ends else min(ends)  # type: ignore[type-var]
    ids = ", ".join(repr(run.run_id) for run in holders)
    text = f"max_active_runs={limit} was reached at {when(due)} by {ids}"
    return Blocker("max_active_runs", text, "; ".join(run_record(run) for run in holders), ended, "a slot freed")


def _covering_skips(facts: Facts, due: datetime.datetime, decision: Decision) -> str | None:
    reason = None
    for skip in facts.skips:
        event = skip.event
        if skip.passed_over and event.first <= due <= event.last:
            count = f"{'at least ' if event.at_least else ''}{event.count}"
            decision.add(
                "airflow",
                "recorded_skip",
                f"Recorded: {count} tick(s) from {when(event.first)} to "
                f"{when(event.last)} were skipped: {event.reason} ({event.message}).",
                f"audit log #{skip.log_id} (tessera.skip.passed_over)",
            )
            reason = reason or event.reason
    return reason


def blocker_at(facts: Facts, due: datetime.datetime) -> Blocker | None:
    """The first condition that stopped a run at ``due``: a broken or stale file, a pause, no scheduler, no slot."""
    for check in (_parse_blocker, pause_blocker, _scheduler_blocker, _slots_blocker):
        if (blocker := check(facts, due)) is not None:
            return blocker
    return None


def late_decision(facts: Facts, run: RunRow, label: str) -> Decision:
    """The occurrence's run exists but was created after T: what held it until then."""
    focus = facts.view.focus
    assert focus is not None
    blocker = blocker_at(facts, focus.run_after)
    late = f"{run.run_id!r}, created {when(run.created)} ({ago(focus.run_after, run.created)} after it came due)"
    if blocker is None:
        decision = Decision("late", f"No run yet at T: {label} came due at {when(focus.run_after)}; its run is {late}.")
        floor = facts.audit_floor
        if floor is None or floor > focus.run_after:  # the log that would name a pause or a broken file is gone
            start = f"the records start at {when(floor)}" if floor is not None else "the audit log is empty"
            cleaned = "(cleaned, e.g. by airflow db clean --tables log)"
            decision.verdict += f" Cannot tell what held it: {start}, after it came due {cleaned}."
        decision.missing.append(f"a record of what held the run of {label} until it was created")
    else:
        until = f"when {blocker.ended_words} at {when(blocker.ended)}" if blocker.ended else "later"
        decision = Decision(
            blocker.cause, f"No run yet at T: {label} had no run because {blocker.text}; {until} it ran late as {late}."
        )
        decision.add("airflow", blocker.cause, blocker.text[0].upper() + blocker.text[1:] + ".", blocker.record)
    decision.missing.extend(facts.missing)
    return decision


def no_run_decision(facts: Facts) -> Decision:
    view = facts.view
    focus = view.focus
    assert focus is not None
    due, label = focus.run_after, f"the {when(focus.nominal, view.timezone)} occurrence"
    first = facts.dag.first
    if facts.dag.then is None and first is not None and first.created_at > due:
        return Decision(
            "before_dag_existed",
            f"Not owed: the DAG was first stored {when(first.created_at)}, after "
            f"{label} came due; a new schedule owes only its newest due occurrence.",
            [],
            [],
        )
    drop = next((d for d in facts.drops if d.covers(due)), None)
    if drop is not None and drop.overlap:
        return _dropped_decision(facts, drop, label)
    blocker = blocker_at(facts, due)
    newer = next((r for r in [*facts.runs, *facts.later] if r.automated and r.run_after > due), None)
    if blocker is not None and _returning_scheduler_owed_it(facts, blocker, due, newer):
        blocker = None
    decision = Decision("unexplained", "")
    recorded = _covering_skips(facts, due, decision)
    if blocker is None:
        if drop is not None:
            decision = _dropped_decision(facts, drop, label)
        elif recorded is not None:
            decision.cause = {"Suspended": "paused", "MissedDeadline": "passed_over"}.get(recorded, "fire_skipped")
            decision.verdict = f"Did not run: {label} was skipped: {recorded} (recorded in the audit log)."
        elif (floor := facts.audit_floor) is None or floor > due:
            decision.cause = "cannot_tell"
            decision.verdict = _cannot_tell(facts, due, label)
            decision.missing.append(
                f"the audit-log entries (pauses, parse failures, skips) of {when(due)}: the audit log starts at "
                f"{when(floor) if floor is not None else 'nothing (it is empty)'}"
            )
        else:
            decision.verdict = (
                f"Did not run, and the records do not show why: at {when(due)} the DAG was not paused, "
                f"its file parsed and {_scheduler_words(facts)}."
            )
            decision.missing.append(f"a record of why the scheduler created no run for {label}")
        decision.missing.extend(facts.missing)
        return decision
    decision.cause = blocker.cause
    decision.add("airflow", blocker.cause, blocker.text[0].upper() + blocker.text[1:] + ".", blocker.record)
    clause = ""
    if blocker.ended is not None and blocker.ended <= max(facts.at, facts.now):
        newer_count = newer_due(facts.definition.timetable if facts.definition else None, view, blocker.ended)
        then = f"when {blocker.ended_words} at {when(blocker.ended)}"
        if newer_count >= max(view.limit, 1):
            clause = f"; {then}, {newer_count} newer occurrence(s) were due and {view.policy_words()}"
            if blocker.cause == "scheduler_down":
                decision.cause = "passed_over"
        elif missed_deadline(due, blocker.ended, view.deadline):
            clause = (
                f"; {then} it had been due {ago(due, blocker.ended)}, longer than the starting deadline "
                f"{duration_text(view.deadline)}: skipped (MissedDeadline)"
            )
            decision.cause = "missed_deadline"  # the deadline decided: without it, the occurrence would have run
    if newer is not None:
        decision.add(
            "airflow",
            "next_created",
            f"The next scheduled run created after it: {newer.run_id!r}, created {when(newer.created)}.",
            run_record(newer),
        )
    decision.verdict = f"Did not run: {label} had no run because {blocker.text}{clause}."
    decision.missing.extend(facts.missing)
    return decision


def _returning_scheduler_owed_it(facts: Facts, blocker: Blocker, due: datetime.datetime, newer: RunRow | None) -> bool:
    """Whether a scheduler that started again after ``due`` still owed it, and created a later run instead.

    Downtime explains an occurrence with no run only when the returning scheduler passed it over
    (newer ones were due by then) or found it past its starting deadline. Otherwise that scheduler
    would have run it, so the downtime is not why it has none: a scheduler's very first start a
    moment after an occurrence whose file was missing then, once the audit log is cleaned, is such a case.
    """
    if blocker.cause != "scheduler_down" or blocker.ended is None or blocker.ended > max(facts.at, facts.now):
        return False
    if newer is None or newer.created < blocker.ended:  # no run made since its return: it may yet make this one
        return False
    view = facts.view
    newer_count = newer_due(facts.definition.timetable if facts.definition else None, view, blocker.ended)
    return newer_count < max(view.limit, 1) and not missed_deadline(due, blocker.ended, view.deadline)


def _dropped_decision(facts: Facts, drop: Drop, label: str) -> Decision:
    """The occurrence's fire was dropped, as the run that started next recorded (its note, its audit-log entry)."""
    event = drop.event
    count = f"{'at least ' if event.at_least else ''}{event.count}"
    span = f"the {count} fire(s) due {when(event.first)} to {when(event.last)}" if event.count > 1 else "its fire"
    what = "dropped by the overlap policy" if drop.overlap else "skipped by the schedule's catch-up"
    decision = Decision(
        "overlap_dropped" if drop.overlap else {"Suspended": "paused"}.get(event.reason, "passed_over"),
        f"Did not run: {label} was {what}: {event.reason}: {event.message}; recorded when run {drop.run_id!r} started.",
    )
    decision.add("airflow", "dropped", f"Recorded: {span} {what}: {event.reason} ({event.message}).", drop.record)
    return decision


def _cannot_tell(facts: Facts, due: datetime.datetime, label: str) -> str:
    """No record explains the missing run and the audit log (pauses, parse failures, skips) was cleaned before it."""
    known = []
    cover = facts.scheduler
    if cover is not None and cover.alive is not None:
        known.append(f"a scheduler was heartbeating ({job_record(cover.alive)})")
    else:  # the job table says nothing either: say so, never that one was heartbeating
        known.append("no scheduler job around then is in the job table")
    if facts.dag.model.is_paused:
        known.append("the DAG is paused now")
    said = f" What the records that remain show: {', and '.join(known)}."
    floor = facts.audit_floor
    start = f"the records start at {when(floor)}" if floor is not None else "the audit log is empty"
    return (
        f"Cannot tell why {label} had no run: {start}: the audit log, which holds pauses, parse failures and "
        f"skips, has nothing from {when(due)}, when it came due (cleaned, e.g. by airflow db clean --tables log)."
        f"{said}"
    )
