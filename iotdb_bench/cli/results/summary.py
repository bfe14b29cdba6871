"""Figures across runs, computed in one place: the terminal tables, summary.csv, results.json and
`compare` all show these rows."""

from __future__ import annotations

import statistics
from typing import Any

from iotdb_bench.cli.results import cost, resource_figures, row_flags, thresholds
from iotdb_bench.cli.results.document import InsertRow, QueryRow, QueryUnderIngestRow, ResultsDocument, RunRecord, ScanRow, insert_figures
from iotdb_bench.simulator.measurement import stats


def summarise(document: ResultsDocument) -> None:
    """Fill the document's rows from its runs."""
    document.inserts = insert_rows(document.insert_runs(), local_cores(document))
    add_mixed_figures(document.inserts, document.insert_runs(), document.runs_without_queries())
    document.queries_under_ingest = query_under_ingest_rows(document.insert_runs())
    document.queries = query_rows(document.runs)
    document.scans = scan_rows(document.runs)
    for row in document.inserts:
        row.cost = cost.insert_cost(document.cost, row.throughput.avg)
    for query in document.queries:
        query.cost = cost.query_cost(document.cost, query.workers, query.avg_s)
    document.thresholds = thresholds.judge_all(document.thresholds, document)


def local_cores(document: ResultsDocument) -> int | None:
    """The CPUs of the machine the runs' processes shared: the CLI's, on the local platform."""
    if document.platform != "local":
        return None
    host = document.environment.host
    return (host.logical_cpus if host else None) or document.environment.cpus


def insert_rows(runs: list[RunRecord], cores: int | None = None) -> list[InsertRow]:
    """One row per worker count, or per fill-level step, in the order they ran; `cores`: see local_cores."""
    rows = []
    for workers, step, rate in dict.fromkeys((run.workers, run.step, run.report.spec.rate) for run in runs):
        group = [run.report for run in runs if run.workers == workers and run.step == step and run.report.spec.rate == rate]
        figures = [insert_figures(report) for report in group]
        latency = [f.latency for f in figures]
        resources = resource_figures.across_runs([resource_figures.run_figures(report) for report in group])
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
            count_check_s=_mean([report.verification.seconds() for report in group if report.verification]),
            record_s=_mean([report.record_s for report in group]),
            resources=resources,
            flags=row_flags.insert_row_flags(group, resources, cores),
            values_per_row=figures[0].values_per_event,
            values_throughput=stats.spread([f.values_throughput for f in figures]),
            **open_loop_figures(figures),
        ))
    return rows


def open_loop_figures(figures: list[stats.InsertRunFigures]) -> dict[str, Any]:
    """The InsertRow fields of open-loop runs (--rate): target, sustained, response-time percentiles."""
    rates = [f.rate for f in figures if f.rate is not None]
    responses = [f.response_latency for f in figures if f.response_latency is not None]
    if not rates or not responses:
        return {}
    return {
        "target_rate": rates[0].target,
        "sustained": "yes" if all(rate.sustained for rate in rates) else "NO",
        "behind_s": max(rate.behind_s for rate in rates),
        "max_lag_s": max(rate.max_lag_s for rate in rates),
        "response_p50_ms": statistics.fmean(one.p50_ms for one in responses),
        "response_p95_ms": statistics.fmean(one.p95_ms for one in responses),
        "response_p99_ms": stats.spread([one.p99_ms for one in responses]),
        "response_max_ms": max(one.max_ms for one in responses),
    }
def add_mixed_figures(rows: list[InsertRow], runs: list[RunRecord], without_queries: list[RunRecord]) -> None:
    """Query clients, --compare-idle's throughput without them and --visibility's lag, per row."""
    for row in rows:
        group = [run.report for run in runs if run.workers == row.workers and run.step == row.step]
        row.query_workers = group[0].spec.query_workers
        twins = [insert_figures(run.report).throughput for run in without_queries if run.workers == row.workers and run.step == row.step]
        row.throughput_without_queries = stats.spread(twins) if twins else None
        lags = [report.visibility for report in group if report.visibility is not None]
        measured = [lag.lag for lag in lags if lag.lag is not None]
        if lags:
            row.visibility_unseen = sum(lag.unseen for lag in lags)
        if measured:
            row.visibility_p50_ms = statistics.fmean(one.p50_ms for one in measured)
            row.visibility_p99_ms = statistics.fmean(one.p99_ms for one in measured)
            row.visibility_max_ms = max(one.max_ms for one in measured)


def query_under_ingest_rows(runs: list[RunRecord]) -> list[QueryUnderIngestRow]:
    """One row per query and worker count of the mixed runs, means over the runs."""
    rows = []
    for workers, step in dict.fromkeys((run.workers, run.step) for run in runs):
        group = [run.report for run in runs if run.workers == workers and run.step == step and run.report.queries_under_ingest]
        for name in dict.fromkeys(name for report in group for name in report.queries_under_ingest):
            figures = [report.queries_under_ingest[name] for report in group if name in report.queries_under_ingest]
            busy = [f.under_ingest for f in figures if f.under_ingest is not None]
            idle = [f.idle for f in figures if f.idle is not None]
            row = QueryUnderIngestRow(
                workers=workers, query_workers=group[0].spec.query_workers, query=name, runs=len(figures),
                executions=sum(one.calls for one in busy), idle_executions=sum(one.calls for one in idle),
                errors=list(dict.fromkeys(error for f in figures for error in f.errors)),
            )
            if busy:
                row.p50_ms = statistics.fmean(one.p50_ms for one in busy)
                row.p99_ms = statistics.fmean(one.p99_ms for one in busy)
                row.max_ms = max(one.max_ms for one in busy)
            if idle:
                row.idle_p50_ms = statistics.fmean(one.p50_ms for one in idle)
                row.idle_p99_ms = statistics.fmean(one.p99_ms for one in idle)
            if row.p50_ms is not None and row.idle_p50_ms:
                row.slowdown = row.p50_ms / row.idle_p50_ms
            rows.append(row)
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
            check=check, problem=problem, check_s=_mean([scan.check_s for scan in group]),
        ))
    return rows


def _mean(values: list[float | None]) -> float | None:
    """The mean of the values measured (reports of older versions have none)."""
    measured = [value for value in values if value is not None]
    return statistics.fmean(measured) if measured else None
