"""One table across saved runs and targets, in the shape of the original study's results tables:
database, insert mode, primary-key mode, inserts/s (with spread), p99 latency; and database x the
queries in average seconds. The figures are the invocations' own summary rows (cli/summary.py);
the insert mode is the label each database module gave its runs."""

from __future__ import annotations

from pydantic import BaseModel, Field

from iotdb_bench.cli.results import cost, crosscheck, run_conditions
from iotdb_bench.cli.results.cost import QueryCost
from iotdb_bench.cli.results.crosscheck import CrossCheck
from iotdb_bench.cli.results.document import InsertRow, QueryUnderIngestRow, ResultsDocument, ScanRow
from iotdb_bench.simulator import shapes, stats
from iotdb_bench.simulator.spec import QUERY_NAMES

Sources = list[tuple[str, ResultsDocument]]


class Conditions(BaseModel):
    """A compared row's key conditions and, when they set it apart from the other rows, how."""

    conditions: dict[str, str] = Field(default_factory=dict, description="server version, batch, shape, platform, node type")
    differs: list[str] = Field(default_factory=list, description="conditions in which this row differs from the others")


class CompareInsertRow(InsertRow, Conditions):
    database: str
    source: str
    primary_key: str
    crosscheck: str
    status: str
    workload: str = Field("", description="the workload options of the run, when not the default (schema, measurements, order...)")


class CompareQueryDetail(BaseModel):
    database: str
    source: str
    workers: int
    query: str
    avg_s: float | None
    min_s: float | None
    max_s: float | None
    cold_avg_s: float | None
    warm_avg_s: float | None
    executions: int
    cv: float | None
    unstable: bool | None
    rows: int | None
    errors: str
    cost: QueryCost | None = None
    answer: str | None = None
    answer_detail: str | None = None


class CompareScanRow(ScanRow, Conditions):
    database: str
    source: str
    status: str


class CompareQueryUnderIngestRow(QueryUnderIngestRow):
    database: str
    source: str


def query_under_ingest_rows(documents: Sources) -> list[CompareQueryUnderIngestRow]:
    """Every saved mixed insert invocation's query rows (under ingest beside idle)."""
    return [CompareQueryUnderIngestRow(**row.model_dump(), database=document.target, source=source)
            for source, document in documents for row in document.queries_under_ingest]


def mixed_markdown(insert_rows: list[CompareInsertRow], query_rows: list[CompareQueryUnderIngestRow]) -> str:
    """compare.md's sections of the mixed runs and the visibility lag ("" when no run has them)."""
    parts = []
    if query_rows:
        header = ["Database", "Workers", "Query clients", "Query", "Executions", "p50 ms", "p99 ms", "Idle p50 ms", "Idle p99 ms", "Slowdown"]
        lines = [_markdown_row(header), _markdown_row(["---"] * len(header))]
        for row in query_rows:
            lines.append(_markdown_row([row.database, str(row.workers), str(row.query_workers), row.query, f"{row.executions:,}",
                                        *(_or_dash(value, "{:.3g}") for value in (row.p50_ms, row.p99_ms, row.idle_p50_ms, row.idle_p99_ms)),
                                        _or_dash(row.slowdown, "{:.3g}x")]))
        parts += ["## Queries under ingest\n", "\n".join(lines) + "\n",
                  "Latency per execution while the workers inserted, beside the same query on the idle database right after "
                  "(same data); slowdown = p50 under ingest / p50 idle.\n"]
    twins = [row for row in insert_rows if row.throughput_without_queries is not None]
    if twins:
        lines = [_markdown_row(["Database", "Workers", "Query clients", "Inserts/s with queries", "Inserts/s without"]), _markdown_row(["---"] * 5)]
        lines += [_markdown_row([row.database, str(row.workers), str(row.query_workers), f"{row.throughput.avg:,.0f}",
                                 f"{row.throughput_without_queries.avg:,.0f}"]) for row in twins]
        parts += ["## Inserts with and without queries\n", "\n".join(lines) + "\n"]
    lags = [row for row in insert_rows if row.visibility_unseen is not None]
    if lags:
        lines = [_markdown_row(["Database", "Workers", "Visibility p50 ms", "p99 ms", "max ms", "Unseen markers"]), _markdown_row(["---"] * 6)]
        lines += [_markdown_row([row.database, str(row.workers), _or_dash(row.visibility_p50_ms, "{:.3g}"), _or_dash(row.visibility_p99_ms, "{:.3g}"),
                                 _or_dash(row.visibility_max_ms, "{:.3g}"), str(row.visibility_unseen)]) for row in lags]
        parts += ["## Visibility lag\n", "\n".join(lines) + "\n",
                  "From the start of a marker event's write to the start of the first query that saw it.\n"]
    return "\n".join(parts)


