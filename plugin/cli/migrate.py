"""``tessera migrate DAG_FOLDER``: what moving a folder's DAGs to tessera changes, run by run, and the patch.

.. code-block:: console

    $ tessera migrate dags/                                   # the next 365 days, every DAG
    $ tessera migrate dags/ --since 2026-01-01T00:00Z --until 2027-01-01T00:00Z --json
    $ tessera migrate dags/ --patch tessera.diff              # the identical ones; git apply tessera.diff
    $ tessera migrate dags/ --patch all.diff --variant spread --include-changed

The folder is loaded as ``tessera plan`` loads it (Airflow's DagBag, the dag policy, the same
refusals), at most 10,000 DAG files. Exits 0 when every DAG compared keeps its runs on its exact
proposal, 1 when a file does not import or a DAG's runs or read windows would change, and 2,
with one line, for anything it will not work with (see :mod:`tessera.plugin.migrate`).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import sys
from typing import Any

from .inputs import Refused, instant

EXIT_OK, EXIT_CHANGES, EXIT_USAGE = 0, 1, 2


def add_parser(commands: Any) -> None:
    from ..migrate.proposals import VARIANTS

    migrate = commands.add_parser(
        "migrate", help="what moving a folder's DAGs to tessera changes, run by run, and the patch that does it"
    )
    migrate.add_argument("path", help="a DAG folder (or file), loaded as the dag-processor loads it")
    migrate.add_argument("--since", help="compare runs after this instant (default now)")
    migrate.add_argument("--until", help="... up to this one (default 365 days after --since, at most 400)")
    migrate.add_argument("--json", action="store_true", help="print JSON instead of text")
    migrate.add_argument("--patch", metavar="OUT", help="write a unified diff of the DAG files to OUT")
    migrate.add_argument(
        "--variant", choices=VARIANTS, default="exact", help="the proposal the patch writes (default exact)"
    )
    migrate.add_argument(
        "--include-changed", action="store_true", help="also rewrite DAGs whose runs or windows would change"
    )


def run(args: argparse.Namespace) -> int:
    """``tessera migrate``: print the report (and write the patch); see the module docstring for the exits."""
    try:
        # Airflow logs to stdout while it loads (its configuration, the files): stdout keeps the answer alone.
        with contextlib.redirect_stdout(sys.stderr):
            report, patch = _report(args)
        if args.patch is not None:
            with open(args.patch, "w", encoding="utf-8") as out:
                out.write(patch)
    except (Refused, ValueError, OSError) as error:
        print(f"tessera migrate: {error}", file=sys.stderr)
        return EXIT_USAGE
    from ..migrate.render import render

    body = report.model_dump(mode="json")
    if args.json:
        json.dump(body, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render(body, sys.stdout)
    changed = any(dag.verdict not in ("", "identical") for dag in report.dags)
    return EXIT_CHANGES if report.problems or changed else EXIT_OK


def _report(args: argparse.Namespace) -> tuple[Any, str]:
    from .._airflow import utcnow
    from ..migrate.report import DEFAULT_RANGE, migrate_folder

    since = _plain(instant("--since", args.since) if args.since else utcnow())
    until = _plain(instant("--until", args.until)) if args.until else since + DEFAULT_RANGE
    return migrate_folder(
        args.path,
        since=since,
        until=until,
        variant=args.variant,
        include_changed=args.include_changed,
        patch=args.patch is not None,
    )


def _plain(moment: datetime.datetime) -> datetime.datetime:
    """An instant in UTC (the comparison's runs are in UTC)."""
    return moment.astimezone(datetime.timezone.utc)
