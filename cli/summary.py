"""Figures across runs, computed in one place: the terminal tables, summary.csv, results.json and
`compare` all show these rows."""

from __future__ import annotations

import statistics

from cli import cost, resource_figures
from cli.document import InsertRow, QueryRow, ResultsDocument, RunRecord
from simulator import stats


def summarise(document: ResultsDocument) -> None:
    """Fill the document's rows from its runs."""
    document.inserts = insert_rows(document.insert_runs())
    document.queries = query_rows(document.runs)
    for row in document.inserts:
        row.cost = cost.insert_cost(document.cost, row.throughput.avg)
    for query in document.queries:
        query.cost = cost.query_cost(document.cost, query.workers, query.avg_s)


def insert_rows(runs: list[RunRecord]) -> list[InsertRow]:
    """One row per worker count, or per fill-level step, in the order they ran."""
    rows = []
    for workers, step, rate in dict.fromkeys((run.workers, run.step, run.report.spec.rate) for run in runs):
        group = [run.report for run in runs if run.workers == workers and run.step == step and run.report.spec.rate == rate]
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
            **open_loop_figures(figures),
        ))
    return rows


def open_loop_figures(figures: list[stats.InsertRunFigures]) -> dict:
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
