"""``tessera migrate``: what moving DAGs from Airflow's schedules to tessera's changes, run by run.

For every DAG of a folder (or, through the REST API, every stored DAG the caller may read) the
current schedule (:mod:`.current`) is stepped with Airflow's own ``next_dagrun_info`` and each
proposed tessera schedule (:mod:`.proposals`) with tessera's public plan, over a year and every
clock change of the zone (:mod:`.compare`, whose schedules that repeat are counted by
:mod:`.periods`); the runs that appear, disappear or move and the
windows that change (:mod:`.runs`) give each DAG its verdict. The folder's report
(:mod:`.report`, shaped by :mod:`.models`, printed by :mod:`.render`) adds the start-time
histogram before and after, and the patch (:mod:`.patch`) that writes the proposals in.
"""

from __future__ import annotations

from .compare import DIFFERENT, IDENTICAL, NOT_CONFIRMED, RUN_BUDGET, WINDOWS, compare_dag
from .models import MigrateReport
from .proposals import VARIANTS
from .report import MAX_FILES, MAX_RANGE, migrate_folder

__all__ = [
    "DIFFERENT",
    "IDENTICAL",
    "MAX_FILES",
    "MAX_RANGE",
    "NOT_CONFIRMED",
    "RUN_BUDGET",
    "VARIANTS",
    "WINDOWS",
    "MigrateReport",
    "compare_dag",
    "migrate_folder",
]
