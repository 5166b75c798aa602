"""Why one DAG's row could not be computed: said in one line on the row, and logged once per process.

The same broken DAG fails the same way on every request (the page asks every 30 seconds per open
browser), so its traceback goes to the log at WARNING the first time this process sees that failure
and at DEBUG after that; a different failure of the same DAG is logged again. The memory of what was
logged holds at most :data:`REMEMBERED` failures (forgotten all at once when full: then each is
logged once more).
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)
CAUSE_DEPTH = 8
"""How far down an exception's causes the line looks for the root one."""
REMEMBERED = 4096
_logged: set[tuple[str, str, str]] = set()


def failure(what: str, dag_id: str, error: Exception) -> str:
    """Log why one DAG's ``what`` failed (once per distinct failure), and say it in one line for that DAG's row."""
    text = f"{what} failed: {type(error).__name__}: {error}"
    # Airflow wraps a timetable's own error (DeserializationError): name the root cause too.
    root = error
    for _ in range(CAUSE_DEPTH):
        if (cause := root.__cause__ or root.__context__) is None:
            break
        root = cause
    line = text if root is error else f"{text} (because {type(root).__name__}: {root})"
    key = (what, dag_id, line)
    first = key not in _logged
    if first:
        if len(_logged) >= REMEMBERED:
            _logged.clear()
        _logged.add(key)
    log.log(
        logging.WARNING if first else logging.DEBUG,
        "tessera: %s failed for DAG %r%s",
        what,
        dag_id,
        "" if first else " (again; logged in full the first time)",
        exc_info=error if first else None,
    )
    return line
