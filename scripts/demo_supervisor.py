"""The demo's supervisor: starts every process the demo runs, in order, and stops every one of them.

Started by ``scripts/demo.sh`` (``make demo``) as ``demo_supervisor.py <repo> <venv bin>``;
reads ``TESSERA_DEMO_HOME`` (default ``<repo>/.demo``), ``TESSERA_DEMO_PORT`` (default 8080)
and ``TESSERA_DEMO_DAGS`` (default ``<repo>/dags_examples``). In order: the local sync service
the HTTP example calls, the demo's ``airflow.cfg`` and connections (``demo_config.py``), the
metadata database, the API server and dag-processor, and once the API server answers, the
scheduler and triggerer. Each component writes to its own file in ``<home>/logs/``; the
terminal shows only what the demo says, with the ready banner last, so it stays on screen.
A component that exits on its own is started again, at most three times, and the banner is
shown again below the news.

Why not ``airflow standalone``: it starts all four at once, and a task the scheduler queued
before the API server listened failed at once (``Connection refused`` from its worker): red
runs in the demo's first minute. And it stops its components only on Ctrl-C in a terminal;
a SIGTERM killed it alone and left the rest running.

Here SIGINT, SIGTERM and SIGHUP take one path, and so does the same signal sent to the
``make`` the demo runs under (:class:`demo_processes.ParentMake`): the scheduler, triggerer,
dag-processor and sync service get SIGTERM (the scheduler lets running tasks finish, which
needs the API server), then the API server and anything else left of this run, then SIGKILL
for whatever outlived both grace periods, named; a second signal skips to SIGKILL.
"Everything left" is ``demo_processes``: the process tree and this run's ``TESSERA_DEMO_RUN``
marker, which include the task processes Airflow puts in process groups of their own;
without ``/proc`` (macOS) the process groups started here.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import demo_processes
from demo_config import port_from_environment

SERVICES_GRACE_SECONDS = 30.0
"""How long the scheduler may take to stop: it waits for the tasks already handed to its workers."""
API_GRACE_SECONDS = 25.0
"""How long the API server may take: longer than its own graceful shutdown (``[api] worker_timeout``)."""
KILL_WAIT_SECONDS = 5.0
STOP_SECONDS = SERVICES_GRACE_SECONDS + API_GRACE_SECONDS + KILL_WAIT_SECONDS
"""The longest a stop takes; the README promises "within a minute"."""
RESTARTS = 3
"""How often one Airflow component that exits on its own is started again before the demo gives up."""
MARKER = "TESSERA_DEMO_RUN"


class Stop(Exception):
    """A stop signal arrived (for this process, or for the make it runs under)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise Stop(signum)


