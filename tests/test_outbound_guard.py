"""One outbound client: no module of tessera but ``operators/outbound.py`` opens a network connection itself.

Every request tessera makes (HTTP functions, webhooks, both CLIs' ``--api``) must pass through
:func:`tessera.operators.outbound.send`, which holds the rules (http/https only, the public-address
policy where it applies, no redirect, one deadline, a body cap). A module that imports an HTTP
client or opens a socket itself bypasses them all, whatever its feature; this scan of the source
(every module under ``timetables/``, ``operators/`` and ``plugin/``) fails naming it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import REPO

FOLDERS = ("timetables", "operators", "plugin")
THE_CLIENT = REPO / "operators" / "outbound.py"
CLIENT_MODULES = ("urllib.request", "http.client", "httpx", "httpcore", "requests", "aiohttp", "urllib3", "pycurl")
"""Modules that send requests: importing one (or anything from it) is a connection of one's own."""
SOCKET_OPENERS = ("create_connection", "socket", "socketpair", "fromfd")
"""``socket`` functions that open a connection (``getaddrinfo``, ``inet_aton`` only read addresses)."""


def _sources() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (REPO / folder).rglob("*.py"))


def _is_client(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in CLIENT_MODULES)


def bypasses(path: Path) -> list[str]:
    """Each place in ``path`` that imports an HTTP client or opens a socket, as ``file:line: what``."""
    where = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [f"{where}:{node.lineno}: import {a.name}" for a in node.names if _is_client(a.name)]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            module = node.module or ""
            names = [f"{module}.{alias.name}" for alias in node.names]
            if _is_client(module) or any(_is_client(name) for name in names):  # `from urllib import request`
                found.append(f"{where}:{node.lineno}: from {module} import {', '.join(a.name for a in node.names)}")
            elif module == "socket":
                found += [
                    f"{where}:{node.lineno}: from socket import {a.name}"
                    for a in node.names
                    if a.name in SOCKET_OPENERS
                ]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in SOCKET_OPENERS
            and isinstance(node.value, ast.Name)
            and node.value.id == "socket"
        ):
            found.append(f"{where}:{node.lineno}: socket.{node.attr}")
    return found


def test_no_module_but_the_outbound_client_opens_a_connection():
    found = [line for path in _sources() if path != THE_CLIENT for line in bypasses(path)]
    assert not found, (
        "these modules reach the network themselves; send the request through tessera.operators.outbound.send "
        "(its private_ok says whose URL it is), which applies the scheme, address, redirect, deadline and size "
        "rules:\n" + "\n".join(found)
    )


def test_the_scan_sees_the_one_client():
    """Not vacuous: the client itself is found by the same scan (it imports httpx), and the scan reads every folder."""
    assert any(": import httpx" in line for line in bypasses(THE_CLIENT)), bypasses(THE_CLIENT)
    assert {path.relative_to(REPO).parts[0] for path in _sources()} == set(FOLDERS)


def test_the_scan_finds_each_way_of_reaching_the_network(tmp_path):
    """Each form the rule names, planted in a module: the scan reports every one."""
    planted = tmp_path / "bypass.py"  # not in the repo: a test running beside this one scans plugin/
    planted.write_text(
        "import urllib.request\nimport http.client as hc\nfrom urllib import request\nimport httpx\n"
        "import requests\nfrom aiohttp import ClientSession\nimport socket\nfrom socket import create_connection\n"
        "socket.create_connection(('h', 80))\nsocket.getaddrinfo('h', 80)\n"
    )
    assert [line.split(": ", 1)[1] for line in bypasses(planted)] == [
        "import urllib.request",
        "import http.client",
        "from urllib import request",
        "import httpx",
        "import requests",
        "from aiohttp import ClientSession",
        "from socket import create_connection",
        "socket.create_connection",
    ]
