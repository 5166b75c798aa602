"""Test settings shared by every tier: an isolated AIRFLOW_HOME on SQLite, set before Airflow is imported."""

from __future__ import annotations

import itertools
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "dags_examples"

# Each pytest-xdist worker is its own test session: its own home and SQLite DB. A worker inherits the
# environment of the process that started it, so a connection this file chose there is chosen anew;
# one the caller set (TESSERA_TEST_AIRFLOW_HOME, AIRFLOW__DATABASE__SQL_ALCHEMY_CONN) is kept.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
_given = os.environ.get("TESSERA_TEST_AIRFLOW_HOME")
_home = Path(_given) / _worker if _given else Path(tempfile.mkdtemp(prefix=f"tessera-airflow-home-{_worker}"))
_home.mkdir(parents=True, exist_ok=True)
os.environ["AIRFLOW_HOME"] = str(_home)
if os.environ.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN") in (None, os.environ.get("_TESSERA_TEST_CHOSEN_CONN")):
    os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = os.environ["_TESSERA_TEST_CHOSEN_CONN"] = (
        f"sqlite:///{_home / 'airflow.db'}"
    )
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(EXAMPLES)
os.environ["AIRFLOW__CORE__UNIT_TEST_MODE"] = "True"
os.environ.setdefault("AIRFLOW__SCHEDULER__STANDALONE_DAG_PROCESSOR", "True")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from tests.compat.airflow_names import load_configuration  # noqa: E402

# Loading the configuration logs "Unit test configuration loaded" to stdout, once per process:
# here, at collection, rather than into the output of whichever test first loads it (a CLI test
# reading its --json answer from stdout failed when it ran first).
load_configuration()

# CI must not fail one run in three on a new random example: there every property test runs the
# same derandomized examples, with no example database. Locally they explore at random.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def airflow_db():
    """A migrated metadata database (SQLite under the test AIRFLOW_HOME), created once per session."""
    from airflow.utils import db

    db.initdb()
    return os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]


@pytest.fixture(autouse=True)
def _no_gauges_thread_outlives_its_test() -> Iterator[None]:
    """Stop the cursor functions' health gauges a test's in-process scheduler job started and left running.

    Building an Airflow ``Job`` calls tessera's ``on_starting`` listener, which starts the gauges
    thread (:mod:`tessera.operators.functions.health`); a scheduler's job the test never completed
    kept it reading the metadata DB in the worker's later tests: ``test_api_scale`` counted its
    ``last_successes`` statement as one of the page's (CI, 17 statements instead of 16).
    """
    yield
    health = sys.modules.get("tessera.operators.functions.health")
    if health is None:  # never imported in this worker: no thread to stop
        return
    for gauges in list(health._running):
        gauges.stop()
        gauges.join(timeout=10)
    health._running.clear()


