"""Results folders: one per invocation, with results.json (everything, typed), summary.csv (the rows
of the table, every figure of the catalogue), runs.csv (every insert run) and, drawn after the runs,
plots and the cross-check file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.report import catalogue, csv_files, html_report, plots, tables
from iotdb_bench.cli.results import crosscheck, summary
from iotdb_bench.cli.results.document import FORMAT_VERSION, ResultsDocument
from iotdb_bench.cli.terminal import warning_line


def results_folder(output: Path, target: str, task: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = output / f"{stamp}-{target}-{task}"
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = output / f"{stamp}-{target}-{task}-{suffix}"
    try:
        folder.mkdir(parents=True)
    except OSError as error:  # a folder that cannot be created (/proc/x, read-only, not a folder): before any run
        raise UsageProblem(f"--output {output}: cannot create the results folder {folder} ({error.strerror or error})") from None
    return folder


def save(folder: Path, document: ResultsDocument) -> None:
    (folder / "results.json").write_text(document.model_dump_json(indent=2))
    summary_catalogues, rows = summary_tables(document)
    csv_files.write(folder / "summary.csv", summary_catalogues, rows)
    if document.queries_under_ingest:
        csv_files.write(folder / "queries-under-ingest.csv", catalogue.UNDER_INGEST, document.queries_under_ingest)
    if document.task == "insert":
        csv_files.write(folder / "runs.csv", catalogue.EVERY_RUN, document.insert_runs())
    if document.max_rate is not None:
        csv_files.write(folder / "rate-steps.csv", catalogue.RATE_STEPS, tables.rate_steps(document.max_rate))


def summary_tables(document: ResultsDocument) -> tuple[tuple[catalogue.Catalogue, ...], list]:
    """The catalogues of summary.csv and its rows, by the invocation's task."""
    if document.task == "query":
        return (catalogue.QUERIES,), document.queries
    if document.task == "scan":
        return (catalogue.SCANS,), document.scans
    return csv_files.insert_tables(), document.inserts


def read(folder: Path) -> ResultsDocument:
    """The results document of a saved folder; a folder of an older format is read when it can be
    and refused in one line when it cannot."""
    path = Path(folder) / "results.json"
    if not path.is_file():
        raise UsageProblem(f"{folder} is not a results folder (no results.json in it)")
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise UsageProblem(f"cannot read {path}: {error}") from None
    if not isinstance(raw, dict) or raw.get("task") not in ("insert", "query", "scan") or "spec" not in raw:
        raise UsageProblem(f"{path} is not a results file of this tool")
    version = raw.get("format_version", 1)
    if version > FORMAT_VERSION:
        raise UsageProblem(f"{path} has results format {version}, newer than this version reads (format {FORMAT_VERSION}): update iotdb-bench")
    try:
        document = ResultsDocument.model_validate({**_upgraded(raw), "format_version": FORMAT_VERSION})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UsageProblem(f"{path} has results format {version} and cannot be read as format {FORMAT_VERSION} ({where}: {first['msg']})") from None
    summary.summarise(document)
    return document


def _upgraded(raw: dict[str, Any]) -> dict[str, Any]:
    """Format 1 (before typed results) had the same run reports and a derived `summary`, recomputed here."""
    if raw.get("format_version", 1) >= FORMAT_VERSION:
        return raw
    upgraded = {key: value for key, value in raw.items() if key != "summary"}
    upgraded["runs"] = [run for run in raw.get("runs", []) if isinstance(run.get("report"), dict) and run["report"]]
    return upgraded


def write_figures(folder: Path, document: ResultsDocument) -> None:
    """Plots, the cross-check file and report.html of a finished invocation; a problem here is
    reported as a warning and never hides the outcome of the runs themselves."""
    drawn: list[Path] = []
    try:
        checks = crosscheck.run_checks(document)
        if checks:
            csv_files.write(folder / "crosscheck.csv", catalogue.CROSSCHECKS, checks)
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
