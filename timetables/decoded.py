"""A stored timetable is built once per process, however often Airflow decodes it.

Airflow decodes a DAG's timetable on every read of ``LazyDeserializedDAG.timetable``: the
dag-processor reads it about a dozen times per DAG each time it stores a parsed file, and
the API reads each listed DAG's on every request. Building a tessera timetable validates
everything a user wrote again (a holiday calendar's months, a cron's days), so
``deserialize`` keeps the timetables it built, by their serialized form, and answers a
repeat with a shallow copy: the plan inside is immutable and shared; the copy's own
attributes stay its own, as ``bind`` and ``with_run_policy`` copy before they change any.
"""

from __future__ import annotations

import collections
import copy
import functools
import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar

MAX_KEPT = 128
"""Timetables kept per process, the least recently decoded dropped first. Each is bounded in size (a
holiday calendar holds at most ``holiday_calendars.MAX_DATES`` dates), so the memory kept is too."""

T = TypeVar("T")
_kept: collections.OrderedDict[tuple[type, str], Any] = collections.OrderedDict()
_lock = threading.Lock()


def decoded_once(deserialize: Callable[[type[T], dict[str, Any]], T]) -> Callable[[type[T], dict[str, Any]], T]:
    """Wrap a timetable class's ``deserialize(cls, data)`` (under ``@classmethod``) to build each form once."""

    @functools.wraps(deserialize)
    def decode(cls: type[T], data: dict[str, Any]) -> T:
        try:
            key = (cls, json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False))
        except (TypeError, ValueError):  # not a stored form (only JSON is stored): build it, keep nothing
            return deserialize(cls, data)
        with _lock:
            built = _kept.get(key)
            if built is not None:
                _kept.move_to_end(key)
        if built is None:
            built = deserialize(cls, data)  # a refusal raises every time, and nothing is kept
            with _lock:
                _kept[key] = built
                while len(_kept) > MAX_KEPT:
                    _kept.popitem(last=False)
        return copy.copy(built)

    return decode
