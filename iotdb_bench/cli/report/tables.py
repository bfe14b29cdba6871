"""The rich tables printed at the end of a command, in the shape of the seed tool's tables.

The default insert table fits a 100-column terminal; `--details` adds every other figure. The files
always hold every figure, whatever the terminal showed.
"""

from __future__ import annotations

from rich.measure import Measurement
from rich.table import Table

from iotdb_bench.cli.report.comparison import CompareInsertRow, CompareQueryRow, CompareScanRow, insert_mode_label, with_values
from iotdb_bench.cli.results.crosscheck import CrossCheck
from iotdb_bench.cli.results.document import InsertRow, QueryRow, QueryUnderIngestRow, ScanRow
from iotdb_bench.cli.results.rate_search import MaxRateSearch
from iotdb_bench.cli.results.resource_figures import ResourceFigures
from iotdb_bench.simulator.stats import Spread


def _rate(value: float) -> str:
    return f"{value:,.0f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}" if value < 1 else f"{value:.2f}"


def _ms(value: float | None) -> str:
    """Milliseconds with at least three significant digits (the null target's calls take microseconds)."""
    if value is None:
        return "-"
    return f"{value:.2f}" if value >= 1 else f"{value:.3g}"


def _cv(spread: Spread) -> str:
    return f"{spread.cv:.1%}" + (" unstable" if spread.unstable else "")


def _ci(spread: Spread) -> str:
    return "-" if spread.n < 2 else f"±{_rate((spread.ci95_high - spread.ci95_low) / 2)}"


def _figure(value: float | None, digits: int = 3) -> str:
    """A resource figure with `digits` significant digits; "n/m" when it was not measured."""
    if value is None:
        return "n/m"
    return f"{value:,.0f}" if abs(value) >= 10 ** (digits - 1) else f"{value:.{digits}g}"


def _megabytes(value: float | None) -> str:
    return "n/m" if value is None else f"{value / 1e6:,.0f}"


def _share(value: float | None) -> str:
    return "n/m" if value is None else f"{value:.0%}"


def _db_cpu(resources: ResourceFigures | None) -> str:
    if resources is None:
        return "n/m"
    if resources.database_in_workers:
        return "in workers"
    return _figure(resources.db_cpu_s_per_million)


def _bottleneck(resources: ResourceFigures | None) -> str:
    if resources is None or resources.client_may_be_bottleneck is None:
        return "-"
    return "MAYBE" if resources.client_may_be_bottleneck else "no"


def _table(title: str, columns: list[str], left: tuple[str, ...] = ()) -> Table:
    table = Table(title=title, title_justify="left")
    for name in columns:
        table.add_column(name, justify="left" if name in left else "right")
    return table


def _with_values(rows: list[InsertRow]) -> bool:
    """Values/s (data points) are shown beside rows/s when a row holds more than one value."""
    return any(row.values_per_row > 1 and row.values_throughput is not None for row in rows)


def _values_rate(row: InsertRow) -> str:
    return "-" if row.values_throughput is None else _rate(row.values_throughput.avg)


def _open_loop(rows: list[InsertRow]) -> bool:
    return any(row.target_rate is not None for row in rows)


def _target(row: InsertRow) -> str:
    return "-" if row.target_rate is None else _rate(row.target_rate)


def _response_p99(row: InsertRow) -> str:
    return "-" if row.response_p99_ms is None else _ms(row.response_p99_ms.avg)


# A flagged row's worker count carries this mark; the flags' own words (cli/results/row_flags.py) follow the table.
FLAG_MARK = "!"


def _workers(row: InsertRow) -> str:
    return f"{row.workers}{FLAG_MARK}" if row.flags else str(row.workers)


def flag_notes(rows: list[InsertRow]) -> list[str]:
    return [f"{FLAG_MARK} {row.workers} worker{'' if row.workers == 1 else 's'}: {flag.text}" for row in rows for flag in row.flags]


def insert_table(rows: list[InsertRow], title: str, details: bool = False, width: int | None = None) -> Table:
    """The insert table; `width`: the terminal's, which the default table fits by leaving columns out."""
    table = _insert_details(rows, title) if details else _open_loop_table(rows, title) if _open_loop(rows) else _insert_default(rows, title, width)
    table.caption = "\n".join([*flag_notes(rows), table.caption or ""]).strip()
    return table


