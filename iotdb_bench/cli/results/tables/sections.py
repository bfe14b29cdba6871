"""Which tables a results document has, in which order, with their rows: the one list the terminal,
report.html, Markdown and the CSV files iterate (and the same for compare and for a study).

A `Section` is one table: a catalogue (cli/results/tables/catalogue.py) and its rows, headed by a title, and
what each view does with it: which views show it, and the few words or headings a view puts around it
where it has its own (the terminal's heading of a run's table names the run; compare.md heads its
tables shortly). Views never decide which tables exist: a table added here is in every view of its
document. Layout (what fits the width, what goes into expandable details) stays with the views.

It lives in results/ beside the catalogue: which tables a document has is a fact of its results, not of
one view, and every view (cli/report/) reads it from below.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from iotdb_bench.cli.results import agreement, crosscheck, rate_search, thresholds
from iotdb_bench.cli.results.tables import catalogue, formats, study_catalogue
from iotdb_bench.cli.results.tables.catalogue import Catalogue
from iotdb_bench.cli.results.compared import Compared, one_per_run
from iotdb_bench.cli.results.crosscheck import CrossCheck
from iotdb_bench.cli.results.document import ResultsDocument, ThresholdVerdict
from iotdb_bench.cli.results.tables.study_catalogue import ranking_title
from iotdb_bench.cli.results.study.document import StudyDocument
from iotdb_bench.simulator.workload import shapes

View = Literal["terminal", "page", "markdown", "csv"]
TERMINAL: View = "terminal"
PAGE: View = "page"          # report.html, compare.html, a study's report.html
MARKDOWN: View = "markdown"  # compare.md, study.md
CSV: View = "csv"
EVERY_VIEW: frozenset[View] = frozenset({TERMINAL, PAGE, MARKDOWN, CSV})


@dataclass(frozen=True)
class InTerminal:
    """What the terminal says around a section's table."""

    heading: str = ""             # "" = the section's title
    words: str | None = None      # said under the table before the abbreviations, in place of the catalogue's caption
    after: str = ""               # said after the abbreviations
    hint: str = ""                # said last, unless --details
    conditions: bool = False      # the conditions the figures were measured under, under the table
    detailed: bool = True         # --details shows every figure of the rows (else the default ones)
    details_only: bool = False    # the table only with --details ...
    instead: str = ""             # ... and this line without
    last: bool = False            # after the notes on the whole invocation


@dataclass(frozen=True)
class InMarkdown:
    """What Markdown says around a section's table."""

    title: str = ""               # "" = the section's title
    words: str | None = None      # under the table, in place of the caption
    before: str = ""              # a heading above the section (the first of a group)
    after: str = ""               # a paragraph after it (the last of a group)
    level: int = 2                # of the section's own heading


@dataclass(frozen=True)
class Section:
    name: str                              # stable: "inserts", "rate-steps", "queries", "ranking", ...
    table: Catalogue
    rows: Sequence[Any]
    title: str = ""                        # "" = the catalogue's title
    views: frozenset[View] = EVERY_VIEW
    compared: bool = False                 # rows of several documents: the compare level, Database and Source
    caption: str | None = None             # in place of the catalogue's caption, in every view
    csv: str = ""                          # the CSV file of its rows (written even without a row)
    csv_tables: tuple[Catalogue, ...] = ()  # further catalogues of the same rows whose columns the file takes
    marked: Sequence[Any] = ()             # rows whose † the terminal and Markdown explain under the table (compare)
    split: bool = True                     # the pages may move figures beyond the main ones into expandable tables
    terminal: InTerminal = field(default_factory=InTerminal)
    markdown: InMarkdown = field(default_factory=InMarkdown)

    @property
    def heading(self) -> str:
        return self.title or self.table.title

    def shown_in(self, view: View) -> bool:
        """In this view; a view other than CSV shows no table without a row."""
        return view in self.views and (view == CSV or bool(self.rows))


# -- one results document ----------------------------------------------------------------------------

