"""Which tessera features need a newer Airflow than the oldest tessera installs beside, and the one refusal.

Tessera installs beside Airflow 3.1, 3.2 and 3.3. A feature built on an Airflow name an older
release lacks is refused where a DAG file declares it, so the file shows an import error naming
the feature, the Airflow it needs and the one running, instead of a traceback in the scheduler
or a feature that silently does less. The running release is read in the timetables door
(``_airflow.AIRFLOW``) and nowhere else; the operators and the plugin ask :func:`require` too.

The support table of the documentation (``docs/reference/support.md``) lists the same features;
the compatibility tier (``scripts/compat.sh``) records what it ran on each release and
``tests/test_support_table.py`` holds the page to both.

The layers above step any timetable, build a run's ``DagRunInfo`` and read its partition date
through :func:`next_run_info`, :func:`run_info` and :func:`partition_date_of` (from the door),
which bridge Airflow 3.1 and 3.2.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._airflow import AIRFLOW, AIRFLOW_VERSION, next_run_info, partition_date_of, run_info
from ..rules import excerpt


@dataclass(frozen=True)
class Feature:
    """A feature that needs a newer Airflow, what it is called in a refusal, and why it needs it.

    :param name: the feature as a user knows it (``partitions (partitioned=True)``);
    :param since: the oldest Airflow release that carries it, as (major, minor);
    :param because: the Airflow part the feature is built on, which older releases lack.
    """

    name: str
    since: tuple[int, int]
    because: str

    @property
    def since_text(self) -> str:
        return ".".join(map(str, self.since))


PARTITIONS = Feature(
    "partitions (partitioned=True)",
    (3, 3),
    "Airflow 3.3 decodes a run's partition_key through the timetable (Timetable._decode_partition_date); "
    "3.2 keys runs but cannot read tessera's key formats back, 3.1 has no partition keys",
)
EXACT_RETRY_WAITS = Feature(
    "exact retry waits (backoff())",
    (3, 3),
    "the task's retry_policy (airflow.sdk.RetryPolicy) arrived in Airflow 3.3",
)
SCHEDULE_STATE = Feature(
    "AFTER fan-in and declared-schedule waves",
    (3, 3),
    "both keep their state in the asset state store (airflow.state), which arrived in Airflow 3.3",
)
FEATURES = (PARTITIONS, EXACT_RETRY_WAITS, SCHEDULE_STATE)
"""Every feature some supported Airflow release cannot carry (the rest runs on 3.1, 3.2 and 3.3)."""


class NeedsNewerAirflow(ValueError):
    """A feature declared on an Airflow release that cannot carry it; ``feature`` says which."""

    def __init__(self, message: str, feature: Feature) -> None:
        super().__init__(message)
        self.feature = feature


def carried(feature: Feature) -> bool:
    """Whether the running Airflow carries ``feature``."""
    return AIRFLOW >= feature.since


def require(feature: Feature, field: str, value: object) -> None:
    """Refuse ``field`` (given ``value``) when the running Airflow cannot carry ``feature``; else nothing.

    A ``ValueError`` (:class:`NeedsNewerAirflow`) in the words of every refusal ("`field`: value;
    rule and fix"), raised where the DAG file declares the feature, so Airflow stores it as the
    file's import error.
    """
    if carried(feature):
        return
    raise NeedsNewerAirflow(
        f"{field}: {excerpt(value)}; {feature.name} needs Airflow {feature.since_text} or newer and this is "
        f"Airflow {AIRFLOW_VERSION} ({feature.because}); upgrade Airflow to {feature.since_text}, or remove {field}",
        feature,
    )


__all__ = [
    "EXACT_RETRY_WAITS",
    "FEATURES",
    "PARTITIONS",
    "SCHEDULE_STATE",
    "Feature",
    "NeedsNewerAirflow",
    "carried",
    "next_run_info",
    "partition_date_of",
    "require",
    "run_info",
]
