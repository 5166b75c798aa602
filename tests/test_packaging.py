"""The distribution: provider registration and configuration, and what the built wheel and sdist hold.

The provider description is checked against Airflow's own schema, and every option
the code reads from ``[tessera]`` is declared, with Airflow taking its default from
there. Then the sdist and the wheel are built (the wheel from the sdist, as ``make
dist`` does) and compared file by file with the source folders: a package or a page
file left out of the wheel fails here, in seconds. The wheel installed and run in a
fresh Airflow is the shipped-product tier, ``tests/shipped/``.
"""

from __future__ import annotations

import ast
import re
import sys
import tarfile
import zipfile
from importlib.metadata import distribution

import pytest

from tessera.plugin import provider_info

from .conftest import EXAMPLES, REPO
from .shipped.distribution import Built, build, in_wheel, run, source_files

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


# --- what the built distribution holds ----------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The sdist and the wheel built from it, with this venv's setuptools (seconds; ``make dist`` isolates)."""
    return build(tmp_path_factory.mktemp("packaging"), isolated=False)


def test_the_wheel_holds_every_file_of_the_source_folders_and_nothing_else(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as wheel:
        names = wheel.namelist()
        (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        declared = wheel.read(entry_points).decode()
    shipped = {name for name in names if not name.startswith("airflow_tessera-")}
    expected = {in_wheel(source) for source in source_files(built.source)}
    # Named, so a failure says which package or page file a user would be missing.
    assert sorted(expected - shipped) == [], "in the checkout but not in the wheel"
    assert sorted(shipped - expected) == [], "in the wheel but not in the checkout"
    assert "tessera/plugin/api/routes/plan.py" in shipped and "tessera/plugin/ui/index.html" in shipped
    for group in ("[airflow.plugins]", "[airflow.policy]", "[apache_airflow_provider]", "[console_scripts]"):
        assert group in declared, group


def test_the_sdist_holds_the_sources_the_examples_and_the_project_files(built: Built) -> None:
    with tarfile.open(built.sdist) as sdist:
        top, *_ = sdist.getnames()
        members = {name.partition("/")[2] for name in sdist.getnames()}
    wanted = source_files(built.source) | {"README.md", "SECURITY.md", "pyproject.toml", "setup.py"}
    wanted |= {path.name for path in REPO.glob("LICEN[CS]E*")}
    wanted |= {f"dags_examples/{path.name}" for path in EXAMPLES.iterdir() if path.suffix in (".py", ".sql")}
    assert sorted(wanted - members) == [], f"missing from {top}"
    assert not any(name.startswith(("tests/", ".venv/", ".demo/")) for name in members)


def test_the_build_warns_of_nothing_and_twine_accepts_the_metadata(built: Built) -> None:
    warnings = [line for line in built.output.splitlines() if re.search(r"warn|deprecat", line, re.IGNORECASE)]
    assert warnings == []
    run(sys.executable, "-m", "twine", "check", "--strict", built.wheel, built.sdist, cwd=built.source)