def document_sections(document: ResultsDocument) -> list[Section]:
    """The tables of an invocation, in the order every view shows them."""
    found = []
    if document.task == "insert":
        found.append(_inserts(document))
        if document.max_rate is not None:
            search = document.max_rate
            found.append(Section(
                "rate-steps", catalogue.RATE_STEPS, rate_search.numbered(search),
                f"Highest sustainable rate (--find-max-rate): response-time p99 <= {search.latency_p99_ms:g} ms, {search.step_s:g} s per rate",
                csv="rate-steps.csv",
                terminal=InTerminal(heading=f"Highest sustainable rate: response-time p99 <= {search.latency_p99_ms:g} ms, {search.step_s:g} s per rate",
                                    conditions=True)))
        found.append(Section("runs", catalogue.EVERY_RUN, document.insert_runs(), views=frozenset({PAGE, CSV}), csv="runs.csv"))
    if document.queries_under_ingest:
        found.append(Section("under-ingest", catalogue.UNDER_INGEST, document.queries_under_ingest, csv="queries-under-ingest.csv",
                             terminal=InTerminal(detailed=False)))
    lags = [row for row in document.inserts if row.visibility_unseen is not None]
    if lags:
        found.append(Section("visibility", catalogue.VISIBILITY, lags, views=frozenset({TERMINAL, PAGE}), terminal=InTerminal(detailed=False)))
    if document.task == "query":
        found.append(Section("queries", catalogue.QUERIES, document.queries, csv="summary.csv",
                             terminal=InTerminal(heading=title(document), conditions=True)))
        found.append(Section("answers", catalogue.ANSWERS, [row for row in document.queries if row.answer_detail], views=frozenset({PAGE})))
        kept = agreement.kept_rows(document.queries)
        if kept:
            found.append(Section("kept-answers", catalogue.KEPT_ANSWERS, kept, views=frozenset({PAGE, CSV}), csv="answers.csv", split=False))
    if document.task == "scan":
        found.append(Section("scans", catalogue.SCANS, document.scans, csv="summary.csv",
                             terminal=InTerminal(heading=title(document), conditions=True)))
    checks = crosscheck.run_checks(document)
    if checks:
        found.append(Section("crosschecks", catalogue.CROSSCHECKS, checks, csv="crosscheck.csv",
                             terminal=InTerminal(heading="Database-side cross-check", details_only=True, instead=crosscheck_line(checks), last=True)))
    if document.thresholds:
        found.append(thresholds_section(document.thresholds, thresholds.heading(document.thresholds)))
    return found


def thresholds_section(verdicts: Sequence[ThresholdVerdict], heading: str, compared: bool = False) -> Section:
    """The thresholds and their verdicts: printed last, their CSV file thresholds.csv."""
    return Section("thresholds", catalogue.THRESHOLDS, verdicts, heading, compared=compared, csv="thresholds.csv",
                   terminal=InTerminal(detailed=False, last=True), markdown=InMarkdown(title="Thresholds"))


def _inserts(document: ResultsDocument) -> Section:
    """The insert rows: by worker count (or target rate), or by fill level; the search's own table
    shows every rate tried, so its rows are in the terminal with --details only."""
    if document.steps:
        spec = document.spec
        step = f"{spec.duration_s:g} s" if spec.duration_s else f"{spec.timed_events():,} events"
        terminal = InTerminal(heading=f"Fill level (step: {step})", words="Storage B/ev (--details) = data size after the step / events stored.",
                              conditions=True)
    else:
        flag_notes = [f"{catalogue.FLAG_MARK} {row.workers} worker{'' if row.workers == 1 else 's'}: {flag.text}."
                      for row in document.inserts for flag in row.flags]
        terminal = InTerminal(heading=title(document), words=" ".join([*flag_notes, "Latency per database call."]), hint="--details: every figure.",
                              conditions=True, details_only=document.max_rate is not None)
    return Section("inserts", catalogue.INSERTS, document.inserts, "Inserts per second" + (" by fill level" if document.steps else " across runs"),
                   csv="summary.csv", csv_tables=(catalogue.VISIBILITY,), terminal=terminal)


def title(document: ResultsDocument) -> str:
    """An invocation in one line: the heading of its table, and the title of its report.html."""
    spec = document.spec
    if document.task == "query":
        return f"{document.target}: queries, {spec.query_runs} executions each per worker"
    if document.task == "scan":
        return f"{document.target}: scans of every device's readings in time order, pages of {spec.scan_page_size:,}"
    modes = list(dict.fromkeys(run.report.insert_mode for run in document.insert_runs() if run.report.insert_mode))
    mode = ", ".join(modes) or (f"batch {spec.batch}" if spec.batch else "single inserts")
    extra = ", ".join(f"{key}={value}" for key, value in spec.extra.items())
    length = shapes.run_length(spec)
    workload = shapes.describe(spec)
    return (f"{document.target}: inserts/s, {mode}, key {spec.primary_key.value}, {formats.plural(len(spec.table_names), 'table')}, "
            f"{length}" + (f", {workload}" if workload else "") + (f", {extra}" if extra else ""))


def crosscheck_line(checks: list[CrossCheck]) -> str:
    """The database-side checks of every run in one line (--details shows them per run)."""
    verdict = crosscheck.verdict(checks)
    counters = sorted({check.counter for check in checks if check.counter})
    line = f"Database-side check: {verdict}" + (f" ({', '.join(counters)})" if counters and ("within" in verdict or "FLAGGED" in verdict) else "")
    sizes = [check.bytes_per_event for check in checks if check.bytes_per_event is not None]
    if sizes:
        line += f"; storage {sizes[-1]:.1f} bytes/event"
    return line


# -- compared documents -------------------------------------------------------------------------------

WRONG_NOTE = ("WRONG marks a query whose answer differed from what the tool inserted (the first difference is in queries.csv); "
              "cold and warm averages are in queries.csv.")


