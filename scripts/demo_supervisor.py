"""The demo's supervisor: starts everything the demo runs, and stops every one of those processes.

Started by ``scripts/demo.sh`` (``make demo``) as ``demo_supervisor.py <repo> <venv bin>``;
reads ``TESSERA_DEMO_HOME`` (default ``<repo>/.demo``) and ``TESSERA_DEMO_PORT`` (default 8080).
In order: the local sync service the HTTP example calls, the demo's ``airflow.cfg`` and
connections (``demo_config.py``), the metadata database, then ``airflow standalone``.

Why a supervisor: ``airflow standalone`` stops its components only on Ctrl-C in a terminal;
a SIGTERM kills it alone and leaves the scheduler, API server and triggerer running. Here
SIGINT, SIGTERM and SIGHUP all take the same path: standalone is asked to stop (SIGINT, so
it terminates its components), whatever is left after a grace period gets SIGTERM, then
SIGKILL; a second signal skips to SIGKILL. "Whatever is left" is every process of this
run (``demo_processes``: the supervisor's process tree, and the processes carrying this
run's ``TESSERA_DEMO_RUN`` marker), which includes the task processes Airflow puts in
process groups of their own; without ``/proc`` (macOS) the process groups started here are
signalled instead.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import demo_processes

STANDALONE_GRACE_SECONDS = 15.0
"""How long standalone may take to stop its components (a running task delays the scheduler)."""
TERM_GRACE_SECONDS = 10.0
KILL_WAIT_SECONDS = 5.0
MARKER = "TESSERA_DEMO_RUN"


class Stop(Exception):
    """A stop signal arrived."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise Stop(signum)


