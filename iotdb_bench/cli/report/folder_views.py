"""The views a results folder holds beside results.json (cli/results/results_files.py): the CSV file of
every section that has one (summary.csv, runs.csv, rate-steps.csv, queries-under-ingest.csv,
crosscheck.csv: cli/results/tables/sections.py), the plots and report.html. A plot or a page that cannot be
drawn is a warning: it never hides the outcome of the runs, whose figures are already saved."""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.report import csv_files, html_report, plots
from iotdb_bench.cli.results.document import ResultsDocument
from iotdb_bench.cli.results.tables import sections
from iotdb_bench.cli.terminal import warning_line


def write(folder: Path, document: ResultsDocument) -> None:
    """Every view of a finished invocation."""
    csv_files.write_sections(folder, sections.document_sections(document))
    drawn: list[Path] = []
    try:
        drawn = plots.draw(document, folder) if plots.wanted() else []
    except Exception as error:  # the figures are already saved; the plots are a bonus
        warning_line(f"could not draw the plots: {type(error).__name__}: {error}")
    write_report(folder, document, drawn)


def write_report(folder: Path, document: ResultsDocument, drawn: list[Path]) -> Path | None:
    """report.html from the saved figures and the plots drawn for them; a warning if it cannot be written."""
    try:
        return html_report.write_report(folder, document, drawn)
    except Exception as error:  # results.json holds every figure; the page is a view of it
        warning_line(f"could not write {folder / html_report.REPORT}: {type(error).__name__}: {error}")
        return None
