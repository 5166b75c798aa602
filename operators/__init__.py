"""What a run does with its schedule: one package per feature, and the names DAG files use.

``from tessera.operators import CursorFunctionOperator, Schedule, ...``. The names are
loaded on first use (PEP 562), so a DAG file pays only for the feature it uses.

- :mod:`.functions`: cursor-carrying functions (spec, fire, store, admission, status, HTTP);
- :mod:`.schedules`: declared schedules (``Schedule``, ``ScheduleSet``, the SCHEDULE statement);
- :mod:`.fan_in`: AFTER fan-in (release, freshness, ``AfterSensor``);
- :mod:`.pauses`: pausing with a note, after failed runs, and the history both leave;
- :mod:`.refresh_sql`, and :mod:`.backoff` (``from tessera.operators.backoff import backoff``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_HOMES = {
    "CursorFunctionOperator": ".functions.operator",
    "cursor_function": ".functions.operator",
    "Concurrency": ".functions.policy",
    "CursorStore": ".functions.store",
    "VariableStore": ".functions.store",
    "HttpFunction": ".functions.http",
    "function_status": ".functions.status",
    "Schedule": ".schedules.schedule",
    "ScheduleSet": ".schedules.schedule_set",
    "load_schedules": ".schedules.schedule_set",
    "AfterSensor": ".fan_in.sensor",
    "RefreshSQLOperator": ".refresh_sql",
}
__all__ = [
    "AfterSensor",
    "Concurrency",
    "CursorFunctionOperator",
    "CursorStore",
    "HttpFunction",
    "RefreshSQLOperator",
    "Schedule",
    "ScheduleSet",
    "VariableStore",
    "cursor_function",
    "function_status",
    "load_schedules",
]

if TYPE_CHECKING:
    from .fan_in.sensor import AfterSensor
    from .functions.http import HttpFunction
    from .functions.operator import CursorFunctionOperator, cursor_function
    from .functions.policy import Concurrency
    from .functions.status import function_status
    from .functions.store import CursorStore, VariableStore
    from .refresh_sql import RefreshSQLOperator
    from .schedules.schedule import Schedule
    from .schedules.schedule_set import ScheduleSet, load_schedules


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
