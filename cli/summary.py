"""Figures across runs, computed in one place: the terminal tables, summary.csv, results.json and
`compare` all show these rows."""

from __future__ import annotations

import statistics

from cli import cost, resource_figures
from cli.document import InsertRow, QueryRow, ResultsDocument, RunRecord, ScanRow
from simulator import stats


def summarise(document: ResultsDocument) -> None:
    """Fill the document's rows from its runs."""
    document.inserts = insert_rows(document.insert_runs())
    document.queries = query_rows(document.runs)
    document.scans = scan_rows(document.runs)
    for row in document.inserts:
        row.cost = cost.insert_cost(document.cost, row.throughput.avg)
    for query in document.queries:
        query.cost = cost.query_cost(document.cost, query.workers, query.avg_s)


def insert_rows(runs: list[RunRecord]) -> list[InsertRow]:
    """One row per worker count, or per fill-level step, in the order they ran."""
    rows = []
    for workers, step in dict.fromkeys((run.workers, run.step) for run in runs):
        group = [run.report for run in runs if run.workers == workers and run.step == step]
        figures = [report.figures for report in group]
        latency = [f.latency for f in figures]
        rows.append(InsertRow(
            workers=workers,
            step=step,
            level=group[0].verification.count_before if step is not None and group[0].verification else None,
            runs=len(group),
            insert_mode=group[0].insert_mode,
            throughput=stats.spread([f.throughput for f in figures]),
            seed_formula_throughput=stats.spread([f.seed_formula_throughput for f in figures]),
            p50_ms=statistics.fmean(one.p50_ms for one in latency),
            p95_ms=statistics.fmean(one.p95_ms for one in latency),
            p99_ms=stats.spread([one.p99_ms for one in latency]),
            max_ms=max(one.max_ms for one in latency),
            client_overhead=statistics.fmean(f.client_overhead for f in figures),
            start_skew_s=max(f.start_skew_s for f in figures),
            retries=sum(f.retries for f in figures),
            count_check=count_verdict([report.verification.verdict() for report in group if report.verification]),
            resources=resource_figures.across_runs([resource_figures.run_figures(report) for report in group]),
            values_per_row=figures[0].values_per_event,
            values_throughput=stats.spread([f.values_throughput for f in figures]),
        ))
    return rows


def count_verdict(verdicts: list[str]) -> str:
    """One verdict for the count checks of several runs."""
    if "FAILED" in verdicts:
        return "FAILED"
    if verdicts and all(verdict == "not applicable" for verdict in verdicts):
        return "not applicable"
    return "ok" if verdicts else "-"


def query_rows(runs: list[RunRecord]) -> list[QueryRow]:
    return [
        QueryRow(workers=run.workers, query=name, **figures.model_dump())
        for run in runs
        for name, figures in run.report.queries.items()
    ]


def scan_rows(runs: list[RunRecord]) -> list[ScanRow]:
    """One row per worker count of the scan runs, in the order they ran."""
    rows = []
    for workers in dict.fromkeys(run.workers for run in runs if run.report.scan is not None):
        group = [run.report.scan for run in runs if run.workers == workers and run.report.scan is not None]
        low = [scan.window_min for scan in group if scan.window_min is not None]
        mean = [scan.window_avg for scan in group if scan.window_avg is not None]
        high = [scan.window_max for scan in group if scan.window_max is not None]
        checks = [scan.check() for scan in group]
        check = "FAILED" if "FAILED" in checks else checks[-1] if len(set(checks)) == 1 else "order ok, counts not checked"
        problem = next((scan.failure() for scan in group if scan.failure()), None) or next((scan.count_note for scan in group if scan.count_note), None)
        rows.append(ScanRow(
            workers=workers, runs=len(group), devices=group[-1].devices, rows=group[-1].rows,
            rows_per_s=stats.spread([scan.rows_per_s for scan in group]),
            window_min=min(low) if low else None, window_avg=statistics.fmean(mean) if mean else None, window_max=max(high) if high else None,
            page_p50_ms=statistics.fmean(scan.latency.p50_ms for scan in group),
            page_p99_ms=statistics.fmean(scan.latency.p99_ms for scan in group),
            page_max_ms=max(scan.latency.max_ms for scan in group),
            check=check, problem=problem,
        ))
    return rows