def _insert_default(rows: list[InsertRow], title: str, width: int | None = None) -> Table:
    """The columns that fit `width` (None: all): Min–Max (or Values/s), then DB CPU s/M, give way first
    (--details and the files have them; the database's CPU is also in the lines under the table)."""
    optional = ["Values/s" if _with_values(rows) else "Min–Max", "DB CPU s/M"]
    for dropped in range(len(optional) + 1):
        table = _insert_columns(rows, title, left_out=optional[:dropped])
        if width is None or _natural_width(table) <= width:
            break
    return table


def _natural_width(table: Table) -> int:
    from iotdb_bench.cli.terminal import console

    return Measurement.get(console, console.options.update(width=10_000), table).maximum


def _insert_columns(rows: list[InsertRow], title: str, left_out: list[str]) -> Table:
    # With several values per row, Values/s takes the place of Min–Max (in --details).
    values = _with_values(rows)
    columns = ["Workers", "Runs", "Avg", *(["Values/s"] if values else ["Min–Max"]), "CV", "p99 ms", "DB CPU s/M", "Count check"]
    shown = [name for name in columns if name not in left_out]
    table = _table(title, shown, left=("Count check",))
    for row in rows:
        spread = row.throughput
        cells = dict(zip(columns, [
            _workers(row), str(row.runs), _rate(spread.avg), _values_rate(row) if values else f"{_rate(spread.min)}–{_rate(spread.max)}",
            _cv(spread), _ms(row.p99_ms.avg), _db_cpu(row.resources), row.count_check,
        ]))
        table.add_row(*(cells[name] for name in shown))
    table.caption = ("Inserts/s (rows) across runs" + ("; Values/s = avg rows/s x values per row" if "Values/s" in shown else "")
                     + "; CV over 10% = unstable; p99 per call"
                     + ("; DB CPU s/M = database CPU seconds per million events (n/m: not measured)" if "DB CPU s/M" in shown else "")
                     + (f"; {' and '.join(left_out)} left out to fit the terminal" if left_out else "") + ". --details: all figures.")
    return table


def _open_loop_table(rows: list[InsertRow], title: str) -> Table:
    """Open-loop runs (--rate): the target beside the rate achieved, and both latencies (100 columns)."""
    columns = ["Workers", "Runs", "Target/s", "Achieved/s", "CV", "Resp p99", "Svc p99", "Sustained", "Count check"]
    table = _table(title, columns, left=("Sustained", "Count check"))
    for row in rows:
        table.add_row(_workers(row), str(row.runs), _target(row), _rate(row.throughput.avg), _cv(row.throughput),
                      _response_p99(row), _ms(row.p99_ms.avg), row.sustained or "-", row.count_check)
    table.caption = ("Open loop: calls on a fixed schedule. p99 in ms: Resp = response time, from each call's intended start "
                     "(includes waiting behind slow calls); Svc = service time, the call itself. Sustained: no run ended behind its "
                     "schedule by more than 1 s (5% of a run shorter than 20 s). --details: all figures.")
    return table


def _open_loop_columns(rows: list[InsertRow]) -> list[str]:
    return ["Target/s", "Sustained", "Behind s", "Max lag s", "resp p50 ms", "resp p95 ms", "resp p99 ms", "resp max ms"] if _open_loop(rows) else []


def _open_loop_cells(row: InsertRow, rows: list[InsertRow]) -> list[str]:
    if not _open_loop(rows):
        return []
    if row.target_rate is None:
        return ["-"] * 8
    return [_target(row), row.sustained or "-", f"{row.behind_s:.2f}", f"{row.max_lag_s:.2f}", _ms(row.response_p50_ms),
            _ms(row.response_p95_ms), _response_p99(row), _ms(row.response_max_ms)]


