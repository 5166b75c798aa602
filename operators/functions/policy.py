"""The knobs that decide whether a tick may fire: concurrency policy and the global dispatch cap.

Kept free of Airflow's core models so DAG files and workers can import it; the
scheduler-side admission that applies them is :mod:`tessera.operators.functions.admission`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from tessera.timetables.rules import excerpt

from ..tessera_names import CONFIG_SECTION

CURSOR_TASK_TYPE = "CursorFunctionOperator"
"""How the scheduler recognises a cursor-function task in a serialized DAG."""

DISPATCH_POOL = "tessera_dispatch"
"""The Airflow pool whose slots are the global dispatch cap; the admission creates and sizes it."""

CAP_OPTION = "max_concurrent_dispatches"
DEFAULT_CAP = 10


def is_dry_run(conf: Any) -> bool:
    """A run-now with ``{"dry_run": true}``: never declined, never touches the stored cursor."""
    return isinstance(conf, dict) and conf.get("dry_run") is True


class Concurrency(str, Enum):
    """What a tick does while an earlier fire of the same function is still in flight.

    ``FORBID`` (the default, and the right choice with a cursor): the tick does not
    fire; it is recorded as skipped with reason ``ConcurrencyForbidden``. The task
    also gets ``max_active_tis_per_dag=1``, so even two schedulers deciding at the
    same instant never run two fires at once: the later one waits instead.

    ``ALLOW``: fires overlap. Each reads the cursor when it starts and saves its own
    when it ends, so concurrent saves are last-write-wins and the cursor can move
    backwards: safe (a re-processed window is recoverable) but wasteful.
    """

    ALLOW = "Allow"
    FORBID = "Forbid"

    @classmethod
    def parse(cls, value: object) -> Concurrency:
        if isinstance(value, Concurrency):
            return value
        if isinstance(value, str):
            for member in cls:
                if member.value.lower() == value.strip().lower():
                    return member
        raise ValueError(f"concurrency: {excerpt(value)}; use 'Forbid' (recommended with a cursor) or 'Allow'")


def dispatch_cap() -> int:
    """``[tessera] max_concurrent_dispatches`` (airflow.cfg, default 10): fires in flight, deployment-wide."""
    from airflow.configuration import conf

    raw = conf.get(CONFIG_SECTION, CAP_OPTION, fallback=str(DEFAULT_CAP))
    try:
        cap = int(raw)
    except ValueError:
        cap = 0
    if cap < 1:
        raise ValueError(f"[{CONFIG_SECTION}] {CAP_OPTION}: {raw!r}; give a whole number of fires, at least 1")
    return cap