def compared_sections(compared: Compared, study: bool = False) -> list[Section]:
    """The tables of a comparison (`compare`, and the comparison inside a study's views)."""
    found = []
    if compared.inserts:
        found.append(Section(
            "inserts", catalogue.INSERTS, compared.inserts, "Inserts across runs", compared=True, csv="inserts.csv",
            csv_tables=(catalogue.VISIBILITY,), marked=() if study else compared.inserts, markdown=InMarkdown(title="Every insert cell" if study else "Inserts"),
            terminal=InTerminal(after="Client shares, memory and every other figure: compare.html (expand Every other figure) and inserts.csv.")))
    if compared.under_ingest and not study:
        found.append(Section("under-ingest", catalogue.UNDER_INGEST, compared.under_ingest, compared=True, csv="queries-under-ingest.csv"))
    twins = [row for row in compared.inserts if row.throughput_without_queries is not None]
    if twins and not study:
        found.append(Section("with-and-without-queries", catalogue.WITH_AND_WITHOUT_QUERIES, twins, compared=True,
                             views=frozenset({MARKDOWN})))
    lags = [row for row in compared.inserts if row.visibility_unseen is not None]
    if lags:
        found.append(Section("visibility", catalogue.VISIBILITY, lags, compared=True, views=frozenset({PAGE} if study else {TERMINAL, PAGE, MARKDOWN})))
    if compared.queries:
        found.append(Section(
            "queries", catalogue.QUERIES, compared.queries, "Queries across runs", compared=True,
            caption="Milliseconds per execution, over every worker's executions.", csv="queries.csv",
            marked=() if study else one_per_run(compared.queries),
            markdown=InMarkdown(title="Queries", after="" if study else WRONG_NOTE)))
    if compared.scans:
        found.append(Section("scans", catalogue.SCANS, compared.scans, "Scans across runs", compared=True, csv="scans.csv",
                             marked=() if study else compared.scans, markdown=InMarkdown(title="Scans")))
    judged = [verdict for source, document in compared.sources for verdict in thresholds.sourced(document.thresholds, document.target, source)]
    if judged and not study:
        found.append(thresholds_section(judged, "Thresholds of the compared runs", compared=True))
    rows = [*compared.inserts, *one_per_run(compared.queries), *compared.scans]
    found.append(Section("conditions", catalogue.conditions(rows), rows, views=frozenset({PAGE}), compared=True, split=False,
                         caption="The conditions that change figures. The server version is compared among rows of the same database module only."))
    return found


# -- a study --------------------------------------------------------------------------------------------

def study_sections(document: StudyDocument, compared: Compared | None = None) -> list[Section]:
    """A study's tables: the score, a ranking per workload (and query), inserts/s by target and worker
    count, the comparison of its cells' results (`compared`: its views but the terminal), every cell."""
    found = []
    if document.scores:
        found.append(Section(
            "score", study_catalogue.score_table(document.scores), document.scores, "Score", caption=f"Formula: {document.score_formula}.",
            split=False, terminal=InTerminal(heading=f"Score of {document.name}",
                                             words="score = 100 x weighted geometric mean of each input relative to the best target (docs/studies.md)")))
    for index, ranking in enumerate(document.rankings):
        last = index == len(document.rankings) - 1
        found.append(Section(
            "ranking", study_catalogue.ranking_table(ranking), ranking.rows, f"Ranking: {ranking_title(ranking)}", caption=study_catalogue.RANKED,
            split=False, terminal=InTerminal(heading=ranking_title(ranking), words=""),
            markdown=InMarkdown(title=ranking_title(ranking), words="", level=3, before="## Rankings\n" if index == 0 else "",
                                after=f"{study_catalogue.RANKED} † = measured under conditions that differ from the other cells' of the table." if last else "")))
    if document.agreements:
        found.append(Section("agreement", catalogue.AGREEMENTS, document.agreements, split=False,
                             terminal=InTerminal(heading=f"Answers across targets of {document.name}")))
    table, rows = study_catalogue.pivot(document.cells)
    if rows:
        found.append(Section("pivot", table, rows, views=frozenset({PAGE, MARKDOWN}), caption="Mean over the runs of each cell.", split=False,
                             markdown=InMarkdown(words="Inserts/s = events / (last worker end - common start), mean over the runs.")))
    verdicts = [verdict for cell in document.cells for verdict in cell.thresholds]
    if verdicts:
        judged = [verdict for cell in document.cells
                  for verdict in thresholds.sourced(cell.thresholds, cell.target, f"{cell.target} · {cell.workload} · w{cell.workers}")]
        found.append(thresholds_section(judged, thresholds.heading(verdicts), compared=True))
    if compared is not None and not compared.empty():
        found += [dataclasses.replace(section, views=section.views - {TERMINAL, CSV}) for section in compared_sections(compared, study=True)]
    found.append(Section("cells", study_catalogue.CELLS, document.cells, views=frozenset({PAGE, MARKDOWN}), split=False,
                         caption="In the order they run; each folder holds the cell's own report.html.", markdown=InMarkdown(words="")))
    return found