def _insert_details(rows: list[InsertRow], title: str) -> Table:
    columns = ["Workers", "Runs", "Min", "Avg", "Max", "Stdev", "CV", "95% CI", "Seed formula avg", "Values/s avg",
               "p50 ms", "p95 ms", "p99 ms", "max ms", *_open_loop_columns(rows), "Client overhead", "Start skew", "Retries",
               "Count check", *RESOURCE_COLUMNS, *_cost_columns(rows)]
    table = _table(title, columns, left=("Count check", "Sustained"))
    for row in rows:
        spread = row.throughput
        table.add_row(
            _workers(row), str(row.runs), _rate(spread.min), _rate(spread.avg), _rate(spread.max),
            _rate(spread.stdev), _cv(spread), _ci(spread), _rate(row.seed_formula_throughput.avg), _values_rate(row),
            _ms(row.p50_ms), _ms(row.p95_ms), _ms(row.p99_ms.avg), _ms(row.max_ms), *_open_loop_cells(row, rows),
            f"{row.client_overhead:.1%}", f"{row.start_skew_s * 1000:.0f} ms", str(row.retries), row.count_check,
            *resource_cells(row.resources), *_cost_cells(row, rows),
        )
    table.caption = (
        "Inserts/s = events (rows) / (last worker end - common start); Values/s = inserts/s x values per row (data points). "
        "Seed formula = events / mean worker duration "
        "(the original tool's figure). CV = stdev / avg across runs, unstable above 10%; 95% CI = half width of the "
        "average's 95% confidence interval (Student t). Latency per database call: p50-max = service time (the call "
        "itself); with --rate, resp = response time from the call's intended start on the schedule, Behind s = how far "
        "behind its schedule a run ended, Max lag s = the latest any call started. Resources over the timed phase: "
        "DB = the database's processes or pods (n/m = not measured, see the notes); s/M = CPU seconds per million "
        "events; client = workers + collector + CLI; share = client / (client + database) CPU."
    )
    return table


RESOURCE_COLUMNS = ["DB CPU s/M", "DB cores", "DB peak MB", "Written B/event", "Storage B/event", "Client CPU s/M",
                    "Client share", "Client bottleneck?"]


def resource_cells(resources: ResourceFigures | None) -> list[str]:
    r = resources or ResourceFigures()
    return [_db_cpu(resources), _figure(r.db_cores), _megabytes(r.db_memory_peak_bytes), _figure(r.written_bytes_per_event),
            _figure(r.storage_bytes_per_event), _figure(r.client_cpu_s_per_million), _share(r.client_share), _bottleneck(resources)]


def _cost_columns(rows: list[InsertRow]) -> list[str]:
    currency = next((row.cost.currency for row in rows if row.cost), None)
    return [f"{currency} per M inserts", f"Inserts per {currency}"] if currency else []


def _cost_cells(row: InsertRow, rows: list[InsertRow]) -> list[str]:
    if not _cost_columns(rows):
        return []
    if row.cost is None:
        return ["-", "-"]
    return [_figure(row.cost.per_million_inserts), _figure(row.cost.inserts_per_unit)]


def steps_table(rows: list[InsertRow], step: str) -> Table:
    """Level / Inserts/s per fill-level step; `step` says how long a step is (events or seconds)."""
    values = _with_values(rows)
    columns = ["Level", "Inserts/s", *(["Values/s"] if values else []), "p99 ms", "DB CPU s/M", "Storage B/event", "Count check"]
    table = _table(f"Fill level (step: {step})", columns, left=("Count check",))
    for row in rows:
        storage = row.resources.storage_bytes_per_event if row.resources else None
        table.add_row("-" if row.level is None else f"{row.level:,}", _rate(row.throughput.avg), *([_values_rate(row)] if values else []),
                      _ms(row.p99_ms.avg), _db_cpu(row.resources), "-" if storage is None else f"{storage:.1f}", row.count_check)
    table.caption = "Storage B/event = data size after the step / events stored."
    return table


def query_table(rows: list[QueryRow], title: str) -> Table:
    currency = next((row.cost.currency for row in rows if row.cost), None)
    costs = [f"{currency} per 1000", f"Queries per {currency}"] if currency else []
    columns = ["Workers", "Query", "Min", "Max", "Avg", "p95", "Cold", "Warm", "Rows", "Answer", *costs, "Errors"]
    table = _table(title, columns, left=("Query", "Answer", "Errors"))
    for row in rows:
        cost = ([_figure(row.cost.per_thousand_queries), _figure(row.cost.queries_per_unit)] if row.cost else ["-", "-"]) if currency else []
        table.add_row(
            str(row.workers), row.query, _seconds(row.min_s), _seconds(row.max_s), _seconds(row.avg_s),
            _seconds(row.p95_s), _seconds(row.cold_avg_s), _seconds(row.warm_avg_s),
            "-" if row.rows is None else f"{row.rows:,}", _answer(row.answer), *cost, "; ".join(row.errors),
        )
    table.caption = ("Seconds per execution. Cold = first execution on each worker, warm = the others. Answer: every "
                     "execution's rows checked against what the tool inserted (counts, min, max, newest exact; averages "
                     "within a relative 1e-9).")
    return table


def _answer(verdict: str | None) -> str:
    return {"wrong": "WRONG", None: "-"}.get(verdict, verdict)


