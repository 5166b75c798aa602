"""The ``SCHEDULE <name> ... ;`` statement: a file of them parsed into :class:`Schedule` declarations.

Clauses follow the name in any order until ``;``; keywords are case-insensitive;
strings are single-quoted (``''`` is a quote inside one); ``--`` starts a comment.
Every refusal is a :class:`ScheduleSyntaxError` that names the line and column of
the clause at fault, including the declaration's own checks (a bad time zone is
reported at its ``TIMEZONE`` clause).

A small ``re`` tokenizer is used rather than a library: the installed ``sqlparse``
only splits and lexes generic SQL (it has no grammar for this statement and no
error positions), and a grammar library would be a new dependency for ~20 rules.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from tessera.timetables.rules import clip, excerpt

from .checks import BOUNDS, ScheduleError
from .plan_check import after_cycles, cycle_refusal
from .schedule import Schedule

# ASCII only (re.ASCII): \d would also read the digits of other scripts ("٣") as numbers.
_TOKEN = re.compile(
    r"(?P<space>\s+)|(?P<comment>--[^\n]*)|(?P<string>'(?:[^'\n]|'')*')|(?P<open>')"
    r"|(?P<number>-?[0-9]+(?:\.[0-9]+)?(?![\w.]))|(?P<badnumber>-?[0-9][\w.]*)"
    r"|(?P<word>[A-Za-z_]\w*(?:[.\-]\w+)*)|(?P<punct>[,;()])",
    re.ASCII,
)
_MAX_DIGITS = 20
"""More digits than any field's range needs (leading zeros and decimals count); such a number is not converted."""
# keyword -> (Schedule field, kind of value)
_CLAUSES: dict[str, tuple[str, str]] = {
    "CRON": ("cron", "strings"),  # CRON '0 9 * * 1-5', '0 17 * * 5': their union
    "TIMEZONE": ("timezone", "string"),
    "INTERVAL_SECONDS": ("interval_seconds", "number"),
    "AFTER": ("after", "names"),
    "ALIGN": ("align_window", "align"),  # ALIGN WINDOW
    "PARENT_FRESHNESS": ("parent_freshness", "number"),
    "DESCRIPTION": ("description", "string"),
    "RETRIES": ("retries", "number"),
    "RETRY_DELAY": ("retry_delay", "number"),
    "TIMEOUT": ("timeout", "number"),
    "MAX_CONCURRENT": ("max_concurrent", "number"),
    "MAX_WAVE_CONCURRENT": ("max_wave_concurrent", "number"),
    "PRIORITY": ("priority", "number"),
    "CATCHUP": ("catchup", "bool"),
    "OVERLAP": ("overlap", "word"),  # skip | buffer_one | buffer_all | cancel_other | allow_all
    "DROPPED": ("dropped", "word"),  # cover | owe
    "PAUSE_AFTER_FAILURES": ("pause_after_failures", "number"),
    "TARGET_NODES": ("target_nodes", "nodes"),
    "NOTIFY": ("notify", "strings"),
    "WEBHOOK": ("webhook", "strings"),
    "NOTIFY_ON_SUCCESS": ("notify_on_success", "bool"),
    "ACTIVE": ("active", "flag"),
    "INACTIVE": ("active", "flag"),
}
_DRIVER_FIELDS = ("cron", "interval_seconds", "after")


class ScheduleSyntaxError(ValueError):
    """A statement refused, with the 1-based ``line`` and ``column`` of the clause at fault."""

    def __init__(self, message: str, line: int, column: int, source: str | None = None) -> None:
        where = f"line {line}, column {column}"
        super().__init__(f"{source}: {where}: {message}" if source else f"{where}: {message}")
        self.line, self.column, self.source, self.reason = line, column, source, message


@dataclass(frozen=True, slots=True)
class _TooLong:
    """A number token written with more than ``_MAX_DIGITS`` digits (int() of it may even fail)."""

    digits: int


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # string, number, word, punct, end
    text: str
    value: Any
    offset: int


