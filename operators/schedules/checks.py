"""Field checks for schedule declarations: each refuses a bad value with the field, the value and the fix.

Every failure is a :class:`ScheduleError`, a ``ValueError`` that also carries
the field it is about, so the statement parser can point at the clause that
declared it (line and column) instead of at the whole statement.
"""

from __future__ import annotations

import math
import re
import urllib.parse
from collections.abc import Iterable
from typing import NamedTuple

from tessera.operators import outbound
from tessera.timetables.rules import excerpt, load_zone, not_unicode
from tessera.timetables.run_policy import MAX_PAUSE_AFTER_FAILURES

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
NAME_MAX = 80
"""Leaves room for the ``tessera-schedule:`` prefix inside Airflow's 100-character tag limit."""
NODE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
EMAIL = re.compile(r"[^@\s,;'\"]+@[^@\s,;'\"]+\.[^@\s,;'\"]+")
INT32_MAX = 2**31 - 1
"""The largest value Airflow's integer columns (priority_weight, max_active_runs) hold everywhere."""
MAX_SECONDS = 366 * 24 * 3600
"""Every duration is at most 366 days (one leap year): 31,622,400 seconds."""
MAX_RETRIES = 100
MAX_FRESHNESS_HOURS = 366 * 24
QUEUE_MAX = 256
"""Airflow's ``task_instance.queue`` column: a node id is the name of its queue."""
NODES_MAX = 64
"""Target nodes of one schedule: each gets a copy of every pipeline's work, so the DAG grows with the list."""


class Bound(NamedTuple):
    """The range of a numeric field (inclusive), its unit and kind, and an example for messages."""

    minimum: int
    maximum: int
    unit: str
    whole: bool
    example: str

    def rule(self) -> str:
        kind = "a whole number" if self.whole else "a number"
        unit = f" of {self.unit}" if self.unit else ""
        span = " (366 days)" if self.maximum in (MAX_SECONDS, MAX_FRESHNESS_HOURS) else ""
        return f"give {kind}{unit} from {self.minimum} to {self.maximum}{span}; {self.example}"


BOUNDS: dict[str, Bound] = {
    "interval_seconds": Bound(1, MAX_SECONDS, "seconds", True, "e.g. 3600 for hourly"),
    "parent_freshness": Bound(0, MAX_FRESHNESS_HOURS, "hours", False, "0 turns the check off, e.g. 26"),
    "retries": Bound(0, MAX_RETRIES, "", True, "e.g. 3"),
    "retry_delay": Bound(0, MAX_SECONDS, "seconds", False, "e.g. 300"),
    "timeout": Bound(1, MAX_SECONDS, "seconds", False, "per attempt, e.g. 3600"),
    "max_concurrent": Bound(0, INT32_MAX, "", True, "0 = unlimited"),
    "max_wave_concurrent": Bound(0, INT32_MAX, "", True, "0 = unbounded"),
    "priority": Bound(-INT32_MAX, INT32_MAX, "", True, "higher runs first, e.g. 10"),
    "pause_after_failures": Bound(1, MAX_PAUSE_AFTER_FAILURES, "failed runs in a row", True, "e.g. 3"),
}
"""Every numeric field of a declaration, checked at parse time: nothing downstream can overflow."""


class ScheduleError(ValueError):
    """A declaration refused at parse time; ``field`` names the clause it is about."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def name(field: str, value: object) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value) or len(value) > NAME_MAX:
        raise ScheduleError(
            field,
            f"{field}: {excerpt(value)} is not a schedule name; use letters, digits, '_', '-' or '.', starting "
            f"with a letter or '_', at most {NAME_MAX} characters (e.g. 'daily_etl')",
        )
    return value


def cron(value: object, timezone: str | None = None) -> str:
    """A five-field expression (or an ``@`` form), checked by the very ``Cron`` the DAGs will get, in its zone."""
    if not isinstance(value, str):
        raise ScheduleError(
            "cron", f"cron: {excerpt(value)} is a {type(value).__name__}; give a string such as '0 6 * * *'"
        )
    text = " ".join(value.split())
    if not text.startswith("@") and len(text.split(" ")) != 5:
        raise ScheduleError(
            "cron",
            f"cron: {excerpt(value)} is not a five-field cron expression; write minute hour day-of-month month "
            f"day-of-week, e.g. '0 6 * * *' (daily at 06:00) or '0 1 * * 0' (Sundays at 01:00)",
        )
    from tessera.timetables.cron import Cron

    zone = "UTC" if timezone is None else _zone(timezone)
    try:
        Cron(text, timezone=zone)
    except ValueError as error:
        raise ScheduleError("cron", "cron: " + str(error).removeprefix("expression: ")) from None
    return text


def crons(value: object, timezone: str | None = None) -> str | tuple[str, ...]:
    """One cron expression, or a list of 2 to 16 whose union drives the schedule (a run at each instant any gives)."""
    if not isinstance(value, (list, tuple)):
        return cron(value, timezone)
    from tessera.timetables.union import MAX_MEMBERS

    if not 1 <= len(value) <= MAX_MEMBERS:
        raise ScheduleError(
            "cron",
            f"cron: a list of {len(value)} expressions; give one, or 2 to {MAX_MEMBERS} whose union drives the "
            f"schedule, e.g. ['0 9 * * 1-5', '0 17 * * 5']",
        )
    texts = []
    for index, item in enumerate(value):
        try:
            texts.append(cron(item, timezone))
        except ScheduleError as error:
            reason = str(error).removeprefix("cron: ")
            raise ScheduleError("cron", f"cron: item {index + 1} of {len(value)}: {reason}") from None
    if len(set(texts)) != len(texts):
        twice = sorted({text for text in texts if texts.count(text) > 1})
        raise ScheduleError("cron", f"cron: {excerpt(list(value))} lists {twice} twice; list each expression once")
    if len(texts) == 1:
        return texts[0]
    from tessera.timetables import Cron, Union

    zone = "UTC" if timezone is None else _zone(timezone)
    try:  # the very union the DAGs will get
        Union(*(Cron(text, timezone=zone) for text in texts))
    except ValueError as error:
        raise ScheduleError("cron", f"cron: {excerpt(list(value))} cannot be joined: {error}") from None
    return tuple(texts)


def timezone(value: object) -> str:
    return _zone(value)


def _zone(value: object) -> str:
    """The timetables' one zone rule, so a declared schedule accepts exactly the zones its timetable does."""
    try:
        return load_zone("timezone", value).key
    except (ValueError, TypeError) as error:
        raise ScheduleError("timezone", str(error)) from None


