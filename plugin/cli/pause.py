"""``tessera pause DAG --note "…"`` and ``tessera unpause DAG``: Airflow's pause, with the reason kept.

.. code-block:: console

    $ tessera pause etl --note "source API down, see INC-1234"
    $ tessera unpause etl --note "INC-1234 fixed"

Like ``airflow dags pause``, it writes to the metadata database this Airflow is configured
for (run it where ``airflow db check`` works), as the OS user. The note (at most 1024 bytes of
plain text) is kept with the pause in Airflow's audit log (:mod:`tessera.operators.pauses.notes`;
Browse > Audit Log). It exits 2, with one line and no traceback, for a note out
of bounds, a DAG id that is not text, an unknown DAG, no metadata database to write
(:mod:`.cli_database`; nothing is created) or a database it cannot reach.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import sys
from typing import Any

EXIT_OK, EXIT_USAGE = 0, 2


def add_parsers(commands: Any) -> None:
    """Add ``pause`` and ``unpause`` to the ``tessera`` command's subcommands."""
    for name, verb in (("pause", "pause"), ("unpause", "unpause")):
        parser = commands.add_parser(name, help=f"{verb} a DAG and record why (Airflow's audit log)")
        parser.add_argument("dag_id", help="the DAG's id")
        parser.add_argument("--note", help="why, e.g. 'source down, see INC-12' (plain text, at most 1024 bytes)")


def run(args: argparse.Namespace) -> int:
    """Pause or unpause ``args.dag_id`` with ``args.note``; the exit status."""
    from sqlalchemy.exc import SQLAlchemyError

    from tessera.operators.pauses.notes import UnknownDag, check_note, set_paused

    from .database import database_failure, require_metadata_database
    from .inputs import dag_id

    command = f"tessera {args.command}"
    paused = args.command == "pause"
    try:
        asked = dag_id("`dag_id`", args.dag_id)
        note = check_note(args.note)
        require_metadata_database(api_option=False)
        from airflow.utils.session import create_session

        with contextlib.redirect_stdout(sys.stderr), create_session() as session:
            record = set_paused(session, asked, paused=paused, note=note, by=getpass.getuser())
    except UnknownDag:
        print(f"{command}: dag_id: {args.dag_id!r} is not a DAG in the metadata database", file=sys.stderr)
        return EXIT_USAGE
    except (TypeError, ValueError) as refused:  # Refused included
        print(f"{command}: {refused}", file=sys.stderr)
        return EXIT_USAGE
    except SQLAlchemyError as error:
        print(f"{command}: {database_failure(error, doing='write')}", file=sys.stderr)
        return EXIT_USAGE
    state = "paused" if record.paused else "unpaused"
    print(f"{record.dag_id}: {state} by {record.by}" + (f": {record.note}" if record.note else ""))
    return EXIT_OK
