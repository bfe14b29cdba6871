"""The resources plot: one figure with, over the timed phase, events/s, the CPU cores of the database
and of the client (workers + collector + CLI), and the database's memory when it was measured; one
series per worker count, and per target rate of open-loop runs (never a mean of different rates).

Every series is cut into the same windows as the events/s series (window i covers [i w, (i + 1) w) s
after the common start, w = 1 s or coarser in a long run); CPU cores in a window = the growth of the cumulative CPU seconds across it,
interpolated between readings. Runs of the same worker count and rate are averaged window by window.
"""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.results.document import ResultsDocument, RunRecord
from iotdb_bench.cli.results.tables import formats
from iotdb_bench.simulator.measurement import windows as series_windows
from iotdb_bench.simulator.measurement.resources import ResourceGroup, counter_delta, gauge_on_grid

SIZE = (7.5, 7.2)


def windows(group: ResourceGroup | None, start: float, end: float, count: int, width_s: int = 1) -> tuple[list[float | None], list[float | None]]:
    """(CPU cores, memory bytes) of a group in each window of `width_s` after `start`; the last window ends at `end`."""
    if group is None or not group.series:
        return [None] * count, [None] * count
    bounds = [(start + i * width_s, min(start + (i + 1) * width_s, end)) for i in range(count)]
    cores = [_cores(counter_delta(group.series, "cpu_s", low, high), high - low) for low, high in bounds]
    memory = gauge_on_grid(group.series, "memory_bytes", [(low + high) / 2 for low, high in bounds])
    return cores, memory


def _cores(cpu_s: float | None, seconds: float) -> float | None:
    return None if cpu_s is None or seconds <= 0 else cpu_s / seconds


def client_cores(run: RunRecord, count: int, width_s: int = 1) -> list[float | None]:
    usage = run.report.resources
    parts = [windows(group, usage.window_start, usage.window_end, count, width_s)[0] for group in (usage.workers, usage.collector, usage.cli)]
    totals: list[float | None] = []
    for index in range(count):
        values = [part[index] for part in parts if part[index] is not None]
        totals.append(sum(values) if values else None)
    return totals


def _mean(columns: list[list[float | None]]) -> list[float | None]:
    length = max((len(column) for column in columns), default=0)
    means: list[float | None] = []
    for index in range(length):
        present = [column[index] for column in columns if index < len(column) and column[index] is not None]
        means.append(sum(present) / len(present) if present else None)
    return means


def draw(document: ResultsDocument, folder: Path) -> list[Path]:
    """resources.png when some run was sampled."""
    groups: dict[str, list[RunRecord]] = {}
    for run in document.insert_runs():
        if run.report.resources is None:
            continue
        rate = run.report.spec.rate
        label = (f"step {run.step}" if run.step else formats.workers(run.workers)) + (f" at {rate:,.0f}/s" if rate else "")
        groups.setdefault(label, []).append(run)
    if document.max_rate is not None:  # the search's rates in rising order, so the colours climb with them
        groups = dict(sorted(groups.items(), key=lambda item: item[1][0].report.spec.rate or 0))
    return [_figure(groups, folder / "resources.png")] if groups else []


def _means(runs: list[RunRecord]) -> tuple[dict[str, list[float | None]], int]:
    """The series of the runs, averaged window by window, and their windows' width (the coarsest of the runs')."""
    series: dict[str, list] = {"events": [], "db_cores": [], "client_cores": [], "db_memory": []}
    width = max(run.report.figures.series_window_s for run in runs)
    for run in runs:
        figures, usage = run.report.figures, run.report.resources
        counts = series_windows.coarsened(figures.per_second, width // figures.series_window_s)
        count = max(len(counts), 1)
        rates = series_windows.rates(counts, width, figures.duration_s) or [0.0]
        db_cores, db_memory = windows(usage.database, usage.window_start, usage.window_end, count, width)
        series["events"].append(rates)
        series["db_cores"].append(db_cores)
        series["client_cores"].append(client_cores(run, count, width))
        series["db_memory"].append(db_memory)
    return {name: _mean(columns) for name, columns in series.items()}, width


def _figure(groups: dict[str, list[RunRecord]], path: Path) -> Path:
    from matplotlib import colormaps
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    means = {label: _means(runs) for label, runs in groups.items()}
    first = next(iter(groups.values()))[0].report.resources
    database, in_workers = first.database, first.database_in_workers
    memory = any(value is not None for one, _ in means.values() for value in one["db_memory"])
    figure = Figure(figsize=(SIZE[0] + 2.2, SIZE[1] if memory else SIZE[1] * 0.72), layout="constrained")
    panels = figure.subplots(3 if memory else 2, 1, sharex=True)
    events_axes, cpu_axes = panels[0], panels[1]
    palette = colormaps["viridis"].resampled(max(len(means), 2)) if len(means) > 10 else colormaps["tab10"]
    for index, (label, (one, width)) in enumerate(means.items()):
        colour = palette(index if len(means) <= 10 else index / max(len(means) - 1, 1))
        edges = [float(i * width) for i in range(len(one["events"]) + 1)]
        events_axes.stairs(_zeros(one["events"]), edges, linewidth=1.5, baseline=None, color=colour, label=label)
        if any(value is not None for value in one["db_cores"]):
            cpu_axes.stairs(_zeros(one["db_cores"]), edges, linewidth=1.5, baseline=None, color=colour)
        cpu_axes.stairs(_zeros(one["client_cores"]), edges, linewidth=1.2, baseline=None, color=colour, linestyle=":")
        if memory:
            panels[2].stairs(_zeros([None if v is None else v / 1e6 for v in one["db_memory"]]), edges, linewidth=1.5, baseline=None,
                             color=colour)
    events_axes.set(ylabel="events/s", title="Rate and resources during the timed phase")
    events_axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    events_axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), title="series", title_fontsize="small")
    cpu_axes.set(ylabel="CPU cores")
    cpu_axes.plot([], [], color="grey", linewidth=1.5, label="database")
    cpu_axes.plot([], [], color="grey", linewidth=1.2, linestyle=":", label="client (workers,\ncollector, CLI)")
    cpu_axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    absent = [what for what, seen in (("CPU", any(value is not None for one, _ in means.values() for value in one["db_cores"])),
                                      ("memory", memory)) if not seen]
    if absent:  # said above the panel, clear of the lines
        cpu_axes.set_title(f"database {' and '.join(absent)}: {_why_absent(database, in_workers)}", fontsize="small", loc="left")
    if memory:
        panels[2].set(ylabel="database memory MB")
    panels[-1].set(xlabel="seconds since the common start")
    for axes in panels:
        axes.set_ylim(bottom=0)
        axes.set_xlim(left=0)
        axes.margins(y=0.15)  # a flat line must not sit on the frame
        axes.grid(alpha=0.3)
    figure.savefig(path, dpi=110)
    return path


def _why_absent(group: ResourceGroup | None, in_workers: bool) -> str:
    if in_workers:
        return "an embedded database, its work is in the workers' CPU"
    return "not measured" + (f" ({next(iter(group.not_measured.values()), '')})" if group and group.not_measured else "")


def _zeros(values: list[float | None]) -> list[float]:
    """Windows without a reading drawn at 0 would claim a measurement; they are left as gaps (NaN)."""
    return [float("nan") if value is None else value for value in values]