def scan_table(rows: list[ScanRow], title: str) -> Table:
    columns = ["Workers", "Runs", "Rows", "Rows/s", "CV", "Window min", "Window avg", "Window max", "p50 ms", "p99 ms", "Check"]
    table = _table(title, columns, left=("Check",))
    for row in rows:
        table.add_row(
            str(row.workers), str(row.runs), f"{row.rows:,}", _rate(row.rows_per_s.avg), _cv(row.rows_per_s),
            _optional_rate(row.window_min), _optional_rate(row.window_avg), _optional_rate(row.window_max),
            _ms(row.page_p50_ms), _ms(row.page_p99_ms), row.check,
        )
    table.caption = ("Rows/s = rows read by all workers / run duration, average across runs. Windows: each worker's rate "
                     "over every 10,000 rows it read (per worker). Latency per page or fetch. Check: timestamps never "
                     "decrease within a device, and each device holds as many readings as the tool wrote.")
    return table


def _optional_rate(value: float | None) -> str:
    return "-" if value is None else _rate(value)


def query_under_ingest_table(rows: list[QueryUnderIngestRow], databases: bool = False) -> Table:
    """Each query of a mixed run under ingest beside the same query on the idle database right after
    (`databases`: compare's rows, each with its database). Fits 100 columns: the query clients go into
    the title when every row had as many, errors get a column only when there are some."""
    clients = {row.query_workers for row in rows}
    errors = any(row.errors for row in rows)
    columns = [*(["Database"] if databases else []), "Workers", *(["Query clients"] if len(clients) > 1 else []), "Query", "Execs",
               "p50", "p99", "Idle p50", "Idle p99", "Ratio", *(["Errors"] if errors else [])]
    title = "Queries under ingest, ms" + (f" ({_clients(clients.pop())})" if len(clients) == 1 else "")
    table = _table(title, columns, left=("Database", "Query", "Errors"))
    for row in rows:
        table.add_row(*([row.database] if databases else []), str(row.workers), *([str(row.query_workers)] if "Query clients" in columns else []),
                      row.query, f"{row.executions:,}", *(_short_ms(value) for value in (row.p50_ms, row.p99_ms, row.idle_p50_ms, row.idle_p99_ms)),
                      "-" if row.slowdown is None else f"{row.slowdown:.3g}x", *(["; ".join(row.errors)] if errors else []))
    table.caption = ("Milliseconds per execution under ingest (while the workers inserted) and idle (the same data right after the "
                     "timed phase); ratio = p50 under ingest / p50 idle; means over the runs.")
    return table


def _clients(count: int) -> str:
    return f"{count} query client" + ("" if count == 1 else "s")


def _short_ms(value: float | None) -> str:
    """Milliseconds in at most six characters: whole ones from 1,000 on."""
    return _ms(value) if value is None or value < 1000 else f"{value:,.0f}"


def visibility_table(rows: list[InsertRow]) -> Table:
    """--visibility: time from writing a marker event until a query saw it, per worker count."""
    table = _table("Visibility lag", ["Workers", "p50 ms", "p99 ms", "max ms", "Unseen"])
    for row in rows:
        if row.visibility_unseen is not None:
            table.add_row(str(row.workers), _ms(row.visibility_p50_ms), _ms(row.visibility_p99_ms), _ms(row.visibility_max_ms),
                          str(row.visibility_unseen))
    table.caption = ("From the start of a marker's write (same insert path) to the start of the first query that saw it; "
                     "means of the runs' p50 and p99, the longest of all runs; unseen = not seen within the probe's limit.")
    return table


def crosscheck_table(rows: list[CrossCheck]) -> Table:
    """The database's own count of the rows inserted in each run, beside the client's."""
    columns = ["Run", "Count check", "Client inserts/s", "Database inserts/s", "Difference", "Database counter", "Storage", "Bytes/event"]
    table = _table("Database-side cross-check", columns, left=("Run", "Count check", "Database counter"))
    for row in rows:
        difference = "-" if row.difference is None else f"{row.difference:+.2%}" + (" FLAGGED" if row.flagged else "")
        table.add_row(
            row.label, row.count_check, _rate(row.client_rate),
            "not exposed" if row.db_rate is None else _rate(row.db_rate), difference, row.counter or "-",
            "-" if row.storage_bytes is None else f"{row.storage_bytes / 1e6:,.1f} MB",
            "-" if row.bytes_per_event is None else f"{row.bytes_per_event:.1f}",
        )
    table.caption = (
        "Database inserts/s = rows the database counted as inserted during the timed phase / run duration; "
        "a difference over 2% is flagged (a counter named *_server_wide also counts other clients' writes). "
        "Bytes/event = tables and indexes / events stored."
    )
    return table


