"""The Airflow adapter shared by every tessera timetable.

A subclass supplies a pure :class:`~tessera.timetables._time.plan.Plan` (its
cadence, delay, lookback and phase) and how to describe and serialize itself;
this class turns the plan into Airflow's ``DagRunInfo`` answers. It is the only
layer that reads "now", through Airflow's ``timezone.utcnow`` so tests can
freeze it.
"""

from __future__ import annotations

import copy
import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.exceptions import AirflowTimetableInvalid
from airflow.timetables.base import DagRunInfo, DataInterval, Timetable

from ._airflow import run_info, stored_run_info, utcnow
from ._time.cadence import Cadence
from ._time.durations import parse_duration
from ._time.phase import default_spread_bound
from ._time.plan import Plan, PlannedRun
from .coverage import COVER, check_dropped, covering_run
from .instants import from_us, to_us
from .options import Duration
from .owed_runs import owed_run
from .partition_plan import PartitionPlan
from .policies import (
    CatchUp,
    Phase,
    catch_up_from_dict,
    catch_up_to_dict,
    check_catch_up,
    check_key,
    check_phase,
    phase_from_dict,
)
from .public_plan import PublicPlan
from .run_facts.record import RecordsRuns
from .run_policy import PLAIN_OVERLAP, RunPolicy, plain_policy
from .wording import description_sentence, summary_line

if TYPE_CHECKING:
    from airflow.models.dag import DagModel
    from airflow.timetables.base import TimeRestriction
    from pendulum import DateTime


