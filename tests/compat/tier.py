"""The compatibility tier: the built wheel installed beside an older Airflow, its fast tier and shipped story run.

``scripts/compat.sh 3.1.8`` (``.ci/run`` runs it for 3.1 and 3.2) does, outside the checkout:

1. build the sdist and the wheel as ``make dist`` does (:func:`tests.shipped.distribution.build`);
2. resolve that Airflow with this venv's versions wherever that release allows them and the
   newest it allows elsewhere (Airflow's constraints files are not in the package registries;
   this venv's versions are the ones the main suite runs) into ``pinned.txt``;
3. install Airflow alone into a fresh virtualenv, then the wheel beside it as a user would
   (``pip install airflow-tessera``, no constraints), and fail if that moved any installed
   distribution (Airflow's or one of its dependencies) to another version;
4. add the test extra and run, from the checkout with ``tessera`` imported from the wheel, the
   fast-tier files of :data:`tests.compat.FEATURE_TESTS` and then the shipped-product story;
5. write what passed per feature (``results.json``) and fail if it differs from the release's
   column of ``docs/reference/support.json``, which ``docs/reference/support.md`` shows.

Each step's seconds are printed and kept in ``results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.compat import FEATURE_TESTS, HELD_BACK, NOT_RUN, REFUSED, SHIPPED
from tests.shipped.distribution import BIN, REPO, build, constraints

SUPPORT_JSON = REPO / "docs" / "reference" / "support.json"
RELEASE = re.compile(r"^3\.[12]\.\d+$")
FAST_TIMEOUT = 900
SHIPPED_TIMEOUT = 1500


def _run(command: list[str | Path], *, cwd: Path, env: dict[str, str] | None = None, timeout: float) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode:
        raise SystemExit(f"compat: {' '.join(map(str, command))} failed ({done.returncode}):\n{done.stdout[-4000:]}"
                         f"\n{done.stderr[-4000:]}")  # fmt: skip
    return done.stdout


def _freeze(uv: Path, python: Path, cwd: Path) -> dict[str, str]:
    frozen = _run([uv, "pip", "freeze", "--python", python], cwd=cwd, timeout=120)
    pins = {}
    for line in frozen.splitlines():
        name, sep, pinned = line.partition("==")
        if sep:
            pins[name.lower()] = pinned
    return pins


def moved_by_install(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What installing tessera beside Airflow changed of what was installed (additions are fine)."""
    return sorted(f"{name} {pinned} -> {after.get(name, 'removed')}" for name, pinned in before.items()
                  if after.get(name) != pinned)  # fmt: skip


def feature_results(reports: list[Path], untested: dict[str, str]) -> dict[str, str]:
    """Each support-table row as the tier ran it: ``yes``, ``refused``, ``untested`` (not run, see
    :data:`tests.compat.NOT_RUN`) or ``FAILED``, from pytest's JUnit XML."""
    outcomes: dict[str, list[str]] = {}
    for report in reports:
        for case in ElementTree.parse(report).iter("testcase"):
            # A module skipped as it was collected has no class name: its dotted path is the case's name.
            module = (case.get("classname") or case.get("name", "")).split("::")[0]
            path = module.replace(".", "/")
            path = path if path.endswith(".py") else re.sub(r"/Test\w*$", "", path) + ".py"
            skipped = case.find("skipped")
            if case.find("failure") is not None or case.find("error") is not None:
                outcome = "failed"
            elif skipped is not None:
                said = f"{skipped.get('message') or ''} {skipped.text or ''}"  # a collection skip keeps it in the text
                outcome = "refused" if REFUSED in said else "skipped"
            else:
                outcome = "passed"
            outcomes.setdefault("shipped" if path.startswith("tests/shipped/") else path, []).append(outcome)
    from tessera.timetables.support import FEATURES

    gated = {feature.name for feature in FEATURES}
    rows = {}
    for row, files in [*FEATURE_TESTS.items(), (SHIPPED, ("shipped",))]:
        found = [outcome for path in files for outcome in outcomes.get(path, [])]
        if row in untested:
            rows[row] = "untested"
        elif "failed" in found or not found:
            rows[row] = "FAILED"
        elif row in gated and "refused" in found:
            rows[row] = "refused"
        else:
            rows[row] = "yes" if "passed" in found else "FAILED"
    return rows


@contextmanager
def _timed(name: str, times: dict[str, float]) -> Iterator[None]:
    start = time.monotonic()
    print(f"compat: {name} ...", flush=True)
    yield
    times[name] = round(time.monotonic() - start, 1)
    print(f"compat: {name}: {times[name]} s", flush=True)