def _or_dash(value: float | None, form: str) -> str:
    return "-" if value is None else form.format(value)


class CompareQueryRow(Conditions):
    database: str
    source: str
    workers: int
    cells: dict[str, str]


def mark_differences(rows: list[Conditions]) -> None:
    """Mark the rows whose conditions differ from the others' in ways that matter (run_conditions.differences)."""
    for row, differs in zip(rows, run_conditions.differences([row.conditions for row in rows])):
        row.differs = differs


def insert_rows(documents: Sources) -> list[CompareInsertRow]:
    """Every saved insert invocation's rows (one per worker count or fill-level step)."""
    rows = []
    for source, document in documents:
        if document.task != "insert":
            continue
        checks = crosscheck.run_checks(document)
        conditions = run_conditions.key_conditions(document)
        for row in document.inserts:
            group = [check for check in checks if check.workers == row.workers and check.step == row.step]
            rows.append(CompareInsertRow(
                **row.model_dump(), database=document.target, source=source, primary_key=document.spec.primary_key.value,
                crosscheck=crosscheck_verdict(group), status=document.status, conditions=conditions,
                workload=shapes.describe(document.spec),
            ))
    mark_differences(rows)
    return rows


def insert_mode_label(row: InsertRow) -> str:
    return row.insert_mode or "not recorded"


def crosscheck_verdict(checks: list[CrossCheck]) -> str:
    """One phrase for the database-side checks of a group of runs: the count check, then the counters."""
    if checks and all(check.count_check == "not applicable" for check in checks):
        return "not applicable"
    count = "count FAILED" if any(check.count_check == "FAILED" for check in checks) else ""
    differences = [check.difference for check in checks if check.difference is not None]
    if not differences:
        return count or "not exposed"
    worst = max(differences, key=abs)
    counters = f"FLAGGED {worst:+.1%}" if any(check.flagged for check in checks) else f"within 2% ({worst:+.1%})"
    return f"{count}, {counters}" if count else counters


def query_rows(documents: Sources) -> tuple[list[CompareQueryRow], list[CompareQueryDetail]]:
    """(table rows: database x queries, detail rows: one per database, worker count and query)."""
    table, detail = [], []
    for source, document in documents:
        if document.task != "query":
            continue
        for run in document.runs:
            report = run.report
            cells = dict.fromkeys((*QUERY_NAMES, *report.queries), "-")
            for name, figures in report.queries.items():
                seconds = [s for worker in report.workers if name in worker.queries for s in worker.queries[name].seconds]
                spread = stats.spread(seconds) if seconds else None
                cells[name] = _query_cell(figures, spread)
                detail.append(CompareQueryDetail(
                    database=document.target, source=source, workers=run.workers, query=name,
                    avg_s=figures.avg_s, min_s=figures.min_s, max_s=figures.max_s, cold_avg_s=figures.cold_avg_s,
                    warm_avg_s=figures.warm_avg_s, executions=figures.executions, cv=spread.cv if spread else None,
                    unstable=spread.unstable if spread else None, rows=figures.rows, errors="; ".join(figures.errors),
                    cost=cost.query_cost(document.cost, run.workers, figures.avg_s),
                    answer=figures.answer, answer_detail=figures.answer_detail,
                ))
            table.append(CompareQueryRow(database=document.target, source=source, workers=run.workers, cells=cells,
                                         conditions=run_conditions.key_conditions(document)))
    mark_differences(table)
    return table, detail


def query_columns(rows: list[CompareQueryRow]) -> tuple[str, ...]:
    """The canonical queries, then any variant a compared run executed (e.g. a loose index scan)."""
    return tuple(dict.fromkeys([*QUERY_NAMES, *(name for row in rows for name in row.cells)]))


def _query_cell(figures: stats.QueryFigures, spread: stats.Spread | None) -> str:
    if figures.avg_s is None:
        return "failure" if figures.errors else "-"
    value = figures.avg_s
    text = f"{value:.2g}" if value < 1 else f"{value:.3g}" if value < 100 else f"{value:.0f}"
    if figures.errors:
        text += " (some failed)"
    text += "*" if spread and spread.unstable else ""
    return text + (" WRONG" if figures.answer == "wrong" else "")


def scan_rows(documents: Sources) -> list[CompareScanRow]:
    """Every saved scan invocation's rows (one per worker count)."""
    rows = [CompareScanRow(**row.model_dump(), database=document.target, source=source, status=document.status,
                           conditions=run_conditions.key_conditions(document))
            for source, document in documents if document.task == "scan" for row in document.scans]
    mark_differences(rows)
    return rows


