"""The catalogue of figures: every figure a view can show, declared once.

A `Figure` says how it is headed (a short header for the terminal, a human label for the pages and
Markdown), how it is read from a typed row, how it is written (cli/results/tables/formats.py), what an
abbreviation in its header means, and at which levels it is shown:

- DEFAULT: a command's table in the terminal and the main table of report.html;
- DETAILS: --details in the terminal, the expandable part of report.html (every figure of the rows);
- COMPARE: compare's table in the terminal, compare.html's main table and compare.md.

Every figure also names its CSV columns (`csv`): the paths of its values in the typed row, which are
also their paths in results.json (`throughput.avg`, `p99_ms.avg`, `avg_s`), written as plain numbers in
the unit the name gives (cli/report/csv_files.py). Every CSV file takes every column of its
catalogue's figures, whatever their levels, so a figure added here is in the CSV files too.

A figure may say what its number is (`value`, in `unit`, as the views write it: `form`); a figure a
study can rank targets by (`rank_as`: its name in a study file) also says which way is better. The
study's rankings and score read these same figures (cli/results/study/ranking.py), so a ranking is headed,
written and plotted as the figure is everywhere. A figure with a name (`name`, else its `rank_as`) can
be judged by a threshold (`--threshold p99_ms<=20`, cli/results/thresholds.py): its `value`, or for a
check (`text`) its words.

Which tables a document has, in which order, is cli/results/tables/sections.py; the views (cli/report/:
tables.py for the terminal, html_report.py, markdown.py, csv_files.py) decide the layout only: what
fits the width, what goes into expandable details. Adding a figure is the typed field, the code that
fills it (cli/results/) and one entry here, with its CSV columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from iotdb_bench.cli.results.tables import formats as f
from iotdb_bench.simulator.checks import answer_digest
from iotdb_bench.cli.results.resource_figures import ResourceFigures

DEFAULT, DETAILS, COMPARE = "default", "details", "compare"
RUN = frozenset({DEFAULT})          # shown by default, and so also with --details
MORE = frozenset({DETAILS})         # --details and report.html's expandable part only
BOTH = frozenset({DEFAULT, COMPARE})
COMPARED = frozenset({COMPARE})     # compare's main table (and every compare view)
MORE_COMPARED = frozenset({DETAILS, COMPARE})

Better = Literal["higher", "lower"]
Read = Callable[[Any], str]
Value = Callable[[Any], float | None]
# A CSV column: the dotted path of a value in the typed row (its name is the path), or a name and how
# to compute the value when no single field holds it.
Column = str | tuple[str, Callable[[Any], Any]]


@dataclass(frozen=True)
class Figure:
    header: str
    read: Read | None = None        # the cell's text; None: `form` of `value`
    levels: frozenset[str] = RUN
    label: str = ""                 # the human label in report.html and Markdown; the header when empty
    explain: str = ""               # what the header's abbreviation means, printed once under the table
    key: bool = False               # names the row: repeated in every block of a table split to fit
    spare: bool = False             # a key another key implies: left out of further blocks that lack the room
    text: bool = False              # words rather than a number: left-aligned, may wrap in the terminal
    show_if: Callable[[Sequence[Any]], bool] | None = None  # shown only when some row has it
    compare_only: bool = False      # a column of compared rows (Database, Source): absent from a run's views
    csv: tuple[Column, ...] = ()    # the figure's values for machines (see the module's docstring); required
    # a figure of its own: its number in `unit`, how that number is written, which way is better, and
    # its name in a study file (rank_by:, score:) when a study may rank by it
    value: Value | None = None
    form: Callable[[float | None], str] = f.figure
    unit: str = ""
    better: Better | None = None
    rank_as: str = ""
    spread: Callable[[Any], Any] | None = None  # its spread across runs (a Spread) or executions (fastest, slowest)
    name: str = ""                  # its name in a threshold when not its rank_as (which a threshold also accepts)

    def __post_init__(self) -> None:
        if not self.csv:
            raise ValueError(f"figure {self.header!r} names no CSV column: every figure is in the CSV files")
        if self.read is None and self.value is None:
            raise ValueError(f"figure {self.header!r} says neither how its cell reads nor its value")
        if self.rank_as and (self.value is None or self.better is None or not self.unit):
            raise ValueError(f"figure {self.header!r} is ranked: it needs a value, a unit and which way is better")
        if self.name and self.value is None and not self.text:
            raise ValueError(f"figure {self.header!r} is named for thresholds: it needs a value, or words to compare")

    @property
    def names(self) -> tuple[str, ...]:
        """Its names in a threshold: `name` first, then `rank_as` (the study file's)."""
        return tuple(dict.fromkeys(found for found in (self.name, self.rank_as) if found))

    @property
    def title(self) -> str:
        return self.label or self.header

    def cell(self, row: Any) -> str:
        if self.read is not None:
            return self.read(row)
        assert self.value is not None  # __post_init__: one of them
        return self.form(self.value(row))

    def shown(self, rows: Sequence[Any], level: str, compared: bool) -> bool:
        if self.compare_only and not compared:
            return False
        if self.show_if is not None and not self.show_if(rows):
            return False
        if self.key:
            return True
        return level == DETAILS or level in self.levels  # DETAILS: every figure of the rows


@dataclass(frozen=True)
class Catalogue:
    """The figures of one kind of row, in the order the views show them, and what the table says."""

    title: str
    figures: tuple[Figure, ...]
    caption: str = ""

    def figures_at(self, rows: Sequence[Any], level: str, compared: bool = False) -> list[Figure]:
        return [figure for figure in self.figures if figure.shown(rows, level, compared)]

    def explanations(self, shown: Sequence[Figure]) -> str:
        """Each abbreviation shown, explained once."""
        return "; ".join(dict.fromkeys(figure.explain for figure in shown if figure.explain))


@dataclass
class Rendered:
    """A table as every view receives it: headers, labels, cells, which columns are keys or words."""

    title: str
    figures: list[Figure]
    rows: list[list[str]]
    caption: str = ""


def render(catalogue: Catalogue, rows: Sequence[Any], level: str, compared: bool = False, title: str | None = None,
           caption: str | None = None) -> Rendered:
    shown = catalogue.figures_at(rows, level, compared)
    cells = [[figure.cell(row) for figure in shown] for row in rows]
    marked = any("†" in cell for line in cells for cell in line)
    explained = "; ".join(part for part in catalogue.explanations(shown).split("; ") if marked or "†" not in part)
    words = " ".join(filter(None, [catalogue.caption if caption is None else caption, explained + "." if explained else ""]))
    return Rendered(catalogue.title if title is None else title, shown, cells, words)


# -- helpers for show_if -------------------------------------------------------------------------

def _any(read: Callable[[Any], Any]) -> Callable[[Sequence[Any]], bool]:
    return lambda rows: any(read(row) not in (None, False, 0, "", []) for row in rows)


def _database(row: Any) -> str:
    return str(row.database) + (" †" if getattr(row, "differs", None) else "")


def _resources(row: Any) -> ResourceFigures:
    return row.resources or ResourceFigures()


def _db_cpu(row: Any) -> str:
    if row.resources is None:
        return f.NOT_MEASURED
    if row.resources.database_in_workers:
        return "in workers"
    return f.figure(row.resources.db_cpu_s_per_million)


def _bottleneck(row: Any) -> str:
    r = row.resources
    if r is None or r.client_may_be_bottleneck is None:
        return f.DASH
    return "MAYBE" if r.client_may_be_bottleneck else "no"


def _open_loop(rows: Sequence[Any]) -> bool:
    return any(row.target_rate is not None for row in rows)


def _values(rows: Sequence[Any]) -> bool:
    return any(row.values_per_row > 1 and row.values_throughput is not None for row in rows)


def _currency(rows: Sequence[Any]) -> bool:
    return any(getattr(row, "cost", None) for row in rows)


def _compare_crosscheck(row: Any) -> str:
    flag = "; client may be the bottleneck" if row.resources and row.resources.client_may_be_bottleneck else ""
    return str(row.crosscheck) + flag


def _values_per_s(row: Any) -> float:
    """Values (data points) per second; rows of an older study file keep no values_throughput."""
    return float(row.values_throughput.avg if row.values_throughput else row.throughput.avg * row.values_per_row)


def _memory_peak_mb(row: Any) -> float | None:
    peak = _resources(row).db_memory_peak_bytes
    return None if peak is None else peak * 1e-6


def _inserts_per_cost(row: Any) -> float | None:
    return float(row.cost.inserts_per_unit) if row.cost is not None and row.throughput.avg else None


def _cv(spread: Any) -> float | None:
    """A spread's coefficient of variation; none for a single run (as the tables write it: -)."""
    return None if spread.n < 2 else float(spread.cv)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _fastest_slowest(row: Any) -> tuple[float, float] | None:
    """A query's fastest and slowest execution, ms."""
    return None if row.min_s is None or row.max_s is None else (row.min_s * 1000, row.max_s * 1000)


DATABASE = Figure("Database", _database, COMPARED, key=True, spare=True, text=True, compare_only=True,
                  explain="† = measured under other conditions than the other rows (listed below)", csv=("database",))
# Compared insert and scan rows carry the conditions they differ in (the †): a column of their own.
DATABASE_DIFFERS = Figure(DATABASE.header, DATABASE.read, DATABASE.levels, key=True, spare=True, text=True, compare_only=True, explain=DATABASE.explain,
                          csv=("database", "differs"))
SOURCE = Figure("Source", lambda row: row.source, COMPARED, key=True, text=True, compare_only=True, label="Source (results folder)",
                csv=("source",))
# A flagged row's worker count carries FLAG_MARK; the flags' words (cli/results/row_flags.py) follow the table.
FLAG_MARK = "!"
WORKERS = Figure("Workers", lambda row: f"{row.workers}{FLAG_MARK if getattr(row, 'flags', None) else ''}", key=True, csv=("workers",))
# Insert rows carry flags: their kinds are a column of their own beside the worker count.
INSERT_WORKERS = Figure(WORKERS.header, WORKERS.read, key=True, csv=("workers", "flags.kind"))


INSERTS = Catalogue(
    "Inserts per second across runs",
    (
        DATABASE_DIFFERS, SOURCE, INSERT_WORKERS,
        Figure("Level", lambda row: f.count(row.level), BOTH, label="Fill level (events before the step)",
               show_if=_any(lambda row: row.level), key=True, explain="Level = events in the table before the step", csv=("step", "level")),
        Figure("Runs", lambda row: str(row.runs), BOTH, csv=("runs",)),
        Figure("Mode", lambda row: row.insert_mode or "not recorded", MORE_COMPARED, label="Insert mode", text=True, csv=("insert_mode",)),
        Figure("Key", lambda row: row.primary_key, COMPARED, label="Primary key", text=True, compare_only=True, csv=("primary_key",)),
        Figure("Workload", lambda row: row.workload or "default", COMPARED, text=True, compare_only=True,
               show_if=_any(lambda row: getattr(row, "workload", "")), csv=("workload",)),
        Figure("Target/s", lambda row: f.rate(row.target_rate), BOTH, label="Target rate (--rate), events/s", show_if=_open_loop, csv=("target_rate",)),
        Figure("Inserts/s", value=lambda row: row.throughput.avg, form=f.rate, levels=BOTH, label="Inserts/s (average over runs)",
               explain="Inserts/s = events / (last worker end - common start), average over runs", csv=("throughput.avg", "throughput.n"),
               unit="events/s", better="higher", rank_as="inserts_per_s", spread=lambda row: row.throughput),
        Figure("Values/s", value=_values_per_s, form=f.rate, levels=BOTH, label="Values/s (inserts/s x values per row)", show_if=_values,
               explain="Values/s = inserts/s x values per row", csv=("values_per_row", "values_throughput.avg"),
               unit="values/s", better="higher", rank_as="values_per_s", spread=lambda row: row.values_throughput),
        Figure("Min–Max", lambda row: f.min_max(row.throughput), RUN, label="Inserts/s min–max over runs", csv=("throughput.min", "throughput.max")),
        Figure("Min", lambda row: f.rate(row.throughput.min), MORE, label="Inserts/s, slowest run", csv=("throughput.min",),
               name="inserts_per_s_min", value=lambda row: row.throughput.min),
        Figure("Max", lambda row: f.rate(row.throughput.max), MORE, label="Inserts/s, fastest run", csv=("throughput.max",),
               name="inserts_per_s_max", value=lambda row: row.throughput.max),
        Figure("Stdev", lambda row: f.DASH if row.throughput.n < 2 else f.rate(row.throughput.stdev), MORE, label="Standard deviation over runs", csv=("throughput.stdev",)),
        Figure("CV", lambda row: f.cv(row.throughput), BOTH, label="Coefficient of variation",
               explain="CV = stdev / average over runs, unstable above 10% (- for a single run)", csv=("throughput.cv", "throughput.unstable"),
               name="cv", value=lambda row: _cv(row.throughput)),
        Figure("95% CI", lambda row: f.ci(row.throughput), MORE_COMPARED, label="95% confidence interval, ±",
               explain="95% CI = half width of the average's confidence interval (Student t)", csv=("throughput.ci95_low", "throughput.ci95_high")),
        Figure("Seed formula", lambda row: f.rate(row.seed_formula_throughput.avg), MORE, label="Seed formula inserts/s",
               explain="Seed formula = events / mean worker duration (the original tool's figure)", csv=("seed_formula_throughput.avg",)),
        Figure("p50 ms", lambda row: f.ms(row.p50_ms), MORE, label="Latency p50, ms per call", csv=("p50_ms",), name="p50_ms", value=lambda row: row.p50_ms),
        Figure("p95 ms", lambda row: f.ms(row.p95_ms), MORE, label="Latency p95, ms per call", csv=("p95_ms",), name="p95_ms", value=lambda row: row.p95_ms),
        Figure("p99 ms", value=lambda row: row.p99_ms.avg, form=f.ms, levels=BOTH, label="Latency p99, ms per call",
               explain="p99 ms = 99th percentile of the service time per database call", csv=("p99_ms.avg",),
               unit="ms", better="lower", rank_as="p99_ms", spread=lambda row: row.p99_ms),
        Figure("p99 range", lambda row: f.min_max(row.p99_ms, f.ms), MORE, label="Latency p99 min–max over runs, ms", csv=("p99_ms.min", "p99_ms.max")),
        Figure("max ms", lambda row: f.ms(row.max_ms), MORE, label="Slowest call, ms", csv=("max_ms",), name="max_ms", value=lambda row: row.max_ms),
        Figure("Resp p99", lambda row: f.ms(row.response_p99_ms.avg if row.response_p99_ms else None), BOTH, show_if=_open_loop,
               label="Response time p99, ms",
               explain="Resp = response time in ms, from each call's intended start on the schedule (--rate)", csv=("response_p99_ms.avg",),
               name="response_p99_ms", value=lambda row: row.response_p99_ms.avg if row.response_p99_ms else None),
        Figure("Resp p50", lambda row: f.ms(row.response_p50_ms), MORE, show_if=_open_loop, label="Response time p50, ms", csv=("response_p50_ms",)),
        Figure("Resp p95", lambda row: f.ms(row.response_p95_ms), MORE, show_if=_open_loop, label="Response time p95, ms", csv=("response_p95_ms",)),
        Figure("Resp max", lambda row: f.ms(row.response_max_ms), MORE, show_if=_open_loop, label="Slowest response, ms", csv=("response_max_ms",)),
        Figure("Sustained", lambda row: f.text(row.sustained), BOTH, show_if=_open_loop, text=True,
               explain="Sustained = no run ended behind its schedule by more than 1 s (5% of a run shorter than 20 s)", csv=("sustained",),
               name="sustained"),
        Figure("Behind s", lambda row: f.seconds(row.behind_s), MORE, show_if=_open_loop, label="Behind schedule at the end, s", csv=("behind_s",)),
        Figure("Max lag s", lambda row: f.seconds(row.max_lag_s), MORE, show_if=_open_loop, label="Latest call start after schedule, s", csv=("max_lag_s",)),
        Figure("Overhead", lambda row: f.share(row.client_overhead, 1), MORE, label="Client overhead",
               explain="Overhead = share of the timed phase spent outside database calls", csv=("client_overhead",),
               name="client_overhead", value=lambda row: row.client_overhead),
        Figure("Skew ms", lambda row: f"{row.start_skew_s * 1000:.0f}", MORE, label="Start skew, ms", csv=("start_skew_s",)),
        Figure("Retries", lambda row: str(row.retries), MORE, csv=("retries",), name="retries", value=lambda row: row.retries),
        Figure("DB CPU s/M", _db_cpu, BOTH, label="Database CPU s per million events",
               explain="DB CPU s/M = database CPU seconds per million events (n/m: not measured)", csv=("resources.db_cpu_s_per_million", "resources.database_in_workers"),
               value=lambda row: _resources(row).db_cpu_s_per_million, unit="CPU s per million events", better="lower", rank_as="db_cpu_s_per_million"),
        Figure("DB cores", lambda row: f.figure(_resources(row).db_cores), MORE, label="Database cores busy", csv=("resources.db_cores",),
               name="db_cores", value=lambda row: _resources(row).db_cores),
        Figure("DB peak MB", lambda row: f.megabytes(_resources(row).db_memory_peak_bytes), MORE, label="Database memory peak, MB", csv=("resources.db_memory_peak_bytes",),
               value=_memory_peak_mb, form=lambda mb: f.NOT_MEASURED if mb is None else f"{mb:,.0f}", unit="MB", better="lower",
               rank_as="db_memory_peak_mb"),
        Figure("Written B/ev", lambda row: f.figure(_resources(row).written_bytes_per_event), MORE, label="Bytes written per event",
               explain="B/ev = bytes per event", csv=("resources.written_bytes_per_event",),
               name="written_bytes_per_event", value=lambda row: _resources(row).written_bytes_per_event),
        Figure("Storage B/ev", value=lambda row: _resources(row).storage_bytes_per_event, form=f.bytes_per_event, levels=MORE,
               label="Storage bytes per event", explain="B/ev = bytes per event", csv=("resources.storage_bytes_per_event",),
               unit="bytes/event", better="lower", rank_as="storage_bytes_per_event"),
        Figure("Client CPU s/M", lambda row: f.figure(_resources(row).client_cpu_s_per_million), MORE,
               label="Client CPU s per million events (workers + collector + CLI)", csv=("resources.client_cpu_s_per_million",),
               name="client_cpu_s_per_million", value=lambda row: _resources(row).client_cpu_s_per_million),
        Figure("Client share", lambda row: f.share(_resources(row).client_share), MORE, label="Client share of CPU",
               explain="Client share = client CPU / (client + database CPU)", csv=("resources.client_share",),
               name="client_share", value=lambda row: _resources(row).client_share),
        Figure("Client limit?", _bottleneck, MORE, label="Client may be the bottleneck", text=True, csv=("resources.client_may_be_bottleneck", "resources.bottleneck_reason")),
        Figure("Query clients", lambda row: str(row.query_workers), MORE, show_if=_any(lambda row: row.query_workers), csv=("query_workers",)),
        Figure("Without queries/s", lambda row: f.rate(row.throughput_without_queries.avg if row.throughput_without_queries else None),
               BOTH, label="Inserts/s without the query clients (--compare-idle)", show_if=_any(lambda row: row.throughput_without_queries), csv=("throughput_without_queries.avg",)),
        Figure("Cost/M", lambda row: f.DASH if row.cost is None else f"{f.figure(row.cost.per_million_inserts)} {row.cost.currency}",
               MORE_COMPARED, label="Cost per million inserts", show_if=_currency, csv=("cost.per_million_inserts", "cost.currency")),
        Figure("Inserts/cost", lambda row: f.DASH if row.cost is None else f.figure(row.cost.inserts_per_unit), MORE,
               label="Inserts per unit of money", show_if=_currency, csv=("cost.inserts_per_unit",),
               value=_inserts_per_cost, unit="events per unit of money", better="higher", rank_as="inserts_per_cost"),
        Figure("Count check", lambda row: row.count_check, RUN, text=True,
               explain="Count check = the database holds the events the workers reported", csv=("count_check",), name="count_check"),
        Figure("Check s", lambda row: f.seconds(row.count_check_s), MORE, label="Count check's time, s (the counts before and after)",
               show_if=_any(lambda row: row.count_check_s is not None), csv=("count_check_s",)),
        Figure("Record s", lambda row: f.seconds(row.record_s), MORE, label="Expected answers' time after the timed phase, s",
               show_if=_any(lambda row: row.record_s is not None), csv=("record_s",)),
        Figure("Cross-check", _compare_crosscheck, COMPARED, text=True, compare_only=True, label="Database-side check",
               explain="Cross-check = rows the database counted against the workers' report (flagged above 2%)", csv=("crosscheck",)),
        Figure("Status", lambda row: row.status, MORE, text=True, compare_only=True, label="Invocation status", csv=("status",)),
    ),
)

VISIBILITY = Catalogue(
    "Visibility lag",
    (
        DATABASE, SOURCE, WORKERS,
        Figure("p50 ms", lambda row: f.ms(row.visibility_p50_ms), BOTH | MORE, label="Visibility lag p50, ms", csv=("visibility_p50_ms",)),
        Figure("p99 ms", lambda row: f.ms(row.visibility_p99_ms), BOTH | MORE, label="Visibility lag p99, ms", csv=("visibility_p99_ms",)),
        Figure("max ms", lambda row: f.ms(row.visibility_max_ms), BOTH | MORE, label="Longest visibility lag, ms", csv=("visibility_max_ms",)),
        Figure("Unseen", lambda row: str(row.visibility_unseen), BOTH | MORE, label="Markers never seen", csv=("visibility_unseen",)),
    ),
    "From the start of a marker's write (same insert path) to the start of the first query that saw it; means of the runs' p50 "
    "and p99, the longest of all runs; unseen = not seen within the probe's limit.",
)

# The cost of queries: per 1000 in the tables; what a unit of money buys, a study's figure to rank by
# (not a column: the cost per 1000 queries says the same to a reader of the tables).
QUERY_COST = Figure("Cost/1000", lambda row: f.DASH if row.cost is None else f"{f.figure(row.cost.per_thousand_queries)} {row.cost.currency}",
                    MORE, label="Cost per 1000 queries", show_if=_currency, csv=("cost.per_thousand_queries", "cost.currency"))
QUERIES_PER_COST = Figure("Queries/cost", value=lambda row: row.cost.queries_per_unit if row.cost is not None else None,
                          label="Queries per unit of money", csv=("cost.queries_per_unit",), unit="queries per unit of money",
                          better="higher", rank_as="queries_per_cost")

QUERIES = Catalogue(
    "Queries",
    (
        DATABASE_DIFFERS, SOURCE, WORKERS,
        Figure("Query", lambda row: row.query, BOTH, key=True, text=True, csv=("query",)),
        Figure("Execs", lambda row: f.count(row.executions), MORE, label="Executions", csv=("executions",)),
        Figure("Avg ms", value=lambda row: _ms(row.avg_s), form=f.ms, levels=BOTH, label="Average ms per execution", csv=("avg_s",),
               unit="ms", better="lower", rank_as="latency_s", spread=_fastest_slowest, name="avg_ms"),
        Figure("Min ms", lambda row: f.ms_of_seconds(row.min_s), RUN, label="Fastest execution, ms", csv=("min_s",), name="min_ms", value=lambda row: _ms(row.min_s)),
        Figure("Max ms", lambda row: f.ms_of_seconds(row.max_s), MORE_COMPARED, label="Slowest execution, ms", csv=("max_s",),
               name="max_ms", value=lambda row: _ms(row.max_s)),
        Figure("p95 ms", value=lambda row: _ms(row.p95_s), form=f.ms, levels=RUN, label="p95 per execution, ms", csv=("p95_s",),
               unit="ms", better="lower", rank_as="p95_s", name="p95_ms"),
        Figure("Cold ms", lambda row: f.ms_of_seconds(row.cold_avg_s), MORE, label="Cold (first execution per worker), ms",
               explain="Cold = first execution on each worker, warm = the others", csv=("cold_avg_s",), name="cold_ms", value=lambda row: _ms(row.cold_avg_s)),
        Figure("Warm ms", lambda row: f.ms_of_seconds(row.warm_avg_s), MORE, label="Warm (later executions), ms",
               explain="Cold = first execution on each worker, warm = the others", csv=("warm_avg_s",), name="warm_ms", value=lambda row: _ms(row.warm_avg_s)),
        Figure("CV", lambda row: f.DASH if row.cv is None or row.executions < 2 else f"{row.cv:.1%}" + (" unstable" if row.unstable else ""),
               COMPARED, label="Coefficient of variation over the executions", compare_only=True,
               explain="CV = stdev / average over the executions, unstable above 10%", csv=("cv", "unstable")),
        Figure("Rows", lambda row: f.count(row.rows), RUN, label="Rows returned", csv=("rows",), name="rows", value=lambda row: row.rows),
        Figure("Empty", lambda row: f.share(row.empty_share), BOTH, label="Empty answers (no row)", show_if=_any(lambda row: row.empty),
               explain="Empty = share of the executions that returned no row: an empty answer measures little",
               csv=("empty", "empty_share")),
        Figure("Answer", lambda row: f.answer(row.answer), BOTH, text=True,
               explain="Answer = every execution's rows checked against what the tool inserted", csv=("answer", "answer_detail"), name="answer"),
        Figure("Check s", lambda row: f.seconds(row.check_s), MORE, label="Answer checks' time, s (all workers)",
               show_if=_any(lambda row: row.check_s is not None), csv=("check_s",)),
        Figure("Errors", lambda row: "; ".join(row.errors) or f.DASH, BOTH, text=True, show_if=_any(lambda row: row.errors), csv=("errors",)),
        Figure("Agreement", lambda row: row.agreement or f.DASH, COMPARED, text=True, compare_only=True, label="Answers across targets",
               show_if=_any(lambda row: getattr(row, "agreement", None)),
               explain="Agreement = a query file's answers against the other targets' (same query, same parameters, same data)", csv=("agreement",)),
        QUERY_COST,
    ),
    "Milliseconds per execution.",
)

# A query file's answers as each execution kept them (report.html, answers.csv): normalised, hashed, the first rows.
KEPT_ANSWERS = Catalogue(
    "Answers kept",
    (
        WORKERS,
        Figure("Query", lambda row: row.query, key=True, text=True, csv=("query",)),
        Figure("Parameters", lambda row: row.parameters or f.DASH, text=True, csv=("parameters",)),
        Figure("Execs", lambda row: f.count(row.executions), label="Executions with this answer", csv=("executions",)),
        Figure("Rows", lambda row: f.count(row.rows), csv=("rows",)),
        Figure("Digest", lambda row: row.digest, text=True, label="SHA-256 of the normalised rows", csv=("digest",)),
        Figure("First rows", lambda row: " ".join(answer_digest.show(cells) for cells in row.first_rows) or f.DASH, text=True,
               label="First rows (normalised)", csv=("first_rows",)),
    ),
    "A query file's answers, normalised (numbers to the query's digits, times in UTC, rows sorted unless ordered); a study or compare "
    "compares them across targets.",
)

# A study's query-file queries: each one's answers on every target, compared.
AGREEMENTS = Catalogue(
    "Answers across targets",
    (
        Figure("Workload", lambda row: row.workload, key=True, text=True, csv=("workload",)),
        Figure("Query", lambda row: row.query, key=True, text=True, csv=("query",)),
        Figure("Targets", lambda row: ", ".join(row.targets), text=True, csv=("targets",)),
        Figure("Agreement", lambda row: row.verdict, text=True, label="Answers across targets", csv=("verdict",)),
    ),
    "The same query with the same parameters on targets holding the same data must give the same answer: agreed, DIFFERENT "
    "(the targets on each side and the first differing row), or not checked (why).",
)

# The answer check of every query whose check says more than ok (report.html).
ANSWERS = Catalogue(
    "Answers",
    (
        WORKERS,
        Figure("Query", lambda row: row.query, key=True, text=True, csv=("query",)),
        Figure("Answer", lambda row: f.answer(row.answer, row.answer_detail), text=True, csv=("answer", "answer_detail")),
    ),
)

def _verdict(verdict: Any) -> str:
    return "not judged" if verdict.passed is None else "pass" if verdict.passed else "FAILED"


# Each threshold (--threshold, a study's thresholds:) and the rows it was judged on (cli/results/thresholds.py).
THRESHOLDS = Catalogue(
    "Thresholds",
    (
        # compared runs (compare, a study) by their source alone: the folder (or cell) names the database too
        Figure("Source", lambda verdict: verdict.source, COMPARED, key=True, text=True, compare_only=True, label="Source (results folder)",
               csv=("database", "source")),
        Figure("Threshold", lambda verdict: verdict.threshold.expression, BOTH, key=True, text=True,
               csv=("threshold.expression", "threshold.figure", "threshold.query", "threshold.operator", "threshold.limit")),
        Figure("Verdict", _verdict, BOTH, text=True, csv=("passed", "problem")),
        Figure("Rows", f.judged_rows, BOTH, text=True, label="Rows judged, with their figure",
               csv=("rows.query", "rows.where", "rows.value", "rows.passed")),
    ),
    "A threshold passes when every row it concerns passes (each worker count, step or query); a figure not measured fails it.",
)

SCANS = Catalogue(
    "Scans",
    (
        DATABASE_DIFFERS, SOURCE, WORKERS,
        Figure("Runs", lambda row: str(row.runs), RUN, csv=("runs",)),
        Figure("Devices", lambda row: f.count(row.devices), MORE, csv=("devices",)),
        Figure("Rows", lambda row: f.count(row.rows), BOTH, label="Rows read per run", csv=("rows",)),
        Figure("Rows/s", value=lambda row: row.rows_per_s.avg, form=f.rate, levels=BOTH, label="Rows read per second",
               explain="Rows/s = rows read by all workers / run duration, average over runs", csv=("rows_per_s.avg", "rows_per_s.n"),
               unit="rows/s", better="higher", rank_as="rows_per_s", spread=lambda row: row.rows_per_s),
        Figure("CV", lambda row: f.cv(row.rows_per_s), BOTH, label="Coefficient of variation",
               explain="CV = stdev / average over runs, unstable above 10% (- for a single run)", csv=("rows_per_s.cv", "rows_per_s.unstable"),
               name="cv", value=lambda row: _cv(row.rows_per_s)),
        Figure("Win min", value=lambda row: row.window_min, form=f.rate, levels=BOTH, label="Slowest 10,000-row window, rows/s",
               explain="Win = each worker's rate over every 10,000 rows it read", csv=("window_min",),
               unit="rows/s", better="higher", rank_as="window_min"),
        Figure("Win avg", lambda row: f.rate(row.window_avg), MORE_COMPARED, label="Mean window rate, rows/s", csv=("window_avg",),
               name="window_avg", value=lambda row: row.window_avg),
        Figure("Win max", lambda row: f.rate(row.window_max), MORE_COMPARED, label="Fastest window, rows/s", csv=("window_max",),
               name="window_max", value=lambda row: row.window_max),
        Figure("p50 ms", lambda row: f.ms(row.page_p50_ms), MORE, label="p50 per page or fetch, ms", csv=("page_p50_ms",),
               name="page_p50_ms", value=lambda row: row.page_p50_ms),
        Figure("p99 ms", lambda row: f.ms(row.page_p99_ms), BOTH, label="p99 per page or fetch, ms", csv=("page_p99_ms",),
               name="page_p99_ms", value=lambda row: row.page_p99_ms),
        Figure("max ms", lambda row: f.ms(row.page_max_ms), MORE, label="Slowest page, ms", csv=("page_max_ms",),
               name="page_max_ms", value=lambda row: row.page_max_ms),
        Figure("Check", lambda row: row.check, BOTH, text=True,
               explain="Check = timestamps never decrease within a device, and each device holds as many readings as the tool wrote", csv=("check",),
               name="check"),
        Figure("Check s", lambda row: f.seconds(row.check_s), MORE, label="Checks' time, s (all workers)",
               show_if=_any(lambda row: row.check_s is not None), csv=("check_s",)),
        Figure("Problem", lambda row: f.text(row.problem), MORE, text=True, label="First problem, or why counts were not checked",
               show_if=_any(lambda row: row.problem), csv=("problem",)),
        Figure("Status", lambda row: row.status, MORE, text=True, compare_only=True, label="Invocation status", csv=("status",)),
    ),
)

UNDER_INGEST = Catalogue(
    "Queries under ingest",
    (
        DATABASE, SOURCE, WORKERS,
        Figure("Clients", lambda row: str(row.query_workers), BOTH, label="Query clients", csv=("query_workers",)),
        Figure("Query", lambda row: row.query, BOTH, key=True, text=True, csv=("query",)),
        Figure("Execs", lambda row: f.count(row.executions), BOTH, label="Executions under ingest", csv=("executions",)),
        Figure("p50 ms", lambda row: f.ms(row.p50_ms), BOTH, label="p50 under ingest, ms", csv=("p50_ms",), name="p50_ms", value=lambda row: row.p50_ms),
        Figure("p99 ms", lambda row: f.ms(row.p99_ms), BOTH, label="p99 under ingest, ms", csv=("p99_ms",), name="p99_ms", value=lambda row: row.p99_ms),
        Figure("max ms", lambda row: f.ms(row.max_ms), MORE, label="Slowest under ingest, ms", csv=("max_ms",), name="max_ms", value=lambda row: row.max_ms),
        Figure("Idle execs", lambda row: f.count(row.idle_executions), MORE, label="Idle executions", csv=("idle_executions",)),
        Figure("Idle p50", lambda row: f.ms(row.idle_p50_ms), BOTH, label="p50 idle, ms", csv=("idle_p50_ms",), name="idle_p50_ms", value=lambda row: row.idle_p50_ms),
        Figure("Idle p99", lambda row: f.ms(row.idle_p99_ms), BOTH, label="p99 idle, ms", csv=("idle_p99_ms",), name="idle_p99_ms", value=lambda row: row.idle_p99_ms),
        Figure("Ratio", lambda row: f.ratio(row.slowdown), BOTH, label="Slowdown (p50 under ingest / idle)",
               explain="Ratio = p50 under ingest / p50 idle", csv=("slowdown",), name="slowdown", value=lambda row: row.slowdown),
        Figure("Errors", lambda row: "; ".join(row.errors) or f.DASH, BOTH, text=True, show_if=_any(lambda row: row.errors), csv=("errors",)),
    ),
    "Milliseconds per execution under ingest (while the workers inserted) and idle (the same data right after the timed phase); "
    "means over the runs.",
)

RATE_STEPS = Catalogue(
    "Highest sustainable rate",
    (
        Figure("Step", lambda step: str(step.number), key=True, csv=("number", "run_id")),
        Figure("Target/s", lambda step: f.rate(step.target_rate), BOTH | MORE, label="Target rate, events/s", csv=("target_rate",)),
        Figure("Achieved/s", lambda step: f.rate(step.achieved_rate), BOTH | MORE, label="Achieved, events/s", csv=("achieved_rate",)),
        Figure("Resp p50", lambda step: f.ms(step.response_p50_ms), BOTH | MORE, label="Response time p50, ms", csv=("response_p50_ms",)),
        Figure("Resp p99", lambda step: f.ms(step.response_p99_ms), BOTH | MORE, label="Response time p99, ms",
               explain="Resp = response time in ms from each call's intended start", csv=("response_p99_ms",)),
        Figure("Svc p99", lambda step: f.ms(step.service_p99_ms), BOTH | MORE, label="Service time p99, ms",
               explain="Svc = service time in ms, the call itself", csv=("service_p99_ms",)),
        Figure("Verdict", lambda step: "pass" if step.passed else ("p99 over target" if step.sustained else "fell behind"),
               BOTH | MORE, text=True, csv=("passed", "sustained")),
    ),
)

CROSSCHECKS = Catalogue(
    "Count checks and database-side cross-check",
    (
        Figure("Run", lambda check: check.label, key=True, text=True, csv=("label", "workers", "step")),
        Figure("Count check", lambda check: check.count_check, BOTH | MORE, text=True, csv=("count_check",)),
        Figure("Client/s", lambda check: f.rate(check.client_rate), BOTH | MORE, label="Client inserts/s", csv=("client_rate",)),
        Figure("Database/s", lambda check: "not exposed" if check.db_rate is None else f.rate(check.db_rate), BOTH | MORE,
               label="Database inserts/s", explain="Database/s = rows the database counted during the timed phase / run duration", csv=("db_rate",)),
        Figure("Difference", lambda check: f.signed_share(check.difference) + (" FLAGGED" if check.flagged else ""), BOTH | MORE,
               explain="a difference over 2% is flagged (a counter named *_server_wide also counts other clients' writes)", csv=("difference", "flagged")),
        Figure("Counter", lambda check: f.text(check.counter), MORE, text=True, label="Database counter", csv=("counter",)),
        Figure("Client events", lambda check: f.count(check.client_events), MORE, csv=("client_events",)),
        Figure("Database events", lambda check: f.count(check.db_events), MORE, csv=("db_events",)),
        Figure("Storage MB", lambda check: f.DASH if check.storage_bytes is None else f"{check.storage_bytes / 1e6:,.1f}", MORE,
               label="Storage, MB", csv=("storage_bytes",)),
        Figure("B/event", lambda check: f.bytes_per_event(check.bytes_per_event), BOTH | MORE, label="Storage bytes per event",
               explain="B/event = what the run's tables take on disk (indexes, and an embedded database's write-ahead log while the run holds it) / events stored", csv=("bytes_per_event",)),
    ),
)

# compare.md's inserts/s of the mixed runs beside their twins without query clients (--compare-idle)
WITH_AND_WITHOUT_QUERIES = Catalogue(
    "Inserts with and without queries",
    (
        Figure("Database", lambda row: row.database, COMPARED, key=True, text=True, compare_only=True, csv=("database",)),
        Figure("Source", lambda row: row.source, COMPARED, key=True, text=True, compare_only=True, csv=("source",)),
        Figure("Workers", lambda row: str(row.workers), key=True, csv=("workers",)),
        Figure("Query clients", lambda row: str(row.query_workers), BOTH, csv=("query_workers",)),
        Figure("Inserts/s with queries", lambda row: f.rate(row.throughput.avg), BOTH, csv=("throughput.avg",)),
        Figure("Inserts/s without", lambda row: f.rate(row.throughput_without_queries.avg), BOTH, csv=("throughput_without_queries.avg",)),
    ),
)


def conditions(rows: Sequence[Any]) -> Catalogue:
    """The key conditions of compared rows side by side (one column per condition any row has), and
    what sets a row apart (†)."""
    names = list(dict.fromkeys(name for row in rows for name in row.conditions))
    return Catalogue(
        "Conditions of the compared rows",
        (
            Figure("Database", _database, COMPARED, key=True, text=True, compare_only=True, csv=("database",)),
            Figure("Source", lambda row: row.source, COMPARED, key=True, text=True, compare_only=True, csv=("source",)),
            Figure("Workers", lambda row: str(row.workers), key=True, csv=("workers",)),
            *(Figure(name, _condition(name), BOTH, text=True, csv=("conditions",)) for name in names),
            Figure("Differs from the other rows", lambda row: "; ".join(row.differs) or f.DASH, BOTH, text=True, csv=("differs",)),
        ),
    )


def _condition(name: str) -> Read:
    return lambda row: str(row.conditions.get(name, f.DASH))


def _counted(run: Any) -> str:
    check = run.report.verification
    return f.DASH if check is None or check.expected is None else f"{check.counted:,} / {check.expected:,}"


EVERY_RUN = Catalogue(
    "Every run",
    (
        Figure("Run", lambda run: run.label, key=True, text=True, csv=("label",)),
        Figure("Run id", lambda run: run.report.run_id, RUN, text=True, csv=("report.run_id",)),
        Figure("Workers", lambda run: str(run.workers), RUN, csv=("workers",)),
        Figure("Target/s", lambda run: f.rate(run.report.spec.rate), RUN, label="Target rate (--rate), events/s",
               show_if=_any(lambda run: run.report.spec.rate), csv=("report.spec.rate",)),
        Figure("Events", lambda run: f.count(run.report.figures.events), RUN, label="Events inserted", csv=("report.figures.events",)),
        Figure("Prefilled", lambda run: f.count(run.report.figures.prefilled), MORE, label="Events before the timed phase", csv=("report.figures.prefilled",)),
        Figure("Duration s", lambda run: f"{run.report.figures.duration_s:.3f}", RUN, label="Timed phase, s", csv=("report.figures.duration_s",)),
        Figure("Inserts/s", lambda run: f.rate(run.report.figures.throughput), RUN, csv=("report.figures.throughput",)),
        Figure("Seed formula", lambda run: f.rate(run.report.figures.seed_formula_throughput), MORE, label="Seed formula inserts/s", csv=("report.figures.seed_formula_throughput",)),
        Figure("Calls", lambda run: f.count(run.report.figures.latency.calls), MORE, label="Database calls", csv=("report.figures.latency.calls",)),
        Figure("mean ms", lambda run: f.ms(run.report.figures.latency.mean_ms), MORE, label="Mean latency, ms", csv=("report.figures.latency.mean_ms",)),
        Figure("p50 ms", lambda run: f.ms(run.report.figures.latency.p50_ms), MORE, label="Latency p50, ms", csv=("report.figures.latency.p50_ms",)),
        Figure("p95 ms", lambda run: f.ms(run.report.figures.latency.p95_ms), MORE, label="Latency p95, ms", csv=("report.figures.latency.p95_ms",)),
        Figure("p99 ms", lambda run: f.ms(run.report.figures.latency.p99_ms), RUN, label="Latency p99, ms", csv=("report.figures.latency.p99_ms",)),
        Figure("max ms", lambda run: f.ms(run.report.figures.latency.max_ms), MORE, label="Slowest call, ms", csv=("report.figures.latency.max_ms",)),
        Figure("Overhead", lambda run: f.share(run.report.figures.client_overhead, 1), MORE, label="Client overhead", csv=("report.figures.client_overhead",)),
        Figure("Skew ms", lambda run: f"{run.report.figures.start_skew_s * 1000:.0f}", MORE, label="Start skew, ms", csv=("report.figures.start_skew_s",)),
        Figure("Retries", lambda run: str(run.report.figures.retries), MORE, csv=("report.figures.retries",)),
        Figure("Count check", lambda run: run.report.verification.verdict() if run.report.verification else f.DASH, RUN, text=True, csv=("report.verification.ok",)),
        Figure("Count s", lambda run: f.seconds(run.report.verification.seconds() if run.report.verification else None), RUN,
               label="Count check's time, s", show_if=_any(lambda run: run.report.verification and run.report.verification.seconds() is not None),
               csv=("report.verification.count_before_s", "report.verification.count_after_s")),
        Figure("Counted", _counted, MORE, label="Counted / expected", text=True, csv=("report.verification.counted", "report.verification.expected")),
        Figure("Storing", lambda run: run.report.ingestion.sentence() if run.report.ingestion else f.DASH, MORE, text=True,
               label="Storing after the timed phase", show_if=_any(lambda run: run.report.ingestion), csv=("report.ingestion.reached", "report.ingestion.seconds_after_run")),
    ),
    "One row per run, with the conditions it ran under: the figures the rows above are computed from.",
)
