"""What the terminal shows of a results document: the tables, the modules' notes and the checks.

The same for a command that just ran and for `report` on a saved folder.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from cli import crosscheck, tables
from cli.comparison import crosscheck_verdict
from cli.crosscheck import CrossCheck
from cli.document import ResultsDocument
from cli.terminal import console


def title(document: ResultsDocument) -> str:
    spec = document.spec
    if document.task == "query":
        return f"{document.target}: queries, {spec.query_runs} executions each per worker"
    modes = list(dict.fromkeys(run.report.insert_mode for run in document.insert_runs() if run.report.insert_mode))
    mode = ", ".join(modes) or (f"batch {spec.batch}" if spec.batch else "single inserts")
    extra = ", ".join(f"{key}={value}" for key, value in spec.extra.items())
    return (f"{document.target}: inserts/s, {mode}, key {spec.primary_key.value}, {len(spec.table_names)} table(s), "
            f"{spec.num_inserts:,} events/worker" + (f", {extra}" if extra else ""))


def show(document: ResultsDocument, folder: Path, details: bool = False) -> None:
    if document.task == "query" and document.queries:
        console.print(tables.query_table(document.queries, title(document)))
    elif document.steps and document.inserts:
        console.print(tables.steps_table(document.inserts, document.spec.num_inserts * document.spec.workers))
    elif document.inserts and details:
        print_whole(tables.insert_table(document.inserts, title(document), details=True))
    elif document.inserts:
        console.print(tables.insert_table(document.inserts, title(document)))
    for note in dict.fromkeys(note for run in document.runs for note in run.report.notes):
        console.print(f"Note: {note}", highlight=False)
    for run in document.runs:
        if run.report.ingestion is not None:
            console.print(f"{run.label}: {run.report.ingestion.sentence()}", highlight=False)
    checks = crosscheck.run_checks(document)
    if checks and details:
        print_whole(tables.crosscheck_table(checks))
    elif checks:
        console.print(crosscheck_line(checks), highlight=False)
    console.print(f"Results saved in {folder}", highlight=False)


def print_whole(table: Table) -> None:
    """A wide table at its natural width, even beyond the terminal's: asked for with --details, its
    figures must be read whole rather than cut to fit."""
    natural = Measurement.get(console, console.options.update(width=10_000), table).maximum
    if natural <= console.width:
        console.print(table)
        return
    # rich renders nothing wider than its console: a console of the table's width on the same output.
    Console(file=console.file, width=natural, force_terminal=console.is_terminal, no_color=console.no_color).print(table)


def crosscheck_line(checks: list[CrossCheck]) -> str:
    """The database-side checks of every run in one line (--details shows them per run)."""
    verdict = crosscheck_verdict(checks)
    counters = sorted({check.counter for check in checks if check.counter})
    line = f"Database-side check: {verdict}" + (f" ({', '.join(counters)})" if counters and ("within" in verdict or "FLAGGED" in verdict) else "")
    sizes = [check.bytes_per_event for check in checks if check.bytes_per_event is not None]
    if sizes:
        line += f"; storage {sizes[-1]:.1f} bytes/event"
    return line
