"""The verdict: which fact decided whether the DAG ran at or around T, in one sentence, with its proof.

The order of questions: a run in flight at T that is not the schedule's (manual, backfill, asset)
answers it; else the schedule: no occurrence (no clock, before the start date, after the end date,
a DST gap or a time that fires once), an occurrence not due yet, one that has a run
(:mod:`~tessera.plugin.explainer.runs`), or one without (:mod:`~tessera.plugin.explainer.blockers`).
The evidence around the verdict (the schedule in force, what happens next) is written here.
"""

from __future__ import annotations

from ..fleet.schedules import duration_text
from .blockers import Blocker, no_run_decision, pause_blocker
from .facts import Facts
from .models import Decision, Evidence
from .runs import run_decision
from .words import names, pause_words, run_record, run_words, when


def _ran_words(facts: Facts) -> str:
    run = facts.occurrence_run
    return "it had no run" if run is None else f"it ran as {run.run_id!r} ({run.state})"


def _events_while_paused(facts: Facts) -> tuple[Blocker, list[str]] | None:
    """The pause in force when the assets' newest events arrived, and which assets, if every newest one did."""
    found = [
        (wait.name, pause_blocker(facts, wait.newest, facts.event_pauses))
        for wait in facts.assets
        if wait.newest is not None
    ]
    if not found or any(pause is None for _, pause in found):
        return None
    return found[-1][1], [name for name, _ in found]  # type: ignore[return-value]


def _no_clock(facts: Facts) -> Decision:
    view, at = facts.view, facts.at
    before = [run for run in facts.runs if run.run_after <= at]
    last = before[-1] if before else None
    last_words = f"the newest run before T was {run_words(last)}" if last else "no run before T"
    if view.kind == "assets":
        waits = facts.assets
        kind = "parent" if waits and waits[0].parent else "asset"
        absent = [w.name for w in waits if w.events == 0]
        if absent:
            decision = Decision(
                "waiting_for_parents",
                f"Not released: waiting for {kind} {names(absent)}: no "
                f"{'completed fire' if kind == 'parent' else 'event'} between its last run and T ({last_words}).",
            )
        elif held := _events_while_paused(facts):
            pause, which = held
            decision = Decision(
                "paused",
                f"Not run: the newest event of {kind} {names(which)} arrived while the DAG was paused, and Airflow "
                f"queues an asset-triggered run only for an event that arrives while the DAG is unpaused "
                f"({last_words}).",
            )
            decision.add("airflow", "paused", pause.text[0].upper() + pause.text[1:] + ".", pause.record)
        else:
            decision = Decision(
                "unexplained", f"Not run at T: every {kind} had an event since its last run ({last_words})."
            )
            decision.missing.append("a record of why Airflow queued no run for those events")
        for wait in waits:
            seen = f"{wait.events} event(s) since the last run, newest {when(wait.newest)}" if wait.events else "none"
            text = f"{kind.capitalize()} {wait.name!r}: {seen if wait.events else 'no event since the last run'}."
            decision.add("airflow", kind, text, f"asset_event #{wait.newest_id}" if wait.newest_id else "asset_event")
        return decision
    if view.kind == "none":
        return Decision(
            "no_schedule",
            f"No schedule: the DAG runs only when triggered, and no run was in flight at T ({last_words}).",
        )
    if facts.view_error:
        decision = Decision(
            "unexplained",
            f"The schedule in force at T could not be read, so nothing says what was due: {facts.view_error}",
        )
        decision.missing.append(
            f"a readable stored DAG for {facts.definition.version.record if facts.definition else 'T'}"
        )
        return decision
    return Decision(
        "no_schedule", f"No clock: {view.summary} decides runs itself; no run was in flight at T ({last_words})."
    )


