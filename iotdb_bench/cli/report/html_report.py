"""report.html and compare.html: one self-contained page each (inline CSS, plots as data URIs, no
script, nothing fetched when it is opened), readable on a phone and printable.

Built from the typed results (cli/document.py), the rows across runs (cli/summary.py), the cross-checks
(cli/crosscheck.py), the comparison rows (cli/comparison.py) and the conditions (cli/run_conditions.py):
the same figures the terminal and the files show, all of them, with the conditions they were measured
under, the flags and the modules' notes.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from iotdb_bench import simulator
from iotdb_bench.cli.report import comparison
from iotdb_bench.cli.report.comparison import CompareInsertRow, CompareQueryDetail, CompareQueryRow, CompareScanRow, Sources
from iotdb_bench.cli.results import crosscheck, run_conditions
from iotdb_bench.cli.results.crosscheck import CrossCheck
from iotdb_bench.cli.results.document import InsertRow, QueryRow, ResultsDocument, ScanRow
from iotdb_bench.cli.results.rate_search import MaxRateSearch
from iotdb_bench.simulator.stats import Spread

REPORT = "report.html"
COMPARE = "compare.html"
TEMPLATES = Path(__file__).resolve().parent / "templates"
PLOT_TITLES = {
    "inserts-per-second": "Inserts per second by worker count (bars: min to max over runs)",
    "latency": "Call latency percentiles by worker count",
    "events-per-second": "Events per second during the timed phase",
    "fill-level": "Inserts per second by fill level",
    "query-durations": "Seconds per query execution",
    "rows-scanned-per-second": "Rows scanned per second during the scan",
    "latency-throughput": "Latency against throughput (open loop): response-time p50 and p99 by rate achieved, service-time p99 dotted",
    "compare": "Comparison of the saved runs",
}


@dataclass
class Section:
    title: str
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric: tuple[str, ...] = ()


@dataclass
class Plot:
    name: str
    title: str
    data_uri: str
    width: int
    height: int


@dataclass
class Page:
    title: str
    status: str
    subtitle: str
    summary: str = ""
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    conditions: list[tuple[str, str]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    options: list[tuple[str, str]] = field(default_factory=list)
    sources: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    generated: str = ""
    tool: str = ""


# -- numbers as the tables print them -------------------------------------------------------------

def rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value >= 1 else f"{value:.3g}"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}" if value < 1 else f"{value:.2f}"


def share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def cv(spread: Spread) -> str:
    return f"{spread.cv:.1%}" + (" unstable" if spread.unstable else "")


def ci(spread: Spread) -> str:
    return "-" if spread.n < 2 else f"±{rate((spread.ci95_high - spread.ci95_low) / 2)}"


# -- pages ---------------------------------------------------------------------------------------

def write_report(folder: Path, document: ResultsDocument, drawn: list[Path]) -> Path:
    """report.html of a results folder, with the plots drawn for it (`drawn`, from cli/plots.py)."""
    from iotdb_bench.cli.report.render import title  # the terminal's title of the document, one wording everywhere

    page = Page(
        title=title(document), status=document.status, error=document.error,
        subtitle=f"{document.task} on target {document.target}, {document.platform} platform, {len(document.runs)} run(s), "
                 f"started {document.environment.created or '?'}",
        summary=run_conditions.caption(document),
        flags=flags(document), conditions=run_conditions.facts(document), sections=sections(document),
        notes=notes(document), plots=embedded(drawn), options=run_conditions.options(document),
    )
    return _write(Path(folder) / REPORT, "report.html.j2", page)


def write_compare(output: Path, documents: Sources, insert_rows: list[CompareInsertRow], query_rows: list[CompareQueryRow],
                  query_detail: list[CompareQueryDetail], queries: tuple[str, ...], drawn: list[Path],
                  scan_rows: list[CompareScanRow] | None = None, mixed_rows: list | None = None) -> Path:
    scan_rows = scan_rows or []
    page = Page(
        title="Comparison of saved runs", status="ok",
        subtitle=f"{len(documents)} results folder(s): {', '.join(dict.fromkeys(document.target for _, document in documents))}",
        flags=compare_flags(insert_rows, query_rows, query_detail, scan_rows),
        sections=compare_sections(insert_rows, query_rows, query_detail, queries, scan_rows, mixed_rows or []),
        plots=embedded(drawn),
        sources=[(source, [("Status", document.status), ("Task", document.task), ("Target", document.target),
                           *run_conditions.facts(document)]) for source, document in documents],
    )
    return _write(Path(output) / COMPARE, "compare.html.j2", page)


def _write(path: Path, template: str, page: Page) -> Path:
    page.generated = datetime.now(UTC).isoformat(timespec="seconds")
    page.tool = f"iotdb-bench {simulator.__version__}"
    environment = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]),
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    path.write_text(environment.get_template(template).render(page=page))
    return path


# -- report parts --------------------------------------------------------------------------------

def flags(document: ResultsDocument) -> list[str]:
    """What a reader must not miss: unstable figures, failed checks, flagged cross-checks, errors."""
    found = []
    if document.status != "ok":
        found.append(f"The invocation ended with status {document.status}: {document.error or 'no error recorded'}")
    for row in document.inserts:
        where = _where(row)
        if row.throughput.unstable:
            found.append(f"{where}: unstable, inserts/s vary by {row.throughput.cv:.1%} across runs (above 10%)")
        if row.count_check == "FAILED":
            found.append(f"{where}: count check FAILED (the database does not hold the events the workers reported)")
        found += [f"{where}: {flag.text}" for flag in row.flags]
        if row.resources is not None and row.resources.client_may_be_bottleneck:
            found.append(f"{where}: the client may be the bottleneck: {row.resources.bottleneck_reason}")
    if document.max_rate is not None:
        found.append(document.max_rate.sentence())
    for run in document.insert_runs():
        rated = run.report.figures.rate
        if rated is not None and not rated.sustained:
            found.append(f"{run.label}: could not sustain {rated.target:,.0f}/s: {rated.behind_s:.1f} s behind its schedule at the end "
                         f"(limit {rated.limit_s:.2g} s), achieved {rated.achieved:,.0f}/s")
    for check in crosscheck.run_checks(document):
        if check.flagged:
            found.append(f"{check.label}: the database counted {check.difference:+.1%} rows against the workers' report (over 2%)")
    for row in document.queries:
        if row.errors:
            found.append(f"query {row.query} at {row.workers} worker(s) failed: {'; '.join(row.errors)}")
        if row.answer == "wrong":
            found.append(f"query {row.query} at {row.workers} worker(s): WRONG answer: {row.answer_detail}")
    for row in document.scans:
        if row.check == "FAILED":
            found.append(f"scan at {row.workers} worker(s): check FAILED: {row.problem}")
    for run in document.runs:
        ingestion, conditions = run.report.ingestion, run.report.conditions
        if ingestion is not None and not ingestion.reached:
            found.append(f"{run.label}: {ingestion.sentence()}")
        if conditions is not None and conditions.server_version_error:
            found.append(f"{run.label}: the server's version could not be read: {conditions.server_version_error}")
    return list(dict.fromkeys(found))


def _where(row: InsertRow) -> str:
    where = f"step {row.step}" if row.step is not None else f"{row.workers} worker(s)"
    return where + (f" at {row.target_rate:,.0f}/s" if row.target_rate else "")


def sections(document: ResultsDocument) -> list[Section]:
    found = []
    if document.inserts:
        found.append(insert_section(document.inserts, bool(document.steps)))
        if any(row.target_rate is not None for row in document.inserts):
            found.append(open_loop_section(document.inserts))
        if document.max_rate is not None:
            found.append(rate_search_section(document.max_rate))
        found += model_sections(document.inserts, lambda row: [str(row.workers)] + ([str(row.step)] if document.steps else []),
                                ["Workers"] + (["Step"] if document.steps else []))
        found.append(runs_section(document))
        found += mixed_sections(document.inserts, document.queries_under_ingest, lambda row: [str(row.workers)], ["Workers"])
    if document.queries:
        found.append(query_section(document.queries))
    if document.scans:
        found.append(scan_section(document.scans))
    checks = crosscheck.run_checks(document)
    if checks:
        found.append(crosscheck_section(checks))
    return found


def insert_section(rows: list[InsertRow], steps: bool) -> Section:
    columns = ["Workers", *(["Step", "Fill level"] if steps else []), "Runs", "Insert mode", "Min", "Avg", "Max", "Stdev", "CV", "95% CI",
               "Seed formula avg", "p50 ms", "p95 ms", "p99 ms", "p99 min–max ms", "max ms", "Client overhead", "Start skew", "Retries", "Count check"]
    body = []
    for row in rows:
        spread = row.throughput
        body.append([
            str(row.workers), *([str(row.step), "-" if row.level is None else f"{row.level:,}"] if steps else []), str(row.runs), row.insert_mode,
            rate(spread.min), rate(spread.avg), rate(spread.max), rate(spread.stdev), cv(spread), ci(spread),
            rate(row.seed_formula_throughput.avg), ms(row.p50_ms), ms(row.p95_ms), ms(row.p99_ms.avg),
            f"{ms(row.p99_ms.min)}–{ms(row.p99_ms.max)}", ms(row.max_ms), share(row.client_overhead), f"{row.start_skew_s * 1000:.0f} ms",
            str(row.retries), row.count_check,
        ])
    return Section(
        "Inserts per second" + (" by fill level" if steps else " across runs"), columns, body,
        "Inserts/s = events / (last worker end - common start). Seed formula = events / mean worker duration (the original "
        "tool's figure). CV = stdev / avg across runs, unstable above 10%; 95% CI = half width of the average's 95% confidence "
        "interval (Student t). Latency per database call: p50 and p95 averaged over runs, max = slowest call of all runs. "
        "Client overhead = share of the timed phase spent outside database calls.",
        numeric=tuple(c for c in columns if c not in ("Insert mode", "Count check")),
    )


def open_loop_section(rows: list[InsertRow]) -> Section:
    columns = ["Workers", "Runs", "Target/s", "Achieved/s", "Sustained", "Behind s", "Max lag s", "resp p50 ms", "resp p95 ms",
               "resp p99 ms", "resp max ms", "svc p50 ms", "svc p99 ms", "svc max ms"]
    body = [[
        str(row.workers), str(row.runs), rate(row.target_rate), rate(row.throughput.avg), row.sustained or "-", f"{row.behind_s:.2f}",
        f"{row.max_lag_s:.2f}", ms(row.response_p50_ms), ms(row.response_p95_ms), ms(row.response_p99_ms.avg), ms(row.response_max_ms),
        ms(row.p50_ms), ms(row.p99_ms.avg), ms(row.max_ms),
    ] for row in rows if row.target_rate is not None and row.response_p99_ms is not None]
    return Section(
        "Open loop (--rate): target, achieved, response and service time", columns, body,
        "Calls start on a fixed schedule from the common start. resp = response time, from each call's intended start to its end "
        "(includes waiting behind slow calls: no coordinated omission); svc = service time, from the call's actual start. Sustained: "
        "no run ended behind its schedule by more than 1 s (5% of a run shorter than 20 s); Behind s = how far behind the furthest "
        "worker ended; Max lag s = the latest any call started after its intended start.",
        numeric=tuple(c for c in columns if c != "Sustained"),
    )


def rate_search_section(search: MaxRateSearch) -> Section:
    columns = ["Step", "Run id", "Target/s", "Achieved/s", "resp p50 ms", "resp p99 ms", "svc p99 ms", "Sustained", "Verdict"]
    body = [[
        str(number), step.run_id, rate(step.target_rate), rate(step.achieved_rate), ms(step.response_p50_ms), ms(step.response_p99_ms),
        ms(step.service_p99_ms), "yes" if step.sustained else "NO",
        "pass" if step.passed else ("p99 over target" if step.sustained else "fell behind"),
    ] for number, step in enumerate(search.steps, 1)]
    return Section(
        f"Highest sustainable rate (--find-max-rate): response-time p99 <= {search.latency_p99_ms:g} ms, {search.step_s:g} s per rate",
        columns, body, search.sentence() + ". Rates double from 1,000 events/s until one fails, then bisect to within 5%.",
        numeric=("Step", "Target/s", "Achieved/s", "resp p50 ms", "resp p99 ms", "svc p99 ms"),
    )


def runs_section(document: ResultsDocument) -> Section:
    columns = ["Run", "Run id", "Events", "Prefilled", "Duration s", "Inserts/s", "Seed formula", "Calls", "mean ms", "p50 ms", "p95 ms",
               "p99 ms", "max ms", "Client overhead", "Start skew", "Retries", "Count check", "Counted / expected", "Storing"]
    body = []
    for run in document.insert_runs():
        report = run.report
        figures, check = report.figures, report.verification
        latency = figures.latency
        counted = "-" if check is None or check.expected is None else f"{check.counted:,} / {check.expected:,}"
        body.append([
            run.label, report.run_id, f"{figures.events:,}", f"{figures.prefilled:,}", f"{figures.duration_s:.3f}", rate(figures.throughput),
            rate(figures.seed_formula_throughput), f"{latency.calls:,}", ms(latency.mean_ms), ms(latency.p50_ms), ms(latency.p95_ms),
            ms(latency.p99_ms), ms(latency.max_ms), share(figures.client_overhead), f"{figures.start_skew_s * 1000:.0f} ms",
            str(figures.retries), check.verdict() if check else "-", counted, report.ingestion.sentence() if report.ingestion else "-",
        ])
    return Section("Every run", columns, body, "One row per run: the figures the rows above are computed from.",
                   numeric=tuple(c for c in columns if c not in ("Run", "Run id", "Count check", "Storing")))


def mixed_sections(insert_rows: list, query_rows: list, keys, key_columns: list[str]) -> list[Section]:
    """Queries under ingest beside idle, inserts/s with and without the query clients, and the visibility
    lag (docs/mixed-and-visibility.md); `keys(row)`: the cells that name a row (worker count, database...)."""
    found = []
    if query_rows:
        columns = [*key_columns, "Query clients", "Query", "Executions", "p50 ms", "p99 ms", "max ms", "Idle executions", "Idle p50 ms",
                   "Idle p99 ms", "Slowdown", "Errors"]
        body = [[*keys(row), str(row.query_workers), row.query, f"{row.executions:,}", ms(row.p50_ms), ms(row.p99_ms), ms(row.max_ms),
                 str(row.idle_executions), ms(row.idle_p50_ms), ms(row.idle_p99_ms), "-" if row.slowdown is None else f"{row.slowdown:.3g}x",
                 "; ".join(row.errors) or "-"] for row in query_rows]
        found.append(Section("Queries under ingest", columns, body,
                             "Latency per execution while the workers inserted, beside the same query on the idle database right after the "
                             "timed phase (same data); slowdown = p50 under ingest / p50 idle; p50 and p99 are means over the runs.",
                             numeric=tuple(c for c in columns if c not in (*key_columns, "Query", "Errors"))))
    twins = [row for row in insert_rows if row.throughput_without_queries is not None]
    if twins:
        columns = [*key_columns, "Query clients", "Inserts/s with queries", "Inserts/s without", "With / without"]
        body = [[*keys(row), str(row.query_workers), rate(row.throughput.avg), rate(row.throughput_without_queries.avg),
                 share(row.throughput.avg / row.throughput_without_queries.avg if row.throughput_without_queries.avg else None)]
                for row in twins]
        found.append(Section("Inserts with and without queries", columns, body,
                             "--compare-idle: each run again without the query clients; averages over the runs.",
                             numeric=tuple(columns[len(key_columns):])))
    lags = [row for row in insert_rows if row.visibility_unseen is not None]
    if lags:
        columns = [*key_columns, "p50 ms", "p99 ms", "max ms", "Unseen markers"]
        body = [[*keys(row), ms(row.visibility_p50_ms), ms(row.visibility_p99_ms), ms(row.visibility_max_ms), str(row.visibility_unseen)]
                for row in lags]
        found.append(Section("Visibility lag", columns, body,
                             "From the start of a marker event's write (the run's insert path) to the start of the first query that saw "
                             "it; p50 and p99 are means over the runs, max the longest of all runs.", numeric=tuple(columns[len(key_columns):])))
    return found


def query_section(rows: list[QueryRow]) -> Section:
    columns = ["Workers", "Query", "Executions", "Min s", "Avg s", "Max s", "p95 s", "Cold s", "Warm s", "Rows", "Answer", "Errors"]
    body = [[
        str(row.workers), row.query, str(row.executions), seconds(row.min_s), seconds(row.avg_s), seconds(row.max_s), seconds(row.p95_s),
        seconds(row.cold_avg_s), seconds(row.warm_avg_s), "-" if row.rows is None else f"{row.rows:,}", answer(row.answer, row.answer_detail),
        "; ".join(row.errors) or "-",
    ] for row in rows]
    return Section("Queries", columns, body, "Seconds per execution. Cold = first execution on each worker, warm = the others. Answer: "
                   "every execution's rows checked against what the tool inserted (counts, min, max, newest exact; averages within a "
                   "relative 1e-9); WRONG names the first difference, not checked names why.",
                   numeric=("Workers", "Executions", "Min s", "Avg s", "Max s", "p95 s", "Cold s", "Warm s", "Rows"))


def answer(verdict: str | None, detail: str | None) -> str:
    """The answer check as the terminal shows it (WRONG in capitals), with its detail where there is one."""
    shown = {"wrong": "WRONG", None: "-"}.get(verdict, verdict)
    return f"{shown}: {detail}" if detail and verdict != "ok" else shown


def scan_section(rows: list[ScanRow]) -> Section:
    columns = ["Workers", "Runs", "Devices", "Rows", "Rows/s", "CV", "Window min", "Window avg", "Window max", "p50 ms", "p99 ms",
               "max ms", "Check"]
    body = [[
        str(row.workers), str(row.runs), f"{row.devices:,}", f"{row.rows:,}", rate(row.rows_per_s.avg), cv(row.rows_per_s),
        "-" if row.window_min is None else rate(row.window_min), "-" if row.window_avg is None else rate(row.window_avg),
        "-" if row.window_max is None else rate(row.window_max), ms(row.page_p50_ms), ms(row.page_p99_ms), ms(row.page_max_ms),
        row.check + (f": {row.problem}" if row.problem else ""),
    ] for row in rows]
    return Section("Scans", columns, body, "Rows/s = rows read by all workers / run duration, average across runs. Windows: each "
                   "worker's rate over every 10,000 rows it read (per worker). Latency per page or fetch. Check: timestamps never "
                   "decrease within a device, and each device holds as many readings as the tool wrote.",
                   numeric=tuple(c for c in columns if c != "Check"))


def crosscheck_section(checks: list[CrossCheck]) -> Section:
    columns = ["Run", "Count check", "Client events", "Client inserts/s", "Database counter", "Database events", "Database inserts/s",
               "Difference", "Storage", "Bytes/event"]
    body = [[
        check.label, check.count_check, f"{check.client_events:,}", rate(check.client_rate), check.counter or "-",
        "-" if check.db_events is None else f"{check.db_events:,}", "not exposed" if check.db_rate is None else rate(check.db_rate),
        "-" if check.difference is None else f"{check.difference:+.2%}" + (" FLAGGED" if check.flagged else ""),
        "-" if check.storage_bytes is None else f"{check.storage_bytes / 1e6:,.1f} MB",
        "-" if check.bytes_per_event is None else f"{check.bytes_per_event:.1f}",
    ] for check in checks]
    return Section(
        "Count checks and database-side cross-check", columns, body,
        "Count check: the database's count after the run against what it held before plus what the workers reported. Database "
        "inserts/s = rows the database counted as inserted during the timed phase / run duration; a difference over 2% is flagged "
        "(a counter named *_server_wide also counts other clients' writes). Bytes/event = tables and indexes / events stored.",
        numeric=("Client events", "Client inserts/s", "Database events", "Database inserts/s", "Difference", "Storage", "Bytes/event"),
    )


# Figures kept in sub-models of the rows (what the runs cost the database and the client, and at the
# target's price), shown whole: every field the model has, as it has it.
MODEL_SECTIONS = {"resources": "Resources: what the runs cost the database and the client", "cost": "Cost at the target's price"}


def model_sections(rows: list, keys, key_columns: list[str]) -> list[Section]:
    found = []
    for attribute, title in MODEL_SECTIONS.items():
        present = [(row, getattr(row, attribute, None)) for row in rows if getattr(row, attribute, None) is not None]
        if not present:
            continue
        flat = [(row, _flat(model.model_dump(mode="json"))) for row, model in present]
        columns = [name for name in dict.fromkeys(name for _, values in flat for name in values)
                   if any(values.get(name) not in (None, "", {}) for _, values in flat)]
        body = [[*keys(row), *(_cell(values.get(name)) for name in columns)] for row, values in flat]
        found.append(Section(title, key_columns + [name.replace("_", " ") for name in columns], body,
                             "Every figure of the rows' " + attribute + " (see results.json for their definitions)."))
    return found


def _flat(values: dict, prefix: str = "") -> dict:
    flat = {}
    for name, value in values.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


def _cell(value) -> str:
    if value is None or value == {}:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def notes(document: ResultsDocument) -> list[str]:
    return list(dict.fromkeys(note for run in document.runs for note in run.report.notes))


def embedded(drawn: list[Path]) -> list[Plot]:
    """The plots, embedded: the page needs no file beside it."""
    found = []
    for path in drawn:
        data = path.read_bytes()
        width, height = _png_size(data)
        found.append(Plot(path.name, PLOT_TITLES.get(path.stem, path.stem.replace("-", " ")),
                          "data:image/png;base64," + base64.b64encode(data).decode("ascii"), width, height))
    return found


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the PNG header (IHDR), so the page keeps its layout while images decode."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return 0, 0
    return struct.unpack(">II", data[16:24])


# -- compare parts -------------------------------------------------------------------------------

def compare_flags(insert_rows: list[CompareInsertRow], query_rows: list[CompareQueryRow], detail: list[CompareQueryDetail],
                  scan_rows: list[CompareScanRow] = ()) -> list[str]:
    found = []
    for row in insert_rows:
        where = f"{row.database} ({row.source}), {row.workers} worker(s)" + (f", level {row.level:,}" if row.level is not None else "")
        where += f" at {row.target_rate:,.0f}/s" if row.target_rate else ""
        if row.sustained == "NO":
            found.append(f"{where}: could not sustain {row.target_rate:,.0f}/s")
        if row.throughput.unstable:
            found.append(f"{where}: unstable, inserts/s vary by {row.throughput.cv:.1%} across runs")
        if "FAILED" in row.crosscheck or "FLAGGED" in row.crosscheck:
            found.append(f"{where}: database-side check {row.crosscheck}")
        if row.status != "ok":
            found.append(f"{where}: the invocation ended with status {row.status}")
        found += [f"{where}: {flag.text}" for flag in row.flags]
        if row.resources is not None and row.resources.client_may_be_bottleneck:
            found.append(f"{where}: the client may be the bottleneck: {row.resources.bottleneck_reason}")
    for item in detail:
        if item.unstable:
            found.append(f"{item.database} ({item.source}), query {item.query}: unstable executions (CV {item.cv:.1%})")
        if item.errors:
            found.append(f"{item.database} ({item.source}), query {item.query}: {item.errors}")
        if item.answer == "wrong":
            found.append(f"{item.database} ({item.source}), query {item.query}: WRONG answer: {item.answer_detail}")
    for row in scan_rows:
        if row.check == "FAILED" or row.status != "ok":
            found.append(f"{row.database} ({row.source}), scan at {row.workers} worker(s): check {row.check}: {row.problem or row.status}")
    for row in [*insert_rows, *query_rows, *scan_rows]:
        if row.differs:
            found.append(f"† {row.database} ({row.source}), {row.workers} worker(s): measured under other conditions: {'; '.join(row.differs)}")
    return list(dict.fromkeys(found))


def compare_sections(insert_rows: list[CompareInsertRow], query_rows: list[CompareQueryRow], detail: list[CompareQueryDetail],
                     queries: tuple[str, ...], scan_rows: list[CompareScanRow] = (), mixed_rows: list | None = None) -> list[Section]:
    found = []
    if insert_rows:
        columns = ["Database", "Source", "Workers", "Fill level", "Insert mode", "Primary key", "Target/s", "Runs", "Min", "Avg", "Max", "CV",
                   "95% CI", "Seed formula avg", "p50 ms", "p95 ms", "p99 ms", "max ms", "resp p99 ms", "Sustained", "Client overhead",
                   "Retries", "Count check", "Cross-check", "Status"]
        body = [[
            row.database + (" †" if row.differs else ""), row.source, str(row.workers), "-" if row.level is None else f"{row.level:,}",
            comparison.insert_mode_label(row), row.primary_key, rate(row.target_rate), str(row.runs), rate(row.throughput.min),
            rate(row.throughput.avg), rate(row.throughput.max), cv(row.throughput), ci(row.throughput), rate(row.seed_formula_throughput.avg),
            ms(row.p50_ms), ms(row.p95_ms), ms(row.p99_ms.avg), ms(row.max_ms),
            ms(row.response_p99_ms.avg if row.response_p99_ms else None), row.sustained or "-", share(row.client_overhead), str(row.retries),
            row.count_check,
            row.crosscheck, row.status,
        ] for row in insert_rows]
        found.append(Section("Inserts across runs", columns, body,
                             "Inserts/s: average over runs; CV = stdev / average, unstable above 10%. p50-max: service time per call; "
                             "with --rate (Target/s), resp = response time from each call's intended start. † = measured under conditions that "
                             "differ from the other rows' (server version, batch, shape, platform or node type): compare with care.",
                             numeric=("Workers", "Fill level", "Target/s", "Runs", "Min", "Avg", "Max", "CV", "95% CI", "Seed formula avg",
                                      "p50 ms", "p95 ms", "p99 ms", "max ms", "resp p99 ms", "Client overhead", "Retries")))
        found += model_sections(insert_rows, lambda row: [row.database + (" †" if row.differs else ""), row.source, str(row.workers)],
                                ["Database", "Source", "Workers"])
        found += mixed_sections(insert_rows, mixed_rows or [], lambda row: [row.database, row.source, str(row.workers)],
                                ["Database", "Source", "Workers"])
    if query_rows:
        columns = ["Database", "Source", "Workers", *queries]
        body = [[row.database + (" †" if row.differs else ""), row.source, str(row.workers), *(row.cells.get(name, "-") for name in queries)]
                for row in query_rows]
        found.append(Section("Queries across runs (average seconds per execution)", columns, body,
                             "* = coefficient of variation over the executions above 10%. WRONG = an answer that differed from what "
                             "the tool inserted (the first difference is under Every query). † = other conditions than the other rows'.",
                             numeric=("Workers", *queries)))
        columns = ["Database", "Source", "Workers", "Query", "Executions", "Min s", "Avg s", "Max s", "Cold s", "Warm s", "CV", "Rows", "Answer",
                   "Errors"]
        body = [[
            item.database, item.source, str(item.workers), item.query, str(item.executions), seconds(item.min_s), seconds(item.avg_s),
            seconds(item.max_s), seconds(item.cold_avg_s), seconds(item.warm_avg_s), "-" if item.cv is None else f"{item.cv:.1%}"
            + (" unstable" if item.unstable else ""), "-" if item.rows is None else f"{item.rows:,}", answer(item.answer, item.answer_detail),
            item.errors or "-",
        ] for item in detail]
        found.append(Section("Every query", columns, body, "Seconds per execution, over every worker's executions.",
                             numeric=("Workers", "Executions", "Min s", "Avg s", "Max s", "Cold s", "Warm s", "CV", "Rows")))
    if scan_rows:
        columns = ["Database", "Source", "Workers", "Rows", "Rows/s", "CV", "Window min", "Window avg", "Window max", "p99 ms", "Check", "Status"]
        body = [[
            row.database + (" †" if row.differs else ""), row.source, str(row.workers), f"{row.rows:,}", rate(row.rows_per_s.avg),
            cv(row.rows_per_s), *("-" if value is None else rate(value) for value in (row.window_min, row.window_avg, row.window_max)),
            ms(row.page_p99_ms), row.check + (f": {row.problem}" if row.problem else ""), row.status,
        ] for row in scan_rows]
        found.append(Section("Scans across runs", columns, body, "Rows/s: average over runs; windows of 10,000 rows per worker; p99 per "
                             "page or fetch. Check: order within each device, and each device's count against what the tool wrote.",
                             numeric=("Workers", "Rows", "Rows/s", "CV", "Window min", "Window avg", "Window max", "p99 ms")))
    found.append(conditions_section([*insert_rows, *query_rows, *scan_rows]))
    return found


def conditions_section(rows: list[CompareInsertRow | CompareQueryRow | CompareScanRow]) -> Section:
    """The key conditions of every compared row side by side, and what sets a row apart (†)."""
    names = list(dict.fromkeys(name for row in rows for name in row.conditions))
    body = [[row.database + (" †" if row.differs else ""), row.source, str(row.workers), *(row.conditions.get(name, "-") for name in names),
             "; ".join(row.differs) or "-"] for row in rows]
    return Section("Conditions of the compared rows", ["Database", "Source", "Workers", *names, "Differs from the other rows"], body,
                   "The conditions that change figures. The server version is compared among rows of the same database module only.",
                   numeric=("Workers",))
