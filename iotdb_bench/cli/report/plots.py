"""PNG plots of a saved results document, drawn into its results folder.

matplotlib is imported only when plots are drawn (it takes longer to import than the rest of the
CLI together), and only through its object API: a `Figure` renders with the Agg backend without
touching pyplot's global state or needing a display.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from iotdb_bench.cli.results.compared import Compared, CompareInsertRow, CompareQueryRow, one_per_run
from iotdb_bench.cli.results.document import InsertRow, QueryRow, ResultsDocument
from iotdb_bench.cli.results.rate_search import MaxRateSearch
from iotdb_bench.cli.results.tables import formats
from iotdb_bench.simulator.measurement import windows
from iotdb_bench.simulator.spec import QUERY_NAMES

# IOTBENCH_PLOTS=0: a run writes no PNG plots (its report.html shows the tables only). Drawing them
# costs about 1.4 s of CPU per invocation, most of a small run's; scripted sweeps and the test suite,
# which run hundreds of invocations, skip them (`report` and `compare` too; `report FOLDER` without
# it draws a run's plots later).
PLOTS_ENV = "IOTBENCH_PLOTS"
DPI = 110
SIZE = (7.5, 4.6)
MARGINS = {"left": 0.16, "right": 0.97, "bottom": 0.12, "top": 0.92}


def wanted() -> bool:
    return os.environ.get(PLOTS_ENV, "1").strip().lower() not in ("0", "no", "false", "off")


def draw(document: ResultsDocument, folder: Path) -> list[Path]:
    """Every plot the document has data for; returns the files written."""
    folder = Path(folder)
    if document.task == "query":
        return [query_durations(document.queries, folder / "query-durations.png")] if document.queries else []
    if document.task == "scan":
        series = scan_series(document)
        return [events_over_time(series, folder / "rows-scanned-per-second.png", "rows/s", "Rows scanned per second")] if series else []
    summary = document.inserts
    if not summary:
        return []
    series = per_second_series(document)
    if document.steps:
        written = [fill_level(summary, folder / "fill-level.png")]
    elif document.max_rate is not None:  # one worker count at many rates: the curve says it all
        written = []
    else:
        written = [throughput(summary, folder / "inserts-per-second.png"), latency(summary, folder / "latency.png")]
    if any(row.target_rate is not None for row in summary):
        written.append(latency_throughput(summary, folder / "latency-throughput.png", document.max_rate))
    if series and document.max_rate is None:  # the search's many rates: its latency-throughput curve says it all
        written.append(events_over_time(series, folder / "events-per-second.png"))
    from iotdb_bench.cli.report import mixed_plots, resource_plots

    written += resource_plots.draw(document, folder)
    written += mixed_plots.draw(document, folder, _figure, _save)
    return written


def _figure(fit_labels: bool = False):
    """One axes. Fixed margins suit the plots drawn after every insert run (short tick labels) and
    cost a third less time than `fit_labels`, the layout engine that makes room for long query names."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=SIZE, layout="constrained" if fit_labels else None)
    if not fit_labels:
        figure.subplots_adjust(**MARGINS)
    return figure, figure.add_subplot()


def _save(figure, path: Path) -> Path:
    figure.savefig(path, dpi=DPI)
    return path


def _thousands(axes) -> None:
    from matplotlib.ticker import FuncFormatter

    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))


