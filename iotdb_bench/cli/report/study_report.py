"""A study's views: the terminal tables, study.md and report.html (the page through the same Jinja setup
as report.html and compare.html), and the plots. All of them iterate the study's sections
(cli/results/tables/sections.py): study.json's typed document, and the comparison of the cells' own results
documents (`compare`'s rows and tables).
"""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.report import html_report
from iotdb_bench.cli.report import markdown as md
from iotdb_bench.cli.report.html_report import Page
from iotdb_bench.cli.report.tables import FittedTable, fitted, section_table
from iotdb_bench.cli.results import findings
from iotdb_bench.cli.results.compared import Sources, compare
from iotdb_bench.cli.results.study.document import StudyDocument
from iotdb_bench.cli.results.tables import sections
from iotdb_bench.cli.results.tables.catalogue import DEFAULT
from iotdb_bench.cli.results.tables.sections import TERMINAL
from iotdb_bench.cli.results.tables.study_catalogue import PLAN, PlannedCell, ranking_title

REPORT = "report.html"
MARKDOWN = "study.md"
PLOT = "study.png"


def terminal_tables(document: StudyDocument) -> list[FittedTable]:
    return [section_table(section) for section in sections.study_sections(document) if section.shown_in(TERMINAL)]


def plan_table(cells: list[PlannedCell], title: str) -> FittedTable:
    """`study --dry-run`: every cell, whether it runs, and an estimate of its time."""
    return fitted(PLAN, cells, DEFAULT, title=title)


def markdown(document: StudyDocument, sources: Sources) -> str:
    parts = [f"# {document.title or document.name}\n"]
    if document.description:
        parts.append(document.description.strip() + "\n")
    done = sum(cell.status == "ok" for cell in document.cells)
    parts.append(f"Study `{document.name}` ({document.file}), status {document.status}: {done} of {len(document.cells)} cells passed.\n")
    parts += md.parts(sections.study_sections(document, compare(sources)))
    if document.stale_cells:
        parts.append("Cell folders of an earlier version of the study file (kept, not reported): " + ", ".join(document.stale_cells) + "\n")
    return "\n".join(parts)


def write_html(folder: Path, document: StudyDocument, sources: Sources, drawn: list[Path]) -> Path:
    done = sum(cell.status == "ok" for cell in document.cells)
    compared = compare(sources)
    page = Page(
        title=document.title or f"Study {document.name}", status=document.status,
        subtitle=f"study {document.name} ({document.file}): {done} of {len(document.cells)} cells passed, updated {document.updated}",
        summary=document.description, flags=findings.flags(findings.study_findings(document, compared)),
        sections=html_report.page_tables(sections.study_sections(document, compared)), plots=html_report.embedded(drawn),
        sources=[(source, [("Task", item.task), ("Target", item.target), ("Status", item.status)]) for source, item in sources],
    )
    return html_report.write_page(folder / REPORT, "study.html.j2", page)


# -- plots ----------------------------------------------------------------------------------------

def draw(document: StudyDocument, folder: Path) -> list[Path]:
    """One bar panel per ranking (ranked cells only) and one for the score."""
    panels = [ranking for ranking in document.rankings if any(row.rank for row in ranking.rows)][:8]
    scored = [item for item in document.scores if item.score is not None]
    if not panels and not scored:
        return []
    from matplotlib.figure import Figure

    count = len(panels) + (1 if scored else 0)
    figure = Figure(figsize=(8.0, 1.2 + 1.9 * count), layout="constrained")
    axes_list = figure.subplots(count, 1, squeeze=False)[:, 0]
    for axes, ranking in zip(axes_list, panels, strict=False):
        ranked = [row for row in ranking.rows if row.rank]
        axes.barh([f"{row.target} w{row.workers}" for row in ranked], [row.value for row in ranked], color="#4477aa")
        axes.invert_yaxis()
        axes.set_title(ranking_title(ranking), fontsize=9, loc="left")
    if scored:
        axes = axes_list[-1]
        axes.barh([item.target for item in scored], [item.score for item in scored], color="#228833")
        axes.invert_yaxis()
        axes.set_xlim(0, 100)
        axes.set_title("Score (100 = best at every input)", fontsize=9, loc="left")
    path = folder / PLOT
    figure.savefig(path, dpi=100)
    return [path]
