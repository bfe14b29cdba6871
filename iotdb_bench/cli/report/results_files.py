"""Results folders: one per invocation, with results.json (everything, typed), summary.csv (the rows
of the table) and, drawn after the runs, plots and the cross-check file."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.report import html_report, plots
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
    write_csv(folder / "summary.csv", document.inserts or document.queries or document.scans)
    if document.queries_under_ingest:
        write_csv(folder / "queries-under-ingest.csv", document.queries_under_ingest)


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


def flatten(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts become dotted columns (throughput.avg); lists are joined with ';'."""
    flat: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, list):
            flat[name] = ";".join(str(item) for item in value)
        else:
            flat[name] = value
    return flat


def write_csv(path: Path, rows: list[BaseModel] | list[dict[str, Any]]) -> None:
    flat_rows = [flatten(row.model_dump(mode="json") if isinstance(row, BaseModel) else row) for row in rows]
    columns = list(dict.fromkeys(column for row in flat_rows for column in row))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(flat_rows)


def write_figures(folder: Path, document: ResultsDocument) -> None:
    """Plots, the cross-check file and report.html of a finished invocation; a problem here is
    reported as a warning and never hides the outcome of the runs themselves."""
    drawn: list[Path] = []
    try:
        checks = crosscheck.run_checks(document)
        if checks:
            write_csv(folder / "crosscheck.csv", checks)
        drawn = plots.draw(document, folder)
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
