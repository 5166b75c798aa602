"""Sphinx configuration of the tessera documentation (``make docs``; ``tests/test_docs.py`` builds it too).

Pages are Markdown (MyST). The API reference is autodoc of the public names, the CLI reference is
sphinx-argparse over the real ``tessera`` parser, and the REST reference is rendered from the app's own
OpenAPI document when the site is built (``_ext/openapi_page.py``), so none of the three can drift
from the code.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "_ext"))
# Importing the operators and the API imports Airflow, which creates its home and settings on first
# import: a throwaway home keeps a docs build from touching ~/airflow (a user's own AIRFLOW_HOME wins).
if "AIRFLOW_HOME" not in os.environ:
    os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="tessera-docs-airflow-")
    atexit.register(shutil.rmtree, os.environ["AIRFLOW_HOME"], True)
# The build prints only what needs fixing: not Airflow's start-up notes, nor a deprecation inside
# FastAPI's test client, which the API's modules import.
os.environ.setdefault("AIRFLOW__LOGGING__LOGGING_LEVEL", "WARNING")
warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")

project = "airflow-tessera"
author = "The airflow-tessera authors"
copyright = "the airflow-tessera authors; Apache License 2.0"
release = version = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinxarg.ext",
    "openapi_page",
    "tessera_refs",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_ext"]
root_doc = "index"

# `[text](page.md#a-heading)` links to any heading down to ###, so a guide can point into another.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# A reference to a name no page documents is a warning, and `-W` makes it an error. The offline build
# has no intersphinx inventories (CI reaches no documentation host), so the types of other projects in
# signatures (datetime, Airflow, pendulum, typing) are the one family of names left unresolved on purpose.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(datetime|typing|collections|pendulum|airflow|re|json|pathlib|argparse|enum|abc)(\..*)?"),
    (r"py:.*", r"(Any|Callable|Mapping|Sequence|Iterable|Iterator|Literal|Self|TextIO|NoneType)"),
    # Airflow's timetable protocol types, named unqualified in the methods tessera implements for it.
    (r"py:.*", r"(TimeRestriction|DagRunInfo|DataInterval)"),
]

autodoc_member_order = "bysource"
# The docstrings say what each parameter takes in words; the annotations name internal types
# (Zone, WallTime, TypedDicts of options) that are no part of the public API and have no page.
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "show-inheritance": False}

# A block that names no language (a usage line, a folder tree) is shown as plain text, not as Python.
highlight_language = "text"

html_theme = "furo"
html_title = "airflow-tessera"
html_static_path: list[str] = []
html_show_sourcelink = False
