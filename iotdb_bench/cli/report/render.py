"""What the terminal shows of a results document: its sections' tables (cli/results/tables/sections.py), the
findings under the tables they concern, the modules' notes and what the runs cost.

The same for a command that just ran and for `report` on a saved folder.
"""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.report import tables
from iotdb_bench.cli.results import findings, run_conditions
from iotdb_bench.cli.results.document import ResultsDocument
from iotdb_bench.cli.results.findings import Finding
from iotdb_bench.cli.results.resource_figures import capacity_words
from iotdb_bench.cli.results.tables import formats, sections
from iotdb_bench.cli.results.tables.sections import TERMINAL, Section
from iotdb_bench.cli.terminal import console

# The findings the terminal prints under a section's table (the others are in the tables, or below).
UNDER: dict[str, tuple[findings.Kind, ...]] = {
    "inserts": ("could-not-sustain",),
    "rate-steps": ("max-rate",),
    "under-ingest": ("with-and-without-queries",),
    "queries": ("wrong-answer", "answers-not-checked", "empty-answers"),
    "scans": ("scan-problem",),
}
BOLD = ("could-not-sustain", "max-rate")


def show(document: ResultsDocument, folder: Path, details: bool = False, rerendered: bool = False) -> None:
    """The tables of a document; `rerendered`: `report` wrote its files again from results.json."""
    found = findings.document_findings(document)
    if document.max_rate is not None:  # the search's answer says it: its failed rates fell behind by design
        found = [finding for finding in found if finding.kind != "could-not-sustain"]
    shown = [section for section in sections.document_sections(document) if section.shown_in(TERMINAL)]
    conditions = run_conditions.caption(document)
    printed: set[int] = set()
    for section in (section for section in shown if not section.terminal.last):
        _print(section, details, conditions)
        printed |= _print_findings([finding for finding in found if finding.kind in UNDER.get(section.name, ())])
    _print_findings([finding for finding in found if id(finding) not in printed and any(finding.kind in kinds for kinds in UNDER.values())])
    for note in findings.module_notes(document):
        console.print(f"Note: {note}", highlight=False)
    for line in resource_lines(document):
        console.print(line, highlight=False)
    _print_findings(findings.of_kind(found, "ingestion", "incomplete", "time-limit"))
    for section in (section for section in shown if section.terminal.last):
        _print(section, details, conditions)
    if rerendered:
        console.print(f"Report written from {folder / 'results.json'}", highlight=False)
    else:
        console.print(f"Results saved in {folder}", highlight=False)
    if (folder / "report.html").is_file():
        console.print(f"Report: {folder / 'report.html'}", highlight=False)


def _print(section: Section, details: bool, conditions: str) -> None:
    if section.terminal.details_only and not details:
        if section.terminal.instead:
            console.print(section.terminal.instead, highlight=False)
        return
    console.print(tables.section_table(section, details, conditions if section.terminal.conditions else ""))


def _print_findings(found: list[Finding]) -> set[int]:
    for finding in found:
        if finding.kind in BOLD:
            head = ": ".join(part for part in (finding.where, finding.what) if part)
            console.print(f"[bold]{head}[/bold]" + (f": {finding.why}" if finding.why else ""), highlight=False)
        else:
            console.print(finding.sentence(), highlight=False)
    return {id(finding) for finding in found}


def resource_lines(document: ResultsDocument) -> list[str]:
    """What the runs cost the database and the client, one line per row; the client-bottleneck flag
    in bold; why a database figure was not measured; the cost at the target's price."""
    lines = []
    if document.max_rate is not None:  # one row per rate tried: report.html's Every figure holds them
        return ["Resources at each rate: report.html, under Inserts per second (Every other figure)"]
    for row in document.inserts:
        who = formats.row_where(row)
        r = row.resources
        if r is None:
            continue
        if r.database_in_workers:
            database = "an embedded database, its work is inside the workers"
        elif r.db_cpu_s is None:
            database = f"database CPU not measured ({r.not_measured.get('cpu', 'not read')})"
        else:
            database = f"database {r.db_cores:.2f} cores"
            if r.db_cpu_s_per_million is not None:  # None: no event in the timed phase
                database += f", {r.db_cpu_s_per_million:.3g} CPU s per million events"
            if r.db_memory_peak_bytes is not None:
                database += f", memory peak {r.db_memory_peak_bytes / 1e6:,.0f} MB"
            if r.written_bytes_per_event is not None:
                database += f", {r.written_bytes_per_event:,.0f} bytes written per event"
        client = "" if r.client_cpu_s_per_million is None else f"; client {r.client_cpu_s_per_million:.3g} CPU s per million events"
        share = "" if r.client_share is None else f" (share {r.client_share:.0%})"
        if r.client_machine_share is not None:
            share += f", {r.client_machine_share:.0%} of {capacity_words(r)}"
        lines.append(f"Resources, {who}: {database}{client}{share}")
        bottleneck = findings.client_bottleneck(row, who)
        if bottleneck is not None:  # a heading of the resources' lines, as "Resources" and "Cost" are
            lines.append(f"[bold]{_heading(bottleneck.what)}[/bold], {bottleneck.where}: {bottleneck.why}")
        if row.cost is not None and row.cost.per_million_inserts is not None:
            lines.append(f"Cost, {who}: {row.cost.per_million_inserts:.3g} {row.cost.currency} per million inserts, "
                         f"{row.cost.inserts_per_unit:,.0f} inserts per {row.cost.currency}")
    return lines


def _heading(words: str) -> str:
    """Words as a line's heading: capitalised, without their article."""
    words = words.removeprefix("the ")
    return words[:1].upper() + words[1:]