def _tokens(text: str, fail: Any) -> list[_Token]:
    tokens, offset = [], 0
    while offset < len(text):
        match = _TOKEN.match(text, offset)
        if match is None:
            fail(offset, f"unexpected character {text[offset]!r} (U+{ord(text[offset]):04X})")
        kind = match.lastgroup
        raw = match.group()
        if kind == "open":
            fail(offset, "string has no closing quote; end it with ' (write '' for a quote inside it)")
        if kind == "badnumber":
            fail(offset, f"{excerpt(raw)} is not a number; write a plain number such as 300 (units are fixed)")
        if kind == "string":
            tokens.append(_Token("string", raw, raw[1:-1].replace("''", "'"), offset))
        elif kind == "number":
            tokens.append(_Token("number", raw, _number(raw), offset))
        elif kind in ("word", "punct"):
            tokens.append(_Token(kind, raw, raw, offset))
        offset = match.end()
    tokens.append(_Token("end", "end of input", None, len(text)))
    return tokens


def _number(raw: str) -> int | float | _TooLong:
    # Every digit counts, leading zeros too: a million zeros before a 5 is refused, not converted.
    digits = len(raw) - raw.startswith("-") - ("." in raw)
    if digits > _MAX_DIGITS:
        return _TooLong(digits)
    return float(raw) if "." in raw else int(raw)


