"""The ``tessera`` command beside ``airflow``: ``plan``, ``why``, ``pause``, ``unpause`` and ``migrate``.

:mod:`.command` parses the command line and runs ``plan``; :mod:`.why`, :mod:`.pause`,
:mod:`.migrate` (:mod:`tessera.plugin.migrate`'s report and patch) and :mod:`.previews`
(backfill previews and the fleet's load) run the others; :mod:`.inputs` reads
what a user gives (options, DAG files, ``--api``) and :mod:`.database` the deployment's metadata
database. Entry point: ``tessera = tessera.plugin.cli:main``.
"""

from __future__ import annotations

from .command import EXIT_CONTRADICTION, EXIT_OK, EXIT_USAGE, main

__all__ = ["EXIT_CONTRADICTION", "EXIT_OK", "EXIT_USAGE", "main"]
