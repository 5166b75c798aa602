"""How the answer to "why" writes instants, runs and records: one wording for the API, the CLI and the page."""

from __future__ import annotations

import datetime
import json
from zoneinfo import ZoneInfo

from tessera.operators.pauses.notes import AFTER_FAILURES, PauseRecord

from ..fleet.schedules import duration_text
from ..scoped_reads import RunRow
from .records import JobRow

UTC = datetime.timezone.utc


def when(moment: datetime.datetime | None, zone: str = "UTC") -> str:
    """``2026-12-02 12:05:00 UTC``, with the local reading in a schedule's own zone (``13:05:00 CET``)."""
    if moment is None:
        return "never"
    utc = moment.astimezone(UTC)
    text = f"{utc:%Y-%m-%d %H:%M:%S} UTC"
    if zone != "UTC":
        local = utc.astimezone(ZoneInfo(zone))
        day = "" if local.date() == utc.date() else f"{local:%Y-%m-%d} "
        text += f" ({day}{local:%H:%M:%S %Z} {zone})"
    return text


def ago(earlier: datetime.datetime, later: datetime.datetime) -> str:
    seconds = max(0, int((later - earlier).total_seconds()))
    return duration_text(datetime.timedelta(seconds=seconds)) if seconds else "0s"


def run_record(run: RunRow) -> str:
    return f"dag_run {run.run_id!r}"


def run_words(run: RunRow) -> str:
    """``manual run 'x' (success, queued …, ran … to …)``: the run's kind, id, state and times."""
    kind = {"scheduled": "scheduled run", "manual": "manual run", "backfill": "backfill run"}.get(
        run.run_type, f"{run.run_type.replace('_', '-')} run"
    )
    times = [f"queued {when(run.queued_at or run.created)}"]
    if run.start_date is not None:
        times.append(f"started {when(run.start_date)}")
    if run.end_date is not None:
        times.append(f"ended {when(run.end_date)}")
    return f"{kind} {run.run_id!r} ({run.state or 'no state'}; {', '.join(times)})"


def trigger_words(run: RunRow) -> str:
    """Who made the run: the user and the surface (UI, REST API, CLI), as Airflow recorded them."""
    who = f" by {run.triggering_user}" if run.triggering_user else ""
    via = f" via {run.triggered_by.lower().replace('_', ' ')}" if run.triggered_by else ""
    return f"triggered{who}{via} at {when(run.created)}"


def job_words(job: JobRow) -> str:
    host = f" on {job.hostname}" if job.hostname else ""
    return (
        f"scheduler job #{job.id}{host} (started {when(job.start_date)}, last heartbeat {when(job.latest_heartbeat)})"
    )


def job_record(job: JobRow) -> str:
    return f"job #{job.id} (SchedulerJob)"


def names(items: list[str]) -> str:
    quoted = [f"{item!r}" for item in items]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def pause_words(record: PauseRecord) -> str:
    """``by hand by op with the note "source down"``: who paused the DAG through tessera, why, and the note.

    The note is user text, quoted as JSON (its quotes and newlines escaped) so it cannot pass for the answer's words.
    """
    if record.reason == AFTER_FAILURES:
        runs = [repr(run) for run in record.failed_runs]
        listed = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
        how = f"by tessera after {len(runs)} failed runs in a row (pause_after_failures: {listed})"
    else:
        how = f"by hand by {record.by or 'an unnamed user'}"
    note = f" with the note {json.dumps(record.note, ensure_ascii=False)}" if record.note else ", with no note"
    return how + note
