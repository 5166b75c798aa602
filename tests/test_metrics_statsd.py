"""Tessera's metrics as a metrics backend receives them: real datagrams on 127.0.0.1.

Airflow's own ``Stats`` sends them, configured the way a deployment configures it
(``[metrics]`` through ``AIRFLOW__METRICS__*``) and re-initialised after each change,
since its backend is built once from the settings of the moment. Plain StatsD drops
tags, so it must see per-DAG (per-function) names; Datadog StatsD must see the tags;
OpenTelemetry is exercised through Airflow's OTLP/HTTP exporter against a receiver in
this test (no collector). Real fires, a real admission and a real AFTER release emit
them; the refresh counter is emitted by the function the API calls.
"""

from __future__ import annotations

import datetime
import gzip
import importlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import time_machine

from tessera.operators.functions import metrics
from tessera.plugin.actions import metrics as refresh_metrics
from tests.compat.airflow_names import core_stats, task_stats

from .operators.conftest import CursorDags, stored_cursor
from .operators.fan_in.test_fan_in_db import Deployment
from .operators.functions.test_cursor_admission import (  # noqa: F401 - admission is a fixture
    _queue_run,
    _scheduler_starts_queued_runs,
    _skip_reason,
    admission,
)

SINCE = metrics.SECONDS_SINCE_LAST_SUCCESS


@dataclass(frozen=True)
class Datagram:
    name: str
    value: str
    kind: str
    tags: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, line: str) -> Datagram:
        # name:value|type[|@rate][|#tag:value,...]  (StatsD, with Datadog's tag extension)
        head, *fields = line.split("|")
        name, _, value = head.rpartition(":")
        tags = {}
        for extra in fields[1:]:
            if extra.startswith("#"):
                tags = dict(tag.split(":", 1) for tag in extra[1:].split(","))
        return cls(name, value, fields[0], tags)


