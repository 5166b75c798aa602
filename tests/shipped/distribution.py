"""Build the distribution from a copy of the checkout, and install the built wheel into a new virtualenv.

Shared by the packaging tests (what the wheel and the sdist hold) and the shipped-product
tier (the wheel installed and run). The build is ``python -m build``, as ``make dist`` runs
it: the sdist first, then the wheel built FROM the sdist, so a file the sdist forgets is
missing from the wheel too. The fresh virtualenv gets the wheel (never the checkout) and
Airflow at this venv's exact versions, installed by uv from its cache: pip takes minutes
to install Airflow's 130 distributions, uv seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import distributions, version
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = {"timetables": "tessera/timetables", "operators": "tessera/operators", "plugin": "tessera/plugin"}
"""Each folder of the checkout and where its files land in the wheel."""
DISTRIBUTION = "airflow-tessera"
BIN = Path(sys.executable).parent  # unresolved: resolving would follow the python symlink out of the venv

# Left out of the copy the distribution is built from: local state, and what a build leaves behind.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", ".demo", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".pytest_cache",
    ".hypothesis", ".ruff_cache", "test-artifacts",
)  # fmt: skip


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    """Run ``command`` to success; its stdout and stderr together (a failure shows both)."""
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{command} failed ({done.returncode}):\n{done.stdout[-6000:]}"
    return done.stdout


def source_files(root: Path) -> set[str]:
    """The files of the three source folders under ``root``, as paths relative to ``root``."""
    found = set()
    for folder in SOURCE_FOLDERS:
        for path in (root / folder).rglob("*"):
            parts = path.relative_to(root).parts
            compiled = "__pycache__" in parts or path.suffix == ".pyc"
            if path.is_file() and not compiled and not path.name.startswith("."):
                found.add("/".join(parts))
    return found


def in_wheel(source: str) -> str:
    """Where a source file (``plugin/api/app.py``) lands in the wheel (``tessera/plugin/api/app.py``)."""
    folder, _, rest = source.partition("/")
    return f"{SOURCE_FOLDERS[folder]}/{rest}"


@dataclass(frozen=True)
class Built:
    source: Path
    """The copy of the checkout it was built from."""
    wheel: Path
    sdist: Path
    output: str
    """What the build printed."""


def build(root: Path, *, isolated: bool) -> Built:
    """The sdist and the wheel of a copy of the checkout, built under ``root``.

    ``isolated``: in a new build environment (uv installs the build requirements), as
    ``make dist`` does; else with this venv's setuptools, which is quicker.
    """
    root = root.absolute()
    source = root / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCES)
    dist = root / "dist"
    mode = ["--installer", "uv"] if isolated else ["--no-isolation"]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    # A set PYTHONDONTWRITEBYTECODE makes setuptools print "byte-compiling is disabled" warnings;
    # the wheel holds no compiled files either way.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    output = run(sys.executable, "-m", "build", *mode, "--outdir", dist, source, cwd=root, env=env)
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    return Built(source, wheel, sdist, output)


def constraints() -> str:
    """Every distribution of this venv at its exact version, except this project itself."""
    pins = {dist.metadata["Name"].lower(): dist.version for dist in distributions()}
    pins.pop(DISTRIBUTION, None)
    return "\n".join(f"{name}=={pinned}" for name, pinned in sorted(pins.items())) + "\n"


def fresh_venv(wheel: Path, venv: Path) -> Path:
    """A new virtualenv at ``venv`` holding ``wheel`` and Airflow at this venv's versions; its bin directory."""
    uv = BIN / "uv"
    assert uv.exists(), f"{uv} is missing: reinstall the test extra (make venv, or pip install -e '.[test]')"
    pins = venv.parent / "constraints.txt"
    pins.write_text(constraints())
    cwd = venv.parent
    run(uv, "venv", "--quiet", "--python", sys._base_executable, venv, cwd=cwd)  # type: ignore[attr-defined]
    python = venv / "bin" / "python"
    airflow = f"apache-airflow=={version('apache-airflow')}"
    run(uv, "pip", "install", "--quiet", "--python", python, wheel, airflow, "--constraint", pins, cwd=cwd)
    return venv / "bin"
