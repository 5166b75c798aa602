"""The "why" fault corpus, driven on a real deployment: each fault injected at a known instant, then asked about.

Everything the answers read is written by the deployment's own processes: runs and skips by
the scheduler (and its admission listener), pauses and triggers through Airflow's REST API
and CLI (which write the audit log), parse states by the dag-processor (tessera's
``ParseWatch``), backfills by ``POST /api/v2/backfills`` and the scheduler. Nothing is inserted
into the database by the test. Each step records the instants it needs; each answer is the
deployment's own ``GET /tessera/api/v1/dags/{dag_id}/why``, asked as a viewer.

A step that fails keeps its error for the causes it feeds, so one broken step fails only
those tests, not the whole corpus.
"""

from __future__ import annotations

import datetime
import json
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .harness import AirflowHome, StoredRun

UTC = datetime.timezone.utc
WAIT = 300
ATTEMPTS = 10
"""How often a write is asked again while SQLite's single writer is busy (Airflow refuses, not waits)."""


def now() -> datetime.datetime:
    return datetime.datetime.now(UTC)


def iso(moment: datetime.datetime) -> str:
    return moment.astimezone(UTC).isoformat()


@dataclass
class Corpus:
    home: AirflowHome
    base: str
    answers: dict[str, Any] = field(default_factory=dict)
    """Per cause: the API's answer (a dict), or the error of the step that should have produced it."""
    facts: dict[str, Any] = field(default_factory=dict)
    """What the steps observed (instants, run ids), for the assertions."""
    _tokens: dict[str, str] = field(default_factory=dict)
    _processes: threading.Lock = field(default_factory=threading.Lock)
    """Held while a process is checked, started or stopped: the lanes of :meth:`lanes` share the deployment."""

    # -- the deployment's APIs ------------------------------------------------------------------

    def call(self, method: str, path: str, body: Any = None, *, user: str | None = "admin") -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if user is not None:
            headers["Authorization"] = f"Bearer {self._tokens.get(user) or self._token(user)}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()[:2000]
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:  # not listening yet
            return 0, repr(error)

    def _token(self, user: str) -> str:
        data = json.dumps({"username": user, "password": f"{user}-pw"}).encode()
        request = urllib.request.Request(
            self.base + "/auth/token", data=data, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            self._tokens[user] = json.loads(response.read())["access_token"]
        return self._tokens[user]

    def why(self, dag_id: str, at: datetime.datetime | None = None) -> dict:
        query = "" if at is None else "?" + urllib.parse.urlencode({"at": iso(at)})
        status, body = self.call("GET", f"/tessera/api/v1/dags/{dag_id}/why{query}", user="viewer")
        assert status == 200, f"why {dag_id} at {at}: {status} {body}"
        return body

    def set_paused(self, dag_id: str, paused: bool) -> datetime.datetime:
        """Pause or unpause through the REST API (the UI's toggle), which writes the audit log."""
        self.settled("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": paused})
        return now()

    def settled(self, method: str, path: str, body: Any) -> Any:
        """A write asked again while the database refuses it for being busy (SQLite's one writer: 500, 503)."""
        for _ in range(ATTEMPTS):
            status, answer = self.call(method, path, body)
            if status not in (500, 503):
                break
            time.sleep(3)
        assert status == 200, f"{method} {path}: {status} {answer}"
        return answer

    def trigger(self, dag_id: str) -> str:
        return self.settled("POST", f"/api/v2/dags/{dag_id}/dagRuns", {"logical_date": None})["dag_run_id"]

    def backfill(self, dag_id: str, start: str, end: str) -> int:
        body = {"dag_id": dag_id, "from_date": start, "to_date": end, "max_active_runs": 1}
        return self.settled("POST", "/api/v2/backfills", body)["id"]

    # -- the metadata DB, read only ---------------------------------------------------------------

    def runs(self, dag_id: str) -> list[StoredRun]:
        return self.home.runs(dag_id)

    def run(self, dag_id: str, run_id: str) -> StoredRun:
        return next(run for run in self.runs(dag_id) if run.run_id == run_id)

    def started(self, dag_id: str, run_id: str) -> datetime.datetime | None:
        """When the run started (None: not yet)."""
        from .harness import _utc

        rows = self.home.query("SELECT start_date FROM dag_run WHERE dag_id = ? AND run_id = ?", dag_id, run_id)
        return _utc(rows[0][0]) if rows else None

    def task_state(self, dag_id: str, run_id: str, task_id: str) -> str | None:
        rows = self.home.query(
            "SELECT state FROM task_instance WHERE dag_id = ? AND run_id = ? AND task_id = ?", dag_id, run_id, task_id
        )
        return rows[0][0] if rows else None

    def wait(self, what: str, probe: Callable[[], Any], timeout: float = WAIT) -> Any:
        """Poll ``probe`` until it answers; a scheduler that crashed meanwhile is started again.

        On SQLite under load, Airflow's scheduler can die of a write race with the API server
        (``StaleDataError`` on ``dag_run``); an operator restarts it, and so does the corpus (the
        gap it leaves is in the job table, where the answers read it). Any other process dying fails.
        """
        deadline = time.monotonic() + timeout
        while True:
            with self._processes:  # one lane restarts a dead scheduler, and none sees a process mid-stop
                try:
                    self.home.check_alive()
                except AssertionError as died:
                    if "airflow scheduler exited" not in str(died):
                        raise
                    self.facts.setdefault("scheduler_restarts", []).append((now(), str(died)))
                    self.home.start("scheduler", "scheduler")
            found = probe()
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
            time.sleep(1)

    def wait_runs(self, dag_id: str, count: int, *, after: datetime.datetime | None = None) -> list[StoredRun]:
        def enough() -> list[StoredRun] | None:
            runs = [r for r in self.runs(dag_id) if after is None or (r.created_at or r.run_after) > after]
            return runs if len(runs) >= count else None

        return self.wait(f"{count} runs of {dag_id}", enough)

    def parse_entries(self, dag_id: str) -> list[tuple[datetime.datetime, dict]]:
        rows = self.home.query(
            "SELECT dttm, extra FROM log WHERE dag_id = ? AND event = 'tessera.parse' ORDER BY id", dag_id
        )
        from .harness import _utc

        return [(_utc(dttm), json.loads(extra)) for dttm, extra in rows]

    # -- steps ------------------------------------------------------------------------------------

    def step(self, causes: tuple[str, ...], action: Callable[[], None]) -> None:
        """Run one step; if it fails, each cause it feeds answers with the error instead.

        Its seconds are kept in the facts (``step_seconds``): the corpus is one of the suite's longest stories.
        """
        started = time.monotonic()
        try:
            action()
        except Exception:
            error = traceback.format_exc()
            for cause in causes:
                self.answers.setdefault(cause, {"step_failed": error})
        finally:
            self.facts.setdefault("step_seconds", {})["+".join(causes)] = round(time.monotonic() - started, 1)

    def lanes(self, *lanes: Sequence[tuple[tuple[str, ...], Callable[[Corpus], None]]]) -> None:
        """Run each lane's steps in order, the lanes side by side; return when every lane has ended.

        Most steps wait for the deployment (a run to start, a sleep to pass an occurrence) on DAGs of
        their own: run one after the other, they took about 320 s; side by side, about as long as the
        longest lane. A step (the causes it feeds, and a function of the corpus) that needs another's
        facts goes after it in the same lane. Each step catches its own failure (:meth:`step`), so a
        lane always ends; every wait in it is bounded.
        """

        def run(lane: Sequence[tuple[tuple[str, ...], Callable[[Corpus], None]]]) -> None:
            for causes, action in lane:
                self.step(causes, lambda action=action: action(self))

        with ThreadPoolExecutor(max_workers=len(lanes), thread_name_prefix="why-lane") as pool:
            for done in [pool.submit(run, lane) for lane in lanes]:
                done.result()

    def start_process(self, name: str, *args: str) -> None:
        """Start ``airflow <args>`` as ``name`` while no lane is checking the processes."""
        with self._processes:
            self.home.start(name, *args)

    def stop_process(self, name: str) -> None:
        """Stop ``name`` as an operator would, while no lane is checking the processes (it would see it exit)."""
        with self._processes:
            self.home.terminate(name)

    def rewrite(self, name: str, source: str) -> None:
        path = self.home.dags / name
        path.write_text(source)

    def remove(self, name: str) -> str:
        path: Path = self.home.dags / name
        source = path.read_text()
        path.unlink()
        return source
