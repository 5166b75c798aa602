"""The distribution: provider registration and configuration, and the built wheel in a fresh Airflow.

The fast tests check the provider description against Airflow's own schema and
that every option the code reads from ``[tessera]`` is declared, with Airflow
taking its default from there. The end-to-end test builds the wheel and the sdist
(``python -m build``), lets ``twine check`` judge them, installs the BUILT WHEEL
(never the checkout) with ``apache-airflow`` at this venv's exact versions into a
new virtual environment, and asks that Airflow about it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib.metadata import distribution, version
from pathlib import Path
from typing import Any

import pytest

from tessera.plugin import provider_info

from .conftest import EXAMPLES, REPO

SOURCE_FOLDERS = ("timetables", "operators", "plugin")
ARGUMENT = r"([A-Za-z_][\w.]*|\"[^\"]*\")"  # a name (maybe dotted) or a string literal
CONF_READ = re.compile(rf"conf\.get\w*\(\s*{ARGUMENT}\s*,\s*{ARGUMENT}")


def _constants(tree: ast.Module) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.update({target.id: node.value.value for target in node.targets if isinstance(target, ast.Name)})
    return found


def _options_read_from_tessera_section() -> set[str]:
    """Every ``conf.get*(<section>, <option>)`` in the code whose section is ``tessera``.

    Arguments are string literals or module-level string constants (of the module
    itself or imported by name from a sibling module).
    """
    constants: dict[str, str] = {}
    sources = [path for folder in SOURCE_FOLDERS for path in sorted((REPO / folder).rglob("*.py"))]
    for path in sources:
        constants.update(_constants(ast.parse(path.read_text())))
    options: set[str] = set()
    for path in sources:
        for section, option in CONF_READ.findall(path.read_text()):
            names = [constants.get(arg.rpartition(".")[2], arg).strip('"') for arg in (section, option)]
            if names[0] == provider_info.SECTION:
                options.add(names[1])
    return options


def test_the_provider_description_satisfies_airflows_schema() -> None:
    from airflow._shared.providers_discovery.providers_discovery import _create_provider_info_schema_validator

    info = provider_info.get_provider_info()
    _create_provider_info_schema_validator().validate(info)
    assert info["package-name"] == distribution(provider_info.DISTRIBUTION).metadata["Name"]
    assert info["versions"] == [distribution(provider_info.DISTRIBUTION).version]
    assert "plugins" not in info  # the airflow.plugins entry point loads it; twice would be an import error


def test_every_option_the_code_reads_is_declared_with_description_type_default_and_example() -> None:
    read = _options_read_from_tessera_section()
    assert "max_concurrent_dispatches" in read  # the grep finds what it must
    declared = provider_info.get_provider_info()["config"]["tessera"]["options"]
    assert read <= set(declared), f"read from [tessera] but not declared: {sorted(read - set(declared))}"
    for name, option in declared.items():
        assert option["description"].strip() and option["example"] not in (None, ""), name
        assert isinstance(option["default"], str), name  # Airflow's parser stores strings
    assert (declared["max_concurrent_dispatches"]["type"], declared["max_concurrent_dispatches"]["default"]) == (
        "integer",
        "10",
    )
    assert (declared["allow_private_outbound"]["type"], declared["allow_private_outbound"]["default"]) == (
        "boolean",
        "False",
    )


def test_airflow_registers_the_provider_and_takes_the_sections_defaults_from_it() -> None:
    from airflow.configuration import conf
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert provider_info.DISTRIBUTION in manager.providers
    assert provider_info.SECTION in dict(manager.provider_configs)[provider_info.DISTRIBUTION]
    # No fallback given: the value can only come from the provider's declared default.
    assert conf.getint("tessera", "max_concurrent_dispatches") == 10
    assert conf.getboolean("tessera", "allow_private_outbound") is False


# --- the built wheel in a fresh Airflow -----------------------------------------------------------

# Left out of the copy the distribution is built from: local state, and what a build leaves behind.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", ".demo", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis",
    ".ruff_cache", "test-artifacts",
)  # fmt: skip
UI_FILES = sorted(path.name for path in (REPO / "plugin" / "ui").iterdir())


def _run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel and the sdist, built from a copy of the checkout (a build writes beside its sources)."""
    root = tmp_path_factory.mktemp("packaging")
    source = root / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCES)
    # Like `make dist`: the sdist first, then the wheel built FROM the sdist, so the sdist must be complete.
    _run(sys.executable, "-m", "build", "--outdir", root / "dist", source, cwd=root)
    (wheel,) = (root / "dist").glob("*.whl")
    (sdist,) = (root / "dist").glob("*.tar.gz")
    _run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist, cwd=root)
    return {"root": root, "wheel": wheel, "sdist": sdist}


