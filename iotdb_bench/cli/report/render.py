"""What the terminal shows of a results document: the tables, the modules' notes and the checks.

The same for a command that just ran and for `report` on a saved folder.
"""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.report import formats, tables
from iotdb_bench.cli.report.comparison import crosscheck_verdict
from iotdb_bench.cli.results import crosscheck, run_conditions
from iotdb_bench.cli.results.crosscheck import CrossCheck
from iotdb_bench.cli.results.document import ResultsDocument
from iotdb_bench.cli.results.resource_figures import capacity_words
from iotdb_bench.cli.terminal import console
from iotdb_bench.simulator.workload import shapes


def title(document: ResultsDocument) -> str:
    spec = document.spec
    if document.task == "query":
        return f"{document.target}: queries, {spec.query_runs} executions each per worker"
    if document.task == "scan":
        return f"{document.target}: scans of every device's readings in time order, pages of {spec.scan_page_size:,}"
    modes = list(dict.fromkeys(run.report.insert_mode for run in document.insert_runs() if run.report.insert_mode))
    mode = ", ".join(modes) or (f"batch {spec.batch}" if spec.batch else "single inserts")
    extra = ", ".join(f"{key}={value}" for key, value in spec.extra.items())
    length = shapes.run_length(spec)
    workload = shapes.describe(spec)
    return (f"{document.target}: inserts/s, {mode}, key {spec.primary_key.value}, {formats.plural(len(spec.table_names), 'table')}, "
            f"{length}" + (f", {workload}" if workload else "") + (f", {extra}" if extra else ""))


def show(document: ResultsDocument, folder: Path, details: bool = False, rerendered: bool = False) -> None:
    """The tables of a document; `rerendered`: `report` wrote its files again from results.json."""
    if document.task == "query" and document.queries:
        console.print(with_conditions(tables.query_table(document.queries, title(document), details), document))
        for line in answer_lines(document):
            console.print(line, highlight=False)
    elif document.task == "scan" and document.scans:
        console.print(with_conditions(tables.scan_table(document.scans, title(document), details), document))
        for row in document.scans:
            if row.problem:
                console.print(f"{formats.workers(row.workers)}: {row.problem}", highlight=False)
    elif document.steps and document.inserts:
        step = f"{document.spec.duration_s:g} s" if document.spec.duration_s else f"{document.spec.timed_events():,} events"
        console.print(with_conditions(tables.steps_table(document.inserts, step, details), document))
    elif document.max_rate is not None and not details:
        pass  # the search's own table below shows every rate tried
    elif document.inserts:
        console.print(with_conditions(tables.insert_table(document.inserts, title(document), details), document))
    if document.max_rate is not None:
        console.print(with_conditions(tables.rate_search_table(document.max_rate), document))
    for line in rate_lines(document):
        console.print(line, highlight=False)
    if document.queries_under_ingest:
        console.print(tables.query_under_ingest_table(document.queries_under_ingest))
    for line in mixed_lines(document):
        console.print(line, highlight=False)
    if any(row.visibility_unseen is not None for row in document.inserts):
        console.print(tables.visibility_table(document.inserts))
    for note in dict.fromkeys(note for run in document.runs for note in run.report.notes):
        console.print(f"Note: {note}", highlight=False)
    for line in resource_lines(document):
        console.print(line, highlight=False)
    for run in document.runs:
        if run.report.ingestion is not None:
            console.print(f"{run.label}: {run.report.ingestion.sentence()}", highlight=False)
    checks = crosscheck.run_checks(document)
    if checks and details:
        console.print(tables.crosscheck_table(checks))
    elif checks:
        console.print(crosscheck_line(checks), highlight=False)
    if rerendered:
        console.print(f"Report written from {folder / 'results.json'}", highlight=False)
    else:
        console.print(f"Results saved in {folder}", highlight=False)
    if (folder / "report.html").is_file():
        console.print(f"Report: {folder / 'report.html'}", highlight=False)


def with_conditions(table: tables.FittedTable, document: ResultsDocument) -> tables.FittedTable:
    """The conditions the figures were measured under, under the table."""
    table.caption = run_conditions.caption(document)
    return table


