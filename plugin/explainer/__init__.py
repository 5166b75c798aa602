"""The explainer: did a DAG run at or around an instant T, and why (or why not)?

One answer for the REST route (``GET /tessera/api/v1/dags/{dag_id}/why``), the CLI (``tessera why``)
and the Schedules page's "Why?". A newcomer follows a question in this order:

* :mod:`.answer`: :func:`explain`, which reads, decides and words the answer;
* :mod:`.facts`: everything it reads about the DAG around T (through the caller's scoped reads),
  with :mod:`.versions` (the definition in force at T), :mod:`.records` (scheduler jobs),
  :mod:`.schedule` and :mod:`.builtin` (what the timetable decided) and :mod:`.clock` (daylight saving);
* :mod:`.verdict`: which fact decided, in the order a person checks them; :mod:`.runs` when a run
  answers it, :mod:`.blockers` when an occurrence has no run, :mod:`.waits` for what a run waits on;
* :mod:`.models` (the answer's shape) and :mod:`.words` (how instants, runs and records are written).
"""

from __future__ import annotations

from .answer import explain
from .models import WhyAnswer

__all__ = ["WhyAnswer", "explain"]
