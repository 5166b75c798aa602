"""Which processes belong to one demo run, read from Linux's ``/proc``.

Two ways, because each misses some: the supervisor's process tree (but a process
whose parent died is re-parented to init and leaves the tree), and a marker in
the environment (but Airflow renames its workers and API server with
``setproctitle``, which overwrites the memory ``/proc/<pid>/environ`` shows).
A process is named by its pid and its start time, so a pid the kernel reuses
for an unrelated process is never mistaken for the demo's.
"""

from __future__ import annotations

import os
import signal

Process = tuple[int, int]
"""(pid, start time in clock ticks after boot)."""


def table() -> dict[int, tuple[int, int, str]] | None:
    """Every process as pid -> (parent pid, start time, state letter); None where there is no ``/proc``."""
    if not os.path.isdir("/proc"):
        return None
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                line = stat.read()
        except OSError:  # gone meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
        fields = line[line.rindex(")") + 2 :].split()
        found[int(entry.name)] = (int(fields[1]), int(fields[19]), fields[0])
    return found


def descendants(root: int, processes: dict[int, tuple[int, int, str]]) -> set[Process]:
    """The processes below ``root`` in the tree (not ``root`` itself)."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in processes.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.add((pid, processes[pid][1]))
        todo.extend(children.get(pid, ()))
    return found


def marked(variable: str, value: str, processes: dict[int, tuple[int, int, str]]) -> set[Process]:
    """The processes whose environment holds ``variable=value`` (readable ones: one's own user's)."""
    wanted = f"{variable}={value}".encode()
    found = set()
    for pid, (_, start, _) in processes.items():
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if wanted in environ.read().split(b"\0"):
                    found.add((pid, start))
        except OSError:
            continue
    return found


def running(known: set[Process], processes: dict[int, tuple[int, int, str]]) -> set[Process]:
    """Those of ``known`` still running: same pid and start time, and not a zombie waiting to be reaped."""
    alive = set()
    for pid, start in known:
        entry = processes.get(pid)
        if entry is not None and entry[1] == start and entry[2] != "Z":
            alive.add((pid, start))
    return alive


def name(pid: int) -> str:
    """What ``ps`` shows for the process, shortened: its (possibly retitled) command line."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().replace(b"\0", b" ").decode(errors="replace").split()
    except OSError:
        return str(pid)
    # "/venv/bin/python3 /venv/bin/airflow scheduler" reads better as "airflow scheduler".
    words = [os.path.basename(word) if "/" in word else word for word in words]
    if len(words) > 1 and words[0].startswith("python"):
        words = words[1:]
    return " ".join(words)[:60] or str(pid)


def waiting_in(pid: int) -> str:
    """Where ``pid``'s threads wait in the kernel (``/proc/<pid>/task/*/wchan``), counted: "2 pipe_read, 1 do_wait".

    Said of a process that outlived its stop signal: a reader (``pipe_read``), a lock
    (``futex_wait_queue``) or a child (``do_wait``) tells which of Airflow's waits held it.
    """
    counts: dict[str, int] = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return "gone"
    for task in sorted(tasks):
        try:
            with open(f"/proc/{pid}/task/{task}/wchan") as wchan:
                where = wchan.read().strip()
        except OSError:
            continue
        where = "running" if where in ("", "0") else where
        counts[where] = counts.get(where, 0) + 1
    return ", ".join(f"{count} {where}" for where, count in sorted(counts.items())) or "unknown"


_STOP_SIGNALS = (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def _caught(pid: int) -> int | None:
    """The signals ``pid`` has a handler for (the ``SigCgt`` mask of ``/proc/<pid>/status``); None if unknown."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return None


class ParentMake:
    """Notices that the ``make`` the demo runs under was told to stop, which make does not pass on.

    GNU make forwards SIGTERM to its recipe's process, but on SIGINT, SIGHUP or SIGQUIT it only
    waits for the recipe to end (a terminal sends those to the whole process group, so the recipe
    got them too): ``kill -INT <pid of make>`` would stop nothing. What make does first when
    such a signal arrives is set that signal back to its default action, so its handler is gone
    from ``/proc/<pid>/status``. A make that ignores the signal (started in the background by a
    script) never reacts to it, and neither can the demo.
    """

    def __init__(self) -> None:
        self.pid = os.getppid()
        try:
            with open(f"/proc/{self.pid}/comm") as comm:
                is_make = comm.read().strip() in ("make", "gmake")
        except OSError:
            is_make = False
        self.caught = _caught(self.pid) if is_make else None

    def stop_signal(self) -> int | None:
        """The stop signal make received since the demo started (SIGHUP if make is gone), else None."""
        if self.caught is None:
            return None
        if os.getppid() != self.pid:  # make was killed outright: nobody is left to stop the demo
            return signal.SIGHUP
        now = _caught(self.pid)
        for sig in _STOP_SIGNALS:
            bit = 1 << (sig - 1)
            if now is not None and self.caught & bit and not now & bit:
                return sig
        return None