def _schedule_decision(facts: Facts) -> Decision:
    view, at = facts.view, facts.at
    focus = view.focus
    if focus is None:
        return Decision(
            "after_end_date" if view.end is not None else "unexplained",
            "No occurrence: the schedule plans no run at or around T.",
        )
    if view.due and view.following is None and view.end is not None and at > focus.run_after:
        return Decision(
            "after_end_date",
            f"No run at T: the DAG's end_date ({when(view.end)}) has passed; its last occurrence was "
            f"{when(focus.nominal, view.timezone)} and {_ran_words(facts)}.",
        )
    if view.due and view.excluded:
        skipped = view.excluded[0]
        before = f"The occurrence before it was {when(focus.nominal, view.timezone)} and {_ran_words(facts)}."
        if at > facts.now:  # a holiday ahead: the plan says it will not run
            return Decision(
                "excluded",
                f"No run at T: the {when(skipped.occurrence, view.timezone)} occurrence will be skipped by the "
                f"schedule's exclusions ({', '.join(skipped.reasons)}); T is later than now. The occurrence before "
                f"it is {when(focus.nominal, view.timezone)}, due {when(focus.run_after)}.",
            )
        return Decision(
            "excluded",
            f"No run at T: the {when(skipped.occurrence, view.timezone)} occurrence was skipped by the schedule's "
            f"exclusions ({', '.join(skipped.reasons)}). {before}",
        )
    if view.due and focus.run_after > facts.now:
        return Decision(
            "not_due_yet",
            f"Not due yet: T is later than now; the {when(focus.nominal, view.timezone)} occurrence may start at "
            f"{when(focus.run_after)}.",
        )
    if not view.due:
        if view.start is not None and at < view.start:
            return Decision(
                "before_start_date",
                f"Not due: T is before the DAG's start_date ({when(view.start)}); its first occurrence is "
                f"{when(focus.nominal, view.timezone)}, due {when(focus.run_after)}.",
            )
        return Decision(
            "not_due_yet",
            f"Not due yet: the {when(focus.nominal, view.timezone)} occurrence may start at {when(focus.run_after)}.",
        )
    for finding in facts.clock:
        if finding.kind == "gap":
            return Decision(
                "dst_gap",
                f"No occurrence at T: {finding.text}. The occurrence before T was {when(focus.nominal, view.timezone)} "
                f"and {_ran_words(facts)}.",
            )
        if finding.kind == "once":
            return Decision(
                "dst_once",
                f"No second run at T: {finding.text}. It fired once, at {when(focus.nominal, view.timezone)}, and "
                f"{_ran_words(facts)}.",
            )
    if facts.occurrence_run is not None:
        return run_decision(facts, facts.occurrence_run)
    return no_run_decision(facts)


def _schedule_evidence(facts: Facts, decision: Decision) -> None:
    view, dag, zone = facts.view, facts.dag, facts.view.timezone
    add = decision.evidence.insert
    items = []
    then = dag.then
    if then is not None:
        items.append(("schedule", f"The schedule in force at T: {then.summary}.", then.version.record))
    elif dag.first is not None:
        items.append(("schedule", f"The DAG was first stored {when(dag.first.created_at)}, after T.", dag.first.record))
    if then is not None and then.rewritten is not None and then.rewritten > facts.at:
        items.append(
            (
                "schedule_rewritten",
                f"dag_version {then.version.number} was rewritten in place {when(then.rewritten)}, after T (Airflow "
                "keeps updating a version until a task has run under it): what it says now may not be what was in "
                "force at T; each run's record says what it was created with.",
                then.version.record,
            )
        )
        decision.missing.append(f"the definition in force at T (dag_version {then.version.number} was rewritten)")
    if dag.now is not None and then is not None and dag.now.version.number != then.version.number:
        if dag.now.summary != then.summary:
            items.append(("schedule_changed", f"It has changed since: now {dag.now.summary}.", dag.now.version.record))
    if view.focus is not None:
        focus = view.focus
        window = f"; window {when(focus.window_start)} → {when(focus.window_end)}" if focus.window_end else ""
        which = "The occurrence at or before T" if view.due else "The first occurrence after T"
        items.append(
            (
                "occurrence",
                f"{which}: {when(focus.nominal, zone)}, its run may start {when(focus.run_after)}{window}.",
                None,
            )
        )
    if view.previous is not None:
        items.append(("previous", f"The occurrence before it: {when(view.previous.nominal, zone)}.", None))
    if view.following is not None:
        items.append(
            (
                "following",
                f"The occurrence after it: {when(view.following.nominal, zone)}, due {when(view.following.run_after)}.",
                None,
            )
        )
    bounds = [f"{name} {when(value)}" for name, value in (("start_date", view.start), ("end_date", view.end)) if value]
    if bounds:
        items.append(("bounds", f"Runs are bounded by the DAG's {' and '.join(bounds)}.", None))
    if view.phase:
        items.append(("phase", f"Each run may start {duration_text(view.phase)} after its occurrence (phase).", None))
    items.append(("catch_up", f"Catch-up: {view.policy_words()}.", None))
    items.extend(("dst", finding.text[0].upper() + finding.text[1:] + ".", None) for finding in facts.clock)
    if view.steps_cut:
        items.append(
            ("steps", "Stepped at most 64 occurrences from the newest run before T; later ones are not listed.", None)
        )
    for index, (fact, text, record) in enumerate(items):
        add(index, Evidence(section="schedule", fact=fact, text=text, record=record))


