"""report.html and compare.html: one self-contained page each (inline CSS, plots as data URIs, no
script, nothing fetched when it is opened), readable on a phone and printable.

Each page iterates the sections of its document (cli/results/tables/sections.py: the same tables, in the same
order, as the terminal and the files), lists the findings a reader must not miss as flags
(cli/results/findings.py) and gives the conditions the figures were measured under
(cli/results/run_conditions.py).
"""

from __future__ import annotations

import base64
import shlex
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from iotdb_bench import simulator
from iotdb_bench.cli.results import findings, run_conditions
from iotdb_bench.cli.results.compared import Compared
from iotdb_bench.cli.results.document import ResultsDocument
from iotdb_bench.cli.results.tables import catalogue, sections
from iotdb_bench.cli.results.tables.catalogue import COMPARE as COMPARE_LEVEL
from iotdb_bench.cli.results.tables.catalogue import DEFAULT, DETAILS
from iotdb_bench.cli.results.tables.sections import PAGE, Section

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
class PageTable:
    title: str
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric: tuple[str, ...] = ()
    more: list[PageTable] = field(default_factory=list)  # secondary columns, in an expandable part


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
    badge: str = ""  # the status badge's colour when it is not the status's own (a run that ran but failed its gate)
    summary: str = ""
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    conditions: list[tuple[str, str]] = field(default_factory=list)
    sections: list[PageTable] = field(default_factory=list)
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
    # results.json that still says "running" is that of an invocation whose CLI did not get to its end
    status, badge = "incomplete" if document.status == "running" else document.status, ""
    failed = sum(verdict.passed is False for verdict in document.thresholds)
    if failed and status == "ok":  # the run ran whole, but the exit code (1) and the badge say its gate failed
        status, badge = f"ok, {failed} of {len(document.thresholds)} threshold(s) failed", "failed"
    page = Page(
        title=sections.title(document), status=status, badge=badge, error=document.error,
        subtitle=f"{document.task} on target {document.target}, {document.platform} platform, {len(document.runs)} run(s), "
                 f"started {document.environment.created or '?'}",
        summary=run_conditions.caption(document),
        flags=findings.flags(findings.document_findings(document)), conditions=run_conditions.facts(document),
        sections=page_tables(sections.document_sections(document)), notes=findings.notes(document), plots=embedded(drawn),
        command=run_conditions.command_line(document), typed=shlex.join(document.environment.command), runs=run_conditions.run_specs(document),
    )
    return write_page(Path(folder) / REPORT, "report.html.j2", page)


def write_compare(output: Path, compared: Compared, drawn: list[Path]) -> Path:
    documents = compared.sources
    page = Page(
        title="Comparison of saved runs", status="ok",
        subtitle=f"{len(documents)} results folder(s): {', '.join(dict.fromkeys(document.target for _, document in documents))}",
        flags=findings.flags(findings.compared_findings(compared)), sections=page_tables(sections.compared_sections(compared)), plots=embedded(drawn),
        sources=[(source, [("Status", document.status), ("Task", document.task), ("Target", document.target),
                           *run_conditions.facts(document)]) for source, document in documents],
    )
    return write_page(Path(output) / COMPARE, "compare.html.j2", page)


def write_page(path: Path, template: str, page: Page) -> Path:
    page.generated = datetime.now(UTC).isoformat(timespec="seconds")
    page.tool = f"iotdb-bench {simulator.__version__}"
    environment = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]),
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    path.write_text(environment.get_template(template).render(page=page))
    return path


# -- tables --------------------------------------------------------------------------------------

MAIN_COLUMNS = 10  # a table of this many columns, labels wrapped, fits 1280 px without scrolling
MORE_COLUMNS = 8


def page_tables(found: Sequence[Section]) -> list[PageTable]:
    return [page_table(section) for section in found if section.shown_in(PAGE)]


def page_table(section: Section) -> PageTable:
    """A section's figures: the default (or compare) ones in the main table, every other one in
    expandable tables that repeat the row's keys; each table narrow enough for the page."""
    main = catalogue.render(section.table, section.rows, COMPARE_LEVEL if section.compared else DEFAULT, section.compared, section.heading,
                            section.caption)
    every = catalogue.render(section.table, section.rows, DETAILS, section.compared, caption=section.caption)
    if not section.split:
        return _part(every, list(range(len(every.figures))), main.title, every.caption)
    keys = [index for index, figure in enumerate(every.figures) if figure.key]
    shown = [index for index, figure in enumerate(every.figures) if not figure.key and figure in main.figures]
    rest = [index for index, figure in enumerate(every.figures) if not figure.key and figure not in main.figures]
    room = MAIN_COLUMNS - len(keys)
    rest = shown[room:] + rest
    table = _part(every, keys + shown[:room], main.title, every.caption)
    step = max(MORE_COLUMNS - len(keys), 2)
    table.more = [_part(every, keys + rest[start:start + step]) for start in range(0, len(rest), step)]
    return table


def _part(rendered: catalogue.Rendered, columns: list[int], title: str = "", caption: str = "") -> PageTable:
    columns = sorted(columns)
    figures = [rendered.figures[index] for index in columns]
    return PageTable(title, [figure.title for figure in figures], [[row[index] for index in columns] for row in rendered.rows], caption,
                     numeric=tuple(figure.title for figure in figures if not figure.text))


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
