"""What the compatibility tier runs on each older Airflow, and how a test says a feature needs a newer one.

The tier (``scripts/compat.py``) installs the built wheel beside Airflow 3.1 and 3.2 and runs, per
feature of the support table, the test files of :data:`FEATURE_TESTS`, then the shipped-product
story (``tests/shipped``). A feature that release cannot carry (``tessera.timetables.support``)
has its tests skipped with a reason starting ``refused:`` (:func:`needs`), and its examples
(:data:`EXAMPLES_NEEDING`) must be import errors that name it. The tier writes what passed per
feature as JSON (:mod:`tests.compat.results`), which ``docs/reference/support.md`` must match.
"""

from __future__ import annotations

import pytest

from tessera.timetables.support import (
    EXACT_RETRY_WAITS,
    FEATURES,
    PARTITIONS,
    SCHEDULE_STATE,
    Feature,
    NeedsNewerAirflow,
    carried,
)

REFUSED = "refused: "
"""How the skip reason of a test of a feature this Airflow cannot carry starts."""

FEATURE_TESTS: dict[str, tuple[str, ...]] = {
    "Timetables (Every, calendar cadences, Cron, unions)": (
        "tests/timetables/test_every_timetable.py",
        "tests/timetables/test_calendar_timetable.py",
        "tests/timetables/test_cron_timetable.py",
        "tests/timetables/test_union_timetable.py",
    ),
    "The plan": ("tests/timetables/test_public_plan.py", "tests/plugin/test_plan_agreement.py"),
    "Catch-up and backfill": ("tests/timetables/test_bounds.py", "tests/plugin/actions/test_backfill_bounds.py"),
    "Cursor functions": ("tests/operators/functions/test_cursor_fires.py",),
    "Declared schedules": (
        "tests/operators/schedules/test_schedule.py",
        "tests/operators/schedules/test_schedule_sql.py",
    ),
    SCHEDULE_STATE.name: ("tests/operators/fan_in/test_fan_in_db.py",),
    PARTITIONS.name: ("tests/timetables/test_partitions.py",),
    EXACT_RETRY_WAITS.name: ("tests/operators/test_backoff.py",),
    "REST API": ("tests/plugin/api/test_api_reads.py", "tests/plugin/api/test_api_app.py"),
    "Both CLIs (tessera, airflow tessera)": ("tests/plugin/cli/test_command.py",),
    "Metrics": ("tests/test_metrics_statsd.py",),
    "Example DAGs and the doors' contracts": (
        "tests/test_examples.py",
        "tests/test_airflow_doors.py",
        "tests/test_version_doors.py",
    ),
}
"""Each row of the support table and the fast-tier files that show it works on a release."""

_METRICS_NOT_RUN = (
    "its tests rebuild Airflow's StatsD backends through stats.initialize(), which Airflow 3.3 added; tessera "
    "emits through that release's Stats (the operators door's stats_and_conf), not checked on the wire there"
)
_IN_PROCESS_3_2 = (
    "Airflow 3.2.2's dag.test(), which these tests fire through, runs a task against an in-process execution API "
    "whose startup (its services registry) is held by an object dag.test() drops: once a garbage collection takes "
    "it, every call the task makes answers 500 ('State' object has no attribute 'svcs_registry') and the task fails "
    "before tessera's code runs. Airflow's bug, fixed in 3.3 (InProcessExecutionAPI keeps it as long as its "
    "transport). A cursor function run by the scheduler and a worker does not use it: the shipped story runs one"
)
NOT_RUN: dict[str, dict[str, str]] = {
    "3.1": {"Metrics": _METRICS_NOT_RUN},
    "3.2": {"Metrics": _METRICS_NOT_RUN, "Cursor functions": _IN_PROCESS_3_2},
}
"""Rows whose tests cannot run on a release (by its minor), and why: the tier records them ``untested``."""