@pytest.fixture(scope="module")
def fresh_airflow(built: dict[str, Path]) -> dict[str, Any]:
    """A new virtual environment holding the built wheel and this venv's Airflow, versions pinned."""
    root = built["root"]
    constraints = root / "constraints.txt"
    frozen = _run(sys.executable, "-m", "pip", "freeze", "--exclude-editable", cwd=root)
    # Every package at this venv's exact version: the same Airflow, and pip's cache serves most of it.
    constraints.write_text(
        "\n".join(line for line in frozen.splitlines() if not line.lower().startswith(provider_info.DISTRIBUTION))
    )
    venv = root / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=root)
    airflow_pin = f"apache-airflow=={version('apache-airflow')}"
    _run(venv / "bin" / "pip", "install", "--quiet", built["wheel"], airflow_pin, "-c", constraints, cwd=root)
    home = root / "airflow-home"
    home.mkdir()
    # An airflow.cfg without [tessera]: whatever Airflow says about that section comes from the provider.
    (home / "airflow.cfg").write_text("[core]\nload_examples = False\n")
    # Nothing of this test session's Airflow settings, and nothing that would put the checkout on sys.path.
    unrelated = ("PYTHONPATH", "VIRTUAL_ENV")
    keep = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW") and k not in unrelated}
    env = {
        **keep,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    }
    return {"venv": venv, "env": env, "cwd": home}


@pytest.mark.e2e
def test_the_wheel_and_sdist_carry_what_an_install_needs(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = wheel.namelist()
        (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        declared = wheel.read(entry_points).decode()
    assert {f"tessera/plugin/ui/{name}" for name in UI_FILES} <= set(names)
    assert "tessera/plugin/provider_info.py" in names and "tessera/timetables/_time/cron.py" in names
    assert not any(name.startswith(("tests/", "dags_examples/", "tessera/__init__")) for name in names)
    for group in ("[airflow.plugins]", "[airflow.policy]", "[apache_airflow_provider]", "[console_scripts]"):
        assert group in declared, group
    with tarfile.open(built["sdist"]) as sdist:
        top, *_ = sdist.getnames()
        members = {name.partition("/")[2] for name in sdist.getnames()}
    wanted = {"README.md", "SECURITY.md", "pyproject.toml", *(f"plugin/ui/{name}" for name in UI_FILES)}
    wanted |= {path.name for path in REPO.glob("LICEN[CS]E*")}
    assert wanted <= members, f"missing from {top}: {sorted(wanted - members)}"


@pytest.mark.e2e
def test_a_fresh_airflow_with_the_wheel_lists_the_plugin_provider_and_config_and_loads_the_examples(
    fresh_airflow: dict[str, Any],
) -> None:
    venv, env, cwd = fresh_airflow["venv"], fresh_airflow["env"], fresh_airflow["cwd"]

    def airflow(*args: str) -> str:
        return _run(venv / "bin" / "airflow", *args, cwd=cwd, env=env)

    plugins = json.loads(airflow("plugins", "--output", "json"))
    (plugin,) = [p for p in plugins if p["name"] == "tessera"]
    assert plugin["source"].startswith(f"{provider_info.DISTRIBUTION}==")
    assert "tessera.timetables.every.Every" in plugin["timetables"]

    providers = json.loads(airflow("providers", "list", "--output", "json"))
    assert [p["package_name"] for p in providers if p["package_name"] == provider_info.DISTRIBUTION]

    listed = airflow("config", "list", "--section", "tessera", "--include-descriptions", "--include-examples",
                     "--include-sources", "--show-values")  # fmt: skip
    comments = " ".join(line.lstrip("# ") for line in listed.splitlines() if line.startswith("#"))
    for name, option in provider_info.OPTIONS.items():
        assert f"{name} = {option['default']}" in listed, name
        assert " ".join(option["description"].split()) in comments, name
        assert f"Example: {name} = {option['example']}" in listed, name
    assert listed.count("Source: provider-metadata-fallback-defaults") == len(provider_info.OPTIONS)

    script = (
        "import json, sys, tessera.timetables\n"
        "from airflow.dag_processing.dagbag import DagBag\n"
        "bag = DagBag(sys.argv[1])\n"
        "print(json.dumps({'errors': bag.import_errors, 'files': sorted({d.fileloc for d in bag.dags.values()}),"
        " 'tessera': list(tessera.timetables.__path__)}))\n"
    )
    loaded = json.loads(_run(venv / "bin" / "python", "-c", script, EXAMPLES, cwd=cwd, env=env).splitlines()[-1])
    assert loaded["errors"] == {}
    assert {Path(f).name for f in loaded["files"]} == {p.name for p in EXAMPLES.glob("*.py")}
    assert all(Path(p).is_relative_to(venv) for p in loaded["tessera"]), "imported the checkout, not the wheel"
