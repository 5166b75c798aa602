"""The SCHEDULE statement: the specification's examples parse to the expected declarations; bad ones are
refused at the line and column of the clause at fault; clause order, case, spacing and comments don't matter."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import load_schedules
from tessera.operators.schedules.statement import ScheduleSyntaxError, parse_schedule, parse_schedules

# The statements of the specification's Examples section, each with what it must declare.
SPEC_EXAMPLES = [
    pytest.param(
        """
        SCHEDULE daily_etl
          CRON '0 6 * * *'
          TIMEZONE 'America/New_York';
        """,
        Schedule("daily_etl", cron="0 6 * * *", timezone="America/New_York"),
        id="daily-basic",
    ),
    pytest.param(
        """
        SCHEDULE daily_etl
          CRON '0 6 * * *'
          TIMEZONE 'America/New_York'
          RETRIES 3
          RETRY_DELAY 300
          TIMEOUT 3600;
        """,
        Schedule("daily_etl", cron="0 6 * * *", timezone="America/New_York", retries=3, retry_delay=300, timeout=3600),
        id="daily-retries",
    ),
    pytest.param(
        """
        SCHEDULE hourly_sync
          CRON '0 * * * *'
          DESCRIPTION 'Hourly data synchronization'
          MAX_CONCURRENT 1
          PRIORITY 10
          NOTIFY 'ops-team@example.com', 'data-eng@example.com'
          WEBHOOK 'https://hooks.slack.example.com/services/T00/B00/xxx';
        """,
        Schedule(
            "hourly_sync",
            cron="0 * * * *",
            description="Hourly data synchronization",
            max_concurrent=1,
            priority=10,
            notify=("ops-team@example.com", "data-eng@example.com"),
            webhook=("https://hooks.slack.example.com/services/T00/B00/xxx",),
        ),
        id="hourly-notify",
    ),
    pytest.param(
        """
        SCHEDULE distributed_refresh
          CRON '0 3 * * *'
          TARGET_NODES ALL
          TIMEOUT 7200
          RETRIES 1;
        """,
        Schedule("distributed_refresh", cron="0 3 * * *", target_nodes="ALL", timeout=7200, retries=1),
        id="all-nodes",
    ),
    pytest.param(
        """
        SCHEDULE weekly_archive
          CRON '0 1 * * 0'
          TIMEZONE 'Europe/London'
          CATCHUP true
          INACTIVE;
        """,
        Schedule("weekly_archive", cron="0 1 * * 0", timezone="Europe/London", catchup=True, active=False),
        id="inactive-catchup",
    ),
    pytest.param(
        "SCHEDULE hourly_sync CRON '0 * * * *' MAX_CONCURRENT 1 OVERLAP skip;",
        Schedule("hourly_sync", cron="0 * * * *", max_concurrent=1, overlap="skip"),
        id="overlap-skip",
    ),
    pytest.param(
        "SCHEDULE burst INTERVAL_SECONDS 60 MAX_CONCURRENT 0 OVERLAP ALLOW_ALL;",
        Schedule("burst", interval_seconds=60, max_concurrent=0, overlap="allow_all"),
        id="overlap-allow-all",
    ),
    pytest.param(
        """
        -- the fan-in step
        SCHEDULE gold_cross_source
          AFTER 'apc_daily', 'norled_daily', 'mpc_daily'
          PARENT_FRESHNESS 26
          DESCRIPTION 'Runs behind the three source loads';
        """,
        Schedule(
            "gold_cross_source",
            after=("apc_daily", "norled_daily", "mpc_daily"),
            parent_freshness=26,
            description="Runs behind the three source loads",
        ),
        id="fan-in",
    ),
]


@pytest.mark.parametrize(("text", "expected"), SPEC_EXAMPLES)
def test_every_example_of_the_specification_parses(text: str, expected: Schedule) -> None:
    assert parse_schedule(text) == expected


def test_a_file_holds_several_statements_in_order() -> None:
    text = "\n".join(param.values[0] for param in SPEC_EXAMPLES[1:])
    assert parse_schedules(text) == [param.values[1] for param in SPEC_EXAMPLES[1:]]


def test_node_lists_quotes_and_extensions() -> None:
    schedule = parse_schedule(
        "schedule nodes interval_seconds 7 target_nodes (node-1, 'node.2', 3) max_wave_concurrent 2\n"
        "  description 'it''s here' notify_on_success true active;"
    )
    assert schedule == Schedule(
        "nodes",
        interval_seconds=7,
        target_nodes=("node-1", "node.2", "3"),
        max_wave_concurrent=2,
        description="it's here",
        notify_on_success=True,
    )


# (statement, line, column, words in the message). Columns are 1-based.
MALFORMED = [
    pytest.param("SCHEDULE a\n  CRON '0 6 * * *\n  RETRIES 3;", 2, 8, ["no closing quote"], id="missing-quote"),
    pytest.param("SCHEDULE a\n  CRON '0 6 * * *'\n  RETRYS 3;", 3, 3, ["RETRYS", "RETRIES"], id="unknown-clause"),
    pytest.param("SCHEDULE a\n  CRON '0 6 * * *'\n  INTERVAL_SECONDS 60;", 3, 3, ["cron and interval"], id="2-drivers"),
    pytest.param("SCHEDULE a AFTER 'p'\n  CRON '* * * * *';", 2, 3, ["cron and after"], id="after-then-cron"),
    pytest.param("SCHEDULE a\n  DESCRIPTION 'no driver';", 1, 10, ["no driver"], id="no-driver"),
    pytest.param("SCHEDULE a\n  INTERVAL_SECONDS -5;", 2, 3, ["-5", "positive"], id="negative-interval"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 0;", 1, 12, ["positive"], id="zero-interval"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 1.5;", 1, 12, ["whole"], id="fractional-interval"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 300s;", 1, 29, ["'300s'", "number"], id="unit-suffix"),
    pytest.param("SCHEDULE a\n  CRON '0 6 * * *'\n  TIMEZONE 'Mars/Olympus';", 3, 3, ["Mars/Olympus"], id="tz"),
    pytest.param("SCHEDULE a AFTER;", 1, 17, ["AFTER expects"], id="after-no-names"),
    pytest.param("SCHEDULE a AFTER 'p',;", 1, 22, ["AFTER expects"], id="after-trailing-comma"),
    pytest.param("SCHEDULE a AFTER 'p', 'p';", 1, 12, ["twice"], id="after-duplicate"),
    pytest.param("SCHEDULE a AFTER 'a';", 1, 12, ["itself"], id="after-self"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 PARENT_FRESHNESS 2;", 1, 31, ["AFTER"], id="freshness-no-after"),
    pytest.param("SCHEDULE a CRON '0 6 * *';", 1, 12, ["five-field"], id="cron-four-fields"),
    pytest.param("SCHEDULE a CRON 6;", 1, 17, ["quoted string"], id="cron-unquoted"),
    pytest.param("SCHEDULE a\n  TIMEOUT 60 CRON '0 25 * * *';", 2, 14, ["out of range"], id="hour-25"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 RETRIES -1;", 1, 31, ["-1"], id="negative-retries"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 RETRIES three;", 1, 39, ["a number"], id="retries-word"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 TIMEOUT 0;", 1, 31, ["more than zero"], id="zero-timeout"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 CATCHUP yes;", 1, 39, ["true or false"], id="catchup-yes"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 OVERLAP 'skip';", 1, 39, ["one of skip, buffer_one"], id="quoted"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 OVERLAP queue;", 1, 31, ["'queue' is not a policy"], id="overlap"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 NOTIFY 'ops';", 1, 31, ["'ops'", "email"], id="bad-email"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 WEBHOOK 'ftp://x';", 1, 31, ["http(s)"], id="bad-url"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 TARGET_NODES (n1;", 1, 47, ["',' or ')'"], id="nodes-open"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 TARGET_NODES SOME;", 1, 44, ["ALL or ("], id="nodes-word"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 RETRIES 1 RETRIES 2;", 1, 41, ["repeats"], id="repeated-clause"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 ACTIVE INACTIVE;", 1, 38, ["repeats"], id="active-inactive"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5", 1, 1, ["no closing ';'"], id="no-semicolon"),
    pytest.param(
        "SCHEDULE a INTERVAL_SECONDS 5\nSCHEDULE b INTERVAL_SECONDS 6;", 2, 1, ["previous statement"], id="lost-semi"
    ),
    pytest.param("SCHEDULE 'bad name' INTERVAL_SECONDS 5;", 1, 10, ["not a schedule name"], id="bad-name"),
    pytest.param("SCHEDULE ;", 1, 10, ["schedule name"], id="no-name"),
    pytest.param(
        "SCHEDULE a CRON '0 6 * * *'\n  TIMEOUT 99999999999999999999;", 2, 3, ["too large"], id="timeout-huge"
    ),
    pytest.param(
        "SCHEDULE a INTERVAL_SECONDS " + "9" * 100_000 + ";", 1, 12, ["100000 digits", "366 days"], id="100000-digits"
    ),
    pytest.param(
        "SCHEDULE a\n  INTERVAL_SECONDS " + "0" * 1_000_000 + "5;",
        2,
        3,
        ["interval_seconds: a number written with 1000001 digits; write at most 20 digits"],
        id="a-million-leading-zeros",
    ),
    pytest.param(
        "SCHEDULE a CRON '0 6 * * *'\n  TIMEOUT 5." + "0" * 1_000_000 + "1;",
        2,
        3,
        ["timeout: a number written with 1000002 digits; write at most 20 digits"],
        id="a-million-fraction-digits",
    ),
    pytest.param("SCHEDULE a INTERVAL_SECONDS \u0663;", 1, 29, ["unexpected character", "U+0663"], id="arabic-digit"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 RETRIES \uff11;", 1, 39, ["U+FF11"], id="fullwidth-digit"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 RETRIES 101;", 1, 31, ["0 to 100"], id="retries-101"),
    pytest.param("SCHEDULE a AFTER b PARENT_FRESHNESS 8784.5;", 1, 20, ["8784"], id="freshness-over"),
    pytest.param("SCHEDULE a CRON '0 6 * * *' TIMEZONE 'localtime';", 1, 29, ["localtime"], id="tz-localtime"),
    pytest.param("CREATE SCHEDULE a INTERVAL_SECONDS 5;", 1, 1, ["expected SCHEDULE"], id="not-schedule"),
    pytest.param("SCHEDULE a INTERVAL_SECONDS 5 # x;", 1, 31, ["unexpected character"], id="stray-char"),
    pytest.param(
        "-- ok\nSCHEDULE a INTERVAL_SECONDS 5;\n\nSCHEDULE b\n    MAX_CONCURRENT -1 INTERVAL_SECONDS 5;",
        5,
        5,
        ["max_concurrent"],
        id="second-statement",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "words"), MALFORMED)
def test_a_malformed_statement_is_refused_at_its_line_and_column(
    text: str, line: int, column: int, words: list[str]
) -> None:
    with pytest.raises(ScheduleSyntaxError) as caught:
        parse_schedules(text)
    error = caught.value
    assert (error.line, error.column) == (line, column), str(error)
    assert str(error).startswith(f"line {line}, column {column}: ")
    for word in words:
        assert word in str(error)


def test_leading_zeros_within_the_digit_bound_are_read_as_the_number() -> None:
    assert parse_schedule("SCHEDULE a INTERVAL_SECONDS 007 TIMEOUT 0000000000000000001.5;") == Schedule(
        "a", interval_seconds=7, timeout=1.5
    )


def test_the_source_file_is_named_in_the_message() -> None:
    with pytest.raises(ScheduleSyntaxError, match=r"^schedules\.sql: line 1, column 12: "):
        parse_schedules("SCHEDULE a INTERVAL_SECONDS 0;", source="schedules.sql")


# -- properties: order, case, spacing and comments never change the declaration ---------------

CLAUSES = st.fixed_dictionaries(
    {"driver": st.sampled_from(["CRON '0 6 * * *' TIMEZONE 'Europe/Oslo'", "INTERVAL_SECONDS 90", "AFTER 'p', 'q'"])},
    optional={
        "DESCRIPTION": st.just("DESCRIPTION 'nightly -- not a comment'"),
        "RETRIES": st.integers(0, 9).map(lambda n: f"RETRIES {n}"),
        "RETRY_DELAY": st.integers(0, 900).map(lambda n: f"RETRY_DELAY {n}"),
        "TIMEOUT": st.integers(1, 7200).map(lambda n: f"TIMEOUT {n}"),
        "MAX_CONCURRENT": st.integers(0, 5).map(lambda n: f"MAX_CONCURRENT {n}"),
        "MAX_WAVE_CONCURRENT": st.integers(0, 5).map(lambda n: f"MAX_WAVE_CONCURRENT {n}"),
        "PRIORITY": st.integers(-50, 50).map(lambda n: f"PRIORITY {n}"),
        "CATCHUP": st.booleans().map(lambda b: f"CATCHUP {str(b).lower()}"),
        "TARGET_NODES": st.sampled_from(["TARGET_NODES ALL", "TARGET_NODES ('n1', 'n2')"]),
        "NOTIFY": st.just("NOTIFY 'a@example.com', 'b@example.com'"),
        "WEBHOOK": st.just("WEBHOOK 'https://hooks.example.com/x'"),
        "ACTIVE": st.sampled_from(["ACTIVE", "INACTIVE"]),
    },
)


def _vary_case(text: str, flips: list[bool]) -> str:
    # Only keywords change case: quoted strings are values.
    parts = text.split("'")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].lower() if flips[i % len(flips)] else parts[i].upper()
    return "'".join(parts)


@settings(max_examples=200, deadline=None)
@given(
    clauses=CLAUSES,
    order=st.randoms(use_true_random=False),
    separators=st.lists(st.sampled_from([" ", "\n  ", "\t", " -- note\n "]), min_size=1, max_size=4),
    flips=st.lists(st.booleans(), min_size=1, max_size=5),
)
def test_clause_order_case_spacing_and_comments_do_not_matter(clauses, order, separators, flips) -> None:
    canonical = parse_schedule(f"SCHEDULE s {' '.join(clauses.values())};")
    shuffled = list(clauses.values())
    order.shuffle(shuffled)
    text = "SCHEDULE s"
    for i, clause in enumerate(shuffled):
        text += separators[i % len(separators)] + _vary_case(clause, flips)
    assert parse_schedule(text + separators[0] + ";") == canonical


def test_a_file_that_is_not_utf8_is_refused_at_the_first_bad_byte(tmp_path) -> None:
    path = tmp_path / "schedules.sql"
    path.write_bytes(b"SCHEDULE a\n  CRON '0 6 * * *' DESCRIPTION 'caf\xe9';")
    with pytest.raises(ScheduleSyntaxError) as caught:
        load_schedules(path)
    assert (caught.value.line, caught.value.column) == (2, 36)
    assert str(caught.value) == f"{path}: line 2, column 36: not UTF-8 text; save the file as UTF-8"
