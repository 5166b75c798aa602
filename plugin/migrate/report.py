"""The migration report of a DAG folder (``tessera migrate``) or of a deployment's stored DAGs (the REST route).

Each DAG is compared on its own (:func:`~.compare.compare_dag`); the folder adds the start-time
histogram before and after, the files that do not import, and, when asked, the patch.
"""

from __future__ import annotations

import ast
import datetime
import os
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..cancellation import Abandoned, each
from .compare import IDENTICAL, DagComparison, compare_dag
from .current import Current, core_timetable, read_current
from .models import DagMigration, Histogram, MigrateReport, PatchReport, Problem, dag_migration
from .patch import MAX_SOURCE_BYTES, rewritten, schedule_sites, unified_diff
from .proposals import VARIANTS

MAX_FILES = 10_000
"""The most DAG files one ``tessera migrate`` reads (a folder holding more is refused before any import)."""
MAX_RANGE = datetime.timedelta(days=400)
"""The longest range compared (a year, with room for its clock changes)."""
DEFAULT_RANGE = datetime.timedelta(days=365)
HISTOGRAM_SPAN = datetime.timedelta(hours=24)
READS_WINDOWS = re.compile(
    r"\b(data_interval_start|data_interval_end|prev_data_interval_\w+|logical_date|execution_date|ds|ds_nodash|"
    r"ts|ts_nodash|ts_nodash_with_tz)\b"
)
"""What a DAG file says when its tasks read their run's window: Airflow's template variables derived from it."""


def check_range(since: datetime.datetime, until: datetime.datetime) -> None:
    """Refuse a range that is empty or longer than :data:`MAX_RANGE`, naming both ends."""
    if not datetime.timedelta(0) < until - since <= MAX_RANGE:
        raise ValueError(
            f"`until`: {until.isoformat()} is not after `since` {since.isoformat()} by at most {MAX_RANGE.days} "
            f"days; give a range of up to {MAX_RANGE.days} days (default: the next {DEFAULT_RANGE.days})"
        )


def histogram(runs: Iterable[Any], start: datetime.datetime) -> Histogram:
    """Run starts per minute in ``(start, start + 24h]``: the peak minute and the peak-to-mean ratio."""
    end = start + HISTOGRAM_SPAN
    minutes = Counter(run.run_after.replace(second=0, microsecond=0) for run in runs if start < run.run_after <= end)
    total = sum(minutes.values())
    mean = total / (HISTOGRAM_SPAN / datetime.timedelta(minutes=1))
    peak_at, peak = max(minutes.items(), key=lambda item: (item[1], -item[0].timestamp()), default=(None, 0))
    return Histogram(
        runs=total,
        peak=peak,
        peak_at=peak_at,
        mean_per_minute=round(mean, 4),
        peak_to_mean=round(peak / mean, 1) if mean else None,
    )


def _histograms(
    comparisons: list[DagComparison], since: datetime.datetime, variant: str
) -> tuple[Histogram, Histogram]:
    """Run starts before, and after each DAG moves to its ``variant`` (its exact one where that is not offered)."""
    before, after = [], []
    for comparison in comparisons:
        offered = [v for v in comparison.variants if v.call is not None]
        chosen = next((v for v in offered if v.name == variant), offered[0] if offered else None)
        before += comparison.before
        # A DAG with no proposal keeps its schedule, so it counts the same on both sides.
        after += comparison.before if chosen is None else chosen.runs
    return histogram(before, since), histogram(after, since)


@dataclass(frozen=True)
class FolderDag:
    dag: Any
    file: str
    source: str | None