class _Parser:
    def __init__(self, text: str, source: str | None) -> None:
        self.text, self.source = text, source
        self.tokens = _tokens(text, self.fail)
        self.at = 0
        self.after_at: dict[str, int] = {}
        """Where each schedule's AFTER clause starts, to point at a cycle."""

    def fail(self, offset: int, message: str) -> Any:
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        raise ScheduleSyntaxError(message, line, column, self.source)

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def is_punct(self, char: str) -> bool:
        token = self.peek()
        return token.kind == "punct" and token.text == char

    def statements(self) -> list[Schedule]:
        found = []
        while self.peek().kind != "end":
            found.append(self.statement())
        # A cycle spans statements: refused at the AFTER clause of its first schedule.
        declared = {schedule.name: schedule for schedule in found}
        if cycles := after_cycles(declared):
            self.fail(self.after_at[cycles[0][0]], cycle_refusal(cycles[0]))
        return found

    def statement(self) -> Schedule:
        start = self.take()
        if start.kind != "word" or start.text.upper() != "SCHEDULE":
            self.fail(start.offset, f"expected SCHEDULE <name>, found {excerpt(start.text)}")
        name_token = self.take()
        if name_token.kind not in ("word", "string"):
            self.fail(name_token.offset, f"expected a schedule name after SCHEDULE, found {excerpt(name_token.text)}")
        kwargs: dict[str, Any] = {}
        where: dict[str, _Token] = {"name": name_token}
        while not self.is_punct(";"):
            keyword = self.take()
            if keyword.kind == "end":
                self.fail(start.offset, f"SCHEDULE {clip(str(name_token.value), 80)} has no closing ';'")
            self.clause(keyword, kwargs, where)
        self.take()
        schedule = self.build(name_token, kwargs, where)
        if "after" in where:
            self.after_at[schedule.name] = where["after"].offset
        return schedule

    def clause(self, keyword: _Token, kwargs: dict[str, Any], where: dict[str, _Token]) -> None:
        upper = keyword.text.upper() if keyword.kind == "word" else ""
        if upper not in _CLAUSES:
            # No keyword is longer than 19 characters: a long word is no typo of one (and costs difflib time).
            hint = difflib.get_close_matches(upper, _CLAUSES, n=1) if len(upper) <= 40 else []
            missing = "; is the ';' of the previous statement missing?" if upper == "SCHEDULE" else ""
            suggestion = f"; did you mean {hint[0]}?" if hint and not missing else ""
            self.fail(keyword.offset, f"unknown clause {excerpt(keyword.text)}{suggestion}{missing}")
        field, kind = _CLAUSES[upper]
        if field in where:
            first = where[field]
            line = self.text.count("\n", 0, first.offset) + 1
            self.fail(keyword.offset, f"{upper} repeats {first.text.upper()} given on line {line}; give it once")
        where[field] = keyword
        value = self.value(upper, kind)
        if isinstance(value, _TooLong):  # refused like any out-of-range number: at its clause
            self.fail(
                keyword.offset,
                f"{field}: a number written with {value.digits} digits; write at most {_MAX_DIGITS} digits "
                f"(leading zeros count): {BOUNDS[field].rule()}",
            )
        kwargs[field] = value

    def value(self, keyword: str, kind: str) -> Any:
        if kind == "flag":
            return keyword == "ACTIVE"
        if kind == "align":
            token = self.take()
            if token.kind != "word" or token.text.upper() != "WINDOW":
                self.fail(token.offset, f"ALIGN expects WINDOW, found {excerpt(token.text)}")
            return True
        if kind in ("strings", "names"):
            items = [self.single(keyword, kind)]
            while self.is_punct(","):
                self.take()
                items.append(self.single(keyword, kind))
            return items
        if kind == "nodes":
            if self.peek().kind == "word" and self.peek().text.upper() == "ALL":
                self.take()
                return "ALL"
            if not self.is_punct("("):
                self.fail(
                    self.peek().offset,
                    f"TARGET_NODES expects ALL or (node_id, ...), found {excerpt(self.peek().text)}",
                )
            self.take()
            items = [self.single(keyword, "node")]
            while self.is_punct(","):
                self.take()
                items.append(self.single(keyword, "node"))
            if not self.is_punct(")"):
                self.fail(
                    self.peek().offset, f"TARGET_NODES list expects ',' or ')', found {excerpt(self.peek().text)}"
                )
            self.take()
            return items
        return self.single(keyword, kind)

    def single(self, keyword: str, kind: str) -> Any:
        token = self.take()
        if kind in ("string", "strings") and token.kind == "string":
            return token.value
        if kind == "names" and token.kind in ("string", "word"):
            return token.value
        if kind == "node" and token.kind in ("string", "word", "number"):
            return str(token.value) if token.kind != "number" else token.text
        if kind == "number" and token.kind == "number":
            return token.value
        if kind == "bool" and token.kind == "word" and token.text.lower() in ("true", "false"):
            return token.text.lower() == "true"
        if kind == "word" and token.kind == "word":
            return token.text.lower()
        wanted = {
            "string": "a quoted string",
            "strings": "a quoted string",
            "names": "a quoted schedule name",
            "node": "a node id",
            "number": "a number",
            "bool": "true or false",
            "word": "one of skip, buffer_one, buffer_all, cancel_other, allow_all",
        }[kind]
        return self.fail(token.offset, f"{keyword} expects {wanted}, found {excerpt(token.text)}")

    def build(self, name_token: _Token, kwargs: dict[str, Any], where: dict[str, _Token]) -> Schedule:
        try:
            return Schedule(name_token.value, **kwargs)
        except ValueError as error:
            # Every refusal carries a position: a ScheduleError's at its clause, any other at the name.
            if not isinstance(error, ScheduleError):
                return self.fail(name_token.offset, str(error))
            if error.field == "driver":
                drivers = sorted((where[f] for f in _DRIVER_FIELDS if f in where), key=lambda t: t.offset)
                token = drivers[1] if len(drivers) > 1 else name_token
            else:
                token = where.get(error.field, name_token)
            return self.fail(token.offset, str(error))


def parse_schedules(text: str, *, source: str | None = None) -> list[Schedule]:
    """Every ``SCHEDULE`` statement of ``text``, in order.

    :param source: a file name to prefix error messages with.
    :raises ScheduleSyntaxError: at the first statement refused.
    """
    return _Parser(text, source).statements()


def parse_schedule(text: str) -> Schedule:
    """Exactly one ``SCHEDULE`` statement."""
    found = parse_schedules(text)
    if len(found) != 1:
        raise ScheduleSyntaxError(f"expected one SCHEDULE statement, found {len(found)}", 1, 1)
    return found[0]