# -- files --------------------------------------------------------------------------------------

def with_values(rows: list[CompareInsertRow]) -> bool:
    return any(row.values_per_row > 1 and row.values_throughput is not None for row in rows)


def insert_markdown(rows: list[CompareInsertRow]) -> str:
    with_levels = any(row.level is not None for row in rows)
    currencies = sorted({row.cost.currency for row in rows if row.cost})
    values, workloads = with_values(rows), any(row.workload for row in rows)
    open_loop = any(row.target_rate is not None for row in rows)
    header = ["Database", "Workers"] + (["Fill level"] if with_levels else []) + (["Target rate (--rate)"] if open_loop else []) + [
        "Inserts/s"] + (["Values/s"] if values else []) + [
        "CV", "Insert mode", "Primary-key mode"] + (["Workload"] if workloads else []) + ["p99 latency (ms)"] + (
        ["p99 response time (ms)", "Sustained"] if open_loop else []) + ["Database-side check",
        "DB CPU s per M events", "DB peak memory (MB)", "Storage bytes/event", "Client CPU share", "Client may be the bottleneck"] + (
        ["Cost per M inserts", "Inserts per unit of money"] if currencies else [])
    lines = [_markdown_row(header), _markdown_row(["---"] * len(header))]
    for row in rows:
        spread = row.throughput
        cells = [row.database + (" †" if row.differs else ""), str(row.workers)] + ([f"{row.level:,}" if row.level is not None else ""] if with_levels else []) + (
            [f"{row.target_rate:,.0f}" if row.target_rate else "-"] if open_loop else []) + [f"{spread.avg:,.0f}"] + ([f"{row.values_throughput.avg:,.0f}" if row.values_throughput else "-"] if values else []) + [
            f"{spread.cv:.1%}" + (" unstable" if spread.unstable else ""), insert_mode_label(row), row.primary_key] + (
            [row.workload or "default"] if workloads else []) + [f"{row.p99_ms.avg:.3g}"] + (
            [f"{row.response_p99_ms.avg:.3g}" if row.response_p99_ms else "-", row.sustained or "-"] if open_loop else []) + [
            row.crosscheck, *resource_markdown(row)]
        if currencies:
            cells += ["-", "-"] if row.cost is None or row.cost.per_million_inserts is None else [
                f"{row.cost.per_million_inserts:.3g} {row.cost.currency}", f"{row.cost.inserts_per_unit:,.0f} per {row.cost.currency}"]
        lines.append(_markdown_row(cells))
    return "\n".join(lines) + "\n"


def resource_markdown(row: InsertRow) -> list[str]:
    """The resource cells of a compared row; "not measured" where a figure was not."""
    r = row.resources
    if r is None:
        return ["not measured"] * 5
    if r.database_in_workers:
        database = ["in the workers", "in the workers"]
    else:
        database = [_or_not_measured(r.db_cpu_s_per_million, "{:.3g}"), _or_not_measured(r.db_memory_peak_bytes and r.db_memory_peak_bytes / 1e6, "{:,.0f}")]
    flag = "-" if r.client_may_be_bottleneck is None else ("yes: " + (r.bottleneck_reason or "") if r.client_may_be_bottleneck else "no")
    return [*database, _or_not_measured(r.storage_bytes_per_event, "{:.1f}"), _or_not_measured(r.client_share, "{:.0%}"), flag]


def _or_not_measured(value: float | None, form: str) -> str:
    return "not measured" if value is None else form.format(value)


def query_markdown(rows: list[CompareQueryRow]) -> str:
    columns = query_columns(rows)
    header = ["Database / Query", "Workers", *columns]
    lines = [_markdown_row(header), _markdown_row(["---"] * len(header))]
    for row in rows:
        lines.append(_markdown_row([row.database + (" †" if row.differs else ""), str(row.workers), *(row.cells.get(name, "-") for name in columns)]))
    return "\n".join(lines) + "\n"


def scan_markdown(rows: list[CompareScanRow]) -> str:
    header = ["Database", "Workers", "Rows", "Rows/s", "CV", "Window min", "Window avg", "Window max", "p99 ms per page", "Check"]
    lines = [_markdown_row(header), _markdown_row(["---"] * len(header))]
    for row in rows:
        windows = [f"{value:,.0f}" if value is not None else "-" for value in (row.window_min, row.window_avg, row.window_max)]
        lines.append(_markdown_row([row.database + (" †" if row.differs else ""), str(row.workers), f"{row.rows:,}", f"{row.rows_per_s.avg:,.0f}",
                                    f"{row.rows_per_s.cv:.1%}", *windows, f"{row.page_p99_ms:.3g}", row.check]))
    return "\n".join(lines) + "\n"


def _markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