def _source(path: str) -> str | None:
    """The DAG file's text, if it is one readable text file of at most :data:`MAX_SOURCE_BYTES`."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
        return data.decode("utf-8") if len(data) <= MAX_SOURCE_BYTES else None
    except (OSError, UnicodeDecodeError):
        return None  # inside a .zip, unreadable, or not UTF-8: compared, not rewritten


def compare_one(
    dag_id: str,
    timetable: Any,
    *,
    start_date: Any,
    end_date: Any,
    catchup: bool,
    reads_windows: bool | None,
    since: datetime.datetime,
    until: datetime.datetime,
) -> DagComparison:
    """One DAG, whatever its timetable: one it cannot read is reported with why, never raised."""
    from tessera.timetables import TesseraTimetable

    try:
        core = timetable if isinstance(timetable, TesseraTimetable) else core_timetable(timetable)
        current = read_current(core)
        dates = {"start_date": start_date, "end_date": end_date}
        return compare_dag(
            dag_id, core, current, catchup=catchup, reads_windows=reads_windows, since=since, until=until, **dates
        )
    except Abandoned:
        raise  # the caller left: the work stops here, it is not this DAG's failure
    except Exception as error:  # a custom timetable that raises: one report line, not a failed report
        current = Current(type(timetable).__name__, "custom", words=f"its timetable raised {error!r:.200}")
        return DagComparison(dag_id, current, reads_windows)


def migrate_folder(
    path: str,
    *,
    since: datetime.datetime,
    until: datetime.datetime,
    variant: str = "exact",
    include_changed: bool = False,
    patch: bool = False,
) -> tuple[MigrateReport, str]:
    """The report of every DAG under ``path`` (loaded as ``tessera plan`` loads it), and the patch's text."""
    from ..cli.inputs import load_dags

    check_range(since, until)
    bag = load_dags(path, max_files=MAX_FILES)
    root = path if os.path.isdir(path) else os.path.dirname(path)
    problems = [
        Problem(file=os.path.relpath(file, root), problem=error.strip().splitlines()[-1][:500])
        for file, error in sorted(bag.import_errors.items())
    ]
    dags = []
    sources: dict[str, str | None] = {}
    for dag in sorted(bag.dags.values(), key=lambda d: d.dag_id):
        file = os.path.relpath(dag.fileloc, root)
        if file not in sources:
            sources[file] = _source(dag.fileloc)
        dags.append(FolderDag(dag, file, sources[file]))
    comparisons = []
    for item in each(dags):
        text = item.source
        dag = item.dag
        reads = None if text is None else READS_WINDOWS.search(text) is not None
        comparisons.append(
            compare_one(
                dag.dag_id,
                dag.timetable,
                start_date=dag.start_date,
                end_date=dag.end_date,
                catchup=bool(dag.catchup),
                reads_windows=reads,
                since=since,
                until=until,
            )
        )
    before, after = _histograms(comparisons, since, variant)
    report = MigrateReport(
        since=since,
        until=until,
        dags=[dag_migration(c, item.file) for c, item in zip(comparisons, dags)],
        before=before,
        after=after,
        problems=problems,
        variant=variant,
    )
    if not patch:
        return report, ""
    report.patch, text = _patch(report.dags, sources, root, variant=variant, include_changed=include_changed)
    return report, text


def _patch(
    dags: list[DagMigration], sources: dict[str, str | None], root: str, *, variant: str, include_changed: bool
) -> tuple[PatchReport, str]:
    """The diff of every file whose DAGs' ``variant`` proposals can be written in, and what was left alone."""
    if variant not in VARIANTS:
        raise ValueError(f"`--variant`: {variant!r}; give one of {', '.join(VARIANTS)}")
    left: list[Problem] = []
    wanted: dict[str, dict[str, str]] = {}
    for dag in dags:
        chosen = next((v for v in dag.variants if v.name == variant), None)
        if dag.kind in ("tessera", "not_clock"):
            continue
        where = f"{dag.file} ({dag.dag_id})"
        if chosen is None or chosen.proposal is None:
            left.append(Problem(file=where, problem=chosen.note if chosen else f"no proposal: {dag.schedule}"))
        elif chosen.verdict != IDENTICAL and not include_changed:
            left.append(Problem(file=where, problem=f"{chosen.verdict}; --include-changed writes it too"))
        else:
            wanted.setdefault(dag.file or "", {})[dag.dag_id] = chosen.proposal
    files, diffs = [], []
    for file, proposals in sorted(wanted.items()):
        source = sources.get(file)
        if source is None:
            left += [
                Problem(file=f"{file} ({d})", problem="not a readable text file of at most 1 MiB") for d in proposals
            ]
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            left += [Problem(file=f"{file} ({d})", problem="the file does not parse as Python") for d in proposals]
            continue
        sites = schedule_sites(tree, list(proposals))
        replacements = []
        for dag_id, proposal in proposals.items():
            site = sites[dag_id]
            if site.value is None:
                left.append(Problem(file=f"{file} ({dag_id})", problem=site.reason))
            else:
                replacements.append((site.value, proposal))
        if not replacements:
            continue
        names = {name for _, text in replacements for name in re.findall(r"\b(Cron|Every|Union|Fixed|Spread)\(", text)}
        new = rewritten(source, replacements, names)
        files.append(file)
        diffs.append(unified_diff(file, source, new))
    return PatchReport(variant=variant, files=files, not_rewritten=left), "".join(diffs)


def migrate_stored(
    dags: Iterable[Any], *, since: datetime.datetime, until: datetime.datetime, variant: str = "exact"
) -> MigrateReport:
    """The report of a deployment's stored DAGs (each with ``dag_id``, ``timetable``, ``start_date``, ``end_date``).

    No file is read: whether a DAG reads its windows is unknown (so a window that changes counts),
    a DAG whose stored timetable no longer loads is a problem line, and there is no patch.
    """
    check_range(since, until)
    comparisons, problems = [], []
    for dag in each(dags):
        if dag.timetable is None:
            problems.append(Problem(file=dag.dag_id, problem=dag.error or "its stored timetable does not load"))
            continue
        dates = {"start_date": dag.start_date, "end_date": dag.end_date}
        comparisons.append(
            compare_one(dag.dag_id, dag.timetable, catchup=False, reads_windows=None, since=since, until=until, **dates)
        )
    before, after = _histograms(comparisons, since, variant)
    return MigrateReport(
        since=since,
        until=until,
        dags=[dag_migration(c, None) for c in comparisons],
        before=before,
        after=after,
        problems=problems,
        variant=variant,
    )
