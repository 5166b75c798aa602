"""How hard the fuzz tests look: a fixed sample in every test run, a deep random search in ``make fuzz``.

``make test`` draws a fifth of the deep count, derandomized (CI must not fail one run in three
on a new example; the same examples run every time, so a change that breaks one is caught).
``make fuzz`` (``TESSERA_FUZZ=deep``) draws the whole count at random, to find what the fixed
sample does not: run it after changing a parser, a bound or an error message.
"""

from __future__ import annotations

import os

DEEP = os.environ.get("TESSERA_FUZZ", "").lower() == "deep"


def cases(deep: int, *, least: int = 10) -> int:
    """Examples per fuzz test: ``deep`` under ``make fuzz``, a fifth of it (at least ``least``) otherwise."""
    return deep if DEEP else max(least, deep // 5)
