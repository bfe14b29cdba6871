"""Saving an invocation's results folder: the same files and tables whether the CLI followed the runs
itself or fetched them from a detached run's release (`attach`). results.json is written again as each
run ends (`run_done`), so a CLI that dies in a run of hours leaves the runs it finished, the invocation
marked as not ended (status running: its views say "incomplete"); the views follow at the end."""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.report import folder_views, series_files
from iotdb_bench.cli.results import results_files, summary
from iotdb_bench.cli.results.document import ResultsDocument, RunRecord


def run_done(document: ResultsDocument, finished: list[RunRecord], folder: Path, record: RunRecord) -> None:
    """A run has ended: its series kept (`series_kept`) and results.json written again."""
    series_kept(folder, record)
    document.runs = finished
    summary.summarise(document)
    results_files.save(folder, document)


def series_kept(folder: Path, record: RunRecord) -> None:
    """A run's series into series.csv as measured, and its report's series fitted for results.json
    (what the CLI keeps of them from now on: its memory does not grow with the runs' lengths)."""
    series_files.append(folder, record)
    results_files.for_display(record.report)


def save_results(document: ResultsDocument, finished: list[RunRecord], folder: Path) -> None:
    document.runs = finished
    summary.summarise(document)
    results_files.save(folder, document)
    folder_views.write(folder, document)  # CSV files, plots and report.html; a plot or page that fails is a warning
