"""Results folders on disk: one per invocation, named by its time, target and task, holding
results.json (everything it ran and measured, typed: cli/results/document.py). Reading one back
upgrades an older format where it can and refuses it in one line where it cannot; the rows across
runs are computed again (cli/results/summary.py). The views written beside results.json (CSV files,
plots, report.html) are cli/report/folder_views.py's."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results import summary
from iotdb_bench.cli.results.document import FORMAT_VERSION, ResultsDocument
from iotdb_bench.simulator.measurement import resources
from iotdb_bench.simulator.measurement.stats import InsertRunFigures, ScanFigures
from iotdb_bench.simulator.measurement.windows import DISPLAY_WINDOWS, fitted
from iotdb_bench.simulator.protocol import WorkerResult
from iotdb_bench.simulator.report import RunReport

RESULTS = "results.json"


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
    """results.json, written whole or not at all: it is written again after each run, and a CLI killed
    while writing it leaves the version before."""
    write_atomically(folder / RESULTS, document.model_dump_json(indent=2))


def write_atomically(path: Path, text: str) -> None:
    """The file replaced by a complete new one (a temporary file renamed over it), never half written."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def for_display(report: RunReport) -> None:
    """The report's series as results.json keeps them, in place: each at most DISPLAY_WINDOWS windows
    long (coarsened) and each resource series at most DISPLAY_SAMPLES readings (thinned; its figures are
    computed already). series.csv and readings.csv beside it keep them as measured (cli/report/series_files.py)."""
    holders: list[InsertRunFigures | ScanFigures | WorkerResult | None] = [report.figures, report.scan, *report.workers]
    for series in holders:
        if series is not None and len(series.per_second) > DISPLAY_WINDOWS:
            series.per_second, series.series_window_s = fitted(series.per_second, series.series_window_s, DISPLAY_WINDOWS)
    usage = report.resources
    groups = [usage.database, usage.workers, usage.collector, usage.cli] if usage is not None else []
    for group in groups:
        for readings in group.series if group is not None else []:
            readings.samples = resources.fitted(readings.samples, resources.DISPLAY_SAMPLES)


def read(folder: Path) -> ResultsDocument:
    """The results document of a saved folder; a folder of an older format is read when it can be
    and refused in one line when it cannot."""
    path = Path(folder) / RESULTS
    if not path.is_file():
        raise UsageProblem(f"{folder} is not a results folder (no {RESULTS} in it)")
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