def throughput(summary: list[InsertRow], path: Path) -> Path:
    """Average inserts/s per worker count, with bars from the slowest to the fastest run."""
    figure, axes = _figure()
    workers = [row.workers for row in summary]
    averages = [row.throughput.avg for row in summary]
    below = [row.throughput.avg - row.throughput.min for row in summary]
    above = [row.throughput.max - row.throughput.avg for row in summary]
    axes.errorbar(workers, averages, yerr=[below, above], marker="o", capsize=5, label="average (bars: min to max)")
    for row, x, y in zip(summary, workers, averages):
        if formats.unstable(row.throughput):
            axes.annotate(f"unstable, CV {row.throughput.cv:.0%}", (x, y), textcoords="offset points", xytext=(10, -4), color="tab:red",
                          ha="left" if x != workers[-1] or len(workers) == 1 else "right", va="top", fontsize="small",
                          bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    axes.set(xlabel="workers", ylabel="inserts/s", title="Inserts per second by worker count", xticks=workers)
    axes.set_ylim(bottom=0)
    _thousands(axes)
    axes.legend(loc="lower right")
    axes.grid(alpha=0.3)
    return _save(figure, path)


def latency(summary: list[InsertRow], path: Path) -> Path:
    figure, axes = _figure()
    workers = [row.workers for row in summary]
    percentiles = {"p50": [row.p50_ms for row in summary], "p95": [row.p95_ms for row in summary],
                   "p99": [row.p99_ms.avg for row in summary]}
    for name, values in percentiles.items():
        axes.plot(workers, values, marker="o", label=f"{name} service" if any(row.target_rate for row in summary) else name)
    if all(row.response_p99_ms is not None for row in summary):
        axes.plot(workers, [row.response_p50_ms for row in summary], marker="s", linestyle="--", label="p50 response")
        axes.plot(workers, [row.response_p99_ms.avg for row in summary], marker="s", linestyle="--", label="p99 response")
    axes.set(xlabel="workers", ylabel="ms per database call", title="Call latency by worker count", xticks=workers)
    _latency_scale(axes, [value for line in axes.get_lines() for value in line.get_ydata()])
    _legend_outside(figure, axes)
    axes.grid(alpha=0.3, which="both")
    return _save(figure, path)


def _latency_scale(axes, values: list[float]) -> None:
    """A log axis when latencies span more than a decade (p50 would vanish under p99 on a linear one)."""
    positive = [value for value in values if value and value > 0]
    if positive and max(positive) > 10 * min(positive):
        axes.set_yscale("log")
        from matplotlib.ticker import FuncFormatter

        axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    else:
        axes.set_ylim(bottom=0)


LEGEND_WIDTH = 2.6  # inches added right of the axes for a legend


def _legend_outside(figure, axes) -> None:
    """The legend right of the axes, never over the data: the figure grows by the legend's width."""
    width, height = figure.get_size_inches()
    figure.set_size_inches(width + LEGEND_WIDTH, height)
    figure.subplots_adjust(left=MARGINS["left"] * width / (width + LEGEND_WIDTH), right=MARGINS["right"] * width / (width + LEGEND_WIDTH))
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", borderaxespad=0)


def latency_throughput(summary: list[InsertRow], path: Path, search: MaxRateSearch | None = None) -> Path:
    """The latency-throughput curve of open-loop runs: response-time p50 and p99 (service-time p99
    dotted) against the rate achieved; with --find-max-rate the target and the answer marked."""
    figure, axes = _figure()
    rows = sorted((row for row in summary if row.target_rate is not None and row.response_p99_ms is not None),
                  key=lambda row: (row.workers, row.target_rate))
    for workers in dict.fromkeys(row.workers for row in rows):
        group = [row for row in rows if row.workers == workers]
        suffix = f", {_workers(workers)}" if len({row.workers for row in rows}) > 1 else ""
        achieved = [row.throughput.avg for row in group]
        axes.plot(achieved, [row.response_p50_ms for row in group], marker="o", label=f"p50 response{suffix}")
        line, = axes.plot(achieved, [row.response_p99_ms.avg for row in group], marker="o", label=f"p99 response{suffix}")
        axes.plot(achieved, [row.p99_ms.avg for row in group], marker=".", linestyle=":", color=line.get_color(),
                  label=f"p99 service{suffix}")
        behind = [(x, row.response_p99_ms.avg) for row, x in zip(group, achieved) if row.sustained == "NO"]
        if behind:  # a marker, not a word: many rates can fall behind close together
            axes.plot(*zip(*behind), marker="x", markersize=10, color="tab:red", linestyle="none",
                      label="fell behind its schedule" + suffix)
    if search is not None:
        axes.axhline(search.latency_p99_ms, color="tab:red", linestyle="--", linewidth=1, label=f"p99 target {search.latency_p99_ms:g} ms")
        if search.answer is not None:
            axes.axvline(search.answer, color="tab:green", linestyle="--", linewidth=1, label=f"highest sustainable {search.answer:,.0f}/s")
    axes.set(xlabel="events/s achieved (open loop, --rate)", ylabel="ms per call", title="Latency against throughput")
    if rows and max(row.response_p99_ms.avg for row in rows) > 50 * max(min(row.response_p50_ms for row in rows), 1e-3):
        axes.set_yscale("log")
    else:
        axes.set_ylim(bottom=0)
    axes.set_xlim(left=0)
    from matplotlib.ticker import EngFormatter

    axes.xaxis.set_major_formatter(EngFormatter())
    _legend_outside(figure, axes)
    axes.grid(alpha=0.3)
    return _save(figure, path)


def fill_level(summary: list[InsertRow], path: Path) -> Path:
    from matplotlib.ticker import EngFormatter

    figure, axes = _figure()
    axes.plot([row.level for row in summary], [row.throughput.avg for row in summary], marker="o")
    axes.set(xlabel="events in the database before the step (fill level)", ylabel="inserts/s", title="Inserts per second by fill level")
    axes.set_ylim(bottom=0)
    _thousands(axes)
    axes.xaxis.set_major_formatter(EngFormatter())
    axes.grid(alpha=0.3)
    return _save(figure, path)


def per_second_series(document: ResultsDocument) -> dict[str, tuple[list[float], list[float]]]:
    """Events per second through the timed phase as (window edges, rates): one line per step, or per
    worker count (the element-wise mean of its runs). Window i covers [i w, (i + 1) w) s after the
    common start (w = 1 s, coarser in a long run); the last one ends with the run, so its events are
    divided by its actual length."""
    groups: dict[str, list[Series]] = {}
    for run in document.insert_runs():
        figures = run.report.figures
        if not figures.per_second:
            continue
        label = f"step {run.step}" if run.step else _workers(run.workers)
        label += f" at {run.report.spec.rate:,.0f}/s" if run.report.spec.rate else ""
        groups.setdefault(label, []).append(Series(figures.per_second, figures.series_window_s, figures.duration_s))
    return {label: _mean_series(runs) for label, runs in groups.items()}


def scan_series(document: ResultsDocument) -> dict[str, tuple[list[float], list[float]]]:
    """Rows read per second through each scan, one line per worker count (the mean of its runs)."""
    groups: dict[str, list[Series]] = {}
    for run in document.runs:
        scan = run.report.scan
        if scan is not None and scan.per_second:
            groups.setdefault(_workers(run.workers), []).append(Series(scan.per_second, scan.series_window_s, scan.duration_s))
    return {label: _mean_series(runs) for label, runs in groups.items()}


@dataclass(frozen=True)
class Series:
    """One run's counts per window of `width_s`, and the length of its timed phase."""

    counts: list[int]
    width_s: int
    duration_s: float


def _mean_series(runs: list[Series]) -> tuple[list[float], list[float]]:
    width = max(run.width_s for run in runs)  # runs of one group at different widths: each at the coarsest
    rated = [(windows.rates(windows.coarsened(run.counts, width // run.width_s), width, run.duration_s), run.duration_s) for run in runs]
    length = max(len(values) for values, _ in rated)
    means = []
    for index in range(length):
        present = [values[index] for values, _ in rated if index < len(values)]
        means.append(sum(present) / len(present))
    longest = [duration for values, duration in rated if len(values) == length]
    end = min(max(sum(longest) / len(longest), (length - 1) * width), length * width)
    return [float(index * width) for index in range(length)] + [end], means


def _workers(count: int) -> str:
    return formats.workers(count)


def events_over_time(series: dict[str, tuple[list[float], list[float]]], path: Path, ylabel: str = "events/s",
                     title: str = "Events per second during the timed phase") -> Path:
    figure, axes = _figure()
    for label, (edges, values) in series.items():
        axes.stairs(values, edges, label=label, linewidth=1.5, baseline=None)
    axes.set(xlabel="seconds since the common start", ylabel=ylabel, title=title)
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    _thousands(axes)
    _legend_outside(figure, axes)
    axes.grid(alpha=0.3)
    return _save(figure, path)


def query_durations(summary: list[QueryRow], path: Path) -> Path:
    """Average milliseconds per query (bars from fastest to slowest execution), cold and warm marked."""
    figure, axes = _figure(fit_labels=True)
    queries = list(dict.fromkeys(row.query for row in summary))
    worker_counts = list(dict.fromkeys(row.workers for row in summary))
    width = 0.8 / len(worker_counts)
    positive = []
    for slot, workers in enumerate(worker_counts):
        rows = {row.query: row for row in summary if row.workers == workers}
        xs = [index + (slot - (len(worker_counts) - 1) / 2) * width for index in range(len(queries))]
        measured = [rows[q] if q in rows and rows[q].avg_s is not None else None for q in queries]
        averages = [row.avg_s * 1000 if row else 0.0 for row in measured]
        below = [(row.avg_s - (row.min_s or row.avg_s)) * 1000 if row else 0.0 for row in measured]
        above = [((row.max_s or row.avg_s) - row.avg_s) * 1000 if row else 0.0 for row in measured]
        label = _workers(workers) if len(worker_counts) > 1 else "average (bars: min to max)"
        axes.bar(xs, averages, width * 0.9, yerr=[below, above], capsize=4, label=label)
        for x, q in zip(xs, queries):
            row = rows.get(q)
            if row is None:
                continue
            if row.errors or row.answer == "wrong":
                axes.annotate("failed" if row.errors else "wrong answer", (x, 0), textcoords="offset points", xytext=(0, 4),
                              ha="center", color="tab:red", rotation=90)
            for value, marker in ((row.cold_avg_s, "v"), (row.warm_avg_s, "^")):
                if value is not None:
                    axes.plot([x], [value * 1000], marker=marker, color="black", linestyle="none")
            positive += [value * 1000 for value in (row.min_s, row.max_s) if value]
    axes.plot([], [], marker="v", color="black", linestyle="none", label="cold (first execution)")
    axes.plot([], [], marker="^", color="black", linestyle="none", label="warm (later executions)")
    _finish_query_axes(axes, queries, positive, "ms per execution")
    return _save(figure, path)


def comparison(compared: Compared, path: Path) -> Path:
    """Inserts/s of every compared row (bars from min to max) and the query averages per database."""
    from matplotlib.figure import Figure

    insert_rows, query_rows = compared.inserts, compared.queries
    # One panel above the other: the insert bars' labels (database, source, mode...) need the width.
    heights = ([max(3.0, 0.32 * len(insert_rows) + 1.2)] if insert_rows else []) + ([SIZE[1]] if query_rows else [])
    figure = Figure(figsize=(11, sum(heights) + 0.5), layout="constrained")
    parts = figure.subfigures(len(heights), 1, height_ratios=heights) if len(heights) > 1 else [figure]
    axes = iter(part.subplots() for part in parts)  # a subfigure each: the bars' long labels do not narrow the queries
    if insert_rows:
        _compare_inserts(next(axes), insert_rows)
    if query_rows:
        _compare_queries(next(axes), query_rows)
    figure.savefig(path, dpi=DPI, bbox_inches="tight")  # every label and the legend inside the image
    return path


def _compare_inserts(axes, rows: list[CompareInsertRow]) -> None:
    labels = [
        f"{row.database} ({row.source}), {row.insert_mode or 'not recorded'}, pk {row.primary_key}, {_workers(row.workers)}"
        + (f", level {row.level:,}" if row.level is not None else "")
        + (f", at {row.target_rate:,.0f}/s" if row.target_rate else "")
        for row in rows
    ]
    averages = [row.throughput.avg for row in rows]
    below = [row.throughput.avg - row.throughput.min for row in rows]
    above = [row.throughput.max - row.throughput.avg for row in rows]
    colours = ["tab:red" if formats.unstable(row.throughput) or ("FLAGGED" in row.crosscheck or "FAILED" in row.crosscheck) else "tab:blue" for row in rows]
    positions = list(range(len(rows)))[::-1]
    axes.barh(positions, averages, xerr=[below, above], capsize=4, color=colours)
    axes.set_yticks(positions, labels, fontsize="small")
    axes.set(xlabel="inserts/s (bars: min to max over runs; red: unstable or flagged)", title="Inserts per second")
    from matplotlib.ticker import EngFormatter

    if max(averages) > 50 * min(averages) > 0:
        axes.set_xscale("log")
    axes.xaxis.set_major_formatter(EngFormatter())
    axes.grid(alpha=0.3, axis="x")


def _compare_queries(axes, rows: list[CompareQueryRow]) -> None:
    """One group of bars per query (the canonical ones, then any variant a run executed), one bar per run."""
    queries = list(dict.fromkeys([*QUERY_NAMES, *(row.query for row in rows)]))
    runs = one_per_run(rows)
    width = 0.8 / len(runs)
    values = []
    for slot, run in enumerate(runs):
        averages = {row.query: row.avg_s for row in rows if row.source == run.source and row.workers == run.workers and row.avg_s is not None}
        xs = [index + (slot - (len(runs) - 1) / 2) * width for index in range(len(queries))]
        heights = [averages.get(name, 0.0) * 1000 for name in queries]
        axes.bar(xs, heights, width * 0.9, label=f"{run.database} ({run.source}), {_workers(run.workers)}")
        values += [value for value in heights if value > 0]
    _finish_query_axes(axes, queries, values, "average ms per execution")


def _finish_query_axes(axes, queries: list[str], durations: list[float], ylabel: str) -> None:
    """Query names under the bars, a log scale when durations span more than two decades."""
    if durations and max(durations) / min(durations) > 10:
        axes.set_yscale("log")
        from matplotlib.ticker import FuncFormatter

        axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_xticks(range(len(queries)), queries, rotation=30, ha="right")
    axes.set(ylabel=ylabel, title="Query durations")
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    axes.grid(alpha=0.3, axis="y")
