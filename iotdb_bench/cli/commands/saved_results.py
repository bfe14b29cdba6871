"""Commands on saved results folders: `report` shows one again, `compare` sets several side by side."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.report import catalogue, comparison, csv_files, formats, html_report, plots, results_files, tables
from iotdb_bench.cli.report.comparison import CompareInsertRow, CompareQueryRow, CompareScanRow, Sources
from iotdb_bench.cli.report.render import show
from iotdb_bench.cli.results import run_conditions
from iotdb_bench.cli.terminal import console, handle_errors


@click.command()
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--details", is_flag=True, help="Show every figure in the tables.")
@handle_errors
def report(folder: Path, details: bool) -> None:
    """Print a saved run's tables again, redraw its plots and rewrite its report.html.

    FOLDER is a results folder (it holds results.json)."""
    document = results_files.read(folder)
    if document.status != "ok":
        console.print(f"This invocation ended with status '{document.status}': {document.error or ''}", highlight=False)
    drawn = plots.draw(document, folder) if plots.wanted() else []
    results_files.write_report(folder, document, drawn)
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
    insert_rows = comparison.insert_rows(documents)
    query_table_rows, query_detail = comparison.query_rows(documents)
    scan_rows = comparison.scan_rows(documents)
    mixed_rows = comparison.query_under_ingest_rows(documents)
    if not insert_rows and not query_table_rows and not scan_rows:
        raise UsageProblem("nothing to compare: the folders hold no finished insert, query or scan run")
    output = output or Path("results") / f"compare-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageProblem(f"cannot create the output folder {output}: {error.strerror}") from None

    queries = comparison.query_columns(query_table_rows)
    if insert_rows:
        console.print(_with_differences(tables.compare_insert_table(insert_rows), insert_rows))
        csv_files.write(output / "inserts.csv", csv_files.insert_tables(), insert_rows, compared=True)
    if mixed_rows:
        console.print(tables.query_under_ingest_table(mixed_rows, databases=True))
        csv_files.write(output / "queries-under-ingest.csv", catalogue.UNDER_INGEST, mixed_rows, compared=True)
    if any(row.visibility_unseen is not None for row in insert_rows):
        console.print(tables.visibility_table(insert_rows, compared=True))
    if query_table_rows:
        console.print(_with_differences(tables.compare_query_table(query_detail), query_table_rows))
        csv_files.write(output / "queries.csv", catalogue.COMPARED_QUERIES, query_detail, compared=True)
    if scan_rows:
        console.print(_with_differences(tables.compare_scan_table(scan_rows), scan_rows))
        csv_files.write(output / "scans.csv", catalogue.SCANS, scan_rows, compared=True)
    (output / "compare.md").write_text(_markdown(documents, insert_rows, query_table_rows, query_detail, scan_rows, mixed_rows))
    drawn = [plots.comparison(insert_rows, query_table_rows, query_detail, queries, output / "compare.png")] if plots.wanted() else []
    page = html_report.write_compare(output, documents, insert_rows, query_table_rows, query_detail, queries, drawn, scan_rows, mixed_rows)
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


def _differences(rows: list[CompareInsertRow] | list[CompareQueryRow]) -> list[str]:
    """One line per row measured under other conditions than the rest (marked † in the tables)."""
    return [f"† {row.database} ({row.source}, {formats.workers(row.workers)}): {'; '.join(row.differs)}" for row in rows if row.differs]


def _with_differences(table, rows):
    lines = _differences(rows)
    if lines:
        table.caption = "\n".join([table.caption or "", "Measured under other conditions than the other rows:", *lines])
    return table


def _markdown(documents: Sources, insert_rows: list[CompareInsertRow], query_rows: list[CompareQueryRow], query_detail: list,
              scan_rows: list[CompareScanRow], mixed_rows: list[comparison.CompareQueryUnderIngestRow] | None = None) -> str:
    parts = ["# Comparison of saved runs\n"]
    if insert_rows:
        parts += ["## Inserts\n", comparison.insert_markdown(insert_rows), *_markdown_differences(insert_rows)]
    mixed = comparison.mixed_markdown(insert_rows, mixed_rows or [])
    if mixed:
        parts.append(mixed)
    if query_rows:
        parts += ["## Queries\n", comparison.query_markdown(query_detail), *_markdown_differences(query_rows),
                  "WRONG marks a query whose answer differed from what the tool inserted (the first difference is in queries.csv); "
                  "cold and warm averages are in queries.csv.\n"]
    if scan_rows:
        parts += ["## Scans\n", comparison.scan_markdown(scan_rows), *_markdown_differences(scan_rows)]
    parts.append("## Sources\n")
    for source, document in documents:
        environment = document.environment
        parts.append(
            f"- `{source}`: {document.task} on target `{document.target}` ({document.platform} platform), "
            f"status {document.status}, {environment.created or '?'}, machine {environment.machine or '?'} "
            f"with {environment.cpus or '?'} CPUs, iotdb-bench {environment.tool_version or '?'}"
        )
        parts.append(f"  - {run_conditions.caption(document)}")
    return "\n".join(parts) + "\n"


def _markdown_differences(rows) -> list[str]:
    lines = _differences(rows)
    return ["Measured under other conditions than the other rows:\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"] if lines else []
