"""The tessera schedules proposed for an Airflow schedule: the candidates, and the variants a team chooses from.

A proposal is a :class:`Call`: one value that is both the source text the patch writes and the
timetable the comparison steps, so what is compared is exactly what is written.

For each clock schedule the candidates that may keep its runs are listed (a cron read with
either DST policy; a ``timedelta`` as an epoch-aligned ``Every`` or as a UTC cron on its start
date's grid); the report steps each and keeps the closest as the *exact* variant. The others:

* ``spread``: the exact one with a stable hashed phase, so DAGs that start together no longer do;
* ``wall-clock``: a cron whose every wall-clock time fires once across DST changes (``dst="once"``);
* ``cronjob``: a cron with Kubernetes CronJob DST semantics (``dst="cronjob"``).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .current import Current

VARIANTS = ("exact", "spread", "wall-clock", "cronjob")
"""The variants, in the order the report lists them; ``exact`` is the default for ``--patch``."""
MAX_SPREAD = datetime.timedelta(minutes=15)
"""The largest phase the ``spread`` variant proposes (Every's default spread bound)."""
_MINUTE = datetime.timedelta(minutes=1)
_DAY = datetime.timedelta(days=1)
_HOUR = datetime.timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Call:
    """A call of a name of ``tessera.timetables``: written as source, or made into the object it writes."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()

    def source(self) -> str:
        def text(value: Any) -> str:
            return value.source() if isinstance(value, Call) else repr(value)

        parts = [text(arg) for arg in self.args] + [f"{name}={text(value)}" for name, value in self.kwargs]
        return f"{self.name}({', '.join(parts)})"

    def build(self) -> Any:
        import tessera.timetables as timetables

        def made(value: Any) -> Any:
            return value.build() if isinstance(value, Call) else value

        function = getattr(timetables, self.name)
        return function(*(made(arg) for arg in self.args), **{name: made(value) for name, value in self.kwargs})

    def names(self) -> set[str]:
        """The names of ``tessera.timetables`` the source uses (what the patch imports)."""
        found = {self.name}
        for value in (*self.args, *(value for _, value in self.kwargs)):
            if isinstance(value, Call):
                found |= value.names()
        return found

    def with_option(self, name: str, value: Any) -> Call:
        kwargs = tuple((key, old) for key, old in self.kwargs if key != name)
        return Call(self.name, self.args, (*kwargs, (name, value)))


def _duration(delta: datetime.timedelta) -> str:
    """A whole-second duration in tessera's words ("90m", "6h", "2d")."""
    seconds = int(delta.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _window(current: Current) -> tuple[tuple[str, Any], ...]:
    """A trigger timetable's declared interval as tessera's fixed lookback (``window=``)."""
    interval = current.interval
    return (("window", _duration(interval)),) if interval else ()


def _cron(expression: str, zone: str, dst: str, current: Current) -> Call:
    policy = () if dst == "cronjob" else (("dst", dst),)
    return Call("Cron", (expression,), (("timezone", zone), *policy, *_window(current)))


def _crons(current: Current, dst: str) -> Call:
    if len(current.expressions) == 1:
        return _cron(current.expressions[0], current.timezone, dst, current)
    members = tuple(_cron(e, current.timezone, dst, Current("", "cron")) for e in current.expressions)
    return Call("Union", members, _window(current))


def _utc_cron_of_grid(delta: datetime.timedelta, start: datetime.datetime) -> str | None:
    """The UTC cron whose times are ``start + k * delta``, when a cron can say it (None otherwise).

    A step dividing an hour is a list of minutes; one of whole hours dividing a day, a list of
    hours; a day, a time; a week, a time on a weekday.
    """
    start = start.astimezone(datetime.timezone.utc)
    if start.second or start.microsecond or delta % _MINUTE:
        return None
    if _HOUR % delta == datetime.timedelta(0):
        step = delta // _MINUTE
        minutes = sorted((start.minute + step * k) % 60 for k in range(60 // step))
        return f"{','.join(map(str, minutes))} * * * *"
    if delta % _HOUR == datetime.timedelta(0) and _DAY % delta == datetime.timedelta(0):
        step = delta // _HOUR
        hours = sorted((start.hour + step * k) % 24 for k in range(24 // step))
        return f"{start.minute} {','.join(map(str, hours))} * * *"
    if delta == _DAY:
        return f"{start.minute} {start.hour} * * *"
    if delta == 7 * _DAY:
        return f"{start.minute} {start.hour} * * {start.isoweekday() % 7}"
    return None


def candidates(current: Current, start_date: datetime.datetime | None) -> Iterator[Call]:
    """The tessera schedules that may keep ``current``'s runs, the likeliest first."""
    if current.kind in ("cron", "crons"):
        # Airflow reads a fixed-hour cron once per wall-clock time and an hourly one on absolute time.
        yield _crons(current, "once")
        yield _crons(current, "cronjob")
    elif current.kind == "delta" and current.delta is not None:
        if start_date is not None and (expression := _utc_cron_of_grid(current.delta, start_date)) is not None:
            yield _cron(expression, "UTC", "cronjob", current)
        # Airflow starts each run at its occurrence; Every's default phase would spread them.
        yield Call("Every", (_duration(current.delta),), (("phase", Call("Fixed", ("0s",))), *_window(current)))


def spread(exact: Call, spacing: datetime.timedelta | None) -> Call | str:
    """The exact proposal with a hashed phase below a quarter of the runs' spacing (at most 15m), or why not."""
    if spacing is None:
        return "not offered: fewer than two runs to measure their spacing"
    bound = min(MAX_SPREAD, spacing / 4) // _MINUTE * _MINUTE
    if bound < _MINUTE:
        return f"not offered: runs {_duration(spacing)} apart leave no room for a phase of a minute or more"
    return exact.with_option("phase", Call("Spread", (), (("max", _duration(bound)),)))


def dst_variant(current: Current, dst: str) -> Call | str:
    """The cron read with ``dst`` (``once``: the wall-clock variant; ``cronjob``), or why it is not offered."""
    if current.kind not in ("cron", "crons"):
        return "not offered: the schedule counts absolute time (a timedelta), which no clock change moves"
    return _crons(current, dst)
