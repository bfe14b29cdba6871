"""Commands on saved results folders (`report`, `compare`) and the files drawn after every run.

Imported at the bottom of cli/main.py, after everything it uses from there is defined.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from cli import comparison, crosscheck, plots, results, runner, tables
from cli.errors import UsageProblem
from cli.main import _print, console, errors, handle_errors
from simulator.spec import RunSpec


def write_figures(folder: Path, document: dict[str, Any]) -> None:
    """Plots and the cross-check file of a finished invocation; a problem here is reported as a
    warning and never hides the outcome of the runs themselves."""
    try:
        checks = crosscheck.run_checks(document)
        if checks:
            results.write_csv(folder / "crosscheck.csv", checks)
        plots.draw(document, folder)
    except Exception as error:  # the figures are already saved; the plots are a bonus
        errors.print(f"[yellow]warning:[/yellow] could not draw the plots: {type(error).__name__}: {error}", highlight=False, soft_wrap=True)


def load_folder(folder: Path) -> dict[str, Any]:
    path = Path(folder) / "results.json"
    if not path.is_file():
        raise UsageProblem(f"{folder} is not a results folder (no results.json in it)")
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise UsageProblem(f"cannot read {path}: {error}") from None
    if not isinstance(document, dict) or document.get("task") not in ("insert", "query") or "spec" not in document:
        raise UsageProblem(f"{path} is not a results file of this tool")
    return document


@click.command()
@click.argument("folder", type=click.Path(path_type=Path))
@handle_errors
def report(folder: Path) -> None:
    """Print a saved run's tables again and redraw its plots.

    FOLDER is a results folder (it holds results.json)."""
    document = load_folder(folder)
    try:
        base = RunSpec.model_validate(document["spec"])
    except ValidationError:
        raise UsageProblem(f"{folder / 'results.json'} holds a run specification this version cannot read") from None
    invocation = runner.Invocation(base, tuple(document.get("worker_counts") or (base.workers,)),
                                   document.get("runs_per_worker_count", 1), document.get("steps") or 0)
    if document.get("status") != "ok":
        console.print(f"This invocation ended with status '{document.get('status')}': {document.get('error', '')}", highlight=False)
    _print(invocation, document, folder)
    for path in plots.draw(document, folder):
        console.print(f"Plot: {path}", highlight=False)


@click.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the comparison [default: results/compare-<time>].")
@handle_errors
def compare(folders: tuple[Path, ...], output: Path | None) -> None:
    """Compare saved runs in one Markdown/CSV table and a plot.

    FOLDERS are results folders (each holds results.json), of any targets; insert and query runs may be mixed."""
    documents = [(folder.name or str(folder), load_folder(folder)) for folder in folders]
    insert_rows = comparison.insert_rows(documents)
    query_table_rows, query_detail = comparison.query_rows(documents)
    if not insert_rows and not query_table_rows:
        raise UsageProblem("the folders hold no finished insert or query run to compare")
    output = output or Path("results") / f"compare-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageProblem(f"cannot create the output folder {output}: {error.strerror}") from None

    if insert_rows:
        console.print(tables.compare_insert_table(insert_rows))
        results.write_csv(output / "inserts.csv", comparison.insert_csv_rows(insert_rows))
    if query_table_rows:
        console.print(tables.compare_query_table(query_table_rows, comparison.query_columns(query_table_rows)))
        results.write_csv(output / "queries.csv", query_detail)
    (output / "compare.md").write_text(_markdown(documents, insert_rows, query_table_rows))
    plots.comparison(insert_rows, query_table_rows, query_detail, comparison.query_columns(query_table_rows), output / "compare.png")
    console.print(f"Comparison saved in {output}", highlight=False)


def _markdown(documents: list[tuple[str, dict[str, Any]]], insert_rows: list[dict[str, Any]], query_rows: list[dict[str, Any]]) -> str:
    parts = ["# Comparison of saved runs\n"]
    if insert_rows:
        parts += ["## Inserts\n", comparison.insert_markdown(insert_rows),
                  "Inserts/s: events / (last worker end - common start), average over runs; CV = stdev / average, "
                  "unstable above 10%. Database-side check: rows the database itself counted as inserted during "
                  "the timed phase, against the rows the workers reported (flagged above 2%).\n"]
    if query_rows:
        parts += ["## Queries (average seconds per execution)\n", comparison.query_markdown(query_rows),
                  "A trailing asterisk marks a query whose executions vary by more than 10% (coefficient of "
                  "variation); cold and warm averages are in queries.csv.\n"]
    parts.append("## Sources\n")
    for source, document in documents:
        environment = document.get("environment", {})
        parts.append(
            f"- `{source}`: {document['task']} on target `{document['target']}` ({document.get('platform', '?')} platform), "
            f"status {document.get('status')}, {environment.get('created', '?')}, machine {environment.get('machine', '?')} "
            f"with {environment.get('cpus', '?')} CPUs, iotdb-bench {environment.get('tool_version', '?')}"
        )
    return "\n".join(parts) + "\n"
