"""Fuzz tier: random and adversarial declarations either build or are refused naming the field.

Four front doors of a DAG file are fed junk: ``Schedule(...)``, the ``SCHEDULE`` text,
``FunctionSpec.build(...)`` and ``CursorFunctionOperator(...)`` inside a DAG. Each case
either builds (and a built declaration then goes the rest of the way into a DAG) or is
refused with the documented error naming the field. Anything else fails the test,
RecursionError and OverflowError included: in the dag-processor they would be import
errors that name nothing, or worse, a DAG that imports and breaks later.

Deterministic (``derandomize=True``, no example database), so CI runs the same cases
every time; the adversarial values themselves are in :mod:`.fuzz_values`.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tessera.operators.functions.operator import CursorFunctionOperator
from tessera.operators.functions.spec import FunctionSpec
from tessera.operators.functions.store import VariableStore
from tessera.operators.schedules.checks import ScheduleError
from tessera.operators.schedules.policy import dag_kwargs
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet
from tessera.operators.schedules.statement import _CLAUSES, ScheduleSyntaxError, parse_schedules

from ..fuzz_depth import DEEP, cases
from .fuzz_values import (
    ANY_JSON,
    EDGE_INTS,
    JSON,
    JUNK,
    LONE_SURROGATES,
    NUMBERS,
    POINTERS,
    SCHEMAS,
    mostly,
    real,
)

_KEYWORDS = sorted(_CLAUSES)
FUZZ = settings(
    max_examples=cases(deep=5_000),
    derandomize=not DEEP,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


NAMES = st.sampled_from(["daily_etl", "a", "_x", "a.b-c", "p", "q", "x" * 80])
GOOD_CRONS = st.sampled_from(["0 6 * * *", "*/5 * * * *", "@daily", "@every 5m", "0 0 29 2 *", "30 4 * * 1-5"])
SECONDS = st.one_of(st.integers(1, 31_622_400), st.floats(1, 31_622_400))
VALID = {
    "timezone": st.sampled_from(["UTC", "Europe/Oslo", "America/New_York", "Asia/Kathmandu"]),
    "description": st.text(max_size=30),
    "retries": st.integers(0, 100),
    "retry_delay": st.one_of(st.just(0), SECONDS),
    "timeout": SECONDS,
    "max_concurrent": st.one_of(st.integers(0, 10), st.just(2**31 - 1)),
    "max_wave_concurrent": st.one_of(st.integers(0, 10), st.just(2**31 - 1)),
    "priority": st.one_of(st.integers(-100, 100), st.sampled_from([2**31 - 1, -(2**31 - 1)])),
    "catchup": st.booleans(),
    "target_nodes": st.one_of(st.just("ALL"), st.lists(st.sampled_from(["n1", "n2", "n-1"]), min_size=1, unique=True)),
    "notify": st.lists(st.sampled_from(["ops@example.com", "data-eng@example.com"]), max_size=2),
    "webhook": st.lists(st.just("https://hooks.example.com/services/T00"), max_size=1),
    "notify_on_success": st.booleans(),
    "active": st.booleans(),
}
DRIVERS = st.one_of(
    st.fixed_dictionaries({"cron": GOOD_CRONS}),
    st.fixed_dictionaries({"cron": st.lists(GOOD_CRONS, min_size=2, max_size=4, unique=True)}),  # their union
    st.fixed_dictionaries({"interval_seconds": st.integers(1, 31_622_400)}),
    st.fixed_dictionaries(
        {"after": st.lists(st.sampled_from(["p", "q", "r.s"]), min_size=1, max_size=3, unique=True)},
        optional={"parent_freshness": st.one_of(st.integers(0, 8784), st.floats(0, 8784))},
    ),
)
# What an adversary puts in a field: near misses of its own kind, then anything at all.
ADVERSARIAL = {
    "name": st.one_of(st.sampled_from(["", "1abc", "has space", "x" * 81, "\u00fc", "a;b", "a\u0663"]), JUNK),
    "cron": st.one_of(
        st.sampled_from(
            ["61 * * * *", "0 6 * *", "\u0663 * * * *", "99999999999999999999 * * * *", "0 6 L * *", "0 6 31 2 *"]
            + ["@every 99999999999d", "@every 0s", "@every 1M", "@yearly", "* * * * * *", "@every \u0663s"]
        ),
        st.text(alphabet="0123456789*/-, @LW#?MONJAdhms\u0663", max_size=25),
        JUNK,
        st.lists(st.one_of(GOOD_CRONS, st.sampled_from(["61 * * * *", "", "0 6 * * *"]), JUNK), max_size=20),
        st.sampled_from([["0 6 * * *"] * 100_000, ("0 6 * * *", "0 7 * * *"), []]),
    ),
    "timezone": st.one_of(
        st.sampled_from(["America", "localtime", "Factory", "../etc", "posixrules", "Mars/Olympus", "/UTC"]),
        st.sampled_from(["zone.tab", "__pycache__", "x" * 300, "UTC\x00"]),
        st.text(max_size=12),
        JUNK,
    ),
    "after": st.one_of(st.lists(st.sampled_from(["p", "", "1x", "a b", "p"]), max_size=4), JUNK),
    "target_nodes": st.one_of(st.lists(st.sampled_from(["n1", "a b", "x" * 200, "", "\u0663"]), max_size=3), JUNK),
    "notify": st.one_of(st.lists(st.sampled_from(["ops", "a@b", "@x.y", "\u00e9@x.io"]), max_size=2), JUNK),
    "webhook": st.one_of(
        st.lists(
            st.sampled_from(
                ["ftp://x/y", "http://", "https://h/ x", "http://[x", "ftp://u:p@h/?t=1", "https://h\ud800/"]
            ),
            max_size=2,
        ),
        JUNK,
    ),
}
for _field in ("interval_seconds", "parent_freshness", "retries", "retry_delay", "timeout", "max_concurrent"):
    ADVERSARIAL[_field] = NUMBERS
ADVERSARIAL.update({"max_wave_concurrent": NUMBERS, "priority": NUMBERS, "description": JUNK})
for _field in ("catchup", "notify_on_success", "active"):
    ADVERSARIAL[_field] = JUNK


VALID_FIELDS = st.lists(st.sampled_from(sorted(VALID)), max_size=6, unique=True)
ADVERSARIAL_FIELDS = st.lists(st.sampled_from(sorted(ADVERSARIAL)), max_size=3, unique=True)


@st.composite
def schedule_kwargs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid declaration, with none, one or a few fields replaced by adversarial values."""
    kwargs: dict[str, Any] = {"name": draw(NAMES), **draw(DRIVERS)}
    for field in draw(VALID_FIELDS):
        kwargs[field] = draw(VALID[field])
    for field in draw(ADVERSARIAL_FIELDS):
        kwargs[field] = draw(ADVERSARIAL[field])
    return kwargs