class Demo:
    """The processes of one demo run; :meth:`stop` ends all of them, whatever state start reached."""

    def __init__(self, repo: Path, bin_dir: Path, home: Path, port: int) -> None:
        self.repo, self.bin_dir, self.home, self.port = repo, bin_dir, home, port
        self.run_id = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.started: list[subprocess.Popen[bytes]] = []
        self.service: subprocess.Popen[bytes] | None = None
        self.standalone: subprocess.Popen[bytes] | None = None
        self.hurry = False
        self.known: set[demo_processes.Process] = set()
        """Every process of this run seen so far, kept so that one re-parented to init is still stopped."""
        # A shell's AIRFLOW__* variables would override the demo's airflow.cfg (another home, DB, DAGs folder).
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "_AIRFLOW"))}
        self.env.update(
            {MARKER: self.run_id, "AIRFLOW_HOME": str(home), "PYTHONUNBUFFERED": "1"},
            PATH=os.pathsep.join([str(bin_dir), self.env.get("PATH", "")]),  # standalone starts "airflow" by name
        )

    def spawn(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        # A session of its own: a terminal's Ctrl-C reaches only this supervisor, which stops things in order.
        process = subprocess.Popen(argv, env=self.env, cwd=self.home, start_new_session=True, **kwargs)
        self.started.append(process)
        return process

    def step(self, what: str, argv: list[str]) -> None:
        """Run a set-up command to completion; its output goes to ``demo-setup.log``, shown if it fails."""
        log_path = self.home / "demo-setup.log"
        with log_path.open("ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            code = self.spawn(argv, stdout=log, stderr=subprocess.STDOUT).wait()
        if code != 0:
            tail = log_path.read_text(errors="replace").splitlines()[-30:]
            raise SystemExit(f"demo: {what} failed (exit {code}); the end of {log_path}:\n" + "\n".join(tail))

    def start(self) -> None:
        python, airflow = str(self.bin_dir / "python"), str(self.bin_dir / "airflow")
        first_start = not (self.home / "airflow.db").exists()
        (self.home / "demo-setup.log").write_bytes(b"")  # this start's set-up only
        port_file = self.home / "sync_service.port"
        port_file.unlink(missing_ok=True)
        self.service = self.spawn([python, str(self.repo / "scripts" / "demo_sync_service.py"), str(port_file)])
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if self.service.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("demo: the local sync service (scripts/demo_sync_service.py) did not start")
            time.sleep(0.1)
        sync_port = port_file.read_text().strip()
        script = str(self.repo / "scripts" / "demo_config.py")
        self.step("writing airflow.cfg", [python, script, str(self.home), str(self.repo), str(self.port), sync_port])
        if first_start:
            print("demo: creating the metadata database (first start only)", flush=True)
        self.step("airflow db migrate", [airflow, "db", "migrate"])
        connections = str(self.home / "demo_connections.json")
        self.step("adding the connections", [airflow, "connections", "import", "--overwrite", connections])
        self.standalone = self.spawn([airflow, "standalone"])

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v2/monitor/health", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def wait(self, began: float) -> int:
        """Until standalone or the sync service exits on its own (their exit code); prints the banner once ready."""
        assert self.standalone is not None and self.service is not None
        shown = False
        while True:
            for process, name in ((self.standalone, "airflow standalone"), (self.service, "the sync service")):
                if process.poll() is not None:
                    print(f"demo: {name} exited with {process.returncode}; stopping the demo", flush=True)
                    return process.returncode or 1
            if not shown and self.healthy():
                shown = True
                self.banner(time.monotonic() - began)
            time.sleep(1)

    def banner(self, elapsed: float) -> None:
        passwords = self.home / "simple_auth_manager_passwords.json.generated"
        try:
            login = f"admin / {json.loads(passwords.read_text())['admin']}"
        except (OSError, ValueError, KeyError, TypeError):
            login = "admin, with the password Airflow printed above"
        home = "" if self.home == self.repo / ".demo" else f"TESSERA_DEMO_HOME={self.home} "
        print(
            f"\ntessera demo ready after {elapsed:.0f} s\n"
            f"  UI     http://localhost:{self.port}   login {login} (kept in {passwords})\n"
            f"  CLI    {home}scripts/demo-airflow dags test tessera_cursor_digest -c '{{\"dry_run\": true}}'\n"
            f"  stop   Ctrl-C, or kill {os.getpid()}\n",
            flush=True,
        )

    def stop(self) -> None:
        """Stop every process of this run: standalone's own shutdown, then SIGTERM, then SIGKILL."""

        def hurry(signum: int, frame: FrameType | None) -> None:
            self.hurry = True

        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, hurry)
        standalone = self.standalone
        if standalone is not None and standalone.poll() is None:
            print("demo: stopping (Ctrl-C again to kill at once)", flush=True)
            standalone.send_signal(signal.SIGINT)  # what Ctrl-C does: it terminates each component
            if self.service is not None:
                self.service.terminate()
            self._until(lambda: standalone.poll() is not None, STANDALONE_GRACE_SECONDS)
        if self.remaining() and not self.hurry:
            self.send(signal.SIGTERM)
            self._until(lambda: not self.remaining(), TERM_GRACE_SECONDS)
        if self.remaining():
            self.send(signal.SIGKILL)
            self._until(lambda: not self.remaining(), KILL_WAIT_SECONDS, hurried=False)

    def send(self, sig: signal.Signals) -> None:
        left = self.running()
        names = ", ".join(sorted({demo_processes.name(pid) for pid, _ in left}))
        print(f"demo: {sig.name} to what is still running: {names or 'the process groups started'}", flush=True)
        for process in self.started:
            try:
                os.killpg(process.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        for pid, _ in left:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def running(self) -> set[demo_processes.Process]:
        """This run's processes still running (on Linux; elsewhere the empty set)."""
        for process in self.started:
            process.poll()  # reap: a zombie child is not a running process
        processes = demo_processes.table()
        if processes is None:
            return set()
        self.known |= demo_processes.descendants(os.getpid(), processes)
        self.known |= demo_processes.marked(MARKER, self.run_id, processes)
        return demo_processes.running(self.known, processes)

    def remaining(self) -> bool:
        if self.running():
            return True
        # Without /proc: the process groups started here (a task's own group is then missed).
        return any(process.returncode is None for process in self.started)

    def _until(self, done: Callable[[], bool], seconds: float, *, hurried: bool = True) -> None:
        """Wait until ``done()``, at most ``seconds``; a second stop signal ends the wait if ``hurried``."""
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline and not (hurried and self.hurry):
            time.sleep(0.2)


def port_from_environment() -> int:
    raw = os.environ.get("TESSERA_DEMO_PORT", "8080")
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 65535):
        raise SystemExit(f"TESSERA_DEMO_PORT: {raw!r}; give a TCP port number from 1 to 65535, e.g. 8081")
    port = int(raw)
    # Found now, not as an API server that fails to start while the rest runs on. Bound as the API
    # server binds (demo_config.py): loopback, reusing an address in TIME_WAIT.
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            taken = f"TESSERA_DEMO_PORT: {port} is taken; choose another, e.g. TESSERA_DEMO_PORT={port + 1}"
            raise SystemExit(taken) from None
    return port


def main(repo: Path, bin_dir: Path) -> int:
    began = time.monotonic()
    home = Path(os.environ.get("TESSERA_DEMO_HOME") or repo / ".demo").absolute()
    demo = Demo(repo, bin_dir, home, port_from_environment())
    home.mkdir(parents=True, exist_ok=True)
    print(f"tessera demo: AIRFLOW_HOME {home}, UI port {demo.port}; stop with Ctrl-C or kill {os.getpid()}", flush=True)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_stop)
    try:
        demo.start()
        return demo.wait(began)
    except Stop as stop:
        return 128 + stop.signum
    finally:
        demo.stop()
        print("demo: stopped", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: demo_supervisor.py <repo> <venv bin>")
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
