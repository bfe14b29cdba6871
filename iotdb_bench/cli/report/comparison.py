"""One table across saved runs and targets, in the shape of the original study's results tables:
database, insert mode, primary-key mode, inserts/s (with spread), p99 latency; and database x the
queries in average seconds. The figures are the invocations' own summary rows (cli/results/summary.py);
the insert mode is the label each database module gave its runs."""

from __future__ import annotations

from pydantic import BaseModel, Field

from iotdb_bench.cli.report import catalogue, formats
from iotdb_bench.cli.results import cost, crosscheck, run_conditions
from iotdb_bench.cli.results.cost import QueryCost
from iotdb_bench.cli.results.crosscheck import CrossCheck
from iotdb_bench.cli.results.document import InsertRow, QueryUnderIngestRow, ResultsDocument, ScanRow
from iotdb_bench.simulator.measurement import stats
from iotdb_bench.simulator.spec import QUERY_NAMES
from iotdb_bench.simulator.workload import shapes

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
        parts += ["## Queries under ingest\n", markdown_table(catalogue.UNDER_INGEST, query_rows)]
    twins = [row for row in insert_rows if row.throughput_without_queries is not None]
    if twins:
        lines = [_markdown_row(["Database", "Source", "Workers", "Query clients", "Inserts/s with queries", "Inserts/s without"]),
                 _markdown_row(["---"] * 6)]
        lines += [_markdown_row([row.database, row.source, str(row.workers), str(row.query_workers), formats.rate(row.throughput.avg),
                                 formats.rate(row.throughput_without_queries.avg)]) for row in twins]
        parts += ["## Inserts with and without queries\n", "\n".join(lines) + "\n"]
    lags = [row for row in insert_rows if row.visibility_unseen is not None]
    if lags:
        parts += ["## Visibility lag\n", markdown_table(catalogue.VISIBILITY, lags)]
    return "\n".join(parts)


def markdown_table(table: catalogue.Catalogue, rows: list, level: str = catalogue.COMPARE) -> str:
    """A catalogue's compare figures as a Markdown table, headed by their human labels, then its caption."""
    rendered = catalogue.render(table, rows, level, compared=True)
    lines = [_markdown_row([figure.title for figure in rendered.figures]), _markdown_row(["---"] * len(rendered.figures))]
    lines += [_markdown_row(cells) for cells in rendered.rows]
    return "\n".join(lines) + "\n" + (f"\n{rendered.caption}\n" if rendered.caption else "")


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
    return markdown_table(catalogue.INSERTS, rows)


def query_markdown(rows: list[CompareQueryDetail]) -> str:
    return markdown_table(catalogue.COMPARED_QUERIES, rows)


def scan_markdown(rows: list[CompareScanRow]) -> str:
    return markdown_table(catalogue.SCANS, rows)


def _markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