SCHEDULE_FIELDS = {field.name for field in dataclasses.fields(Schedule)} | {"driver"}


def _pipeline(schedules: ScheduleSet, name: str) -> None:
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG

    with DAG("fuzz", start_date=START, **schedules.dag_kwargs(name)) as dag:
        if schedules[name].target_nodes is None:
            EmptyOperator(task_id="work")
        else:  # TARGET_NODES: one copy of the work per node, as a pipeline must be built for it
            schedules.per_node(dag, lambda node: EmptyOperator(task_id="work"))
    schedules.apply(dag)


@FUZZ
@given(kwargs=schedule_kwargs())
def test_a_schedule_builds_into_a_dag_or_is_refused_naming_the_field(kwargs: dict[str, Any]) -> None:
    kwargs = real(kwargs)
    try:
        schedule = Schedule(kwargs.pop("name"), **kwargs)
    except ScheduleError as error:
        assert error.field in SCHEDULE_FIELDS, error.field
        assert str(error).startswith(f"{error.field}: ") or error.field == "driver", str(error)
        event(f"refused: {error.field}")
        return
    event("built")
    dag_kwargs(schedule)
    _pipeline(ScheduleSet([schedule]), schedule.name)


# -- the SCHEDULE text ---------------------------------------------------------------------------

