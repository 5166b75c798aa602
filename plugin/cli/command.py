"""``tessera``: print the plan of tessera-scheduled DAGs, from DAG files or from a running deployment.

.. code-block:: console

    $ tessera plan dags/                      # load the files with DagBag (the dag policy runs)
    $ tessera plan dags/etl.py --dag-id etl --count 5 --after 2026-03-02T12:00:00Z
    $ tessera plan --api http://localhost:8080 --token "$TOKEN"
    $ tessera plan dags/ --load               # run starts per minute over the next 24 h, spikes
    $ tessera plan dags/etl.py --from 2026-01-01T00:00Z --to 2026-01-01T23:59:59Z   # backfill preview
    $ tessera plan etl                        # a DAG id: its stored plan, from the metadata DB
    $ tessera plan etl --from 2026-01-01T00:00Z --to 2026-01-02T00:00Z  # a DAG id in the metadata DB
    $ tessera pause etl --note "source down, see INC-12"   # see tessera.plugin.cli.pause

The local form needs no running Airflow and no metadata database, so a schedule can
be checked before it is deployed. Both forms list the runs the scheduler creates: each
DAG's start and end dates bound them as they bound the scheduler. It exits 1 when a file does not import or the
declared schedules contradict each other (unknown AFTER parents, cycles), and 2, with a message naming the
option and never a traceback, for anything it will not work with (:mod:`tessera.plugin.cli.inputs`): the
REST API's bounds (instants with a timezone in 1900-2999, at most 1000 runs, a preview of at most 1000 runs),
a path that is not DAG files, a DAG id that is not text, no metadata database to read (:mod:`.database`),
a database it cannot read, and an ``--api`` it refuses or that answers anything but the route's answer
(:class:`~tessera.plugin.cli.inputs.RemoteApi`: http(s) only, no redirect, ``--timeout``, a size cap).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import sys
import urllib.parse
from collections.abc import Sequence
from typing import Any, TextIO

from ..errors import ApiError
from . import pause
from .inputs import (
    DEFAULT_TIMEOUT_SECONDS,
    MAX_DAG_RESPONSE_BYTES,
    MAX_RESPONSE_BYTES,
    RemoteApi,
    count,
    dag_id,
    instant,
    load_dags,
)

EXIT_OK, EXIT_CONTRADICTION, EXIT_USAGE = 0, 1, 2


DESCRIPTION = (
    "The plans of tessera-scheduled DAGs, from DAG files or a running deployment;\n"
    "why a DAG did or did not run at an instant; pauses with a note."
)
"""What ``tessera --help`` says first: plain text (the module docstring is reStructuredText for the docs)."""
EXAMPLES = """examples:
  tessera plan dags/                          the next runs of every DAG in the folder
  tessera plan dags/etl.py --count 5 --after 2026-03-02T12:00:00Z
  tessera plan --api http://localhost:8080 --token "$TOKEN"
  tessera plan dags/ --load                   run starts per minute over the next 24 h
  tessera plan etl --from 2026-01-01T00:00Z --to 2026-01-02T00:00Z    backfill preview
  tessera why etl --at 2026-03-29T02:30+01:00
  tessera pause etl --note "source down, see INC-12"
  tessera migrate dags/ --patch tessera.diff  what moving to tessera changes, run by run

exit status: 0 done; 1 a DAG file does not import or declared schedules contradict each other;
2 an option, path, DAG id, database or --api answer it will not work with (one line, no traceback)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tessera", description=DESCRIPTION, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="print the next runs, their run-after, windows and phase")
    plan.add_argument("path", nargs="?", help="a DAG file or a folder of them, or a DAG id in the metadata DB")
    plan.add_argument("--dag-id", help="only this DAG")
    plan.add_argument("--count", type=int, default=5, help="runs per DAG (default 5, at most 1000)")
    plan.add_argument("--after", help="list runs starting after this instant, e.g. 2026-03-02T12:00Z (default now)")
    plan.add_argument("--api", help="read a running deployment instead, e.g. http://localhost:8080")
    plan.add_argument("--token", default=os.environ.get("TESSERA_API_TOKEN"), help="JWT for --api")
    plan.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_SECONDS,
        help=f"seconds the whole --api exchange may take (default {DEFAULT_TIMEOUT_SECONDS:g}, at most 3600)",
    )
    plan.add_argument("--json", action="store_true", help="print JSON instead of a table")
    plan.add_argument("--load", action="store_true", help="run starts per minute over the next 24 h, every DAG")
    plan.add_argument("--from", dest="from_date", help="backfill preview: as --from-date, with a zone")
    plan.add_argument("--to", dest="to_date", help="backfill preview: as --to-date, with a zone")
    from . import why  # `tessera why DAG_ID [--at T]`

    why.add_parser(commands)
    pause.add_parsers(commands)
    from . import migrate  # `tessera migrate DAG_FOLDER`

    migrate.add_parser(commands)
    return parser


