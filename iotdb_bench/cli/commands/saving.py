"""Saving an invocation's results folder: the same files and tables whether the CLI followed the runs
itself or fetched them from a detached run's release (`attach`)."""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.report import folder_views
from iotdb_bench.cli.results import results_files, summary
from iotdb_bench.cli.results.document import ResultsDocument, RunRecord


def save_results(document: ResultsDocument, finished: list[RunRecord], folder: Path) -> None:
    document.runs = finished
    summary.summarise(document)
    results_files.save(folder, document)
    folder_views.write(folder, document)  # CSV files, plots and report.html; a plot or page that fails is a warning
