"""A study's views: the terminal tables, study.md and report.html (the page through the same Jinja setup
as report.html and compare.html), and the plots. All of them read study.json's typed document and the
cells' own results documents; the comparison tables are `compare`'s rows (report/comparison.py).
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from iotdb_bench.cli.report import comparison, html_report
from iotdb_bench.cli.report.comparison import Sources
from iotdb_bench.cli.report.html_report import Page, Section
from iotdb_bench.cli.results.study_document import CellRecord, Ranking, StudyDocument, TargetScore

REPORT = "report.html"
MARKDOWN = "study.md"
PLOT = "study.png"


def number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def ranking_title(ranking: Ranking) -> str:
    direction = "higher is better" if ranking.higher_is_better else "lower is better"
    return f"{ranking.workload}" + (f" · {ranking.query}" if ranking.query else "") + f": {ranking.label} ({ranking.unit}, {direction})"


def ranking_rows(ranking: Ranking) -> list[list[str]]:
    return [[str(row.rank) if row.rank else "-", row.target + (" †" if row.differs else ""), str(row.workers), number(row.value),
             row.spread or "-", row.check, row.why or "-", "; ".join(row.differs) or "-"] for row in ranking.rows]


RANKING_COLUMNS = ["Rank", "Target", "Workers", "Value", "Spread", "Check", "Not ranked because", "Differs from the others"]


def score_columns(scores: list[TargetScore]) -> list[str]:
    terms = scores[0].terms if scores else []
    return ["Rank", "Target", "Score", *(f"{term.workload} {term.figure}" + (f" ({term.query})" if term.query else "") + f" ×{term.weight:g}"
                                         for term in terms), "No score because"]


def score_rows(scores: list[TargetScore]) -> list[list[str]]:
    return [[str(item.rank) if item.rank else "-", item.target, "-" if item.score is None else f"{item.score:.1f}",
             *("-" if term.value is None else f"{number(term.value)} ({term.relative:.0%} of best)" if term.relative is not None
               else number(term.value) for term in item.terms), item.why or "-"] for item in scores]


def pivot(cells: list[CellRecord]) -> tuple[list[str], list[list[str]]]:
    """Seed 001's insert table: one row per target and insert workload, inserts/s (mean over the runs) per worker count."""
    inserts = [cell for cell in cells if cell.task == "insert"]
    counts = sorted({cell.workers for cell in inserts})
    rows = []
    for target, workload in dict.fromkeys((cell.target, cell.workload) for cell in inserts):
        mine = {cell.workers: cell for cell in inserts if cell.target == target and cell.workload == workload}
        modes = [cell.inserts[0].insert_mode for cell in mine.values() if cell.inserts]
        rows.append([target, workload, modes[0] if modes else "-",
                     *(_pivot_cell(mine.get(count)) for count in counts)])
    return ["Target", "Workload", "Insert mode", *(f"{count} worker(s)" for count in counts)], rows


def _pivot_cell(cell: CellRecord | None) -> str:
    if cell is None:
        return ""
    if cell.status != "ok" or not cell.inserts:
        return cell.status
    row = cell.inserts[0]
    return number(row.throughput.avg) + ("" if row.count_check == "ok" else f" (count {row.count_check})")


def cell_rows(document: StudyDocument) -> list[list[str]]:
    return [[str(cell.index + 1), cell.target, cell.workload, str(cell.workers), cell.status + (f": {cell.error}" if cell.error else ""),
             "-" if cell.seconds is None else f"{cell.seconds:.0f}", cell.folder or "-", cell.command()] for cell in document.cells]


CELL_COLUMNS = ["Cell", "Target", "Workload", "Workers", "Status", "Seconds", "Folder", "Command"]


# -- terminal -------------------------------------------------------------------------------------

def terminal_tables(document: StudyDocument) -> list[Table]:
    found = []
    for ranking in document.rankings:
        table = Table(title=ranking_title(ranking), title_justify="left")
        for column in RANKING_COLUMNS[:7]:
            table.add_column(column, justify="right" if column in ("Rank", "Workers", "Value") else "left")
        for row in ranking_rows(ranking):
            table.add_row(*row[:7])
        found.append(table)
    if document.scores:
        table = Table(title=f"Score of {document.name}", title_justify="left", caption="score = 100 x weighted geometric mean of "
                      "each input relative to the best target (docs/studies.md)", caption_justify="left")
        for column in score_columns(document.scores):
            table.add_column(column, justify="right" if column in ("Rank", "Score") else "left")
        for row in score_rows(document.scores):
            table.add_row(*row)
        found.append(table)
    return found