class TesseraTimetable(PartitionPlan, RecordsRuns, Timetable):
    """Base of the tessera timetables: an exact plan stepped for Airflow's scheduler.

    ``restriction.earliest`` / ``latest`` (the DAG's start and end dates, or a
    backfill's range) bound, inclusively, the start of a run's *period* (from the
    previous occurrence to its own): Airflow's logical date before the delay
    shift. With the DAG's ``catchup=False`` (Airflow's default) the schedule's
    catch-up policy decides what runs after downtime; with
    ``catchup=True``, and always under ``airflow backfill create``, every
    occurrence in range runs.
    """

    periodic = True
    can_be_scheduled = True
    version: ClassVar[int] = 1

    _plan: Plan
    _catch_up: CatchUp
    _phase_policy: Phase | None
    _key: str | None
    _dag_catchup: bool | None = None
    """The DAG's own ``catchup`` flag, recorded by the dag policy (None: not known)."""
    _dag_end_us: int | None = None
    """The DAG's ``end_date``, recorded by the dag policy."""
    _starting_deadline_us: int | None = None
    """Skip an occurrence whose run has been due longer than this (a subclass sets it; None: never)."""
    _run_policy: RunPolicy | None = None
    """A declared schedule's overlap and inactive-period policy (None: the plain catch-up decides)."""
    _timezone: str = "UTC"
    """The IANA zone the schedule is read in (a subclass on a wall clock sets it before ``_configure``)."""
    _wall_clock: bool = False
    """Whether occurrences follow a wall clock (calendar, cron) rather than absolute time (a subclass says)."""
    _dst: str | None = None
    """Cron's DST policy (None: the calendar cadences' one rule)."""
    _dropped: str = COVER
    """What happens to the window of a fire that does not run (:mod:`.coverage`): covered by the next, or owed."""

    # -- what a subclass provides -------------------------------------------------------------

    def _cadence_summary(self) -> str:
        raise NotImplementedError

    default_phase: ClassVar[Phase | None] = None
    """The phase when none is given: ``None`` starts runs at the occurrence."""

    def _spec(self) -> dict[str, Any]:
        """The subclass's own serialized fields."""
        raise NotImplementedError

    # -- identity -----------------------------------------------------------------------------

    @property
    def key(self) -> str | None:
        """What the phase hash is computed from: ``key=`` if given, else the DAG id."""
        return self._key

    @property
    def starting_deadline(self) -> datetime.timedelta | None:
        """How long a due run may wait before it is skipped as ``MissedDeadline`` (None: forever)."""
        deadline = self._starting_deadline_us
        return None if deadline is None else datetime.timedelta(microseconds=deadline)

    @property
    def dropped(self) -> str:
        """What happens to the window of a fire that does not run: ``"cover"`` or ``"owe"`` (:mod:`.coverage`)."""
        return self._dropped

    @property
    def run_policy(self) -> RunPolicy:
        """Its overlap policy and ``pause_after_failures`` (:mod:`.run_policy`); a plain default if none given."""
        return RunPolicy(PLAIN_OVERLAP, None) if self._run_policy is None else self._run_policy

    @property
    def phase_ms(self) -> int:
        return self._plan.phase // 1000

    @property
    def plan(self) -> PublicPlan:
        """What the schedule plans, as an immutable value (cheap: built per read); the scheduler steps ``_plan``."""
        return PublicPlan(
            _plan=self._plan,
            timezone=self._timezone,
            is_wall_clock=self._wall_clock,
            catch_up_limit=self._catch_up.backlog,
            _dst=self._dst,
            _partition_keys=self._partition_keys,
        )

    def bind(self, *, dag_id: str, catchup: bool, end_date: datetime.datetime | None) -> TesseraTimetable:
        """A copy of this timetable that knows its DAG (the dag policy calls this).

        A copy, because one timetable object may be shared by several DAG files' DAGs,
        and each must hash its own id.
        """
        bound = copy.copy(self)
        bound._dag_catchup = catchup
        bound._dag_end_us = None if end_date is None else to_us(end_date)
        if bound._key is None:
            bound._key = dag_id
            bound._plan = self._with_phase_key(dag_id)
        return bound

    def _with_phase_key(self, key: str) -> Plan:
        plan = self._plan
        return Plan(plan.cadence, plan.delay, plan.lookback, self._resolve_phase(plan.cadence, key))

    def _resolve_phase(self, cadence: Cadence, key: str | None) -> int:
        """The phase in microseconds for ``key``: one rule for every cadence (see default_spread_bound)."""
        policy = self._phase_policy if self._phase_policy is not None else self.default_phase
        return 0 if policy is None else policy.resolve(key, default_spread_bound(cadence.shortest_gap))

    def _configure(
        self,
        cadence: Cadence,
        *,
        delay: Duration | None = None,
        window: Duration | None = None,
        phase: Phase | None = None,
        catch_up: CatchUp | None = None,
        key: str | None = None,
        partitioned: bool = False,
        key_format: str | None = None,
        overlap: str | None = None,
        pause_after_failures: int | None = None,
        dropped: str | None = None,
    ) -> None:
        """Validate and store the keywords every timetable takes (:class:`~.options.Options`); build its plan."""
        delay_us = 0 if delay is None else parse_duration("delay", delay, allow_zero=True)
        lookback = None if window is None else parse_duration("window", window)
        self._phase_policy = check_phase(phase)
        self._catch_up = check_catch_up(catch_up)
        self._key = check_key(key)
        self._plan = Plan(cadence, delay_us, lookback, self._resolve_phase(cadence, key))
        self._configure_partitions(cadence, partitioned, key_format)
        self._run_policy = plain_policy(overlap, pause_after_failures)
        self._dropped = check_dropped(dropped, partitioned=self.partitioned)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.serialize() == other.serialize()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, repr(v)) for k, v in self.serialize().items())))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.summary}>"

    # -- what the UI shows (worded by :mod:`.wording`) ------------------------------------------

    @property
    def summary(self) -> str:
        return summary_line(
            self._cadence_summary(),
            self._plan,
            phase_given=self._phase_policy is not None,
            catch_up=self._catch_up,
            key_format=self.key_format,
            run_policy=self._run_policy,
            dropped=None if self._dropped == check_dropped(None, partitioned=self.partitioned) else self._dropped,
        )

    @property
    def description(self) -> str:  # type: ignore[override]
        return description_sentence(self._cadence_summary(), self._plan)

    # -- serialization ------------------------------------------------------------------------

    def serialize(self) -> dict[str, Any]:
        data = {
            "version": self.version,
            **self._spec(),
            "delay_us": self._plan.delay,
            "window_us": self._plan.lookback,
            "phase": None if self._phase_policy is None else self._phase_policy.to_dict(),
            "catch_up": catch_up_to_dict(self._catch_up),
            "key": self._key,
            "dag_catchup": self._dag_catchup,
            "dag_end_us": self._dag_end_us,
        }
        if self._run_policy is not None:  # an added key: older serialized DAGs load without it
            data["run_policy"] = self._run_policy.to_dict()
        if self._dropped != check_dropped(None, partitioned=self.partitioned):  # added only when not the default
            data["dropped"] = self._dropped
        data.update(self._partition_spec())
        return data

    @staticmethod
    def _common_kwargs(data: dict[str, Any]) -> dict[str, Any]:
        """Constructor keywords shared by every subclass, read back from ``serialize()``."""
        window_us = data.get("window_us")
        phase = data.get("phase")
        return {
            "delay": datetime.timedelta(microseconds=data.get("delay_us", 0)),
            "window": None if window_us is None else datetime.timedelta(microseconds=window_us),
            "phase": None if phase is None else phase_from_dict(phase),
            "catch_up": catch_up_from_dict(data.get("catch_up", {"kind": "latest"})),
            "key": data.get("key"),
            "dropped": data.get("dropped"),
            **PartitionPlan.partition_kwargs(data),
        }

    def _restore_binding(self, data: dict[str, Any]) -> TesseraTimetable:
        self._dag_catchup = data.get("dag_catchup")
        self._dag_end_us = data.get("dag_end_us")
        self._run_policy = RunPolicy.from_dict(data.get("run_policy"))
        return self

    def validate(self) -> None:
        # Constructors already refuse bad input with a ValueError naming the field; this
        # re-checks the one invariant a hand-edited serialized DAG could still break.
        if self._plan.phase < 0:
            raise AirflowTimetableInvalid(f"phase: {self._plan.phase}us must not be negative")

    # -- scheduling ---------------------------------------------------------------------------

    def next_dagrun_info_v2(
        self, *, last_dagrun_info: DagRunInfo | None, restriction: TimeRestriction
    ) -> DagRunInfo | None:
        last_end = None if last_dagrun_info is None else self._last_window_end(last_dagrun_info)
        earliest = None if restriction.earliest is None else to_us(restriction.earliest)
        run = self._plan.next_run(
            last_window_end=last_end,
            earliest=earliest,
            latest=None if restriction.latest is None else to_us(restriction.latest),
            now=to_us(utcnow()),
            backlog=None if restriction.catchup else self._catch_up.backlog,
            # Like the backlog, the deadline governs what the scheduler catches up on by
            # itself; catchup=True and backfills ask for every occurrence in range.
            deadline=None if restriction.catchup else self._starting_deadline_us,
        )
        if run is None:
            return None
        # The occurrences the catch-up or the deadline passed over are this run's to cover.
        last = None if last_end is None else self._plan.occurrence_of_window_end(last_end)
        return self._info(self._covering(run, last, earliest))

    def _covering(self, run: PlannedRun, last: int | None, earliest: int | None) -> PlannedRun:
        """``run`` with the window :func:`~.coverage.covering_run` gives it after the scheduled run of ``last``."""
        return covering_run(self._plan, run, last=last, earliest=earliest, dropped=self._dropped)

    def next_dagrun_info(
        self, *, last_automated_data_interval: DataInterval | None, restriction: TimeRestriction
    ) -> DagRunInfo | None:
        last = None
        if last_automated_data_interval is not None:
            last = run_info(last_automated_data_interval.end, last_automated_data_interval)
        return self.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction)

    def next_run_info_from_dag_model(self, *, dag_model: DagModel) -> DagRunInfo | None:
        """The run the scheduler is about to create, re-checked against what is owed now.

        The stored next run can be stale by the time it is created (downtime, a pause, a run
        that held the slot); when the DAG does not catch up, :func:`~.owed_runs.owed_run`
        replaces it with the run the catch-up or the declared schedule's run policy owes.
        """
        stored = stored_run_info(self, dag_model)
        if stored is None or stored.data_interval is None or self._dag_catchup is not False:
            return stored
        return owed_run(self, dag_model, stored, to_us(utcnow()))

    def with_run_policy(self, policy: RunPolicy) -> TesseraTimetable:
        """A copy that applies a declared schedule's run policy (overlap, inactive periods) when runs are created."""
        if not isinstance(policy, RunPolicy):
            raise TypeError(f"policy: {policy!r} is not a RunPolicy")
        copied = copy.copy(self)
        copied._run_policy = policy
        return copied

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        """A manual run evaluates the window of the newest occurrence at or before the trigger."""
        run = self._plan.latest_at_or_before(to_us(run_after))
        return DataInterval(from_us(run.window_start), from_us(run.window_end))
