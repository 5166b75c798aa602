"""The documentation a user reads: the site builds without a warning, every example runs, every link lands.

The site is built as ``make docs`` builds it (warnings, broken links and references included, are
errors). Every ```` ```python ```` block of the site and the README is run; one followed by a
```` ```text ```` block must print exactly that text. A block that cannot run outside a deployment
says so on its first line (``# fragment: <why>``) and is only compiled.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import REPO

DOCS = REPO / "docs"
README = REPO / "README.md"
FRAGMENT = "# fragment:"
"""The first line of a block that is not meant to run (a DAG file needing a deployment, elided parts)."""
FENCE = re.compile(
    r"^(?P<indent>[ ]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ ]*$\n?(?P<after>\s*)", re.M | re.S
)
README_MAX_LINES = 160
"""The README is a front page (about 150 lines); the detail lives in the site."""


def _pages() -> list[Path]:
    return [README, *sorted(path for path in DOCS.rglob("*.md") if "_build" not in path.parts)]


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    code: str
    output: str | None  # the ```text block right after it, if any

    def __str__(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _unindent(text: str, indent: str) -> str:
    return "\n".join(line.removeprefix(indent) for line in text.splitlines()) + "\n"


def _examples() -> list[Example]:
    found = []
    for page in _pages():
        text = page.read_text()
        fences = list(FENCE.finditer(text))
        for fence, following in zip(fences, [*fences[1:], None]):
            if fence["info"].strip() != "python":
                continue
            adjacent = following is not None and following.start() == fence.end()
            output = None
            if adjacent and following["info"].strip() == "text":
                output = _unindent(following["body"], following["indent"])
            line = text.count("\n", 0, fence.start()) + 1
            found.append(Example(page, line, _unindent(fence["body"], fence["indent"]), output))
    return found


EXAMPLES = _examples()


def test_the_examples_are_found():
    """The seed example (README and front page) and the guides' examples, at least."""
    pages = {example.page.name for example in EXAMPLES}
    assert {"README.md", "index.md", "getting-started.md", "cron.md"} <= pages


@pytest.fixture(scope="module")
def airflow_configured() -> None:
    """Airflow's SDK logs a line to stdout when its configuration is first read; read it before any capture."""
    from tessera.operators._airflow import stats_and_conf

    assert stats_and_conf("task")[1] is not None


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_example_runs_and_prints_what_the_page_says(example: Example, airflow_configured: None):
    compiled = compile(example.code, str(example), "exec")  # a fragment must still be valid Python
    if example.code.startswith(FRAGMENT):
        assert example.output is None, f"{example}: a fragment is not run, so it cannot show an output"
        return
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compiled, {"__name__": f"docs_example_{example.line}"})  # the project's own documentation
    if example.output is not None:
        assert printed.getvalue().rstrip() == example.output.rstrip(), f"{example} prints something else"


def _slug(heading: str) -> str:
    """The anchor MyST gives a heading (``myst_heading_anchors``), as GitHub does."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(match[1]) for match in re.finditer(r"^#{1,6} (.+)$", page.read_text(), re.M)}


README_LINKS = re.findall(r"\]\((docs/[^)\s]*)\)", README.read_text())


def test_readme_links_into_the_site():
    assert len(README_LINKS) >= 10


@pytest.mark.parametrize("link", README_LINKS)
def test_readme_link_resolves(link: str):
    path, _, anchor = link.partition("#")
    target = REPO / path
    assert target.is_file() and target.suffix == ".md", f"README links to {link}: no such page"
    if anchor:
        assert anchor in _anchors(target), f"README links to {link}: {path} has no heading {anchor!r}"


def test_readme_is_a_front_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


@pytest.mark.parametrize("package", ["tessera.timetables", "tessera.operators"])
def test_the_api_reference_documents_every_public_name(package: str):
    """A name added to a package's ``__all__`` gets its reference entry, and the reference names nothing else."""
    public = set(importlib.import_module(package).__all__)
    page = (DOCS / "reference" / "api.md").read_text()
    documented = set(re.findall(rf"^\.\. auto(?:class|function):: {re.escape(package)}\.(\w+)$", page, re.M))
    assert sorted(public - documented) == [], f"public in {package} but not in docs/reference/api.md"
    assert sorted(documented - public) == [], f"in docs/reference/api.md but not public in {package}"


def test_site_builds_without_a_warning(tmp_path: Path):
    """As ``make docs`` (and CI, through ``make test``): a broken link, reference or docstring fails it."""
    command = [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-n", "-q", "-b", "html"]
    result = subprocess.run([*command, str(DOCS), str(tmp_path / "html")], capture_output=True, text=True, timeout=300)
    problems = [line for line in result.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    assert result.returncode == 0, "the site does not build cleanly:\n" + "\n".join(problems or [result.stderr])
    assert (tmp_path / "html" / "reference" / "rest.html").is_file()