NUMBER_TEXT = st.one_of(
    st.integers(-10, 40_000_000).map(str),
    st.sampled_from(EDGE_INTS).map(str),
    st.floats(0, 1e6).map(lambda f: f"{f:.3f}"),
    st.sampled_from([21, 400, 4301, 100_000]).map(lambda n: "9" * n),
    st.sampled_from([18, 19, 20, 4300, 1_000_000]).map(lambda n: "0" * n + "5"),  # leading zeros count as digits
    st.sampled_from([17, 18, 100_000]).map(lambda n: "5." + "0" * n + "1"),
    st.sampled_from(["\u0663", "\uff11\uff12", "1e5", "300s", "1.", ".5", "-", "--5", "0x10", "007", "1_000", "inf"]),
)
STRING_TEXT = st.one_of(
    st.sampled_from(["'0 6 * * *'", "'Europe/Oslo'", "'p'", "'ops@example.com'", "'https://hooks.example.com/x'"]),
    st.sampled_from(["'a''b'", "'unterminated", "''", "'61 * * * *'", "'localtime'", "'\u0663 * * * *'"]),
    st.text(max_size=15).map(lambda text: "'" + text.replace("'", "''") + "'"),
    st.sampled_from(LONE_SURROGATES).map(lambda text: f"'{text}'"),
    st.just("'https://hook-user:s3cr3t@hooks.example.com/x?token=t0k3n'"),
)
WORD_TEXT = st.one_of(NAMES, st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,8}", fullmatch=True), st.just("ALL"))
KEYWORD_TEXT = st.sampled_from(["SCHEDULE", *_KEYWORDS]).flatmap(
    lambda word: st.sampled_from([word, word.lower(), word.title()])
)
ANY_TOKEN = st.one_of(KEYWORD_TEXT, NUMBER_TEXT, STRING_TEXT, WORD_TEXT, st.sampled_from(",;()"), st.text(max_size=4))
SEPARATOR_LISTS = st.lists(
    st.sampled_from([" ", " ", "  ", "\n", "\t", " -- note\n", "\r\n", "", "\u00a0"]), min_size=1, max_size=4
)


GOOD_VALUES: dict[str, st.SearchStrategy[list[str]]] = {
    "CRON": st.sampled_from(
        [
            ["'0 6 * * *'"],
            ["'*/5 * * * *'"],
            ["'@daily'"],
            ["' 30  4 * * 1-5 '"],
            ["'0 9 * * 1-5'", ",", "'0 17 * * 5'"],
        ]
    ),
    "TIMEZONE": st.sampled_from([["'Europe/Oslo'"], ["'UTC'"], ["'America/New_York'"]]),
    "INTERVAL_SECONDS": st.integers(1, 31_622_400).map(lambda n: [str(n)]),
    "AFTER": st.lists(st.sampled_from(["p", "'q'", "r.s"]), min_size=1, max_size=3, unique=True).map(
        lambda names: _commas(names)
    ),
    "PARENT_FRESHNESS": st.one_of(st.integers(0, 8784).map(str), st.sampled_from(["26.5", "0.25", "8784.0"])).map(
        lambda n: [n]
    ),
    "DESCRIPTION": STRING_TEXT.map(lambda text: [text]),
    "RETRIES": st.integers(0, 100).map(lambda n: [str(n)]),
    "RETRY_DELAY": st.integers(0, 31_622_400).map(lambda n: [str(n)]),
    "TIMEOUT": st.one_of(st.integers(1, 31_622_400).map(str), st.just("1.5")).map(lambda n: [n]),
    "MAX_CONCURRENT": st.integers(0, 10).map(lambda n: [str(n)]),
    "MAX_WAVE_CONCURRENT": st.integers(0, 10).map(lambda n: [str(n)]),
    "PRIORITY": st.integers(-100, 100).map(lambda n: [str(n)]),
    "CATCHUP": st.sampled_from([["true"], ["false"], ["TRUE"]]),
    "TARGET_NODES": st.sampled_from([["ALL"], ["(", "n1", ",", "'n2'", ")"], ["(", "7", ")"]]),
    "NOTIFY": st.sampled_from([["'ops@example.com'"], ["'a@example.com'", ",", "'b@example.com'"]]),
    "WEBHOOK": st.just(["'https://hooks.example.com/services/T00'"]),
    "NOTIFY_ON_SUCCESS": st.sampled_from([["true"], ["false"]]),
    "ACTIVE": st.just([]),
    "INACTIVE": st.just([]),
}
_DRIVER_CLAUSES = ["CRON", "INTERVAL_SECONDS", "AFTER"]
_OTHER_CLAUSES = [keyword for keyword in GOOD_VALUES if keyword not in _DRIVER_CLAUSES and keyword != "INACTIVE"]
STATEMENT_PARTS = st.tuples(
    st.sampled_from(_DRIVER_CLAUSES),
    st.lists(st.sampled_from(_OTHER_CLAUSES), max_size=5, unique=True),  # in a random order
    st.sampled_from([str.upper, str.lower, str.title]),
    st.sampled_from(["a", "b", "'c.d'", "daily_etl", "e-f", "g", "h", "x" * 80, "p", "q"]),  # p, q: AFTER cycles
)
CHANGES = st.lists(st.tuples(st.sampled_from(["insert", "drop", "replace"]), st.floats(0, 1), ANY_TOKEN), max_size=3)