def rate_lines(document: ResultsDocument) -> list[str]:
    """Open-loop runs that fell behind their schedule; the --find-max-rate search and its answer."""
    if document.max_rate is not None:
        return [f"[bold]{document.max_rate.sentence()}[/bold]"]
    lines = []
    for run in document.insert_runs():
        rate = run.report.figures.rate
        if rate is not None and not rate.sustained:
            lines.append(f"[bold]{run.label}: could not sustain {rate.target:,.0f}/s[/bold]: {rate.behind_s:.1f} s behind its "
                         f"schedule at the end (limit {rate.limit_s:.2g} s), achieved {rate.achieved:,.0f}/s")
    return lines


def resource_lines(document: ResultsDocument) -> list[str]:
    """What the runs cost the database and the client, one line per row; the client-bottleneck flag
    in bold; why a database figure was not measured; the cost at the target's price."""
    lines = []
    if document.max_rate is not None:  # one row per rate tried: report.html's Every figure holds them
        return ["Resources at each rate: report.html, under Inserts per second (Every other figure)"]
    for row in document.inserts:
        who = f"step {row.step}" if row.step else formats.workers(row.workers)
        who += f" at {row.target_rate:,.0f}/s" if row.target_rate else ""
        r = row.resources
        if r is None:
            continue
        if r.database_in_workers:
            database = "an embedded database, its work is inside the workers"
        elif r.db_cpu_s is None:
            database = f"database CPU not measured ({r.not_measured.get('cpu', 'not read')})"
        else:
            database = f"database {r.db_cores:.2f} cores"
            if r.db_cpu_s_per_million is not None:  # None: no event in the timed phase
                database += f", {r.db_cpu_s_per_million:.3g} CPU s per million events"
            if r.db_memory_peak_bytes is not None:
                database += f", memory peak {r.db_memory_peak_bytes / 1e6:,.0f} MB"
            if r.written_bytes_per_event is not None:
                database += f", {r.written_bytes_per_event:,.0f} bytes written per event"
        client = "" if r.client_cpu_s_per_million is None else f"; client {r.client_cpu_s_per_million:.3g} CPU s per million events"
        share = "" if r.client_share is None else f" (share {r.client_share:.0%})"
        if r.client_machine_share is not None:
            share += f", {r.client_machine_share:.0%} of {capacity_words(r)}"
        lines.append(f"Resources, {who}: {database}{client}{share}")
        if r.client_may_be_bottleneck:
            lines.append(f"[bold]Client may be the bottleneck[/bold], {who}: {r.bottleneck_reason}")
        if row.cost is not None and row.cost.per_million_inserts is not None:
            lines.append(f"Cost, {who}: {row.cost.per_million_inserts:.3g} {row.cost.currency} per million inserts, "
                         f"{row.cost.inserts_per_unit:,.0f} inserts per {row.cost.currency}")
    return lines


def answer_lines(document: ResultsDocument) -> list[str]:
    """Each wrong answer's first difference, and once why answers were not checked."""
    lines = [f"Wrong answer: {row.query} ({formats.workers(row.workers)}): {row.answer_detail}" for row in document.queries if row.answer == "wrong"]
    reasons = dict.fromkeys(row.answer_detail for row in document.queries if row.answer == "not checked" and row.answer_detail)
    lines += [f"Answers not checked: {reason}" for reason in reasons]
    return lines


def mixed_lines(document: ResultsDocument) -> list[str]:
    """--compare-idle: inserts/s with the query clients beside the same runs without them."""
    lines = []
    for row in document.inserts:
        if row.throughput_without_queries is not None:
            alone = row.throughput_without_queries.avg
            ratio = f" ({row.throughput.avg / alone:.0%})" if alone else ""
            who = formats.workers(row.workers)
            clients = formats.plural(row.query_workers, "query client")
            lines.append(f"Inserts/s, {who}: {row.throughput.avg:,.0f} with {clients}{ratio} "
                         f"beside {alone:,.0f} without them")
    return lines


def crosscheck_line(checks: list[CrossCheck]) -> str:
    """The database-side checks of every run in one line (--details shows them per run)."""
    verdict = crosscheck_verdict(checks)
    counters = sorted({check.counter for check in checks if check.counter})
    line = f"Database-side check: {verdict}" + (f" ({', '.join(counters)})" if counters and ("within" in verdict or "FLAGGED" in verdict) else "")
    sizes = [check.bytes_per_event for check in checks if check.bytes_per_event is not None]
    if sizes:
        line += f"; storage {sizes[-1]:.1f} bytes/event"
    return line
