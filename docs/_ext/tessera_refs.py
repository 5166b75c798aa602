"""Docstrings' references to tessera's internal modules, shown as code instead of failing the build.

The API reference documents the public names only. A docstring may still point at the internal
module that holds a rule (``:mod:`tessera.timetables.partitions```); such a reference has no page
to link to, so it is rendered as plain code, but only when the name really exists: a reference to
a tessera name that does not import (a typo, a renamed module) stays a warning, which ``-W`` makes
an error, like every other broken reference.
"""

from __future__ import annotations

import importlib
from typing import Any

MAX_PARTS = 12
"""No dotted name in this project is deeper; a longer target is left unresolved."""


def _exists(dotted: str) -> bool:
    """Whether ``dotted`` names a tessera module or an attribute reachable from one."""
    parts = dotted.split(".")
    if parts[0] != "tessera" or len(parts) > MAX_PARTS:
        return False
    for split in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            if not hasattr(value, name):
                return False
            value = getattr(value, name)
        return True
    return False


def _resolve(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    if target.startswith("tessera."):
        return contnode if _exists(target) else None
    # A short name is looked up where the docstring lives: autodoc names the object in the node's
    # source ("…:docstring of tessera.operators.functions.http.HttpFunction.call"), and the name is
    # tried in each enclosing module or class, innermost first, then beside the directive's module.
    documented = str(node.source or "").rpartition("docstring of ")[2]
    scopes = documented.split(".") if documented.startswith("tessera.") else []
    module = node.get("py:module") or ""
    candidates = [".".join([*scopes[:end], target]) for end in range(len(scopes), 0, -1)]
    candidates += [f"{module}.{target}", f"{module.rpartition('.')[0]}.{target}"]
    return contnode if any(_exists(name) for name in candidates) else None


def setup(app: Any) -> dict[str, Any]:
    app.connect("missing-reference", _resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