def compare_insert_table(rows: list[CompareInsertRow]) -> Table:
    currencies = sorted({row.cost.currency for row in rows if row.cost})
    costs = ["Cost per M inserts"] if currencies else []
    values, workloads, open_loop = with_values(rows), any(row.workload for row in rows), _open_loop(rows)
    columns = ["Database", "Workers", "Fill level", "Insert mode", "Primary key", *(["Workload"] if workloads else []),
               *(["Target/s"] if open_loop else []), "Inserts/s", *(["Values/s"] if values else []), "CV", "95% CI", "p99 ms",
               *(["Resp p99 ms", "Sustained"] if open_loop else []), "Runs", "DB CPU s/M", *costs, "Cross-check"]
    table = _table("Inserts across runs", columns, left=("Database", "Insert mode", "Primary key", "Workload", "Cross-check"))
    for row in rows:
        spread = row.throughput
        cost = ([f"{_figure(row.cost.per_million_inserts)} {row.cost.currency}" if row.cost else "-"]) if currencies else []
        flag = " client may be the bottleneck" if row.resources and row.resources.client_may_be_bottleneck else ""
        table.add_row(
            row.database + (" †" if row.differs else ""), str(row.workers), "-" if row.level is None else f"{row.level:,}", insert_mode_label(row),
            row.primary_key, *([row.workload or "default"] if workloads else []), *([_target(row)] if open_loop else []), _rate(spread.avg),
            *([_values_rate(row)] if values else []), _cv(spread), _ci(spread), _ms(row.p99_ms.avg),
            *([_response_p99(row), row.sustained or "-"] if open_loop else []), str(spread.n),
            _db_cpu(row.resources), *cost, row.crosscheck + flag,
        )
    table.caption = ("Inserts/s: average over runs. p99: average of the runs' p99 call latency (service time; Resp = response "
                     "time from each call's intended start, --rate runs). DB CPU s/M: database CPU seconds "
                     "per million events (n/m = not measured); client shares and memory: compare.md and inserts.csv.")
    return table


def compare_query_table(rows: list[CompareQueryRow], queries: tuple[str, ...]) -> Table:
    table = _table("Queries across runs (average seconds per execution)", ["Database", "Workers", *queries], left=("Database",))
    for row in rows:
        table.add_row(row.database + (" †" if row.differs else ""), str(row.workers), *(row.cells.get(name, "-") for name in queries))
    table.caption = "* = coefficient of variation over the executions above 10% (see the CSV for cold and warm)."
    return table


def compare_scan_table(rows: list[CompareScanRow]) -> Table:
    columns = ["Database", "Workers", "Rows", "Rows/s", "CV", "Window min", "Window avg", "Window max", "p99 ms", "Check"]
    table = _table("Scans across runs", columns, left=("Database", "Check"))
    for row in rows:
        table.add_row(row.database + (" †" if row.differs else ""), str(row.workers), f"{row.rows:,}", _rate(row.rows_per_s.avg), _cv(row.rows_per_s),
                      _optional_rate(row.window_min), _optional_rate(row.window_avg), _optional_rate(row.window_max),
                      _ms(row.page_p99_ms), row.check)
    table.caption = "Rows/s: average over runs; windows of 10,000 rows per worker; p99 per page or fetch."
    return table


def rate_search_table(search: MaxRateSearch) -> Table:
    """--find-max-rate: every rate tried, in order, and whether it passed."""
    columns = ["Step", "Target/s", "Achieved/s", "resp p50 ms", "resp p99 ms", "svc p99 ms", "Sustained", "Verdict"]
    table = _table(f"Highest sustainable rate: response-time p99 <= {search.latency_p99_ms:g} ms, {search.step_s:g} s per rate",
                   columns, left=("Sustained", "Verdict"))
    for number, step in enumerate(search.steps, 1):
        verdict = "pass" if step.passed else ("p99 over target" if step.sustained else "fell behind")
        table.add_row(str(number), _rate(step.target_rate), _rate(step.achieved_rate), _ms(step.response_p50_ms),
                      _ms(step.response_p99_ms), _ms(step.service_p99_ms), "yes" if step.sustained else "NO", verdict)
    table.caption = "resp = response time from each call's intended start; svc = service time, the call itself."
    return table