# -- Airflow releases older than 3.3 (the compatibility tier, tests/compat) ---------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """A test that meets tessera's refusal of a feature this Airflow cannot carry is skipped as ``refused: ...``."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None:
        from .compat import reason, refused_feature

        feature = refused_feature(call.excinfo.value)
        if feature is not None:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, reason(feature))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    """A test module that declares such a feature at import is skipped as ``refused: ...`` too."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and "NeedsNewerAirflow: " in str(report.longrepr):
        from .compat import REFUSED

        refusal = str(report.longrepr).split("NeedsNewerAirflow: ", 1)[1].splitlines()[0]
        report.outcome = "skipped"
        report.longrepr = (str(collector.path), 0, f"{REFUSED}{refusal}")


# -- where the suite's time goes -----------------------------------------------------------------------

_TIMELINE = os.environ.get("TESSERA_TIMELINE")
"""A folder for the run's timeline (``make test`` sets it; other runs, the compatibility tier's too, keep none)."""
if _TIMELINE and not _worker:
    os.environ.setdefault("TESSERA_TIMELINE_RUN", str(os.getpid()))
_KEEPS_TIMELINE = bool(_TIMELINE) and os.environ.get("TESSERA_TIMELINE_RUN") == str(
    os.getppid() if _worker else os.getpid()
)
"""Only the run ``make test`` started and its own xdist workers keep it: a pytest that a test starts in turn
(the suite's grouping test collects the suite) inherits the variables, and once cleared the run's timeline."""


def pytest_sessionstart(session: pytest.Session) -> None:
    """The controller (or a run without xdist) starts the timeline afresh; its workers then append to it."""
    if _KEEPS_TIMELINE and not _worker:
        shutil.rmtree(_TIMELINE, ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    """Each test's wall span and CPU (this process's and its reaped children's, the Airflow processes an e2e
    deployment started and stopped), one line per test in ``$TESSERA_TIMELINE/<worker>.tsv``: with
    ``--durations`` it shows which worker ran what when, so the suite's length can be laid out
    (``scripts/timeline.py`` sums it per file and per worker)."""
    started, cpu = time.time(), _cpu_seconds()
    yield
    if _KEEPS_TIMELINE:
        folder = Path(_TIMELINE)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{_worker or 'main'}.tsv", "a") as out:
            out.write(f"{started:.2f}\t{time.time():.2f}\t{_cpu_seconds() - cpu:.2f}\t{item.nodeid}\n")


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# -- order and distribution (pytest-randomly, pytest-xdist) -----------------------------------------

_COLLECTED_AT = pytest.StashKey[int]()
_collected = itertools.count()


def pytest_itemcollected(item: pytest.Item) -> None:
    """Remember the order of collection: pytest-randomly shuffles it before the hook below runs."""
    item.stash[_COLLECTED_AT] = next(_collected)


# Session-scoped deployments that several e2e files share: their tests go to one xdist worker, so
# each deployment starts once.
SHARED_STACKS = {"postgres_stack": "e2e-postgres", "celery_stack": "e2e-celery", "e2e_home": "e2e-sqlite"}
_SHARED_STACK_MINUTES = {"e2e-postgres": 7.5, "e2e-celery": 5, "e2e-sqlite": 3.5}
"""About how long each shared deployment's tests take on an idle 2-core machine (a file marks its own with
``pytest.mark.minutes``): the longest start first, so no long one is left to run alone at the end."""
E2E_TIMEOUT = 1800
"""Seconds for one e2e test (pytest-timeout), the start of its deployment included (a migration alone may
take minutes on a busy machine); the rest of the suite has pyproject.toml's ``timeout``."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The fast tier in pytest-randomly's order; each e2e file's tests first, in the order they were written.

    An e2e file is one story told to a deployment that outlives each test (a fixture of module or
    session scope): its tests build on what the earlier ones did, and some stop the deployment on
    purpose last (``test_demo.py``, ``test_postgres_ha.py``). So they keep collection order, and
    every file (or every set of files sharing a session deployment, ``SHARED_STACKS``) is one
    ``xdist_group``: ``--dist loadgroup`` runs it on one worker. They go first, the longest deployments
    first (:func:`_longest_first`), and the fast tier's tests fill the free workers meanwhile. A fast-tier
    module whose tests share a module fixture is one group too, so only one worker builds it.
    """
    e2e = [item for item in items if item.get_closest_marker("e2e")]
    fast = [item for item in items if not item.get_closest_marker("e2e")]
    # A module marked in_order keeps its written order where pytest-randomly put it (its items stay together).
    in_order = [index for index, item in enumerate(fast) if item.get_closest_marker("in_order")]
    for index, item in zip(in_order, sorted((fast[i] for i in in_order), key=lambda item: item.stash[_COLLECTED_AT])):
        fast[index] = item
    for item in fast:
        # --dist loadgroup hands ungrouped tests out one by one, and a module fixture is built on every worker
        # that runs one of its module's tests: an in_order module's story would start over in the middle, and
        # an API module's app and DAGs were built on 2 to 4 workers each. Such a module runs on one worker.
        shares = item.get_closest_marker("in_order") is not None or _uses_module_fixture(item)
        if shares and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    for item in e2e:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT))
        if item.get_closest_marker("xdist_group") is None:
            shared = [group for fixture, group in SHARED_STACKS.items() if fixture in item.fixturenames]
            group = shared[0] if shared else _deployment_of(item)
            # xdist reads the group back from "<test id>@<group>", and only if no "]" follows the "@"; else
            # each test is scheduled alone and a module's deployment is built again on the other worker.
            assert group.rfind("]") < 0, f"{item.nodeid}: xdist_group {group!r} must not hold ']'"
            item.add_marker(pytest.mark.xdist_group(group))
    items[:] = _longest_first(e2e) + fast


def _uses_module_fixture(item: pytest.Item) -> bool:
    """Whether ``item`` asks for a fixture built once per module (or class, or package) and then shared."""
    definitions = item._fixtureinfo.name2fixturedefs.values()
    return any(found and found[-1].scope in ("module", "class", "package") for found in definitions)


def _longest_first(e2e: list[pytest.Item]) -> list[pytest.Item]:
    """The e2e tests by their deployment's expected minutes, longest first, each deployment's tests as written.

    ``--dist loadgroup`` hands the groups out in this order, two to each worker at the start and the
    next to whichever worker is then free, so a long deployment queued last would hold one worker
    alone while the others had finished.
    """
    minutes: dict[str, float] = {}
    for item in e2e:
        group = item.get_closest_marker("xdist_group").args[0]  # type: ignore[union-attr]
        marked = item.get_closest_marker("minutes")
        own = marked.args[0] if marked else _SHARED_STACK_MINUTES.get(group, 0)
        minutes[group] = max(minutes.get(group, 0), own)

    def order(item: pytest.Item) -> tuple[float, int]:
        return -minutes[item.get_closest_marker("xdist_group").args[0]], item.stash[_COLLECTED_AT]  # type: ignore[union-attr]

    return sorted(e2e, key=order)


def _deployment_of(item: pytest.Item) -> str:
    """The file, and the parameter of its module-scoped deployment if it has one (``test_why_corpus.py`` builds
    one on SQLite and one on PostgreSQL): each deployment is a group of its own, so two can run at once."""
    group = item.nodeid.split("::")[0]
    callspec = getattr(item, "callspec", None)
    for name, value in sorted(callspec.params.items()) if callspec else ():
        definitions = item._fixtureinfo.name2fixturedefs.get(name, ())
        if definitions and definitions[-1].scope == "module":
            group += f" {name}={value}"  # never "]" last: xdist then takes the group for part of a test id
    return group
