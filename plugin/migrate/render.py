"""The migration report as text: one block per DAG, then the folder's start-time histogram and its problems."""

from __future__ import annotations

import datetime
from typing import Any, TextIO


def _at(moment: str | datetime.datetime) -> str:
    text = moment if isinstance(moment, str) else moment.isoformat()
    return text[:19].replace("T", " ") + "Z"


def _instant(moment: str | datetime.datetime) -> datetime.datetime:
    return moment if isinstance(moment, datetime.datetime) else datetime.datetime.fromisoformat(moment)


def _period(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            return f"{int(seconds // size)}-{unit}"
    return f"{seconds:g}-second"


def _differences(variant: dict[str, Any]) -> str:
    parts = []
    if variant["appear"]:
        parts.append(f"{variant['appear']} appear (first {', '.join(map(_at, variant['first_appear']))})")
    if variant["disappear"]:
        parts.append(f"{variant['disappear']} disappear (first {', '.join(map(_at, variant['first_disappear']))})")
    if variant["move"]:
        moves = ", ".join(f"{_at(m['before'])} -> {_at(m['after'])}" for m in variant["first_move"])
        parts.append(f"{variant['move']} move (first {moves})")
    if variant["window"]:
        first = variant["first_window"][0]
        old, new = first["before"], first["after"]
        parts.append(
            f"{variant['window']} windows change (first {_at(old[0])}..{_at(old[1])} -> {_at(new[0])}..{_at(new[1])})"
        )
    return "; ".join(parts) or "no run differs"


def render(report: dict[str, Any], out: TextIO) -> None:
    """``report`` (a :class:`~.models.MigrateReport` as JSON) for a terminal."""
    span = f"{_at(report['since'])} -> {_at(report['until'])}"
    out.write(f"Compared {span}, run by run, Airflow's timetables against tessera's.\n")
    verdicts: dict[str, int] = {}
    for dag in report["dags"]:
        where = f" ({dag['file']})" if dag["file"] else ""
        out.write(f"\n{dag['dag_id']}{where}: {dag['schedule']}\n")
        if not dag["variants"]:
            out.write("  not compared: not a clock schedule\n" if dag["kind"] == "not_clock" else "  not compared\n")
            verdicts["not compared"] = verdicts.get("not compared", 0) + 1
            continue
        verdicts[dag["verdict"] or "no proposal"] = verdicts.get(dag["verdict"] or "no proposal", 0) + 1
        if dag["verdict"]:
            out.write(f"  verdict: {dag['verdict'].upper()}")
            if dag["repeated"]:
                days = sum((_instant(high) - _instant(low)).days for low, high in dag["repeated"])
                out.write(f" ({days} days counted as repeats of its {_period(dag['period_seconds'] or 0)} period)")
            out.write("\n")
        for variant in dag["variants"]:
            if variant["proposal"] is None:
                out.write(f"  {variant['name']:<10} {variant['note']}\n")
                continue
            out.write(f"  {variant['name']:<10} {variant['proposal']}\n")
            out.write(f"  {'':<10} {variant['verdict']}, {variant['compared']} runs: {_differences(variant)}\n")
        if dag["reads_windows"] is False and any(v["window"] for v in dag["variants"]):
            out.write("  (its windows change, but the file never reads data_interval_*, logical_date or ds)\n")
        for note in dag["notes"]:
            out.write(f"  note: {note}\n")
    for name in ("before", "after"):
        h = report[name]
        at = f" at {_at(h['peak_at'])}" if h["peak_at"] else ""
        ratio = "-" if h["peak_to_mean"] is None else f"{h['peak_to_mean']}"
        label = "now" if name == "before" else f"on tessera ({report['variant']})"
        out.write(
            f"\nStarts in the first 24 h, {label}: {h['runs']} runs, peak {h['peak']} a minute{at}, "
            f"mean {h['mean_per_minute']:.3g}, peak/mean {ratio}"
        )
    out.write("\n\nVerdicts: " + ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items())) + "\n")
    for problem in report["problems"]:
        out.write(f"NOT READ {problem['file']}: {problem['problem']}\n")
    patch = report.get("patch")
    if patch:
        count = len(patch["files"])
        out.write(f"Patch ({patch['variant']}): {count} file{'' if count == 1 else 's'} rewritten\n")
        for left in patch["not_rewritten"]:
            out.write(f"NOT REWRITTEN {left['file']}: {left['problem']}\n")