def _next_evidence(facts: Facts, decision: Decision) -> None:
    model, view = facts.dag.model, facts.view
    if facts.broken is not None and facts.broken.blocks:
        decision.add(
            "next", "broken", f"Nothing runs until the DAG file parses again: {facts.broken.text}.", facts.broken.record
        )
        return
    if model.is_paused:
        pause = next(
            (p for p in reversed(facts.pauses) if p.paused), facts.pause if facts.pause and facts.pause.paused else None
        )
        record = f"audit log #{pause.log_id} ({pause.event})" if pause else "dag row (is_paused)"
        why = f" Paused {when(pause.at)} {pause_words(pause.record)}." if pause and pause.record else ""
        decision.add(
            "next",
            "paused",
            f"The DAG is paused now: nothing is scheduled until it is unpaused; then {view.policy_words()}.{why}",
            record,
        )
        return
    anchor = facts.subject or facts.occurrence_run
    after = anchor.run_after if anchor is not None else facts.at
    following = [run for run in [*facts.runs, *facts.later] if run.run_after > after]
    if following:
        decision.add("next", "next_run", f"The next run: {run_words(following[0])}.", run_record(following[0]))
    if model.next_dagrun_create_after is not None:
        decision.add(
            "next",
            "stored_next",
            f"The scheduler's next run (stored on the DAG row) may start {when(model.next_dagrun_create_after)}, "
            f"for the window ending {when(model.next_dagrun_data_interval_end)}: the schedule's next occurrence "
            "after the newest run.",
            "dag row (next_dagrun_create_after)",
        )
    elif view.following is None and view.end is not None:
        decision.add("next", "end", f"No further runs: the end_date is {when(view.end)}.", None)


def decide(facts: Facts) -> Decision:
    """The verdict and its evidence, in the order schedule, Airflow, next."""
    subject = facts.subject
    if subject is not None and subject is not facts.occurrence_run:
        decision = run_decision(facts, subject)
    elif facts.view.kind in ("assets", "none", "other"):
        decision = _no_clock(facts)
    else:
        decision = _schedule_decision(facts)
    broken = facts.broken
    if broken is not None:
        decision.add("airflow", "broken_now", f"The DAG's file is broken now: {broken.text}.", broken.record)
        began = broken.since or broken.last_parsed
        if (
            broken.blocks
            and decision.cause not in ("broken", "file_missing")
            and began is not None
            and began <= facts.at
        ):
            what = "is gone" if broken.reason == "FileMissing" else f"fails to import ({broken.reason})"
            decision.verdict += (
                f" Since {when(began)} the DAG's file {what}: Airflow creates no new run of it until it parses again."
            )
    _schedule_evidence(facts, decision)
    _next_evidence(facts, decision)
    return decision
