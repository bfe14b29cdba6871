"""Markdown of sections (cli/results/tables/sections.py): compare.md and a study's study.md iterate the same
sections as the terminal and the pages; a table is headed by its figures' human labels."""

from __future__ import annotations

from collections.abc import Sequence

from iotdb_bench.cli.report.tables import difference_lines
from iotdb_bench.cli.results import run_conditions
from iotdb_bench.cli.results.compared import Compared, Sources
from iotdb_bench.cli.results.tables import catalogue, sections
from iotdb_bench.cli.results.tables.catalogue import COMPARE, DETAILS
from iotdb_bench.cli.results.tables.sections import MARKDOWN, Section


def parts(found: Sequence[Section]) -> list[str]:
    """Each section shown in Markdown: its heading, its table, what is said under it."""
    written = []
    for section in (section for section in found if section.shown_in(MARKDOWN)):
        words = section.markdown
        if words.before:
            written.append(words.before)
        written += [f"{'#' * words.level} {words.title or section.heading}\n", table(section), *_differences(section)]
        if words.after:
            written.append(words.after + "\n")
    return written


def table(section: Section) -> str:
    """The section's figures as a Markdown table (compared rows: their compare figures; others: every
    figure), then its caption."""
    rendered = catalogue.render(section.table, section.rows, COMPARE if section.compared else DETAILS, section.compared, caption=section.caption)
    lines = [_row([figure.title for figure in rendered.figures]), _row(["---"] * len(rendered.figures))]
    lines += [_row(cells) for cells in rendered.rows]
    words = rendered.caption if section.markdown.words is None else section.markdown.words
    return "\n".join(lines) + "\n" + (f"\n{words}\n" if words else "")


def _differences(section: Section) -> list[str]:
    lines = difference_lines(section.marked)
    return ["Measured under other conditions than the other rows:\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"] if lines else []


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def compare(compared: Compared) -> str:
    """compare.md: the comparison's tables, then where each compared folder's figures come from."""
    return "\n".join(["# Comparison of saved runs\n", *parts(sections.compared_sections(compared)), "## Sources\n", *sources(compared.sources)]) + "\n"


def sources(documents: Sources) -> list[str]:
    lines = []
    for source, document in documents:
        environment = document.environment
        lines.append(f"- `{source}`: {document.task} on target `{document.target}` ({document.platform} platform), "
                     f"status {document.status}, {environment.created or '?'}, machine {environment.machine or '?'} "
                     f"with {environment.cpus or '?'} CPUs, iotdb-bench {environment.tool_version or '?'}")
        lines.append(f"  - {run_conditions.caption(document)}")
    return lines
