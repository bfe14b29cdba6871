"""Saving an invocation's results folder: the same files and tables whether the CLI followed the runs
itself or fetched them from a detached run's release (`attach`)."""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.report import results_files
from iotdb_bench.cli.results import summary
from iotdb_bench.cli.results.document import ResultsDocument, RunRecord


def save_results(document: ResultsDocument, finished: list[RunRecord], folder: Path) -> None:
    document.runs = finished
    summary.summarise(document)
    results_files.save(folder, document)
    results_files.write_figures(folder, document)  # plots and cross-check file; never raises