def _commas(items: list[str]) -> list[str]:
    tokens: list[str] = []
    for item in items:
        tokens += [",", item] if tokens else [item]
    return tokens


@st.composite
def schedule_text(draw: st.DrawFn) -> str:
    """One to three statements from the grammar (one driver each, values in range), then a few
    tokens inserted, dropped or replaced by anything from numbers of 100,000 digits to junk."""
    tokens: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        driver, clauses, case, name = draw(STATEMENT_PARTS)
        if driver != "AFTER" and "PARENT_FRESHNESS" in clauses:
            clauses.remove("PARENT_FRESHNESS")
        clauses.insert(draw(st.integers(0, len(clauses))), driver)
        tokens += ["SCHEDULE", name]
        for keyword in clauses:
            tokens += [case(keyword), *draw(GOOD_VALUES[keyword])]
        tokens.append(";")
    for change, where, token in draw(CHANGES):
        at = int(where * len(tokens))
        if change == "insert" or at == len(tokens):
            tokens.insert(at, token)
        elif change == "drop":
            del tokens[at]
        else:
            tokens[at] = token
    separators = draw(SEPARATOR_LISTS)
    return "".join(token + separators[i % len(separators)] for i, token in enumerate(tokens))


@FUZZ
@given(text=schedule_text())
def test_schedule_text_loads_into_dags_or_is_refused_at_a_line_and_column(text: str) -> None:
    try:
        schedules = ScheduleSet(parse_schedules(text, source="fuzz.sql"))
    except ScheduleSyntaxError as error:
        lines = text.split("\n")
        assert 1 <= error.line <= len(lines), (error.line, len(lines))
        assert 1 <= error.column <= len(lines[error.line - 1]) + 1, (error.column, lines[error.line - 1][:80])
        assert str(error).startswith(f"fuzz.sql: line {error.line}, column {error.column}: ")
        event("refused: syntax")
        return
    except ValueError as error:  # two statements declaring one name
        assert str(error).startswith("name: ") and "declared twice" in str(error), str(error)
        event("refused: name twice")
        return
    event("built")
    for name in schedules:
        _pipeline(schedules, name)


# -- cursor-function specs -----------------------------------------------------------------------

GOOD_INPUT = st.dictionaries(st.sampled_from(["region", "since", "page"]), JSON, max_size=3)
GOOD_SCHEMAS = st.sampled_from(
    [
        {"type": "object"},
        {"type": "object", "properties": {"c": {"$ref": "#/$defs/cursor"}}, "$defs": {"cursor": {"type": "object"}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "integer"}}},
        {"type": "object", "properties": {"next": {"$ref": "#"}}},
        True,
    ]
)
SPEC_KWARGS = st.fixed_dictionaries(
    {},
    optional={
        "input": mostly(GOOD_INPUT, ANY_JSON),
        "input_schema": mostly(GOOD_SCHEMAS, SCHEMAS),
        "output_schema": mostly(GOOD_SCHEMAS, SCHEMAS),
        "cursor_from": mostly(st.just("/c"), POINTERS),
        "cursor_into": mostly(st.just("/c"), POINTERS),
        "initial": mostly(st.just({}), ANY_JSON),
    },
)
SPEC_FIELDS = {"input", "input_schema", "output_schema", "cursor_from", "cursor_into", "initial"}


def _field_of(error: Exception) -> str:
    """The field a refusal names: its message starts with "<field>:" (or "<field> (...):")."""
    return str(error).split(":", 1)[0].split(" (", 1)[0]