def say(text: str) -> None:
    """Show ``text`` in the terminal (the components write to their log files)."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except OSError:  # stdout closed: keep running
        pass


class Demo:
    """The processes of one demo run; :meth:`stop` ends all of them, whatever state start reached."""

    def __init__(self, repo: Path, bin_dir: Path, home: Path, port: int) -> None:
        self.repo, self.bin_dir, self.home, self.port = repo, bin_dir, home, port
        self.logs = home / "logs"
        self.run_id = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.components: dict[str, subprocess.Popen[bytes]] = {}
        """The long-running processes by name: the sync service and Airflow's components."""
        self.commands: dict[str, list[str]] = {}
        self.restarts: dict[str, int] = {}
        self.started: list[subprocess.Popen[bytes]] = []
        self.hurry = False
        self.make = demo_processes.ParentMake()
        self.known: set[demo_processes.Process] = set()
        """Every process of this run seen so far, kept so that one re-parented to init is still stopped."""
        # A shell's AIRFLOW__* variables would override the demo's airflow.cfg (another home, DB, DAGs folder).
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "_AIRFLOW"))}
        self.env.update({MARKER: self.run_id, "AIRFLOW_HOME": str(home), "PYTHONUNBUFFERED": "1"})
        self.env["PATH"] = os.pathsep.join([str(bin_dir), self.env.get("PATH", "")])

    def spawn(self, argv: list[str], log_name: str) -> subprocess.Popen[bytes]:
        # A session of its own: a terminal's Ctrl-C reaches only this supervisor, which stops things in order.
        with (self.logs / log_name).open("ab") as log:
            process = subprocess.Popen(
                argv, env=self.env, cwd=self.home, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.started.append(process)
        return process

    def component(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        process = self.spawn(argv, f"{name}.log")
        self.components[name] = process
        self.commands[name] = argv
        return process

    def watch(self) -> None:
        """Raise :class:`Stop` if the make this demo runs under was told to stop."""
        signum = self.make.stop_signal()
        if signum is not None:
            raise Stop(signum)

    def step(self, what: str, argv: list[str]) -> None:
        """Run a set-up command to completion; its output goes to ``logs/setup.log``, shown if it fails."""
        log_path = self.logs / "setup.log"
        with log_path.open("ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
        process = self.spawn(argv, "setup.log")
        while process.poll() is None:
            self.watch()
            time.sleep(0.2)
        if process.returncode != 0:
            tail = log_path.read_text(errors="replace").splitlines()[-30:]
            code = process.returncode
            raise SystemExit(f"demo: {what} failed (exit {code}); the end of {log_path}:\n" + "\n".join(tail))

    def start(self) -> None:
        python, airflow = str(self.bin_dir / "python"), str(self.bin_dir / "airflow")
        first_start = not (self.home / "airflow.db").exists()
        (self.logs / "setup.log").write_bytes(b"")  # this start's set-up only
        port_file = self.home / "sync_service.port"
        port_file.unlink(missing_ok=True)
        service_script = str(self.repo / "scripts" / "demo_sync_service.py")
        service = self.component("sync-service", [python, service_script, str(port_file)])
        deadline = time.monotonic() + 30
        while not port_file.exists():
            self.watch()
            if service.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("demo: the local sync service (scripts/demo_sync_service.py) did not start")
            time.sleep(0.1)
        script = str(self.repo / "scripts" / "demo_config.py")
        sync_port = port_file.read_text().strip()
        self.step("writing airflow.cfg", [python, script, str(self.home), str(self.repo), str(self.port), sync_port])
        say("creating the metadata database (first start only)" if first_start else "checking the metadata database")
        self.step("airflow db migrate", [airflow, "db", "migrate"])
        connections = str(self.home / "demo_connections.json")
        self.step("adding the connections", [airflow, "connections", "import", "--overwrite", connections])
        say("starting Airflow: the API server and dag-processor, then the scheduler and triggerer")
        self.component("api-server", [airflow, "api-server"])
        self.component("dag-processor", [airflow, "dag-processor"])
        # A worker whose task starts before the API server listens fails that task at once.
        while not self.healthy():
            self.watch()
            self.check_alive()
            time.sleep(0.5)
        self.component("scheduler", [airflow, "scheduler"])
        self.component("triggerer", [airflow, "triggerer"])

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v2/monitor/health", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def check_alive(self, *, restart: bool = False) -> bool:
        """Raise SystemExit if a component exited; with ``restart``, start an Airflow component again first.

        A scheduler can die of one bad moment (on SQLite, a CLI backfill that fails half-way
        removes runs the scheduler is creating task instances for); a deployment's service
        manager would start it again, and so does the demo, a few times. The sync service
        cannot be restarted: its connection names the port it had. Returns whether it restarted one.
        """
        restarted = False
        for name, process in list(self.components.items()):
            if process.poll() is None:
                continue
            done = self.restarts.get(name, 0)
            log = self.logs / f"{name}.log"
            if not restart or name == "sync-service" or done >= RESTARTS:
                raise SystemExit(f"demo: {name} exited with {process.returncode} (see {log}); stopping the demo")
            self.restarts[name] = done + 1
            say(f"{name} exited with {process.returncode} (see {log}); starting it again ({done + 1} of {RESTARTS})")
            self.component(name, self.commands[name])
            restarted = True
        return restarted

    def banner(self, elapsed: float | None = None) -> None:
        passwords = self.home / "simple_auth_manager_passwords.json.generated"
        try:
            password = json.loads(passwords.read_text())["admin"]
        except (OSError, ValueError, KeyError, TypeError):
            password = "(not written yet)"
        home = "" if self.home == self.repo / ".demo" else f"TESSERA_DEMO_HOME={self.home} "
        tessera = self.bin_dir / "tessera"
        if tessera.is_relative_to(self.repo):
            tessera = tessera.relative_to(self.repo)
        ready = f"tessera demo ready after {elapsed:.0f} s" if elapsed is not None else "tessera demo running"
        say(
            f"\n{ready}\n"
            f"  UI      http://localhost:{self.port}   login admin / {password}\n"
            f"          (the password is kept in {passwords})\n"
            f"  CLI     {home}scripts/demo-airflow dags list-runs tessera_cron_every_5m\n"
            f'          {tessera} plan --api http://localhost:{self.port} --token "$({home}scripts/demo-token)"\n'
            f"  logs    {self.logs}/<component>.log\n"
            f"  stop    Ctrl-C, or kill {os.getpid()} (everything stops within a minute)\n"
        )

    def stop(self) -> None:
        """Stop every process of this run: the components' own shutdown, then SIGTERM, then SIGKILL."""

        def hurry(signum: int, frame: FrameType | None) -> None:
            self.hurry = True

        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, hurry)
        first = [p for name, p in self.components.items() if name != "api-server" and p.poll() is None]
        if first:
            say("stopping the scheduler, triggerer and dag-processor (Ctrl-C again to kill at once)")
            for process in first:
                process.terminate()
            self._until(lambda: all(process.poll() is not None for process in first), SERVICES_GRACE_SECONDS)
        if self.remaining() and not self.hurry:
            if any(process.poll() is None for process in first):  # one outlived its grace: say what held each
                for pid, _ in sorted(self.running()):
                    waits = demo_processes.waiting_in(pid)
                    say(f"  still running: {demo_processes.name(pid)} (pid {pid}; waiting: {waits})")
            self.send(signal.SIGTERM)
            self._until(lambda: not self.remaining(), API_GRACE_SECONDS)
        if self.remaining():
            self.send(signal.SIGKILL)
            self._until(lambda: not self.remaining(), KILL_WAIT_SECONDS, hurried=False)

    def send(self, sig: signal.Signals) -> None:
        left = self.running()
        names = ", ".join(sorted({demo_processes.name(pid) for pid, _ in left}))
        say(f"{sig.name} to {names or 'the process groups started'}")
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


def main(repo: Path, bin_dir: Path) -> int:
    began = time.monotonic()
    home = Path(os.environ.get("TESSERA_DEMO_HOME") or repo / ".demo").absolute()
    demo = Demo(repo, bin_dir, home, port_from_environment())
    demo.logs.mkdir(parents=True, exist_ok=True)
    say(f"tessera demo in {home}, UI port {demo.port}; logs in {demo.logs}; stop with Ctrl-C or kill {os.getpid()}")
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_stop)
    try:
        demo.start()
        demo.banner(time.monotonic() - began)
        while True:
            if demo.check_alive(restart=True):
                demo.banner()  # below the news, so the way in and out stays on screen
            demo.watch()
            time.sleep(1)
    except Stop as stop:
        return 128 + stop.signum
    finally:
        demo.stop()
        say("stopped")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: demo_supervisor.py <repo> <venv bin>")
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
