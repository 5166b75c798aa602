"""``tessera why DAG_ID [--at T] [--json]``: did the DAG run at or around T, and why (or why not)?

.. code-block:: console

    $ tessera why etl_daily                              # now, from the metadata DB the Airflow CLI uses
    $ tessera why etl_daily --at 2026-03-29T02:30+01:00  # any instant, with its timezone
    $ tessera why etl_daily --api http://localhost:8080 --token "$TOKEN" --json

Prints the verdict, then the evidence in three parts (what the schedule decided, what Airflow
did, what happens next), each with the record that proves it, then any record the answer
needed and did not find. Exits 2, with one line and no traceback, when the DAG is unknown, ``--at``
is not a supported instant, there is no metadata database to read (:mod:`.cli_database`), or
``--api`` is refused or answers anything but a tessera why answer (:class:`.inputs.RemoteApi`).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import sys
import urllib.parse
from typing import Any, TextIO

from .inputs import DEFAULT_TIMEOUT_SECONDS, MAX_DAG_RESPONSE_BYTES, Refused, RemoteApi, dag_id

EXIT_OK, EXIT_USAGE = 0, 2
SECTIONS = (("schedule", "What the schedule decided"), ("airflow", "What Airflow did"), ("next", "What happens next"))


def instant(text: str) -> datetime.datetime:
    """``--at``: an ISO 8601 instant with a timezone, in tessera's supported range."""
    # Imported when asked: the API's modules load FastAPI, which `tessera plan` need not wait for.
    from ..api.inputs import SUPPORTED_FROM, SUPPORTED_RANGE, SUPPORTED_UNTIL

    try:
        moment = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--at: {text[:64]!r} is not an ISO 8601 instant; give one such as 2026-03-29T02:30:00+01:00"
        ) from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise argparse.ArgumentTypeError(f"--at: {text[:64]!r} has no timezone; add one, e.g. {text[:64]}Z")
    if not SUPPORTED_FROM <= moment < SUPPORTED_UNTIL:
        raise argparse.ArgumentTypeError(f"--at: {text[:64]!r} is outside the supported range {SUPPORTED_RANGE}")
    return moment


def add_parser(commands: Any) -> None:
    why = commands.add_parser("why", help="did a DAG run at or around an instant, and why (or why not)")
    why.add_argument("dag_id", help="any DAG, tessera-scheduled or not")
    why.add_argument("--at", type=instant, help="the instant asked about, with a timezone (default now)")
    why.add_argument("--json", action="store_true", help="print the answer as JSON")
    why.add_argument("--api", help="ask a running deployment instead, e.g. http://localhost:8080")
    why.add_argument("--token", help="JWT for --api (default $TESSERA_API_TOKEN)")
    why.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_SECONDS,
        help=f"seconds the whole --api exchange may take (default {DEFAULT_TIMEOUT_SECONDS:g}, at most 3600)",
    )


def local_answer(dag_id: str, at: datetime.datetime | None) -> dict[str, Any]:
    """The answer read from the metadata DB the Airflow CLI is configured for."""
    from airflow.utils.session import create_session

    from ..explainer import explain
    from ..scoped_reads import Scope

    with create_session() as session:  # the database's own reader: every DAG is in scope
        return explain(session, dag_id, at=at, scope=Scope.everything()).model_dump(mode="json")


def remote_answer(api: RemoteApi, dag_id: str, at: datetime.datetime | None) -> dict[str, Any]:
    """The answer of a running deployment's why route."""
    from ..explainer import WhyAnswer

    query = {} if at is None else {"at": at.isoformat()}
    path = f"dags/{urllib.parse.quote(dag_id, safe='')}/why"
    return api.get(path, query, shape=WhyAnswer, what="why answer", max_bytes=MAX_DAG_RESPONSE_BYTES)


def render(answer: dict[str, Any], out: TextIO) -> None:
    """The answer as a short text: the verdict first, then each part's evidence and its record."""
    out.write(f"{answer['dag_id']} at {answer['at']}\n{answer['verdict']}\n")
    for section, title in SECTIONS:
        items = [item for item in answer["evidence"] if item["section"] == section]
        if items:
            out.write(f"\n{title}:\n")
        for item in items:
            record = f"  [{item['record']}]" if item.get("record") else ""
            out.write(f"  - {item['text']}{record}\n")
    if answer.get("missing"):
        out.write("\nRecords not found:\n")
        for missing in answer["missing"]:
            out.write(f"  - {missing}\n")


def run(args: argparse.Namespace) -> int:
    """``tessera why``: print the answer; 2 for an unknown DAG, no database, or an ``--api`` it refuses."""
    from sqlalchemy.exc import SQLAlchemyError

    from ..errors import ApiError
    from .database import require_metadata_database

    try:
        asked = dag_id("`dag_id`", args.dag_id)
        if args.api:
            api = RemoteApi.checked(args.api, args.token or os.environ.get("TESSERA_API_TOKEN"), args.timeout)
            answer = remote_answer(api, asked, args.at)
        else:
            require_metadata_database(api_option=True)
            with contextlib.redirect_stdout(sys.stderr):  # Airflow may log to stdout while it loads
                answer = local_answer(asked, args.at)
    except (ApiError, Refused, SQLAlchemyError) as error:
        print(f"tessera why: {_reason(error)}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        json.dump(answer, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render(answer, sys.stdout)
    return EXIT_OK


def _reason(error: Exception) -> str:
    """The one line a refusal prints: the API's detail, the refusal itself, or the database's failure."""
    from ..errors import ApiError
    from .database import database_failure

    if isinstance(error, ApiError):
        return str(error.detail)
    if isinstance(error, Refused):
        return str(error)
    return database_failure(error) + ", or pass --api URL --token TOKEN"
