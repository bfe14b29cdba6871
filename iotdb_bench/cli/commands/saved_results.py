"""Commands on saved results folders: `report` shows one again, `compare` sets several side by side."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.report import comparison, folder_views, plots
from iotdb_bench.cli.report.render import show
from iotdb_bench.cli.results import compared, results_files
from iotdb_bench.cli.results.compared import Sources
from iotdb_bench.cli.terminal import console, handle_errors


@click.command()
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--details", is_flag=True, help="Show every figure in the tables.")
@handle_errors
def report(folder: Path, details: bool) -> None:
    """Print a saved run's tables again, redraw its plots and rewrite its report.html.

    FOLDER is a results folder (it holds results.json)."""
    document = results_files.read(folder)
    if document.status != "ok" and document.status != "running":  # running: an invocation cut short, said as "incomplete"
        console.print(f"This invocation ended with status '{document.status}': {document.error or ''}", highlight=False)
    drawn = plots.draw(document, folder) if plots.wanted() else []
    folder_views.write_report(folder, document, drawn)
    show(document, folder, details, rerendered=True)
    for path in drawn:
        console.print(f"Plot: {path}", highlight=False)


@click.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the comparison [default: results/compare-<time>].")
@handle_errors
def compare(folders: tuple[Path, ...], output: Path | None) -> None:
    """Compare saved runs in one Markdown/CSV table and a plot.

    FOLDERS are results folders (each holds results.json), of any targets; insert and query runs may be mixed."""
    documents, skipped = _readable(folders)
    for line in skipped:
        console.print(line, highlight=False)
    rows = compared.compare(documents)
    if rows.empty():
        raise UsageProblem("nothing to compare: the folders hold no finished insert, query or scan run")
    output = output or Path("results") / f"compare-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageProblem(f"cannot create the output folder {output}: {error.strerror}") from None
    page = comparison.write(rows, output)
    console.print(f"Comparison saved in {output}", highlight=False)
    console.print(f"Report: {page}", highlight=False)


def _readable(folders: tuple[Path, ...]) -> tuple[Sources, list[str]]:
    """The results documents of the folders, in order; one line for each folder left out: the tool's
    own comparison folders (so `compare results/*` works), folders without results (a killed run
    leaves an empty one) and invocations that failed."""
    documents, skipped = [], []
    for folder in folders:
        if not folder.exists():
            raise UsageProblem(f"{folder} is not a results folder (it does not exist)")
        if (folder / "compare.md").is_file() and not (folder / "results.json").is_file():
            continue  # an earlier comparison's output
        if not folder.is_dir():
            skipped.append(f"Skipped {folder}: not a folder")
            continue
        if not (folder / "results.json").is_file():
            skipped.append(f"Skipped {folder}: no results.json (an empty or interrupted results folder)")
            continue
        document = results_files.read(folder)
        if not (document.inserts or document.queries or document.scans):
            skipped.append(f"Skipped {folder}: {document.task} ended with status {document.status} and no finished run"
                           + (f" ({document.error})" if document.error else ""))
            continue
        if document.status != "ok":
            skipped.append(f"Included {folder}: status {document.status}" + (f" ({document.error})" if document.error else "")
                           + "; its finished runs are compared")
        documents.append((folder.name or str(folder), document))
    return documents, skipped
