"""``make test`` keeps each e2e deployment on one worker, its tests in the order written, and builds a
fast-tier module's shared fixture on one worker only.

An e2e file is one story told to one deployment (tests/conftest.py gives it an ``xdist_group``);
split over two workers, each worker builds the deployment again and a later test meets a fresh
one (the partitions e2e then waited 600 s for runs its earlier tests had not made there). This
fails if that grouping stops working: pytest-xdist 3.8 under pytest 9.2 silently dropped every
group (pytest-dev/pytest-xdist#1386), and a group name holding "]" is read back as no group.

It runs the e2e tier's collection (and one fast-tier module with a module fixture) as ``make test``
does, on two workers, with a plugin that records where each test lands and skips it before any
fixture starts a deployment.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from .conftest import REPO

DBS = ("sqlite", "postgresql")
SHARED_FIXTURE_MODULE = "tests/plugin/api/test_api_errors.py"
"""A fast-tier module whose tests share one API app (a module fixture): one group, so one worker builds it."""
PROBE = """
import os
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    group = item.get_closest_marker("xdist_group")
    with open(os.environ["TESSERA_PROBE_OUT"], "a") as out:
        fields = [os.environ["PYTEST_XDIST_WORKER"], group.args[0] if group else "", item.name]
        fields += [item.nodeid.split("::")[0], str("api" in item.fixturenames)]
        out.write("\\t".join(fields) + "\\n")
    pytest.skip("where it ran is all this run looks at")
"""


def test_each_deployment_and_each_shared_module_fixture_stays_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "grouping_probe.py").write_text(textwrap.dedent(PROBE))
    out = tmp_path / "ran.tsv"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "--no-loadscope-reorder",
            "-p",
            "grouping_probe",
            "-q",
            "-p",
            "no:cacheprovider",
            # No assert rewriting: the probe skips each test before its body, and rewriting each e2e module
            # (no bytecode cache under PYTHONDONTWRITEBYTECODE) cost each worker about 0.8 s of CPU.
            "--assert=plain",
            "tests/e2e",
            SHARED_FIXTURE_MODULE,
        ],  # fmt: skip
        cwd=REPO,
        # as from a shell: not as one of this run's xdist workers
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
            "PYTHONPATH": str(tmp_path),
            "TESSERA_PROBE_OUT": str(out),
        },  # fmt: skip
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    workers: dict[str, set[str]] = collections.defaultdict(set)
    order: dict[str, list[str]] = collections.defaultdict(list)
    started: dict[str, list[str]] = collections.defaultdict(list)  # per worker, its groups in the order they began
    for line in out.read_text().splitlines():
        worker, group, name, where, shares = line.split("\t")
        if where == SHARED_FIXTURE_MODULE and shares == "False":
            assert not group, name  # a test that does not ask for the module's app may run anywhere
            continue
        assert group, f"{name}: a test without an xdist_group"
        workers[group].add(worker)
        order[group].append(name)
        if group not in started[worker]:
            started[worker].append(group)
    # The longest deployments (pytest.mark.minutes) are handed out first: each worker begins with one of them.
    firsts = {groups[0] for groups in started.values()}
    longest = {"e2e-postgres", "e2e-celery"}  # 7.5 and 5 minutes (the shared ones)
    assert firsts == longest, started
    assert len(order[SHARED_FIXTURE_MODULE]) >= 10, order[SHARED_FIXTURE_MODULE]  # the fast module: one group
    assert len(workers) >= 11, sorted(workers)  # the e2e files and shared deployments, each a group
    split = {group: sorted(seen) for group, seen in workers.items() if len(seen) > 1}
    assert not split, f"deployments whose tests ran on several workers: {split}"
    assert {worker for seen in workers.values() for worker in seen} == {"gw0", "gw1"}  # both workers used
    corpus = order["tests/e2e/test_why_corpus.py corpus=sqlite"]
    # In the file's order, first to last (the corpus's questions read the one deployment's state as it goes).
    defined = re.findall(r"^def (test_\w+)\(", (REPO / "tests/e2e/test_why_corpus.py").read_text(), re.MULTILINE)
    assert corpus[0] == f"{defined[0]}[sqlite]" and corpus[-1] == f"{defined[-1]}[sqlite]", corpus
