"""What happens to the window of a fire that does not run: covered by the next run, or owed.

A schedule's windows tile time (``[previous occurrence, occurrence)``, shifted by the
delay). A fire that does not run (dropped by the overlap policy, passed over by the
catch-up or the starting deadline, or due while a declared schedule was paused with
``CATCHUP false``) would leave its window unprocessed. ``dropped=`` on every timetable
says what happens to it:

* ``"cover"`` (the default): the next scheduled run that starts evaluates every window
  since the last scheduled run: its window starts where the first dropped fire's would
  have (:func:`covering_run`), as it already does across excluded dates. No data is lost
  and nothing is evaluated twice.
* ``"owe"``: every run keeps its one-period window; the dropped windows are owed, read back
  from the run table itself (:func:`owed_runs`: the gaps between consecutive scheduled
  runs' windows, so they survive ``airflow db clean`` of the audit log), and
  ``airflow backfill create`` over their range runs exactly those.

A partitioned timetable owes: a run's ``partition_key`` names one period, which a wider
window would misname. Manual and backfill runs never change a scheduled run's window.
"""

from __future__ import annotations

from .owed import MAX_OWED, OwedRuns, owed_runs
from .window import COVER, DROPPED, OWE, check_dropped, covering_run

__all__ = ["COVER", "DROPPED", "MAX_OWED", "OWE", "OwedRuns", "check_dropped", "covering_run", "owed_runs"]
