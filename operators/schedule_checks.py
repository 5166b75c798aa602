"""Field checks for schedule declarations: each refuses a bad value with the field, the value and the fix.

Every failure is a :class:`ScheduleError`, a ``ValueError`` that also carries
the field it is about, so the statement parser can point at the clause that
declared it (line and column) instead of at the whole statement.
"""

from __future__ import annotations

import re
import urllib.parse
import zoneinfo
from collections.abc import Iterable

from . import outbound

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
NAME_MAX = 80
"""Leaves room for the ``tessera-schedule:`` prefix inside Airflow's 100-character tag limit."""
NODE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
EMAIL = re.compile(r"[^@\s,;'\"]+@[^@\s,;'\"]+\.[^@\s,;'\"]+")
INT32_MAX = 2**31 - 1
"""The largest value Airflow's integer columns (priority_weight, max_active_runs) hold everywhere."""


class ScheduleError(ValueError):
    """A declaration refused at parse time; ``field`` names the clause it is about."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def name(field: str, value: object) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value) or len(value) > NAME_MAX:
        raise ScheduleError(
            field,
            f"{field}: {value!r} is not a schedule name; use letters, digits, '_', '-' or '.', starting "
            f"with a letter or '_', at most {NAME_MAX} characters (e.g. 'daily_etl')",
        )
    return value


def cron(value: object) -> str:
    """A five-field expression (or an ``@`` form), checked by the very ``Cron`` the DAGs will get."""
    if not isinstance(value, str):
        raise ScheduleError("cron", f"cron: {value!r} is a {type(value).__name__}; give a string such as '0 6 * * *'")
    text = " ".join(value.split())
    if not text.startswith("@") and len(text.split(" ")) != 5:
        raise ScheduleError(
            "cron",
            f"cron: {value!r} is not a five-field cron expression; write minute hour day-of-month month "
            f"day-of-week, e.g. '0 6 * * *' (daily at 06:00) or '0 1 * * 0' (Sundays at 01:00)",
        )
    from tessera.timetables.cron import Cron

    try:
        Cron(text)
    except ValueError as error:
        raise ScheduleError("cron", "cron: " + str(error).removeprefix("expression: ")) from None
    return text


def timezone(value: object) -> str:
    try:
        if not isinstance(value, str) or not value:
            raise ValueError
        zoneinfo.ZoneInfo(value)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        raise ScheduleError(
            "timezone",
            f"timezone: {value!r} is not an IANA time zone; use a name such as 'UTC', "
            f"'America/New_York' or 'Europe/Berlin'",
        ) from None
    return value


def whole(field: str, value: object, *, minimum: int, example: str, maximum: int = INT32_MAX) -> int:
    """An integer within bounds (``bool`` is refused: ``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScheduleError(field, f"{field}: {value!r} is not a whole number; {example}")
    if not minimum <= value <= maximum:
        bound = "zero or more" if minimum == 0 else ("positive" if minimum == 1 else f"at least {minimum}")
        raise ScheduleError(field, f"{field}: {value!r} must be {bound} (at most {maximum}); {example}")
    return value


def hours(field: str, value: object) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value < 0:
        raise ScheduleError(
            field,
            f"{field}: {value!r} must be a number of hours, zero or more; 0 turns the check off, e.g. 26",
        )
    return value


def after(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, Iterable):
        raise ScheduleError("after", f"after: {value!r} is not a list of schedule names; e.g. ['apc_daily']")
    names = tuple(name("after", item) for item in value)
    if not names:
        raise ScheduleError("after", "after: [] names no parent; list at least one schedule, e.g. ['apc_daily']")
    if len(set(names)) != len(names):
        twice = sorted({item for item in names if names.count(item) > 1})
        raise ScheduleError("after", f"after: {list(names)!r} names {twice} twice; list each parent once")
    return names


def strings(field: str, value: object, *, kind: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, Iterable) or not all(isinstance(item, str) for item in value):
        raise ScheduleError(field, f"{field}: {value!r} must be a list of {kind} strings")
    return tuple(value)


def emails(value: object) -> tuple[str, ...]:
    items = strings("notify", value, kind="email address")
    for item in items:
        if not EMAIL.fullmatch(item):
            raise ScheduleError(
                "notify", f"notify: {item!r} is not an email address; write it as 'ops-team@example.com'"
            )
    return items


def urls(value: object) -> tuple[str, ...]:
    """http(s) URLs to a public host: a non-public literal address is refused here; names are resolved at send time."""
    items = strings("webhook", value, kind="URL")
    for item in items:
        parts = urllib.parse.urlsplit(item)
        if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in item):
            raise ScheduleError(
                "webhook",
                f"webhook: {item!r} is not an http(s) URL; write it as 'https://hooks.example.com/services/T00'",
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
                f"target_nodes: {item!r} is not a node id; use letters, digits, '_', '-' or '.', e.g. 'node-1'",
            )
    if len(set(items)) != len(items):
        raise ScheduleError("target_nodes", f"target_nodes: {list(items)!r} lists a node twice; list each once")
    return items


def flag(field: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ScheduleError(field, f"{field}: {value!r} is not true or false")
    return value