def number(field: str, value: object) -> int | float:
    """A finite number within ``BOUNDS[field]`` (``bool`` is refused: ``True`` is not a count)."""
    bound = BOUNDS[field]
    if isinstance(value, bool) or not isinstance(value, int if bound.whole else int | float):
        kind = "a whole number" if bound.whole else "a number"
        raise ScheduleError(field, f"{field}: {excerpt(value)} is not {kind}; {bound.rule()}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ScheduleError(field, f"{field}: {value!r} is not a finite number; {bound.rule()}")
    if value < bound.minimum:
        problem = {0: "is negative", 1: "is not positive" if bound.whole else "is not more than zero"}
        raise ScheduleError(
            field, f"{field}: {excerpt(value)} {problem.get(bound.minimum, 'is too small')}; {bound.rule()}"
        )
    if value > bound.maximum:
        raise ScheduleError(field, f"{field}: {excerpt(value)} is too large; {bound.rule()}")
    return value


def after(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, Iterable):
        raise ScheduleError("after", f"after: {excerpt(value)} is not a list of schedule names; e.g. ['apc_daily']")
    names = tuple(name("after", item) for item in value)
    if not names:
        raise ScheduleError("after", "after: [] names no parent; list at least one schedule, e.g. ['apc_daily']")
    if len(set(names)) != len(names):
        twice = sorted({item for item in names if names.count(item) > 1})
        raise ScheduleError("after", f"after: {excerpt(list(names))} names {twice} twice; list each parent once")
    return names


def strings(field: str, value: object, *, kind: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, Iterable) or not all(isinstance(item, str) for item in value):
        raise ScheduleError(field, f"{field}: {excerpt(value)} must be a list of {kind} strings")
    for item in value:
        if problem := not_unicode(field, item):
            raise ScheduleError(field, problem)
    return tuple(value)


def emails(value: object) -> tuple[str, ...]:
    items = strings("notify", value, kind="email address")
    for item in items:
        if not EMAIL.fullmatch(item):
            raise ScheduleError(
                "notify", f"notify: {excerpt(item)} is not an email address; write it as 'ops-team@example.com'"
            )
    return items


def urls(value: object) -> tuple[str, ...]:
    """http(s) URLs to a public host: a non-public literal address is refused here; names are resolved at send time."""
    items = strings("webhook", value, kind="URL")
    for item in items:
        try:
            parts = urllib.parse.urlsplit(item)
        except ValueError:  # an unclosed IPv6 bracket: refused below like any other non-URL
            parts = urllib.parse.SplitResult("", "", "", "", "")
        if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in item):
            raise ScheduleError(
                "webhook",
                f"webhook: {outbound.redact_url(item)!r} is not an http(s) URL; write it as "
                "'https://hooks.example.com/services/T00'",
            )
        try:
            outbound.check_url("webhook", item, resolve=False)
        except outbound.OutboundRefused as error:
            raise ScheduleError("webhook", str(error)) from None
    return items


def target_nodes(value: object) -> str | tuple[str, ...] | None:
    if value is None or (isinstance(value, str) and value.upper() == "ALL"):
        return None if value is None else "ALL"
    items = strings("target_nodes", value, kind="node id")
    if not items:
        raise ScheduleError("target_nodes", "target_nodes: () lists no node; give 'ALL' or at least one node id")
    for item in items:
        if not NODE.fullmatch(item):
            raise ScheduleError(
                "target_nodes",
                f"target_nodes: {excerpt(item)} is not a node id; use letters, digits, '_', '-' or '.', e.g. 'node-1'",
            )
    if len(set(items)) != len(items):
        raise ScheduleError("target_nodes", f"target_nodes: {excerpt(list(items))} lists a node twice; list each once")
    if len(items) > NODES_MAX:
        raise ScheduleError(
            "target_nodes",
            f"target_nodes: {len(items)} nodes listed; at most {NODES_MAX} (each gets its own copy of the "
            f"pipeline), so split the pipelines over several schedules",
        )
    for item in items:
        if len(item) > QUEUE_MAX:
            raise ScheduleError(
                "target_nodes",
                f"target_nodes: {excerpt(item)} is {len(item)} characters; a node id is its queue's name, "
                f"which Airflow holds in at most {QUEUE_MAX}, so use a shorter id",
            )
    return items


def flag(field: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ScheduleError(field, f"{field}: {excerpt(value)} is not true or false")
    return value