# -- study.md -------------------------------------------------------------------------------------

def _markdown_table(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def markdown(document: StudyDocument, sources: Sources) -> str:
    parts = [f"# {document.title or document.name}\n"]
    if document.description:
        parts.append(document.description.strip() + "\n")
    done = sum(cell.status == "ok" for cell in document.cells)
    parts.append(f"Study `{document.name}` ({document.file}), status {document.status}: {done} of {len(document.cells)} cells passed.\n")
    if document.scores:
        parts += ["## Score\n", _markdown_table(score_columns(document.scores), score_rows(document.scores)), f"Formula: {document.score_formula}.\n"]
    if document.rankings:
        parts.append("## Rankings\n")
        for ranking in document.rankings:
            parts += [f"### {ranking_title(ranking)}\n", _markdown_table(RANKING_COLUMNS, ranking_rows(ranking))]
        parts.append("Only cells that finished with status ok and whose check passed are ranked. † = measured under conditions that "
                     "differ from the other cells' of the table.\n")
    columns, rows = pivot(document.cells)
    if rows:
        parts += ["## Inserts/s by target, workload and worker count\n", _markdown_table(columns, rows),
                  "Inserts/s = events / (last worker end - common start), mean over the runs.\n"]
    insert_rows = comparison.insert_rows(sources)
    _, query_detail = comparison.query_rows(sources)
    scan_rows = comparison.scan_rows(sources)
    if insert_rows:
        parts += ["## Every insert cell\n", comparison.insert_markdown(insert_rows)]
    if query_detail:
        parts += ["## Queries\n", comparison.query_markdown(query_detail)]
    if scan_rows:
        parts += ["## Scans\n", comparison.scan_markdown(scan_rows)]
    parts += ["## Cells\n", _markdown_table(CELL_COLUMNS, cell_rows(document))]
    if document.stale_cells:
        parts.append("Cell folders of an earlier version of the study file (kept, not reported): " + ", ".join(document.stale_cells) + "\n")
    return "\n".join(parts)


# -- report.html ----------------------------------------------------------------------------------

def write_html(folder: Path, document: StudyDocument, sources: Sources, drawn: list[Path]) -> Path:
    sections = []
    if document.scores:
        sections.append(Section("Score", score_columns(document.scores), score_rows(document.scores), f"Formula: {document.score_formula}.",
                                numeric=("Rank", "Score")))
    for ranking in document.rankings:
        sections.append(Section(f"Ranking: {ranking_title(ranking)}", RANKING_COLUMNS, ranking_rows(ranking),
                                "Only cells that finished with status ok and whose check passed are ranked.", numeric=("Rank", "Workers", "Value")))
    columns, rows = pivot(document.cells)
    if rows:
        sections.append(Section("Inserts/s by target, workload and worker count", columns, rows, "Mean over the runs of each cell.",
                                numeric=tuple(columns[3:])))
    insert_rows = comparison.insert_rows(sources)
    query_rows, detail = comparison.query_rows(sources)
    scan_rows = comparison.scan_rows(sources)
    if insert_rows or query_rows or scan_rows:
        sections += html_report.compare_sections(insert_rows, query_rows, detail, comparison.query_columns(query_rows), scan_rows, [])
    sections.append(Section("Cells", CELL_COLUMNS, cell_rows(document), "In the order they run; each folder holds the cell's own report.html.",
                            numeric=("Cell", "Workers", "Seconds")))
    done = sum(cell.status == "ok" for cell in document.cells)
    page = Page(
        title=document.title or f"Study {document.name}", status=document.status,
        subtitle=f"study {document.name} ({document.file}): {done} of {len(document.cells)} cells passed, updated {document.updated}",
        summary=document.description, flags=study_flags(document), sections=sections, plots=html_report.embedded(drawn),
        sources=[(source, [("Task", item.task), ("Target", item.target), ("Status", item.status)]) for source, item in sources],
    )
    return html_report._write(folder / REPORT, "study.html.j2", page)


def study_flags(document: StudyDocument) -> list[str]:
    found = []
    for cell in document.cells:
        if cell.status in ("failed", "skipped", "pending"):
            found.append(f"{cell.target} · {cell.workload} · {cell.workers} worker(s): {cell.status}" + (f": {cell.error}" if cell.error else ""))
    for ranking in document.rankings:
        for row in ranking.rows:
            if row.differs:
                found.append(f"† {row.target} · {ranking.workload} · {row.workers} worker(s): measured under other conditions: {'; '.join(row.differs)}")
    return list(dict.fromkeys(found))


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
