"""One table across saved runs and targets, in the shape of the original study's results tables:
database, insert mode, primary-key mode, inserts/s (with spread), p99 latency; and database x the
five queries in average seconds. Pure functions over saved results documents."""

from __future__ import annotations

from typing import Any

from simulator import stats
from simulator.spec import QUERY_NAMES

from cli import crosscheck

# Modules whose batch mode is binary COPY unless their options say otherwise (simulator/modules/postgres.py).
COPY_BY_DEFAULT = {"postgres", "timescaledb"}
_BATCH_MODE_NAMES = {"copy": "copy", "values": "values lists", "transaction": "transaction"}


def insert_mode(spec: dict[str, Any]) -> str:
    """The insert mode as the original study's tables name it, e.g. 'copy, size 1000'."""
    options = {**spec.get("connection", {}), **spec.get("extra", {})}
    if not spec["batch"]:
        kind = "single inserts"
    else:
        if options.get("batch_mode"):
            kind = _BATCH_MODE_NAMES.get(str(options["batch_mode"]), str(options["batch_mode"]))
        elif _true(options.get("use_values_lists")):
            kind = "values lists"
        elif spec["module"] in COPY_BY_DEFAULT and _true(options.get("copy_supported", True)):
            kind = "copy"
        elif spec["module"] == "null":
            kind = f"null ({options.get('encoding', 'copy')})"
        else:
            kind = "batch"
        kind += f", size {spec['batch']}"
    if "max_sync_calls" in options:
        kind += f", max_sync_calls {options['max_sync_calls']}"
    return kind


def _true(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def insert_rows(documents: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per worker count (or fill-level step) of every saved insert run."""
    rows = []
    for source, document in documents:
        if document.get("task") != "insert":
            continue
        runs = [run for run in document.get("runs", []) if "figures" in run.get("report", {})]
        checks = crosscheck.run_checks(document)
        for workers, step in dict.fromkeys((run["workers"], run.get("step")) for run in runs):
            group = [i for i, run in enumerate(runs) if run["workers"] == workers and run.get("step") == step]
            figures = [runs[i]["report"]["figures"] for i in group]
            rows.append({
                "database": document["target"],
                "source": source,
                "workers": workers,
                "step": step,
                "level": runs[group[0]]["report"]["verification"]["count_before"] if step else None,
                "insert_mode": insert_mode(document["spec"]),
                "primary_key": document["spec"]["primary_key"],
                "throughput": stats.spread([f["throughput"] for f in figures]).model_dump(),
                "seed_formula_throughput": stats.spread([f["seed_formula_throughput"] for f in figures]).model_dump(),
                "p99_ms": stats.spread([f["latency"]["p99_ms"] for f in figures]).model_dump(),
                "crosscheck": crosscheck_verdict([checks[i] for i in group]),
                "status": document.get("status"),
            })
    return rows


def crosscheck_verdict(checks: list[dict[str, Any]]) -> str:
    """One phrase for the database-side checks of a group of runs."""
    if any(check["count_check"] == "FAILED" for check in checks):
        return "count FAILED"
    if all(check["count_check"] == "not applicable" for check in checks):
        return "not applicable"
    differences = [check["difference"] for check in checks if check["difference"] is not None]
    if not differences:
        return "not exposed"
    worst = max(differences, key=abs)
    return f"FLAGGED {worst:+.1%}" if any(check["flagged"] for check in checks) else f"within 2% ({worst:+.1%})"


def query_rows(documents: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(table rows: database x queries, detail rows: one per database, worker count and query)."""
    table, detail = [], []
    for source, document in documents:
        if document.get("task") != "query":
            continue
        for run in document.get("runs", []):
            report = run.get("report", {})
            if "queries" not in report:
                continue
            cells = {name: "-" for name in (*QUERY_NAMES, *report["queries"])}
            for name, figures in report["queries"].items():
                seconds = [s for worker in report.get("workers", []) for s in worker.get("queries", {}).get(name, {}).get("seconds", [])]
                spread = stats.spread(seconds).model_dump() if seconds else None
                cells[name] = _query_cell(figures, spread)
                detail.append({
                    "database": document["target"], "source": source, "workers": run["workers"], "query": name,
                    "avg_s": figures["avg_s"], "min_s": figures["min_s"], "max_s": figures["max_s"],
                    "cold_avg_s": figures["cold_avg_s"], "warm_avg_s": figures["warm_avg_s"],
                    "executions": figures["executions"], "cv": spread["cv"] if spread else None,
                    "unstable": spread["unstable"] if spread else None, "rows": figures["rows"],
                    "errors": "; ".join(figures["errors"]),
                })
            table.append({"database": document["target"], "source": source, "workers": run["workers"], "cells": cells})
    return table, detail


def query_columns(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """The five queries, then any variant a compared run executed (e.g. a loose index scan)."""
    return tuple(dict.fromkeys([*QUERY_NAMES, *(name for row in rows for name in row["cells"])]))


def _query_cell(figures: dict[str, Any], spread: dict[str, Any] | None) -> str:
    if figures["avg_s"] is None:
        return "failure" if figures["errors"] else "-"
    value = figures["avg_s"]
    text = f"{value:.2g}" if value < 1 else f"{value:.3g}" if value < 100 else f"{value:.0f}"
    if figures["errors"]:
        text += " (some failed)"
    return text + ("*" if spread and spread["unstable"] else "")


# -- files --------------------------------------------------------------------------------------

def insert_markdown(rows: list[dict[str, Any]]) -> str:
    with_levels = any(row["level"] is not None for row in rows)
    header = ["Database", "Workers"] + (["Fill level"] if with_levels else []) + [
        "Inserts/s", "CV", "Insert mode", "Primary-key mode", "p99 latency (ms)", "Database-side check"]
    lines = [_markdown_row(header), _markdown_row(["---"] * len(header))]
    for row in rows:
        spread = row["throughput"]
        cells = [row["database"], str(row["workers"])] + ([f"{row['level']:,}" if row["level"] is not None else ""] if with_levels else []) + [
            f"{spread['avg']:,.0f}", f"{spread['cv']:.1%}" + (" unstable" if spread["unstable"] else ""),
            row["insert_mode"], row["primary_key"], f"{row['p99_ms']['avg']:.3g}", row["crosscheck"]]
        lines.append(_markdown_row(cells))
    return "\n".join(lines) + "\n"


def query_markdown(rows: list[dict[str, Any]]) -> str:
    columns = query_columns(rows)
    header = ["Database / Query", "Workers", *columns]
    lines = [_markdown_row(header), _markdown_row(["---"] * len(header))]
    for row in rows:
        lines.append(_markdown_row([row["database"], str(row["workers"]), *(row["cells"].get(name, "-") for name in columns)]))
    return "\n".join(lines) + "\n"


def _markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def insert_csv_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "database": row["database"], "workers": row["workers"], "step": row["step"], "fill_level": row["level"],
            "insert_mode": row["insert_mode"], "primary_key": row["primary_key"],
            "inserts_per_s": row["throughput"], "seed_formula_inserts_per_s": row["seed_formula_throughput"]["avg"],
            "p99_ms": row["p99_ms"], "database_side_check": row["crosscheck"], "status": row["status"], "source": row["source"],
        }
        for row in rows
    ]