def tier(release: str, work: Path) -> dict[str, object]:
    uv = BIN / "uv"
    times: dict[str, float] = {}
    with _timed("build", times):
        built = build(work / "build", isolated=True)
    with _timed("install", times):
        preferred = work / "pinned.txt"  # uv keeps an output file's pins as preferences: this venv's versions
        preferred.write_text("".join(line + "\n" for line in constraints().splitlines()
                                     if not line.startswith("apache-airflow")))  # fmt: skip
        wanted = work / "wanted.in"
        held = "".join(f"{requirement}\n" for requirement in HELD_BACK.get(".".join(release.split(".")[:2]), {}))
        wanted.write_text(f"apache-airflow=={release}\nairflow-tessera[test] @ {built.wheel.as_uri()}\n{held}")
        _run([uv, "pip", "compile", "--quiet", "--python", sys.executable, wanted, "-o", preferred], cwd=work,
             timeout=600)  # fmt: skip
        venv = work / "venv"
        python = venv / "bin" / "python"
        _run([uv, "venv", "--quiet", "--python", sys._base_executable, venv], cwd=work, timeout=120)  # type: ignore[attr-defined]
        airflow = f"apache-airflow=={release}"
        _run([uv, "pip", "install", "--quiet", "--python", python, airflow, "-c", preferred], cwd=work, timeout=900)
        before = _freeze(uv, python, work)
        _run([uv, "pip", "install", "--quiet", "--python", python, built.wheel], cwd=work, timeout=600)
        moved = moved_by_install(before, _freeze(uv, python, work))
        if moved:
            raise SystemExit(f"compat: installing tessera beside Airflow {release} moved {moved}")
        _run([uv, "pip", "install", "--quiet", "--python", python, f"airflow-tessera[test] @ {built.wheel.as_uri()}",
              airflow, "-c", preferred], cwd=work, timeout=900)  # fmt: skip
        where = _run([python, "-c", "import tessera.timetables as t; print(t.__file__)"], cwd=REPO, timeout=120)
        if not Path(where.strip()).is_relative_to(venv):
            raise SystemExit(f"compat: tessera came from {where.strip()}, not the wheel installed in {venv}")
    env = {**os.environ, "TESSERA_TEST_AIRFLOW_HOME": str(work / "airflow-home")}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "AIRFLOW_HOME", "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"):
        env.pop(name, None)
    untested = NOT_RUN.get(".".join(release.split(".")[:2]), {})
    fast = sorted({path for row, files in FEATURE_TESTS.items() if row not in untested for path in files})
    reports = [work / "fast.xml", work / "shipped.xml"]
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    with _timed("fast tier", times):
        subprocess.run([*pytest, "-m", "not e2e", f"--junitxml={reports[0]}", *fast], cwd=REPO, env=env,
                       timeout=FAST_TIMEOUT)  # fmt: skip
    with _timed("shipped story", times):
        subprocess.run([*pytest, "-p", "no:randomly", f"--junitxml={reports[1]}", "tests/shipped"], cwd=REPO,
                       env=env, timeout=SHIPPED_TIMEOUT)  # fmt: skip
    installed = _freeze(uv, python, work)
    return {
        "airflow": installed["apache-airflow"],
        "features": feature_results([report for report in reports if report.exists()], untested),
        "seconds": times,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/compat.sh", description=__doc__.split("\n\n")[0])
    parser.add_argument("release", help="the Airflow release to install beside the wheel: 3.1.x or 3.2.x")
    parser.add_argument("--work", type=Path, help="where to build and install (default: a new temporary folder)")
    args = parser.parse_args(argv)
    if not RELEASE.match(args.release):
        parser.error(
            f"release: {args.release!r}; give an Airflow 3.1 or 3.2 release such as 3.1.8 (3.3 is the main suite)"
        )
    work = args.work or Path(tempfile.mkdtemp(prefix=f"tessera-compat-{args.release}-"))
    work.mkdir(parents=True, exist_ok=True)
    if work.resolve().is_relative_to(REPO):
        parser.error(f"--work: {work}; the tier installs outside the checkout, give a folder elsewhere")
    results = tier(args.release, work)
    (work / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    minor = ".".join(args.release.split(".")[:2])
    expected = json.loads(SUPPORT_JSON.read_text())["releases"].get(minor, {})
    print(json.dumps(results, indent=2), flush=True)
    if results["features"] != expected:
        differ = {row: (expected.get(row), ran) for row, ran in results["features"].items() if expected.get(row) != ran}
        fix = f"fix the failure, or update {SUPPORT_JSON.relative_to(REPO)} and support.md"
        print(f"compat: Airflow {results['airflow']}: the support table says / the tier ran: {differ}; {fix}",
              file=sys.stderr)  # fmt: skip
        return 1
    print(f"compat: Airflow {results['airflow']}: every row as the support table says ({work / 'results.json'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
