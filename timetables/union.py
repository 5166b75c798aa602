"""``Union``: run whenever any of several tessera timetables would, as one schedule.

``Every.day(at="09:00", timezone=Z) | Cron("0 17 * * 5", timezone=Z)`` is
``Union(Every.day(...), Cron(...))``. The union's occurrences are the merged, strictly
increasing occurrences of its members; two members firing at the same instant give one
run. Everything else is the union's, not a member's:

* windows tile across the union: each run evaluates the time since the union's previous
  occurrence, whichever member that came from (``window=`` and ``delay=`` apply to all);
* ``phase=``, ``catch_up=``, ``key=`` and ``partitioned=`` are given to the union, which
  applies them to the merged sequence (a member that sets one is refused, naming it);
  a union starts runs at their occurrences unless given a phase;
* partition keys name each run's period start on the union's wall clock, so they stay one
  to one: a key carries the UTC offset whenever two members could share a reading;
* ``exclude=`` on the union skips dates for every member; ``exclude=`` on a member only
  for that member (a holiday a weekday member skips still runs a weekly member's run).

Members are 2 to :data:`~tessera.timetables._time.union.MAX_MEMBERS` (16) ``Every``,
``Calendar`` or ``Cron`` timetables with fixed occurrences (not the unanchored day, week
and month cadences, which count from the last run), and their wall clocks read one zone.
A union given as a member is merged into the new one (no nesting); one with options of
its own is refused instead, since its options would be lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._time.durations import shown
from ._time.union import MAX_MEMBERS, UnionCadence
from .base import TesseraTimetable
from .coverage import check_dropped
from .decoded import decoded_once
from .exclusion_plan import with_exclusions
from .exclusions import Exclusions, parse_exclusions
from .options import Options, check_options
from .policies import Latest
from .run_policy import PLAIN_OVERLAP

if TYPE_CHECKING:
    from typing_extensions import Unpack

_KINDS = ("Every", "Calendar", "Cron")
"""The classes a stored member may be, by their public names in :mod:`tessera.timetables`."""
_EXAMPLE = "Union(Every.day(at='09:00', timezone='UTC'), Cron('0 17 * * 5', timezone='UTC'), phase=Fixed('1m'))"


def _options_of(member: TesseraTimetable) -> list[str]:
    """The schedule-wide options a member sets, which belong to the union."""
    plan, given = member._plan, []
    if plan.delay:
        given.append("delay")
    if plan.lookback is not None:
        given.append("window")
    if member._phase_policy is not None:
        given.append("phase")
    if not isinstance(member._catch_up, Latest):
        given.append("catch_up")
    if member._key is not None:
        given.append("key")
    if member.partitioned:
        given.append("partitioned")
    if member._starting_deadline_us is not None:
        given.append("starting_deadline")
    if member._run_policy is not None:  # a union applies one overlap and failure pause to the merged runs
        if member._run_policy.overlap != PLAIN_OVERLAP:
            given.append("overlap")
        if member._run_policy.pause_after_failures is not None:
            given.append("pause_after_failures")
    if member._dropped != check_dropped(None, partitioned=member.partitioned):
        given.append("dropped")
    if isinstance(member, Union) and member._exclude is not None:
        given.append("exclude")
    return given


def _members(given: tuple[object, ...]) -> list[TesseraTimetable]:
    flat: list[TesseraTimetable] = []
    for index, member in enumerate(given):
        field = f"members[{index}]"
        if not isinstance(member, TesseraTimetable):
            raise TypeError(
                f"{field}: {shown(member)} is a {type(member).__name__}; a union joins tessera timetables "
                f"(Every, Every.day(...), Cron(...)), e.g. {_EXAMPLE}"
            )
        if options := _options_of(member):
            raise ValueError(
                f"{field}: {shown(member)} sets {', '.join(options)}; a member says only when it fires: give "
                f"{', '.join(o + '=' for o in options)} to the union, e.g. {_EXAMPLE}"
            )
        if member._plan.from_last_run:
            raise ValueError(
                f"{field}: {shown(member)} counts from the last run, so it has no fixed occurrences to merge; "
                f"anchor it (at= and timezone=, e.g. Every.day(at='09:00', timezone='UTC'))"
            )
        flat.extend(member._members if isinstance(member, Union) else [member])
    if not 2 <= len(flat) <= MAX_MEMBERS:
        raise ValueError(
            f"members: {len(flat)} timetables; a union merges 2 to {MAX_MEMBERS} (each step of the union steps "
            f"every member), e.g. {_EXAMPLE}"
        )
    return flat


def _zone(members: list[TesseraTimetable]) -> str:
    zones = {member._timezone for member in members if member._wall_clock}
    if len(zones) > 1:
        raise ValueError(
            f"members: {shown(sorted(zones))} are read on different wall clocks; a union reads one (its partition "
            f"keys, exclusions and local times use it): give every member the same timezone"
        )
    return zones.pop() if zones else "UTC"


class Unites:
    """Mixed into every tessera timetable a union merges: ``a | b`` is ``Union(a, b)``.

    It lives here, with the union, so the cadences depend on the union and the base on neither.
    """

    def __or__(self, other: object) -> Union:
        return Union(self, other)  # type: ignore[arg-type]  # a member that is not a timetable is refused by name


def _stored_kind(name: object) -> type[TesseraTimetable]:
    """The class of a stored member, by its public name (the package loads it on first use)."""
    if name not in _KINDS:
        raise ValueError(f"members: a stored member of class {shown(name)}; {sorted(_KINDS)}")
    from tessera import timetables

    return getattr(timetables, name)  # type: ignore[arg-type]


class Union(Unites, TesseraTimetable):
    """Run whenever any member would: the merged occurrences of 2 to 16 tessera timetables (see the module).

    :param members: ``Every``, ``Calendar`` and ``Cron`` timetables, each without options.
    :param exclude: local dates (in the members' zone) on which no member runs; see
        :mod:`tessera.timetables.exclusions`.

    The other keywords are those of every tessera timetable (``delay``, ``window``, ``phase``,
    ``catch_up``, ``key``, ``partitioned``, ``key_format``, ``overlap``, ``pause_after_failures``,
    ``dropped``) and apply to the merged sequence.
    """

    def __init__(
        self,
        *members: TesseraTimetable,
        exclude: object = None,
        **options: Unpack[Options],
    ) -> None:
        check_options("Union", options)  # first: a misspelt keyword is named before any other check
        self._members = tuple(_members(members))
        self._timezone = _zone(list(self._members))
        self._wall_clock = any(member._wall_clock for member in self._members)
        self._exclude = parse_exclusions("exclude", exclude)
        cadence = UnionCadence([member._plan.cadence for member in self._members])
        self._configure(with_exclusions("exclude", cadence, self._exclude, self._timezone), **options)

    @property
    def members(self) -> tuple[TesseraTimetable, ...]:
        """The timetables merged, in the order given (unions given as members merged into it)."""
        return self._members

    def _cadence_summary(self) -> str:
        text = " | ".join(member._cadence_summary() for member in self._members)
        return text if self._exclude is None else f"{text} except {self._exclude.describe()}"

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"{super().description} Equal instants of two members run once."

    def _spec(self) -> dict[str, Any]:
        return {
            "members": [{"class": type(member).__name__, **member.serialize()} for member in self._members],
            "timezone": self._timezone,
            "exclude": None if self._exclude is None else self._exclude.to_list(),
        }

    @classmethod
    @decoded_once
    def deserialize(cls, data: dict[str, Any]) -> Union:
        stored = data.get("members", [])[: MAX_MEMBERS + 1]  # more is refused by the constructor, unread
        members = []
        for item in stored:
            members.append(_stored_kind(item.get("class")).deserialize(item))
        timetable = cls(
            *members, exclude=Exclusions.from_list("exclude", data.get("exclude")), **cls._common_kwargs(data)
        )
        return timetable._restore_binding(data)
