"""``tessera plan --load`` and ``tessera plan ... --from ... --to ...``: the fleet's load and a backfill preview.

Both read DAG files (loaded with Airflow's DagBag, stored form as the dag-processor stores
it) or a running deployment (``--api``); a backfill preview also reads a DAG id from the
metadata database the Airflow CLI is configured for.
"""

from __future__ import annotations

import datetime
import os
import urllib.parse
from typing import Any, TextIO

from .inputs import MAX_DAG_RESPONSE_BYTES, MAX_RESPONSE_BYTES, RemoteApi, load_dags


def _stored(dag: Any) -> Any:
    from .._airflow import stored_dag  # on call, as the others: importing the module costs no Airflow

    return stored_dag(dag)


# -- load ---------------------------------------------------------------------------------------


def local_load(path: str) -> dict[str, Any]:
    """The load of every DAG in the files under ``path`` (paused or not: files say nothing about that)."""
    from .._airflow import utcnow  # here, as the others: importing the module costs no Airflow
    from ..fleet.load.models import load_response
    from ..fleet.load.starts import FleetDag, fleet_load

    dags = []
    for dag in sorted(load_dags(path).dags.values(), key=lambda d: d.dag_id):
        stored = _stored(dag)
        dags.append(FleetDag(dag.dag_id, stored.timetable, start_date=stored.start_date, end_date=stored.end_date))
    now = utcnow()
    return load_response(fleet_load(dags, now=now), paused_left_out=0).model_dump(mode="json")


def remote_load(api: RemoteApi) -> dict[str, Any]:
    from ..fleet.load.models import LoadResponse

    return api.get("load", {}, shape=LoadResponse, what="fleet load", max_bytes=MAX_RESPONSE_BYTES)


def _hm(iso: str) -> str:
    return iso[11:16]


def render_load(load: dict[str, Any], out: TextIO) -> None:
    """The load as text: the totals, the peak-to-mean ratio, each spike and its DAGs, an hourly profile."""
    counted = [d for d in load["dags"] if d["runs"]]
    ratio = load["peak_to_mean"]
    out.write(
        f"Run starts over the next 24 h (from {load['start'][:16].replace('T', ' ')} UTC): "
        f"{load['total_runs']} runs of {len(counted)} DAGs; mean {load['mean_per_minute']:.2f} a minute, "
        f"peak {load['peak']}" + (f" at {_hm(load['peak_at'])}" if load["peak_at"] else "") + "; "
        f"peak-to-mean {'-' if ratio is None else ratio} "
        f"(as if no DAG had a phase: {load['peak_to_mean_without_phases'] or '-'})\n"
    )
    if load["spikes"]:
        out.write("Spikes (minutes with at least 3x the mean):\n")
        for spike in load["spikes"]:
            names = ", ".join(spike["dag_ids"])
            more = spike["dag_count"] - len(spike["dag_ids"])
            out.write(
                f"  {_hm(spike['minute'])}  {spike['runs']:>4} runs  {names}{f' and {more} more' if more else ''}\n"
            )
    else:
        out.write("No spikes: no minute starts 2 runs or more and 3x the mean.\n")
    out.write("Busiest minute of each hour:\n")
    # Clock hours ("06:00"), as the spikes name their minute; the first and last are partly in range.
    top = max((hour["peak"] for hour in load["hours"]), default=0) or 1
    for hour in load["hours"]:
        out.write(f"  {_hm(hour['hour'])}  {'#' * round(40 * hour['peak'] / top):<40} {hour['peak']}\n")
    capped = [d["dag_id"] for d in load["dags"] if d["capped"]]
    if capped:
        out.write(f"Capped at {load['run_cap_per_dag']} runs a day (they start more): {', '.join(capped)}\n")
    for dag in load["dags"]:
        if dag["error"]:
            out.write(f"NOT COUNTED {dag['dag_id']}: {dag['error']}\n")
    if load["paused_left_out"]:
        out.write(f"{load['paused_left_out']} paused DAGs not counted\n")


# -- backfill preview ---------------------------------------------------------------------------


def local_backfill(
    path: str, *, dag_id: str | None, from_date: datetime.datetime, to_date: datetime.datetime
) -> list[dict[str, Any]]:
    """The preview of every DAG in the files under ``path`` (or just ``dag_id``)."""
    from ..actions.backfill_preview import preview_dag

    dags = sorted(load_dags(path).dags.values(), key=lambda d: d.dag_id)
    return [
        preview_dag(dag, from_date=from_date, to_date=to_date).model_dump(mode="json")
        for dag in dags
        if dag_id in (None, dag.dag_id)
    ]


def stored_backfill(dag_id: str, *, from_date: datetime.datetime, to_date: datetime.datetime) -> list[dict]:
    """The preview of a DAG stored in the metadata database this Airflow CLI is configured for."""
    from airflow.utils.session import create_session

    from ..actions.backfill_preview import preview_stored

    with create_session() as session:
        preview = preview_stored(session, dag_id, from_date=from_date, to_date=to_date)
    return [preview.model_dump(mode="json")]


def remote_backfill(
    api: RemoteApi, dag_id: str, *, from_date: datetime.datetime, to_date: datetime.datetime
) -> list[dict[str, Any]]:
    from ..actions.backfill_preview import BackfillPreview

    query = {"from_date": from_date.isoformat(), "to_date": to_date.isoformat()}
    path = f"dags/{urllib.parse.quote(dag_id, safe='')}/backfill-preview"
    return [api.get(path, query, shape=BackfillPreview, what="backfill preview", max_bytes=MAX_DAG_RESPONSE_BYTES)]


def _short(iso: str | None) -> str:
    return "-" if iso is None else iso.replace("T", " ").replace("+00:00", "Z")


def render_backfill(previews: list[dict[str, Any]], out: TextIO) -> None:
    for preview in previews:
        runs = preview["runs"]
        out.write(
            f"{preview['dag_id']}: airflow backfill create --from-date {_short(preview['from_date'])} "
            f"--to-date {_short(preview['to_date'])} creates {len(runs)} run{'s' if len(runs) != 1 else ''}\n"
        )
        if runs:
            out.write(f"  {'logical date (UTC)':<22}{'window (UTC)':<46}{'run after (UTC)':<22}run id\n")
        for run in runs:
            window = f"{_short(run['window_start'])} -> {_short(run['window_end'])}"
            key = f"  key {run['partition_key']}" if run.get("partition_key") else ""
            out.write(
                f"  {_short(run['logical_date']):<22}{window:<46}{_short(run['run_after']):<22}{run['run_id']}{key}\n"
            )
        for skipped in preview.get("excluded", []):
            local = skipped["occurrence_local"][:16].replace("T", " ")
            out.write(f"  skipped {local}: {'; '.join(skipped['reasons'])}\n")
        out.write(f"  ({preview['note']})\n")


def is_path(target: str) -> bool:
    """A DAG file or folder rather than a DAG id (an id has no slash and does not end in .py)."""
    return os.path.exists(target) or "/" in target or os.sep in target or target.endswith(".py")
