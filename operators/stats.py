"""Emit a tessera metric the way Airflow emits its own, through Airflow's ``Stats``.

Airflow names a metric once and carries its variables as tags: ``dagrun.duration.success``
tagged ``dag_id`` reaches the backends that keep tags (Datadog StatsD, OpenTelemetry,
StatsD with InfluxDB tags). While ``[metrics] legacy_names_on`` is true (its default) it
also emits a name that spells the variables out, ``dagrun.duration.success.<dag_id>``,
so a plain StatsD backend, which drops tags, still keeps DAGs apart. A :class:`Metric`
does the same: :func:`emit` sends its name with every tag, then its per-DAG name with
the tags not spelled into it. As in Airflow, a dot inside a spelled-out value (a task id
in a task group) becomes ``__`` so the name keeps one segment per variable.

Emitting never fails the caller: the fire, the admission or the refresh already
happened, and a lost data point is the lesser harm. A broken backend is logged.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._airflow import stats_and_conf

log = logging.getLogger(__name__)

Kind = Literal["counter", "gauge", "timer"]
Where = Literal["core", "task"]
"""Which of Airflow's two ``Stats`` to use: the core processes' (scheduler, API server) or the Task SDK's."""

_SEND = {"counter": "incr", "gauge": "gauge", "timer": "timing"}


@dataclass(frozen=True)
class Metric:
    """A metric's tag-aware name, its type, and the tags spelled into its per-DAG name, in order."""

    name: str
    kind: Kind
    name_tags: tuple[str, ...] = ("dag_id",)

    def per_dag_name(self, tags: Mapping[str, str]) -> str:
        """``name.<value>...`` for the plain-StatsD backend: ``tessera.cursor_function.fires.Failed.etl.fn``."""
        return ".".join([self.name, *(str(tags[key]).replace(".", "__") for key in self.name_tags)])


def emit(metric: Metric, tags: Mapping[str, str], value: float | datetime.timedelta = 1, *, where: Where) -> None:
    """Send ``value`` (a count, a gauge's value or a duration) under both names; never raises."""
    try:
        stats, conf = stats_and_conf(where)
        send = getattr(stats, _SEND[metric.kind])
        # Read per emission, as Airflow's own metrics honour it: one switch for every per-DAG name.
        per_dag = conf.getboolean("metrics", "legacy_names_on", fallback=True)
    except Exception:
        log.warning("tessera: metrics unavailable; %s not emitted", metric.name, exc_info=True)
        return
    _send(send, metric.name, value, dict(tags))
    if per_dag:
        try:
            name = metric.per_dag_name(tags)
        except KeyError:
            log.warning("tessera: %s needs the tags %s; got %s", metric.name, metric.name_tags, sorted(tags))
            return
        _send(send, name, value, {key: val for key, val in tags.items() if key not in metric.name_tags})


def _send(send: Any, name: str, value: float | datetime.timedelta, tags: dict[str, str]) -> None:
    try:
        send(name, value, tags=tags)
    except Exception:
        log.warning("tessera: could not emit the metric %s", name, exc_info=True)