class StatsdListener:
    """A UDP socket on 127.0.0.1 standing in for the StatsD agent."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.received: list[Datagram] = []

    def until(self, done: Callable[[list[Datagram]], bool], timeout: float = 15) -> list[Datagram]:
        """Read datagrams until ``done`` holds for all received so far (or fail after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while not done(self.received):
            if time.monotonic() > deadline:
                pytest.fail("never received the expected metrics; got:\n" + "\n".join(map(str, self.received)))
            try:
                payload = self.socket.recv(65535)
            except TimeoutError:
                continue
            self.received += [Datagram.parse(line) for line in payload.decode().splitlines() if line]
        return self.received

    def drain(self) -> list[Datagram]:
        """Everything still on its way: read until the socket stays quiet for a moment."""
        for _ in range(100):
            try:
                payload = self.socket.recv(65535)
            except TimeoutError:
                break
            self.received += [Datagram.parse(line) for line in payload.decode().splitlines() if line]
        return self.received

    def named(self, name: str) -> list[Datagram]:
        return [gram for gram in self.received if gram.name == name]


def _use_metrics(monkeypatch: pytest.MonkeyPatch, **settings: object) -> None:
    """Set ``[metrics]`` options as a deployment's environment would, then rebuild both Stats backends."""
    for key, value in settings.items():
        monkeypatch.setenv(f"AIRFLOW__METRICS__{key.upper()}", str(value))
    _reinitialize()


def _reinitialize() -> None:
    import airflow.sdk.serde  # noqa: F401  (its import initialises the Task SDK's Stats; ours comes after)
    from airflow.configuration import conf

    legacy = conf.getboolean("metrics", "legacy_names_on")
    for stats in (core_stats(), task_stats()):  # each with its own stats_utils' factory
        factory = importlib.import_module(stats.__name__.removesuffix(".stats") + ".metrics.stats_utils")
        stats.initialize(factory=factory.get_stats_factory(), export_legacy_names=legacy)


@pytest.fixture
def statsd(monkeypatch: pytest.MonkeyPatch) -> Iterator[StatsdListener]:
    listener = StatsdListener()
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_HOST", "127.0.0.1")
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_PORT", str(listener.port))
    yield listener
    listener.socket.close()
    monkeypatch.undo()
    _reinitialize()  # back to this session's settings: no metrics


@pytest.fixture(scope="module")
def cursor_dags(airflow_db: str, tmp_path_factory: pytest.TempPathFactory) -> CursorDags:
    return CursorDags(tmp_path_factory.mktemp("metrics-dags"))


def test_plain_statsd_gets_per_function_names_so_two_functions_gauges_stay_apart(
    cursor_dags: CursorDags, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_metrics(monkeypatch, statsd_on=True)
    healthy, failing = cursor_dags.add("metrics_healthy"), cursor_dags.add("metrics_failing")
    cursor_dags.fire(healthy)
    cursor_dags.fire(failing)
    cursor_dags.behave("metrics_failing", mode="raise")
    cursor_dags.fire(failing)

    failing_gauge = f"airflow.{SINCE}.metrics_failing.fn"
    fires = f"airflow.{metrics.FIRES}"
    failed = f"airflow.{metrics.FIRE_DURATION}.Failed.metrics_failing.fn"
    # Each fire's datagrams arrive on their own (UDP): wait for the last fire's gauge, counter and timing all.
    statsd.until(
        lambda grams: (
            sum(g.name == failing_gauge for g in grams) == 2
            and any(g.name == f"{fires}.Failed.metrics_failing.fn" for g in grams)
            and any(g.name == failed for g in grams)
        )
    )
    assert [float(g.value) for g in statsd.named(f"airflow.{SINCE}.metrics_healthy.fn")] == [0]
    assert [float(g.value) > 0 for g in statsd.named(failing_gauge)] == [False, True]
    assert all(g.kind == "g" and g.tags == {} for g in statsd.named(failing_gauge))
    assert [g.value for g in statsd.named(f"{fires}.Succeeded.metrics_healthy.fn")] == ["1"]
    assert [g.value for g in statsd.named(f"{fires}.Succeeded.metrics_failing.fn")] == ["1"]
    assert [(g.value, g.kind) for g in statsd.named(f"{fires}.Failed.metrics_failing.fn")] == [("1", "c")]
    assert len(statsd.named(fires)) == 3  # the tag-aware name too: the total over every function
    assert [g.kind for g in statsd.named(failed)] == ["ms"]


@pytest.mark.usefixtures("admission")
def test_datadog_statsd_tags_a_concurrency_forbidden_skip_with_its_reason_and_dag(
    cursor_dags: CursorDags, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_metrics(monkeypatch, statsd_datadog_enabled=True)
    dag_id = "metrics_forbid"
    cursor_dags.add(dag_id)
    first = _queue_run(dag_id, "manual")
    _scheduler_starts_queued_runs()  # admitted: its fire is now in flight
    second = _queue_run(dag_id, "manual")
    _scheduler_starts_queued_runs()  # declined by the admission in the scheduler: Forbid

    skips = f"airflow.{metrics.SKIPS}"
    per_dag = f"{skips}.ConcurrencyForbidden.{dag_id}.fn"
    statsd.until(lambda grams: any(g.name == per_dag for g in grams))
    (tagged,) = statsd.named(skips)
    assert (tagged.value, tagged.kind) == ("1", "c")
    assert tagged.tags == {"dag_id": dag_id, "task_id": "fn", "reason": "ConcurrencyForbidden"}
    assert [g.tags for g in statsd.named(per_dag)] == [{}]  # every variable is in the name
    assert (_skip_reason(dag_id, first), _skip_reason(dag_id, second)) == (
        (None, None),
        ("skipped", "ConcurrencyForbidden"),
    )


@pytest.mark.usefixtures("admission")
def test_the_scheduler_emits_the_health_gauge_every_heartbeat_while_the_function_is_paused(
    cursor_dags: CursorDags, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started by the listener's on_starting for a real scheduler job; it keeps growing with no fire at all."""
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    _use_metrics(monkeypatch, statsd_on=True)
    monkeypatch.setenv("AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC", "1")
    dag_id = "metrics_heartbeat"
    cursor_dags.fire(cursor_dags.add(dag_id))
    with create_session() as session:
        session.get(DagModel, dag_id).is_paused = True
    gauge = f"airflow.{SINCE}.{dag_id}.fn"
    statsd.until(lambda grams: any(g.name == gauge for g in grams))  # the fire's own: 0
    statsd.received.clear()

    job = Job()  # Airflow's Job calls the listeners' on_starting
    SchedulerJobRunner(job=job)  # ... becomes a scheduler's job, as `airflow scheduler` does
    job.prepare_for_execution()  # ... and runs
    try:
        statsd.until(lambda grams: sum(g.name == gauge for g in grams) >= 2)
    finally:
        job.complete_execution()  # Airflow's Job calls the listeners' before_stopping
    values = [float(g.value) for g in statsd.named(gauge)]
    assert values[0] > 0 and values[1] > values[0]  # it grows between two heartbeats: no fire needed
    assert all(g.kind == "g" for g in statsd.named(gauge))


def test_the_scheduler_never_reads_a_stale_success_after_the_workers_clean_point(
    cursor_dags: CursorDags, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's 0 arrives only once the success is stored: a scheduler reading right after it is fresh.

    The fire runs in its own process, as a worker; the moment its clean point arrives, this test
    reads the last successes exactly as the scheduler's gauges thread does. Before the fix the
    worker sent 0 from inside the fire, and that reading still saw the previous success, 100 s old.
    """
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import update

    from tessera.operators.functions.health import last_successes

    _use_metrics(monkeypatch, statsd_on=True)
    dag_id = "metrics_no_stale_point"
    first = cursor_dags.fire(cursor_dags.add(dag_id))
    long_ago = first.end_date - datetime.timedelta(seconds=100)
    with create_session() as session:  # the previous clean success ended 100 s before this one
        session.execute(update(TaskInstance).where(TaskInstance.id == first.id).values(end_date=long_ago))
    statsd.drain()
    statsd.received.clear()

    gauge = f"airflow.{SINCE}.{dag_id}.fn"
    process = cursor_dags.start_fire(dag_id)
    try:
        statsd.until(lambda grams: any(g.name == gauge for g in grams), timeout=120)
        with create_session() as session:
            newest = last_successes(session)[(dag_id, "fn")]
    finally:
        process.wait(timeout=120)
    assert [float(g.value) for g in statsd.named(gauge)] == [0.0]
    read_then = (datetime.datetime.now(datetime.timezone.utc) - newest).total_seconds()
    assert newest > long_ago and read_then < 60, f"the scheduler would have sent a stale {read_then:.1f} s"


def test_the_health_gauges_never_run_in_a_job_that_is_not_a_scheduler(
    cursor_dags: CursorDags, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.jobs.job import Job

    from tessera.operators.functions.health import HealthGauges

    _use_metrics(monkeypatch, statsd_on=True)
    cursor_dags.fire(cursor_dags.add("metrics_not_scheduler"))
    statsd.drain()
    statsd.received.clear()
    triggerer, idle = Job(), Job()
    triggerer.job_type, triggerer.state = "TriggererJob", "running"
    idle.job_type = "SchedulerJob"  # a scheduler's job that never ran (as a test's runner makes)
    for job in (triggerer, idle):
        gauges = HealthGauges(job, period=0.1, startup_bound=0.5)
        gauges.start()
        gauges.join(timeout=10)
        assert not gauges.is_alive()  # the triggerer's at its first wait, the idle one's after the bound
    assert not statsd.drain()


class _SlowStartingScheduler:
    """A scheduler's job that starts running only at its gauges' fourth look (a loaded machine)."""

    job_type = "SchedulerJob"

    def __init__(self) -> None:
        self.looks = 0

    @property
    def state(self) -> str | None:
        self.looks += 1
        return "running" if self.looks > 3 else None


def test_the_health_gauges_wait_for_a_scheduler_that_starts_late(
    cursor_dags: CursorDags, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tessera.operators.functions.health import HealthGauges

    _use_metrics(monkeypatch, statsd_on=True)
    dag_id = "metrics_late_scheduler"
    cursor_dags.fire(cursor_dags.add(dag_id))
    statsd.drain()
    statsd.received.clear()
    job = _SlowStartingScheduler()
    gauges = HealthGauges(job, period=0.1)
    gauges.start()
    try:
        statsd.until(lambda grams: any(g.name == f"airflow.{SINCE}.{dag_id}.fn" for g in grams), timeout=30)
    finally:
        gauges.stop()
        gauges.join(timeout=10)
    assert job.looks > 3 and not gauges.is_alive()


@pytest.mark.usefixtures("admission")
def test_ticks_passed_over_are_counted_in_one_datagram_with_their_reason(
    cursor_dags: CursorDags, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow._shared.timezones.timezone import utcnow

    from .operators.functions.test_cursor_skips_recorded import _create_run, _set_paused

    _use_metrics(monkeypatch, statsd_datadog_enabled=True)
    dag_id = "metrics_downtime"
    cursor_dags.add(dag_id, schedule='Cron("*/5 * * * *")')
    _set_paused(dag_id, False)
    now = utcnow()
    _create_run(dag_id, run_type="scheduled", after=now - datetime.timedelta(minutes=65), state="success")
    _create_run(dag_id, run_type="scheduled", after=now - datetime.timedelta(minutes=5))
    _scheduler_starts_queued_runs()

    skips = f"airflow.{metrics.SKIPS}"
    statsd.until(lambda grams: any(g.name == skips for g in grams))
    (tagged,) = statsd.named(skips)
    assert (tagged.value, tagged.kind) == ("11", "c")
    assert tagged.tags == {"dag_id": dag_id, "task_id": "fn", "reason": "MissedDeadline"}


def test_refresh_and_stale_parent_counters_carry_the_dag_tag_and_a_per_dag_name(
    tmp_path: Path, airflow_db: str, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_metrics(monkeypatch, statsd_datadog_enabled=True)
    refresh_metrics.count(refresh_metrics.OUTCOMES["joined"], "metrics_dashboard")
    joined = "airflow.tessera.refresh.joined"
    assert [g.tags for g in statsd.until(lambda grams: len(grams) == 2)] == [{"dag_id": "metrics_dashboard"}, {}]
    assert [g.name for g in statsd.received] == [joined, f"{joined}.metrics_dashboard"]

    # Deployed a minute ago: the first parent's fire, dated back below, still comes after the child began
    # scheduling on its parents' assets.
    with time_machine.travel(datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1), tick=True):
        deployment = Deployment(tmp_path, STALE_DAGS, prefix="m_fresh")
    now = datetime.datetime.now(datetime.timezone.utc)
    # The first parent's fire completes on a clock set back past the window: it is older than the window now.
    with time_machine.travel(now - datetime.timedelta(hours=STALE_AFTER_HOURS, seconds=1.5), tick=True):
        deployment.run("m_fresh_a", now, state="success")
    deployment.run("m_fresh_b", datetime.datetime.now(datetime.timezone.utc), state="success")
    deployment.schedule()  # the child starts: the release notes m_fa as stale
    stale = "airflow.tessera.schedule.stale_parent"
    statsd.until(lambda grams: any(g.name == f"{stale}.m_fresh_child" for g in grams))
    assert [g.tags for g in statsd.named(stale)] == [{"dag_id": "m_fresh_child", "schedule": "m_fc", "parent": "m_fa"}]
    assert [g.tags for g in statsd.named(f"{stale}.m_fresh_child")] == [{"schedule": "m_fc", "parent": "m_fa"}]


STALE_AFTER_HOURS = 0.0005
"""1.8 s: a parent whose last fire is older than that is stale."""
STALE_DAGS = f"""
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tessera.operators.schedules.schedule import Schedule
from tessera.operators.schedules.schedule_set import ScheduleSet

S = ScheduleSet([
    Schedule("m_fa", interval_seconds=3600),
    Schedule("m_fb", interval_seconds=3600),
    Schedule("m_fc", after=["m_fa", "m_fb"], parent_freshness={STALE_AFTER_HOURS}),
])
for schedule, dag_id in [("m_fa", "m_fresh_a"), ("m_fb", "m_fresh_b"), ("m_fc", "m_fresh_child")]:
    with DAG(dag_id, start_date=None, **S.dag_kwargs(schedule)) as dag:
        EmptyOperator(task_id="work")
    S.apply(dag)
"""


def test_with_legacy_names_off_only_the_tagged_name_is_sent(
    airflow_db: str, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_metrics(monkeypatch, statsd_datadog_enabled=True, legacy_names_on=False)
    metrics.tick_skipped("metrics_quiet", "fn", "MissedDeadline", in_task=False)
    refresh_metrics.count(refresh_metrics.REQUESTED, "metrics_quiet")
    statsd.until(lambda grams: len(grams) >= 2)
    assert [g.name for g in statsd.drain()] == [f"airflow.{metrics.SKIPS}", "airflow.tessera.refresh.requested"]


def reject_tessera(name: str) -> str:
    """A ``[metrics] stat_name_handler`` with a bug that bites only tessera's names."""
    if name.startswith("tessera."):
        raise ValueError(f"cannot handle {name}")
    return name


def test_a_broken_metrics_backend_never_fails_a_fire(
    cursor_dags: CursorDags, statsd: StatsdListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_metrics(monkeypatch, statsd_on=True, stat_name_handler=f"{__name__}.reject_tessera")
    dag = cursor_dags.add("metrics_broken_backend")
    ti = cursor_dags.fire(dag)
    metrics.tick_skipped("metrics_broken_backend", "fn", "ConcurrencyForbidden", in_task=False)
    refresh_metrics.count(refresh_metrics.REQUESTED, "metrics_broken_backend")
    assert ti.state == "success"
    assert stored_cursor("metrics_broken_backend-state") == {"n": 1}
    assert statsd.drain() and not [g for g in statsd.received if "tessera" in g.name]  # Airflow's own still flow


class OtlpReceiver(ThreadingHTTPServer):
    """An OTLP/HTTP endpoint on 127.0.0.1 keeping every data point exported to ``/v1/metrics``."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _OtlpHandler)
        self.points: list[tuple[str, dict[str, str], float]] = []

    def keep(self, body: bytes) -> None:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

        request = ExportMetricsServiceRequest.FromString(body)
        for resource in request.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    kind = metric.WhichOneof("data")
                    for point in getattr(metric, kind).data_points:
                        attributes = {kv.key: kv.value.string_value for kv in point.attributes}
                        histogram = kind == "exponential_histogram"
                        value = point.sum if histogram else getattr(point, point.WhichOneof("value"))
                        self.points.append((metric.name, attributes, value))


class _OtlpHandler(BaseHTTPRequestHandler):
    server: OtlpReceiver

    def do_POST(self) -> None:  # noqa: N802 (the name http.server dispatches to)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        self.server.keep(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the signature http.server calls)
        pass


@pytest.fixture
def otlp(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()
    thread = threading.Thread(target=receiver.serve_forever, daemon=True)
    thread.start()
    yield receiver
    receiver.shutdown()
    receiver.server_close()
    monkeypatch.undo()
    _reinitialize()
    _quiet_meter_provider()


def _quiet_meter_provider() -> None:
    """Leave a provider with no exporter: Airflow flushes the current one when the process exits."""
    import opentelemetry.metrics._internal as otel_internal
    from opentelemetry import metrics as otel
    from opentelemetry.sdk.metrics import MeterProvider

    otel_internal._METER_PROVIDER_SET_ONCE._done = False  # as Airflow's get_otel_logger does before setting its own
    otel.set_meter_provider(MeterProvider())


def _export_and_stop() -> None:
    """Stop the current OpenTelemetry meter provider: its reader exports once more, then no more."""
    from opentelemetry import metrics as otel

    otel.get_meter_provider().shutdown()


def test_opentelemetry_gets_the_tags_as_attributes_from_the_scheduler_and_the_task_side(
    airflow_db: str, otlp: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_metrics(monkeypatch, otel_on=True, otel_host="127.0.0.1", otel_port=otlp.server_port)
    metrics.tick_skipped("metrics_otel_a", "fn", "ConcurrencyForbidden", in_task=False)  # the scheduler's Stats
    _export_and_stop()
    took = datetime.timedelta(seconds=2)
    metrics.fire_finished("metrics_otel_a", "fn", outcome="Succeeded", duration=took, since_success=0.0)
    metrics.fire_finished("metrics_otel_b", "fn", outcome="Failed", duration=took, since_success=30.0)
    _export_and_stop()  # the Task SDK's Stats built its own provider

    skips = [(tags, value) for name, tags, value in otlp.points if name == f"airflow.{metrics.SKIPS}"]
    assert skips == [({"dag_id": "metrics_otel_a", "task_id": "fn", "reason": "ConcurrencyForbidden"}, 1)]
    gauges = {tags["dag_id"]: value for name, tags, value in otlp.points if name == f"airflow.{SINCE}"}
    assert gauges == {"metrics_otel_a": 0, "metrics_otel_b": 30}
    fires = {(tags["dag_id"], tags["outcome"]) for name, tags, _ in otlp.points if name == f"airflow.{metrics.FIRES}"}
    assert fires == {("metrics_otel_a", "Succeeded"), ("metrics_otel_b", "Failed")}
    durations = [value for name, _, value in otlp.points if name == f"airflow.{metrics.FIRE_DURATION}"]
    assert durations == [2000.0, 2000.0]  # milliseconds, as Airflow's timers
