"""Request and response bodies of the REST API's actions: refresh a DAG, pause or unpause it with a note."""

from __future__ import annotations

import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Instant = datetime.datetime


class _Model(BaseModel):
    model_config = ConfigDict(from_attributes=True)


# -- refresh ----------------------------------------------------------------------------------


class Receipt(_Model):
    """What a refresh task reported about its result: metadata only, never the data."""

    task_id: str
    outcome: str | None
    rows: int | None
    duration_seconds: float | None
    changed: bool | None


class RefreshRun(_Model):
    run_id: str
    run_type: str
    state: str | None
    triggered_by: str | None
    triggering_user: str | None
    queued_at: Instant | None
    start_date: Instant | None
    end_date: Instant | None
    dag_version: int | None = Field(description="The DAG version the run executes.")
    bundle_version: str | None
    current_dag_version: int | None = Field(description="The DAG's newest version.")
    runs_current_version: bool | None
    receipts: list[Receipt]


class RefreshResponse(_Model):
    dag_id: str
    outcome: Literal["started", "joined", "coalesced"] = Field(
        description="started: a new run; joined: a run already queued or running; "
        "coalesced: a run that succeeded within the last minute."
    )
    message: str
    run: RefreshRun
    next_scheduled_run_after: Instant | None = Field(
        description="The next scheduled run, unchanged by the refresh (an on-demand run never moves it)."
    )


class RefreshRequest(BaseModel):
    """The body of a refresh: an empty JSON object, ``{}`` (no options yet).

    Required so that a browser form on another site, which cannot send JSON, can never
    start a run with the Airflow UI's session cookie.
    """

    model_config = ConfigDict(extra="forbid")


class RefreshStatus(_Model):
    dag_id: str
    live_run: RefreshRun | None = Field(description="The newest queued or running run, whatever started it.")
    latest_finished_run: RefreshRun | None
    coalescing_window_seconds: int


# -- pause with a note ---------------------------------------------------------------------------


class PauseRequest(BaseModel):
    """The body of a pause or unpause: ``{}`` or ``{"note": "<why>"}`` (at most 1024 bytes of UTF-8)."""

    model_config = ConfigDict(extra="forbid")
    note: str | None = Field(default=None, description="Why (plain text, newlines and tabs kept, at most 1024 bytes).")


class PauseState(_Model):
    """The DAG's pause as tessera recorded it (Airflow's audit log, event tessera.dag.pause / unpause)."""

    dag_id: str
    is_paused: bool
    note: str | None
    by: str | None = Field(description="Who: the signed-in user, the CLI's OS user, or 'tessera' after failures.")
    at: Instant
    reason: str = Field(description="by_hand, or pause_after_failures (then failed_runs names them).")
    failed_runs: list[str] = Field(default_factory=list)
