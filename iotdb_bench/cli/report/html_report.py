"""report.html and compare.html: one self-contained page each (inline CSS, plots as data URIs, no
script, nothing fetched when it is opened), readable on a phone and printable.

Built from the typed results (cli/results/document.py), the rows across runs (cli/results/summary.py),
the cross-checks (cli/results/crosscheck.py), the comparison rows (cli/report/comparison.py) and the
conditions (cli/results/run_conditions.py): the same figures the terminal and the files show, all of
them, with the conditions they were measured under, the flags and the modules' notes.
"""

from __future__ import annotations

import base64
import shlex
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from iotdb_bench import simulator
from iotdb_bench.cli.report import catalogue, formats, tables
from iotdb_bench.cli.report.catalogue import COMPARE as COMPARE_LEVEL
from iotdb_bench.cli.report.catalogue import DEFAULT, DETAILS
from iotdb_bench.cli.report.comparison import CompareInsertRow, CompareQueryDetail, CompareQueryRow, CompareScanRow, Sources
from iotdb_bench.cli.results import crosscheck, run_conditions
from iotdb_bench.cli.results.document import InsertRow, ResultsDocument

REPORT = "report.html"
COMPARE = "compare.html"
TEMPLATES = Path(__file__).resolve().parent / "templates"
PLOT_TITLES = {
    "inserts-per-second": "Inserts per second by worker count (bars: min to max over runs)",
    "latency": "Call latency percentiles by worker count",
    "events-per-second": "Events per second during the timed phase",
    "fill-level": "Inserts per second by fill level",
    "query-durations": "Milliseconds per query execution",
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
    more: list[Section] = field(default_factory=list)  # secondary columns, in an expandable part


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
    command: str = ""
    typed: str = ""
    runs: list[tuple[str, str]] = field(default_factory=list)
    sources: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    generated: str = ""
    tool: str = ""


# -- pages ---------------------------------------------------------------------------------------

def write_report(folder: Path, document: ResultsDocument, drawn: list[Path]) -> Path:
    """report.html of a results folder, with the plots drawn for it (`drawn`, from cli/report/plots.py)."""
    from iotdb_bench.cli.report.render import title  # the terminal's title of the document, one wording everywhere

    page = Page(
        title=title(document), status=document.status, error=document.error,
        subtitle=f"{document.task} on target {document.target}, {document.platform} platform, {len(document.runs)} run(s), "
                 f"started {document.environment.created or '?'}",
        summary=run_conditions.caption(document),
        flags=flags(document), conditions=run_conditions.facts(document), sections=sections(document),
        notes=notes(document), plots=embedded(drawn), command=run_conditions.command_line(document),
        typed=shlex.join(document.environment.command), runs=run_conditions.run_specs(document),
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
        if formats.unstable(row.throughput):
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
            found.append(f"query {row.query} at {formats.workers(row.workers)}: {'; '.join(row.errors)}")
        if row.answer == "wrong":
            found.append(f"query {row.query} at {formats.workers(row.workers)}: WRONG answer: {row.answer_detail}")
    for row in document.scans:
        if row.check == "FAILED":
            found.append(f"scan at {formats.workers(row.workers)}: check FAILED: {row.problem}")
    for run in document.runs:
        ingestion, conditions = run.report.ingestion, run.report.conditions
        if ingestion is not None and not ingestion.reached:
            found.append(f"{run.label}: {ingestion.sentence()}")
        if conditions is not None and conditions.server_version_error:
            found.append(f"{run.label}: the server's version could not be read: {conditions.server_version_error}")
    return list(dict.fromkeys(found))


def _where(row: InsertRow) -> str:
    where = f"step {row.step}" if row.step is not None else formats.workers(row.workers)
    return where + (f" at {row.target_rate:,.0f}/s" if row.target_rate else "")


MAIN_COLUMNS = 10  # a table of this many columns, labels wrapped, fits 1280 px without scrolling
MORE_COLUMNS = 8


def catalogue_section(table: catalogue.Catalogue, rows: list, title: str | None = None, compared: bool = False,
                      caption: str | None = None) -> Section:
    """A catalogue's figures of `rows`: the default (or compare) ones in the main table, every other one
    in expandable tables that repeat the row's keys; each table narrow enough for the page."""
    main = catalogue.render(table, rows, COMPARE_LEVEL if compared else DEFAULT, compared, title, caption)
    every = catalogue.render(table, rows, DETAILS, compared)
    keys = [index for index, figure in enumerate(every.figures) if figure.key]
    shown = [index for index, figure in enumerate(every.figures) if not figure.key and figure in main.figures]
    rest = [index for index, figure in enumerate(every.figures) if not figure.key and figure not in main.figures]
    room = MAIN_COLUMNS - len(keys)
    rest = shown[room:] + rest
    section = _part(every, keys + shown[:room], main.title, every.caption)
    step = max(MORE_COLUMNS - len(keys), 2)
    section.more = [_part(every, keys + rest[start:start + step]) for start in range(0, len(rest), step)]
    return section


def _part(rendered: catalogue.Rendered, columns: list[int], title: str = "", caption: str = "") -> Section:
    columns = sorted(columns)
    figures = [rendered.figures[index] for index in columns]
    return Section(title, [figure.title for figure in figures], [[row[index] for index in columns] for row in rendered.rows], caption,
                   numeric=tuple(figure.title for figure in figures if not figure.text))


def sections(document: ResultsDocument) -> list[Section]:
    found = []
    if document.inserts:
        title = "Inserts per second" + (" by fill level" if document.steps else " across runs")
        found.append(catalogue_section(catalogue.INSERTS, document.inserts, title))
        if document.max_rate is not None:
            search = document.max_rate
            found.append(catalogue_section(
                catalogue.RATE_STEPS, tables.rate_steps(search),
                f"Highest sustainable rate (--find-max-rate): response-time p99 <= {search.latency_p99_ms:g} ms, {search.step_s:g} s per rate",
                caption=search.sentence() + ". Rates double from 1,000 events/s until one fails, then bisect to within 5%."))
        found.append(catalogue_section(catalogue.EVERY_RUN, document.insert_runs()))
        found += mixed_sections(document.inserts, document.queries_under_ingest)
    if document.queries:
        found.append(catalogue_section(catalogue.QUERIES, document.queries))
        found += [Section("Answers", ["Workers", "Query", "Answer"], [[str(row.workers), row.query, answer(row.answer, row.answer_detail)]
                                                                      for row in document.queries if row.answer_detail], numeric=("Workers",))][
            :1 if any(row.answer_detail for row in document.queries) else 0]
    if document.scans:
        found.append(catalogue_section(catalogue.SCANS, document.scans))
    checks = crosscheck.run_checks(document)
    if checks:
        found.append(catalogue_section(catalogue.CROSSCHECKS, checks))
    return found


def mixed_sections(insert_rows: list, query_rows: list, compared: bool = False) -> list[Section]:
    """Queries under ingest beside idle, inserts/s with and without the query clients, and the visibility lag."""
    found = []
    if query_rows:
        found.append(catalogue_section(catalogue.UNDER_INGEST, query_rows, compared=compared))
    lags = [row for row in insert_rows if row.visibility_unseen is not None]
    if lags:
        found.append(catalogue_section(catalogue.VISIBILITY, lags, compared=compared))
    return found


def answer(verdict: str | None, detail: str | None) -> str:
    """The answer check as the terminal shows it (WRONG in capitals), with its detail where there is one."""
    shown = {"wrong": "WRONG", None: "-"}.get(verdict, verdict)
    return f"{shown}: {detail}" if detail and verdict != "ok" else shown


def notes(document: ResultsDocument) -> list[str]:
    """The modules' notes, and why a database figure reads n/m (not measured)."""
    found = [note for run in document.runs for note in run.report.notes]
    for row in document.inserts:
        resources = row.resources
        if resources is not None and resources.database_in_workers:
            found.append("Database CPU and memory: an embedded database, its work is inside the workers (in the client's CPU).")
        elif resources is not None:
            found += [f"Database {figure} not measured (n/m): {why}" for figure, why in resources.not_measured.items()]
    return list(dict.fromkeys(found))


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
        where = f"{row.database} ({row.source}), {formats.workers(row.workers)}" + (f", level {row.level:,}" if row.level is not None else "")
        where += f" at {row.target_rate:,.0f}/s" if row.target_rate else ""
        if row.sustained == "NO":
            found.append(f"{where}: could not sustain {row.target_rate:,.0f}/s")
        if formats.unstable(row.throughput):
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
            found.append(f"{row.database} ({row.source}), scan at {formats.workers(row.workers)}: check {row.check}: {row.problem or row.status}")
    for row in [*insert_rows, *query_rows, *scan_rows]:
        if row.differs:
            found.append(f"† {row.database} ({row.source}), {formats.workers(row.workers)}: measured under other conditions: {'; '.join(row.differs)}")
    return list(dict.fromkeys(found))


def compare_sections(insert_rows: list[CompareInsertRow], query_rows: list[CompareQueryRow], detail: list[CompareQueryDetail],
                     queries: tuple[str, ...], scan_rows: list[CompareScanRow] = (), mixed_rows: list | None = None) -> list[Section]:
    found = []
    if insert_rows:
        found.append(catalogue_section(catalogue.INSERTS, insert_rows, "Inserts across runs", compared=True))
        found += mixed_sections(insert_rows, mixed_rows or [], compared=True)
    if detail:
        found.append(catalogue_section(catalogue.COMPARED_QUERIES, detail, compared=True))
    if scan_rows:
        found.append(catalogue_section(catalogue.SCANS, scan_rows, "Scans across runs", compared=True))
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
