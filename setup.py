"""Which packages the distribution holds; the metadata is in pyproject.toml.

The repository's three top-level folders are installed under other names
(``timetables/`` is ``tessera.timetables``, and so on; ``tessera`` itself is a
namespace package), which setuptools' ``packages.find`` in pyproject.toml cannot
express. So the list is computed here: every folder below the three, Python or
not (``plugin/ui`` holds the Schedules page), is a package of the distribution,
and every file in it except compiled Python goes along. A hand-written list once
left out ``tessera.plugin.api.routes``: the wheel then served no REST API and no
page. ``tests/test_packaging.py`` compares a built wheel with the source tree.
"""

from __future__ import annotations

from setuptools import find_namespace_packages, setup

FOLDERS = {"tessera.timetables": "timetables", "tessera.operators": "operators", "tessera.plugin": "plugin"}
"""Each installed package and the repository folder it is built from."""


def packages() -> list[str]:
    found = []
    for package, folder in FOLDERS.items():
        below = find_namespace_packages(folder, exclude=["__pycache__", "*.__pycache__"])
        found += [package, *(f"{package}.{name}" for name in below)]
    return sorted(found)


setup(
    package_dir=FOLDERS,
    packages=packages(),
    # Every file of every package ("*" skips dot-files), not only *.py: the page's HTML, JS, CSS and icon.
    package_data={"": ["*"]},
    exclude_package_data={"": ["*.pyc", "*.pyo"]},
)