_FERNET_3_1 = (
    "Airflow 3.1's get_fernet() sets an attribute on cryptography's MultiFernet, which cryptography 51 "
    "(released 2026-12-05) made a class that takes none: every encrypted Variable write, a cursor's included, fails"
)
HELD_BACK: dict[str, dict[str, str]] = {"3.1": {"cryptography<51": _FERNET_3_1}}
"""Requirements the tier adds when it installs a release (by its minor), and why: a newer dependency that release
breaks with, which its own constraints file would hold back (those files are not in the package registries)."""


def not_run_here(row: str) -> pytest.MarkDecorator:
    """Skip a test of support-table ``row`` on the releases whose tier does not run it (:data:`NOT_RUN`), saying why."""
    from tessera.timetables._airflow import AIRFLOW

    minor = "{}.{}".format(*AIRFLOW)
    why = NOT_RUN.get(minor, {}).get(row)
    return pytest.mark.skipif(why is not None, reason=f"not run on Airflow {minor}: {why}")


SHIPPED = "The shipped wheel: four components, every route, the page, tessera plan, a cursor run"
"""The row the shipped-product story (``tests/shipped``) fills."""

EXAMPLES_NEEDING: dict[str, Feature] = {
    "partitioned_clicks.py": PARTITIONS,
    "partitioned_amsterdam_rollup.py": PARTITIONS,
    "calendar_daily_new_york.py": EXACT_RETRY_WAITS,
    "after_aligned_window.py": SCHEDULE_STATE,
    "declared_python.py": SCHEDULE_STATE,
    "declared_sql.py": SCHEDULE_STATE,
}
"""The example DAG files built on a feature some supported Airflow lacks: an import error there."""


def refused_feature(error: BaseException | None) -> Feature | None:
    """The feature whose refusal (:class:`NeedsNewerAirflow`) ``error`` is or was raised from, if any.

    A test of a feature this Airflow cannot carry meets the refusal where it declares the feature,
    or finds it as the import error of a DAG file it stored: ``tests/conftest.py`` reports it as
    skipped (``refused: ...``) rather than failed, and only then.
    """
    for _ in range(8):  # an error's cause chain, bounded
        if error is None:
            return None
        if isinstance(error, NeedsNewerAirflow) and not carried(error.feature):
            return error.feature
        # A DAG file the test stored was refused: its import error (the refusal's words) is what failed the test.
        text = str(error)
        for feature in FEATURES:
            if not carried(feature) and f"{feature.name} needs Airflow {feature.since_text} or newer" in text:
                return feature
        error = error.__cause__ or error.__context__
    return None


def reason(feature: Feature) -> str:
    return f"{REFUSED}{feature.name} needs Airflow {feature.since_text}; tessera refuses it on this release"


def needs(feature: Feature) -> pytest.MarkDecorator:
    """Skip a test where the running Airflow cannot carry ``feature`` (tessera refuses it there)."""
    return pytest.mark.skipif(not carried(feature), reason=reason(feature))


def module_needs(feature: Feature) -> None:
    """Skip the calling test module where the running Airflow cannot carry ``feature``: called as it starts,
    before it imports that release's names (``tests/test_version_doors.py`` lets such a module use them)."""
    if not carried(feature):
        pytest.skip(reason(feature), allow_module_level=True)


def check_example_errors(errors: dict[str, str]) -> None:
    """The import errors of the example files (by file name) are exactly those this Airflow cannot carry.

    Each names what it lacks: tessera's refusal ("needs Airflow 3.3"), or for the partitioned
    examples, which also use Airflow 3.3's own partition mappers, Airflow's ImportError of one.
    """
    refused = examples_refused()
    assert set(errors) == set(refused), errors
    for name, feature in refused.items():
        assert f"needs Airflow {feature.since_text}" in errors[name] or "cannot import name" in errors[name], errors


def examples_refused() -> dict[str, Feature]:
    """The example files the running Airflow cannot load, each with the feature it lacks."""
    return {name: feature for name, feature in EXAMPLES_NEEDING.items() if not carried(feature)}