@FUZZ
@given(kwargs=SPEC_KWARGS)
def test_a_function_spec_builds_or_is_refused_naming_the_field(kwargs: dict[str, Any]) -> None:
    try:
        spec = FunctionSpec.build(**real(kwargs))
    except ValueError as error:
        assert _field_of(error) in SPEC_FIELDS, str(error)[:300]
        event(f"refused: {_field_of(error)}")
        return
    event("built")
    json.dumps(spec.input_with(spec.initial))


OPERATOR_KWARGS = st.fixed_dictionaries(
    {"function": mostly(st.just(len), JUNK)},
    optional={
        "input": mostly(GOOD_INPUT, ANY_JSON),
        "input_schema": mostly(GOOD_SCHEMAS, SCHEMAS),
        "output_schema": mostly(GOOD_SCHEMAS, SCHEMAS),
        "cursor_from": mostly(st.just("/c"), POINTERS),
        "cursor_into": mostly(st.just("/c"), POINTERS),
        "initial": mostly(st.just({}), ANY_JSON),
        "store": mostly(st.sampled_from([None, VariableStore("fuzz-store")]), JUNK),
        "concurrency": mostly(st.sampled_from(["Forbid", "Allow", " allow "]), st.one_of(st.just("Replace"), JUNK)),
        "max_active_tis_per_dag": st.sampled_from([None, 1, 2, 16]),
    },
)
OPERATOR_FIELDS = SPEC_FIELDS | {"function", "store", "concurrency", "max_active_tis_per_dag"}


@FUZZ
@given(kwargs=OPERATOR_KWARGS)
def test_a_cursor_function_in_a_dag_builds_or_is_refused_naming_the_field(kwargs: dict[str, Any]) -> None:
    from airflow.sdk import DAG

    with DAG("fuzz_function", schedule=None, start_date=START):
        try:
            CursorFunctionOperator(task_id="fn", **real(kwargs))
        except (ValueError, TypeError) as error:
            assert _field_of(error) in OPERATOR_FIELDS, str(error)[:300]
            event(f"refused: {_field_of(error)}")
            return
    event("built")


# -- the HTTP function and the AFTER sensor ------------------------------------------------------

HTTP_KWARGS = st.fixed_dictionaries(
    {"conn_id": mostly(st.sampled_from(["svc", "fn_http"]), JUNK)},
    optional={
        "path": mostly(st.sampled_from(["/digest", "x", "", "/a?token=1"]), JUNK),
        "method": mostly(st.sampled_from(["POST", "put", "patch"]), st.one_of(st.just("GET"), JUNK)),
        "timeout": mostly(st.sampled_from([1, 300.0, 3600, "90s", "1h", datetime.timedelta(seconds=5)]), NUMBERS),
        "max_response_bytes": mostly(st.sampled_from([1, 1024, 16 * 1024 * 1024, 2**28]), NUMBERS),
    },
)
HTTP_FIELDS = {"conn_id", "path", "method", "timeout", "max_response_bytes"}


@FUZZ
@given(kwargs=HTTP_KWARGS)
def test_an_http_function_builds_or_is_refused_naming_the_field(kwargs: dict[str, Any]) -> None:
    from tessera.operators.functions.http import HttpFunction

    try:
        function = HttpFunction(**real(kwargs))
    except ValueError as error:
        assert _field_of(error) in HTTP_FIELDS, str(error)[:300]
        event(f"refused: {_field_of(error)}")
        return
    event("built")
    assert 0 < function.timeout <= 3600 and 1 <= function.max_response_bytes <= 2**28


SENSOR_KWARGS = st.fixed_dictionaries(
    {"parents": mostly(st.sampled_from([["p"], ("p", "q"), "p"]), st.one_of(st.lists(JUNK, max_size=2), JUNK))},
    optional={
        "poll_interval": mostly(st.sampled_from([1, 10, 3600]), NUMBERS),
        "wait_timeout": mostly(st.sampled_from([None, datetime.timedelta(hours=6)]), JUNK),
    },
)


@FUZZ
@given(kwargs=SENSOR_KWARGS)
def test_an_after_sensor_builds_or_is_refused_naming_the_field(kwargs: dict[str, Any]) -> None:
    from tessera.operators.fan_in.sensor import AfterSensor

    try:
        AfterSensor(task_id="wait", **real(kwargs))
    except (ValueError, TypeError) as error:
        assert _field_of(error) in {"parents", "poll_interval", "wait_timeout"}, str(error)[:300]
        event(f"refused: {_field_of(error)}")
        return
    event("built")
