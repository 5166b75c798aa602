"""How a plain timetable's ``overlap=`` meets the DAG's ``max_active_runs``, settled by the dag policy.

``overlap`` decides what a tick does when it comes due while ``max_active_runs`` runs of the DAG
are in flight; the DAG's ``max_active_runs`` is how many that is:

==============  =====================================================================================
overlap         max_active_runs
==============  =====================================================================================
allow_all       the DAG's own (Airflow's default, ``[core] max_active_runs_per_dag``, is 16): runs
                overlap up to it, and a tick past it waits and runs, oldest first
skip            1 when the DAG leaves it at Airflow's default (one run at a time, as a CronJob's
buffer_one      ``Forbid``); a number the DAG sets is kept: the policy then applies once that many
buffer_all      runs are in flight
cancel_other    2 (the run being replaced and the one replacing it, for the moment the replaced one
                takes to stop); the DAG may leave it at the default or set 1, anything else is refused
==============  =====================================================================================

Airflow's ``catchup=True`` creates every occurrence in order whatever tessera decides, so
``skip``, ``buffer_one`` and ``cancel_other`` (which drop or replace ticks) are refused with it.
A declared schedule sets ``max_active_runs`` itself from ``MAX_CONCURRENT`` and is left alone here.
"""

from __future__ import annotations

from typing import Any

from tessera.timetables.rules import excerpt
from tessera.timetables.run_policy import RunPolicy

ONE_AT_A_TIME = ("skip", "buffer_one", "buffer_all")
DROPS_TICKS = ("skip", "buffer_one", "cancel_other")
REPLACING_SLOTS = 2
"""``cancel_other``: the run in flight and the one that replaces it."""


def hold_overlap(dag: Any, policy: RunPolicy, *, default_max_active_runs: int) -> None:
    """Set ``dag.max_active_runs`` for a plain timetable's ``overlap`` (see the module docstring).

    :raises ValueError: a ``max_active_runs`` or ``catchup`` the policy contradicts, naming the field.
    """
    if policy.declared:
        return
    overlap, given = policy.overlap, dag.max_active_runs
    if dag.catchup and overlap in DROPS_TICKS:
        raise ValueError(
            f"catchup: True on DAG {dag.dag_id!r} creates every occurrence in order, but overlap {overlap!r} "
            f"{'replaces' if overlap == 'cancel_other' else 'drops'} ticks that find a run in flight; set "
            f"catchup=False, or use overlap='buffer_all' (every tick, in order)"
        )
    if overlap in ONE_AT_A_TIME and given == default_max_active_runs:
        dag.max_active_runs = 1
    elif overlap == "cancel_other":
        if given not in (1, default_max_active_runs, REPLACING_SLOTS):
            raise ValueError(
                f"max_active_runs: {excerpt(given)} on DAG {dag.dag_id!r}; overlap 'cancel_other' runs one run at "
                f"a time, replacing the run in flight with the new one (which needs {REPLACING_SLOTS} slots for a "
                f"moment); remove max_active_runs or set it to 1"
            )
        dag.max_active_runs = REPLACING_SLOTS