def local_plan(path: str, *, dag_id: str | None, count: int, after: datetime.datetime) -> dict[str, Any]:
    """The plan of the DAG files under ``path``, in the shape of the REST API's plan route."""
    from tessera.timetables.base import TesseraTimetable

    from ..fleet.adapters import declared_schedule_check
    from ..fleet.excluded import excluded_runs
    from ..fleet.schedules import duration_text, occurrence_of, planned_runs

    bag = load_dags(path)
    root = path if os.path.isdir(path) else os.path.dirname(path)
    contradictions = [
        {
            "kind": "invalid_spec",
            "severity": "error",
            "message": f"{os.path.relpath(file, root) if os.path.isabs(file) else file}: "
            f"{error.strip().splitlines()[-1]}",
            "dag_ids": [],
            "schedule": None,
            "source": "import_error",
        }
        for file, error in sorted(bag.import_errors.items())
    ]
    declared, check = declared_schedule_check(bag.dags.values())
    contradictions += [c.model_dump(mode="json") for c in declared]
    dags = []
    for dag in sorted(bag.dags.values(), key=lambda d: d.dag_id):
        timetable = dag.timetable
        if not isinstance(timetable, TesseraTimetable) or dag_id not in (None, dag.dag_id):
            continue
        # The DAG's start and end dates bound its runs, exactly as the scheduler bounds them.
        plan = timetable.plan
        runs = planned_runs(plan, dag, after=after, count=count, until=None)
        dags.append(
            {
                "dag_id": dag.dag_id,
                "summary": timetable.summary,
                "timezone": plan.timezone,
                "phase": duration_text(plan.phase),
                "delay": duration_text(plan.delay) if plan.delay else None,
                "occurrences": [occurrence_of(run, plan.timezone).model_dump(mode="json") for run in runs],
                "excluded": [
                    skipped.model_dump(mode="json")
                    for skipped in excluded_runs(timetable, after=after, until=runs[-1].occurrence if runs else None)
                ],
                "contradictions": [c for c in contradictions if dag.dag_id in c["dag_ids"]],
            }
        )
    return {"dags": dags, "contradictions": contradictions, "plan_check": check}


def remote_plan(api: RemoteApi, *, dag_id: str | None, count: int, after: datetime.datetime) -> dict:
    """The plan route of a running deployment (``/tessera/api/v1/...``)."""
    from ..fleet.models import DagPlan, PlanResponse

    query = {"count": str(count), "after": after.isoformat()}
    if dag_id is None:
        return api.get("plan", query, shape=PlanResponse, what="plan", max_bytes=MAX_RESPONSE_BYTES)
    path = f"dags/{urllib.parse.quote(dag_id, safe='')}/plan"
    body = api.get(path, query, shape=DagPlan, what="DAG plan", max_bytes=MAX_DAG_RESPONSE_BYTES)
    return {"dags": [body], "contradictions": body["contradictions"], "plan_check": "ok"}  # wrapped like the list


def stored_plan(dag_id: str, *, count: int, after: datetime.datetime) -> dict[str, Any]:
    """The plan of a DAG stored in the metadata database this Airflow CLI is configured for, as the API answers it."""
    from airflow.utils.session import create_session

    from ..fleet.row_errors import plan_row
    from ..fleet.schedules import scheduled_dag

    with create_session() as session:
        row = plan_row(scheduled_dag(session, dag_id), after=after, count=count, until=None, contradictions=[])
        body = row.model_dump(mode="json")
    return {"dags": [body], "contradictions": body["contradictions"], "plan_check": "ok"}


def _short(iso: str) -> str:
    return iso.replace("T", " ").replace("+00:00", "Z").removesuffix("Z")


def render(plan: dict[str, Any], out: TextIO) -> None:
    """The plan as text: per DAG its summary, then one line per run."""
    for dag in plan["dags"]:
        out.write(f"{dag['dag_id']}: {dag['summary']} (timezone {dag['timezone']}, phase {dag['phase'] or '-'})\n")
        out.write(f"  {'occurrence (UTC)':<21}{'run after (UTC)':<21}{'window (UTC)':<43}local occurrence\n")
        for run in dag["occurrences"]:
            window = f"{_short(run['window_start'])} -> {_short(run['window_end'])}"
            local = run["occurrence_local"] if dag["timezone"] != "UTC" else ""
            key = f"  key {run['partition_key']}" if run.get("partition_key") else ""
            out.write(f"  {_short(run['occurrence']):<21}{_short(run['run_after']):<21}{window:<43}{local}{key}\n")
        if not dag["occurrences"]:
            out.write("  (no clock-driven runs)\n")
        for skipped in dag.get("excluded", []):
            local = skipped["occurrence_local"][:16].replace("T", " ")
            out.write(f"  skipped {local}: {'; '.join(skipped['reasons'])}\n")
    for item in plan["contradictions"]:
        out.write(f"{item['severity'].upper()} {item['kind']}: {item['message']}\n")
    if plan["plan_check"] != "ok":
        out.write(f"declared-schedule check {plan['plan_check']}\n")


