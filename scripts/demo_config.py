"""Write the demo's settings into its own ``airflow.cfg``, and the connections its example DAGs use.

The settings live in the demo's AIRFLOW_HOME, not in the environment of one
script, so every ``airflow`` command run against that home (the CLI recipe
``scripts/demo-airflow dags trigger ...``, a backfill, ``dags list-runs``) sees the
same DAGs folder, database and options as the running demo. A new home gets
Airflow's own default file first (with its generated secrets); then, at every
start, the options below are set in place: the rest of the file, comments and
any option a user changed, is kept.

Usage: ``demo_config.py <home> <repo> <api port> <sync service port>``, with
AIRFLOW_HOME set to ``<home>``. Writes ``<home>/airflow.cfg`` and
``<home>/demo_connections.json`` (for ``airflow connections import``).
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
from pathlib import Path

PARALLELISM = 4
"""Task slots, and so LocalExecutor worker processes: with the fork start method Airflow 3.3
forks ``[core] parallelism`` workers when the scheduler starts (32 idle processes by default).
Four keep the twenty example DAGs' short tasks flowing on a laptop."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_from_environment() -> int:
    """``TESSERA_DEMO_PORT`` (default 8080), checked to be free where the API server will bind it."""
    raw = os.environ.get("TESSERA_DEMO_PORT", "8080")
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 65535):
        raise SystemExit(f"TESSERA_DEMO_PORT: {raw!r}; give a TCP port number from 1 to 65535, e.g. 8081")
    port = int(raw)
    # Found now, not as an API server that fails while the rest starts. Bound as the API server binds it
    # (loopback, see settings), reusing an address in TIME_WAIT.
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            taken = f"TESSERA_DEMO_PORT: {port} is taken; choose another, e.g. TESSERA_DEMO_PORT={port + 1}"
            raise SystemExit(taken) from None
    return port


DAG_REFRESH_SECONDS = 10
"""How often the dag-processor looks for new files in the DAGs folder (Airflow's default: 300 s), so a
DAG file a user adds shows in the demo within half a minute."""
API_SHUTDOWN_SECONDS = 15
"""``[api] worker_timeout``: how long the API server lets open requests finish when told to stop
(Airflow's default, 120 s, outlasts the demo's stop); it is also the idle keep-alive of a connection."""


def dags_folder(repo: Path) -> Path:
    """``TESSERA_DEMO_DAGS``, default ``<repo>/dags_examples``: the DAGs folder the demo runs."""
    return Path(os.environ.get("TESSERA_DEMO_DAGS") or repo / "dags_examples").absolute()


def settings(home: Path, repo: Path, api_port: int) -> dict[str, dict[str, str]]:
    """The options the demo owns, by section."""
    return {
        "core": {
            "dags_folder": str(dags_folder(repo)),
            "load_examples": "False",
            # The examples start unpaused (all but a declared schedule marked INACTIVE, which is
            # created paused), so the UI shows real tessera runs within minutes.
            "dags_are_paused_at_creation": "False",
            "executor": "LocalExecutor",
            "parallelism": str(PARALLELISM),
            # Workers find the Execution API here; Airflow's default assumes port 8080.
            "execution_api_server_url": f"http://127.0.0.1:{api_port}/execution/",
        },
        "database": {
            "sql_alchemy_conn": f"sqlite:///{home / 'airflow.db'}",
            # SQLite has one writer: every process waits up to a minute for the write lock instead of
            # sqlite3's 5 s, after which an unpause in the UI answered 500 while others were writing.
            "sql_alchemy_connect_args": "tessera.plugin.sqlite_settings.CONNECT_ARGS",
            "sql_alchemy_connect_args_async": "tessera.plugin.sqlite_settings.ASYNC_CONNECT_ARGS",
        },
        # Loopback only: the demo's admin password sits in a plain file and is printed at start.
        "api": {"host": "127.0.0.1", "port": str(api_port), "worker_timeout": str(API_SHUTDOWN_SECONDS)},
        "dag_processor": {"refresh_interval": str(DAG_REFRESH_SECONDS)},
        # A worker waits for the API server longer than the API server waits for SQLite's lock.
        "workers": {"execution_api_timeout": "90"},
        # The scheduler and the triggerer serve task logs on fixed ports by default (8793, 8794);
        # a second Airflow on the machine (another demo, a test run) would hold them.
        "logging": {"worker_log_server_port": str(free_port()), "trigger_log_server_port": str(free_port())},
        # The HTTP example's service is the demo's own, on 127.0.0.1, which tessera refuses by default.
        "tessera": {"allow_private_outbound": "True"},
    }


def connections(home: Path, sync_port: int) -> dict[str, dict[str, object]]:
    """The example DAGs' connections, in ``airflow connections import`` form."""
    return {
        "tessera_demo_sqlite": {"conn_type": "sqlite", "host": str(home / "dashboard.db")},
        "tessera_sync_service": {"conn_type": "http", "host": "127.0.0.1", "port": sync_port, "schema": "http"},
    }


_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")


def set_option(lines: list[str], section: str, key: str, value: str) -> list[str]:
    """``lines`` of an INI file with ``key = value`` in ``section``.

    An existing ``key = ...`` line is replaced, else the commented-out default Airflow
    writes (``# key = ``) is, else the option goes right under the section header; a
    missing section is appended.
    """
    headers = [i for i, line in enumerate(lines) if _SECTION.match(line)]
    start = next((i for i in headers if _SECTION.match(lines[i]).group(1) == section), None)  # type: ignore[union-attr]
    if start is None:
        return [*lines, "", f"[{section}]", f"{key} = {value}"]
    end = next((i for i in headers if i > start), len(lines))
    for pattern in (rf"^\s*{re.escape(key)}\s*=", rf"^#\s*{re.escape(key)}\s*="):
        found = next((i for i in range(start + 1, end) if re.match(pattern, lines[i])), None)
        if found is not None:
            return [*lines[:found], f"{key} = {value}", *lines[found + 1 :]]
    return [*lines[: start + 1], f"{key} = {value}", *lines[start + 1 :]]


def write_config(path: Path, wanted: dict[str, dict[str, str]]) -> None:
    lines = path.read_text().splitlines()
    for section, options in wanted.items():
        for key, value in options.items():
            lines = set_option(lines, section, key, value)
    path.write_text("\n".join(lines) + "\n")


def main(home: Path, repo: Path, api_port: int, sync_port: int) -> None:
    # Airflow's own first-run file: every option documented, fernet key and JWT secret generated.
    from airflow.configuration import AIRFLOW_CONFIG, write_default_airflow_configuration_if_needed

    write_default_airflow_configuration_if_needed()
    write_config(Path(AIRFLOW_CONFIG), settings(home, repo, api_port))
    (home / "demo_connections.json").write_text(json.dumps(connections(home, sync_port), indent=2) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: demo_config.py <home> <repo> <api port> <sync service port>")
    main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
