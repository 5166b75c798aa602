"""Airflow's partition surface of a tessera timetable: keys, backfill ranges and decoding.

Mixed into :class:`~tessera.timetables.base.TesseraTimetable`; the public plan names each run's
partition through :func:`partition_of`.
What a key names, and why, is :mod:`tessera.timetables.partitions`.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from airflow.timetables.base import DagRunInfo, DataInterval, Timetable

from ._airflow import InvalidPartitionKeyError, partition_date_of, run_info, utcnow
from ._time.durations import shown
from ._time.supported import END_READING, FIRST_READING, YEARS
from .instants import from_us, to_us
from .limits import SUPPORTED_FROM, SUPPORTED_UNTIL
from .partitions import PartitionKeys
from .support import PARTITIONS, require

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pendulum import DateTime

    from ._time.cadence import Cadence
    from ._time.plan import Plan, PlannedRun


_SUPPORTED = (to_us(SUPPORTED_FROM), to_us(SUPPORTED_UNTIL))


def partition_of(keys: PartitionKeys | None, cadence: Cadence, occurrence: int) -> tuple[DateTime, str] | None:
    """The ``partition_date`` and ``partition_key`` of the run of ``occurrence``: its period's start (None: no keys)."""
    if keys is None:
        return None
    period_start = cadence.preceding(occurrence)
    return from_us(period_start), keys.encode(period_start)


class PartitionPlan:
    """The partition half of a tessera timetable; inert unless ``partitioned=True`` was given."""

    _plan: Plan
    partitioned: bool = False
    """Airflow's switch: each run carries its period's ``partition_key`` and ``partition_date``."""
    _partition_keys: PartitionKeys | None = None
    _key_format: str | None = None
    """The ``key_format`` as given (None: the default of :mod:`~tessera.timetables.partitions`)."""

    _timezone: str
    summary: str

    def _info(self, run: PlannedRun) -> DagRunInfo:
        """What the scheduler gets for one planned run: its window, and its partition when partitioned."""
        partition = self._partition_of(run.occurrence)
        window = DataInterval(from_us(run.window_start), from_us(run.window_end))
        return run_info(from_us(run.run_after), window, partition)

    def _partition_spec(self) -> dict[str, Any]:
        # Added keys only, so a DAG serialized before partitions existed still loads.
        return {"partitioned": True, "key_format": self._key_format} if self.partitioned else {}

    @staticmethod
    def partition_kwargs(data: dict[str, Any]) -> dict[str, Any]:
        """The constructor keywords ``_partition_spec`` wrote."""
        return {"partitioned": data.get("partitioned", False), "key_format": data.get("key_format")}

    def _configure_partitions(self, cadence: Cadence, partitioned: object, key_format: str | None) -> None:
        if not isinstance(partitioned, bool):
            raise TypeError(f"partitioned: {shown(partitioned)} is a {type(partitioned).__name__}; give True or False")
        if key_format is not None and not partitioned:
            raise ValueError(f"key_format: {shown(key_format)} given without partitioned=True; add partitioned=True")
        if partitioned:
            require(PARTITIONS, "partitioned", partitioned)
            self.partitioned = True
            self._key_format = key_format
            self._partition_keys = PartitionKeys.build(key_format, timezone=self._timezone, cadence=cadence)

    def _last_window_end(self, info: DagRunInfo) -> int | None:
        """The window end of the previous run the scheduler steps from.

        Airflow hands a partitioned DAG's previous run over without its data interval
        (``get_run_data_interval`` drops it for every run with a key), only its
        ``partition_date``: the period start, from which the window follows exactly.
        """
        if info.data_interval is not None:
            return to_us(info.data_interval.end)
        partition_date = partition_date_of(info)
        if self._partition_keys is None or partition_date is None:
            return None
        return self._plan.cadence.following(to_us(partition_date)) - self._plan.delay

    @property
    def key_format(self) -> str | None:
        """The ``strftime`` pattern of this timetable's partition keys (None when not partitioned)."""
        return None if self._partition_keys is None else self._partition_keys.key_format

    def _partition_of(self, occurrence: int) -> tuple[DateTime, str] | None:
        """The ``partition_date`` and ``partition_key`` of the run of ``occurrence`` (None: not partitioned)."""
        return partition_of(self._partition_keys, self._plan.cadence, occurrence)

    def iter_partition_dagrun_infos(
        self, *, earliest: datetime.datetime, latest: datetime.datetime
    ) -> Iterator[DagRunInfo]:
        """One run per period whose start (the ``partition_date``) is in ``[earliest, latest]``, oldest first.

        Both bounds are read on this timetable's wall clock (Airflow's rule for partition
        ranges). The runs are the ones the scheduler creates (same window, key and
        ``run_after``), so a backfill finds, and does not duplicate, a window that already
        ran. A period whose occurrence is still ahead is left out: its data has not landed,
        as Airflow leaves out unfinished intervals when it backfills a DAG without partitions.
        Cost: one cadence step per period in the range.
        """
        keys = self._partition_keys
        if keys is None:
            raise NotImplementedError(f"{type(self).__name__} is not partitioned; give partitioned=True")
        # No period starts outside the supported years: a range beyond them is cut to them.
        low = max(earliest.replace(tzinfo=None), FIRST_READING)
        high = min(latest.replace(tzinfo=None), END_READING - datetime.timedelta(microseconds=1))
        if low > high:
            return
        cadence, now = self._plan.cadence, to_us(utcnow())
        start = cadence.at_or_after(to_us(keys.localize(low)))
        last = to_us(keys.localize(high))
        while start <= last:
            occurrence = cadence.following(start)
            if occurrence > now:
                return
            yield self._info(self._plan.run(occurrence))
            start = occurrence

    def localize_partition_datetime(self, dt: datetime.datetime) -> DateTime:
        """``dt``'s wall-clock reading as an instant in this timetable's zone (UTC when not partitioned)."""
        keys = self._partition_keys
        if keys is None:
            return Timetable.localize_partition_datetime(self, dt)  # type: ignore[arg-type]
        return from_us(to_us(keys.localize(dt)))

    # Overrides Airflow's private Timetable._decode_partition_date (named in timetables/_airflow.py).
    def _decode_partition_date(self, partition_key: str) -> datetime.datetime | None:
        """The period start ``partition_key`` names; refuses a key that names no period of this schedule."""
        keys = self._partition_keys
        if keys is None:
            return None
        cadence = self._plan.cadence
        example = keys.encode(cadence.at_or_before(0))
        try:
            candidates = keys.candidates(partition_key)
        except ValueError as error:
            raise InvalidPartitionKeyError(
                f"partition_key: {shown(partition_key)} does not match key_format {keys.key_format!r} "
                f"({shown(str(error), 120)}); give a key as the scheduler writes it, e.g. {example!r}"
            ) from error
        inside = [instant for instant in candidates if _SUPPORTED[0] <= instant < _SUPPORTED[1]]
        if not inside:
            raise InvalidPartitionKeyError(
                f"partition_key: {shown(partition_key)} names an instant outside the supported years {YEARS}; "
                f"give a key as the scheduler writes it, e.g. {example!r}"
            )
        for instant in inside:
            if cadence.at_or_after(instant) == instant and keys.encode(instant) == partition_key:
                return from_us(instant)
        nearest = keys.encode(cadence.at_or_before(inside[0]))
        raise InvalidPartitionKeyError(
            f"partition_key: {shown(partition_key)} is not the start of a period of {self.summary}; "
            f"the nearest one before it is {nearest!r}"
        )