def _previews(args: argparse.Namespace, api: RemoteApi | None) -> int:
    """``--load`` and ``--from``/``--to``: the fleet's load, or the runs a backfill creates."""
    from . import previews
    from .database import require_metadata_database

    if args.load:
        if (args.path is None) == (api is None):
            print("tessera plan --load: give a DAG file or folder, or --api URL (one of them)", file=sys.stderr)
            return EXIT_USAGE
        # Airflow logs to stdout while it loads; keep stdout for the answer itself.
        with contextlib.redirect_stdout(sys.stderr):
            answer: Any = previews.remote_load(api) if api else previews.local_load(args.path)
        render = previews.render_load
    else:
        if None in (args.from_date, args.to_date) or args.path is None:
            print("tessera plan: a backfill preview needs a DAG file or id, --from and --to", file=sys.stderr)
            return EXIT_USAGE
        dates = {"from_date": instant("--from", args.from_date), "to_date": instant("--to", args.to_date)}
        with contextlib.redirect_stdout(sys.stderr):
            if previews.is_path(args.path):
                answer = previews.local_backfill(args.path, dag_id=args.dag_id, **dates)
            elif api:
                answer = previews.remote_backfill(api, dag_id("`dag_id`", args.path), **dates)
            else:
                asked = dag_id("`dag_id`", args.path)
                require_metadata_database(api_option=True)
                answer = previews.stored_backfill(asked, **dates)
        render = previews.render_backfill
    _print(answer, render, as_json=args.json)
    return EXIT_OK


def _print(answer: Any, render: Any, *, as_json: bool) -> None:
    if as_json:
        json.dump(answer, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render(answer, sys.stdout)


def _plan(args: argparse.Namespace, api: RemoteApi | None) -> int:
    from .database import require_metadata_database
    from .previews import is_path

    if (args.path is None) == (api is None):
        print("tessera plan: give a DAG file or folder, a DAG id, or --api URL (one of them)", file=sys.stderr)
        return EXIT_USAGE
    count_ = count(args.count)
    from .._airflow import utcnow  # here: importing Airflow costs a second the --help and --api forms need not pay

    after = instant("--after", args.after) if args.after is not None else utcnow()
    if api is not None:
        plan = remote_plan(api, dag_id=args.dag_id, count=count_, after=after)
    elif is_path(args.path):
        plan = local_plan(args.path, dag_id=args.dag_id, count=count_, after=after)
    else:
        asked = dag_id("`dag_id`", args.path)
        require_metadata_database(api_option=True)
        with contextlib.redirect_stdout(sys.stderr):  # Airflow may log to stdout while it loads
            plan = stored_plan(asked, count=count_, after=after)
    _print(plan, render, as_json=args.json)
    if args.dag_id is not None and not plan["dags"]:
        print(f"tessera plan: no tessera-scheduled DAG {args.dag_id!r}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_CONTRADICTION if any(c["severity"] == "error" for c in plan["contradictions"]) else EXIT_OK


EXIT_READER_GONE = 128 + 13
"""The exit status of a command whose reader went away (``tessera why X | head``), as after SIGPIPE in a shell."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tessera`` console script."""
    try:
        return _command(argv)
    except BrokenPipeError:
        # The reader went away: the rest is not wanted, and no traceback either. Python flushes
        # stdout once more at exit, which would fail the same way: point it at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_READER_GONE


def _command(argv: Sequence[str] | None) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from .database import database_failure

    args = _parser().parse_args(argv)
    if args.command == "why":
        from . import why

        return why.run(args)
    if args.command == "migrate":
        from . import migrate

        return migrate.run(args)
    if args.command != "plan":
        return pause.run(args)
    try:
        if args.dag_id is not None:
            dag_id("`--dag-id`", args.dag_id)
        api = None if args.api is None else RemoteApi.checked(args.api, args.token, args.timeout)
        if args.load or args.from_date is not None or args.to_date is not None:
            return _previews(args, api)
        return _plan(args, api)
    except ApiError as error:  # the REST API's refusals, raised locally: a range too long or in the future
        print(f"tessera plan: {error.detail}", file=sys.stderr)
    except SQLAlchemyError as error:  # a DAG id, read from the metadata database this Airflow is configured for
        print(f"tessera plan: {database_failure(error)}, or give a DAG file", file=sys.stderr)
    except BrokenPipeError:
        raise  # the reader went away: see main
    except (ValueError, OSError) as error:  # Refused, and what the system refuses (a header with a newline, ...)
        print(f"tessera plan: {error}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
