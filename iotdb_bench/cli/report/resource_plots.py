"""The resources plot: one figure per worker count with, over the timed phase, events/s, the CPU
cores of the database and of the client (workers + collector + CLI), and the database's memory.

Every series is cut into the same 1 s windows as the events/s series (window i covers [i, i + 1) s
after the common start); CPU cores in a window = the growth of the cumulative CPU seconds across it,
interpolated between readings. Runs of the same worker count are averaged window by window.
"""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.results.document import ResultsDocument, RunRecord
from iotdb_bench.simulator.resources import ResourceGroup, counter_delta, gauge_on_grid

SIZE = (7.5, 7.2)


def windows(group: ResourceGroup | None, start: float, end: float, count: int) -> tuple[list[float | None], list[float | None]]:
    """(CPU cores, memory bytes) of a group in each 1 s window after `start`; the last window ends at `end`."""
    if group is None or not group.series:
        return [None] * count, [None] * count
    bounds = [(start + i, min(start + i + 1, end)) for i in range(count)]
    cores = [_cores(counter_delta(group.series, "cpu_s", low, high), high - low) for low, high in bounds]
    memory = gauge_on_grid(group.series, "memory_bytes", [(low + high) / 2 for low, high in bounds])
    return cores, memory


def _cores(cpu_s: float | None, seconds: float) -> float | None:
    return None if cpu_s is None or seconds <= 0 else cpu_s / seconds


def client_cores(run: RunRecord, count: int) -> list[float | None]:
    usage = run.report.resources
    parts = [windows(group, usage.window_start, usage.window_end, count)[0] for group in (usage.workers, usage.collector, usage.cli)]
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
    """One PNG per worker count whose runs were sampled."""
    written = []
    for workers in dict.fromkeys(run.workers for run in document.insert_runs()):
        runs = [run for run in document.insert_runs() if run.workers == workers and run.report.resources is not None]
        if runs:
            written.append(_figure(runs, folder / f"resources-{workers}-workers.png"))
    return written


def _figure(runs: list[RunRecord], path: Path) -> Path:
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    series = {"events": [], "db_cores": [], "client_cores": [], "db_memory": []}
    for run in runs:
        figures, usage = run.report.figures, run.report.resources
        count = max(len(figures.per_second), 1)
        rates = [float(v) for v in figures.per_second] or [0.0]
        last = figures.duration_s - (count - 1)
        if 0 < last < 1:
            rates[-1] /= last
        db_cores, db_memory = windows(usage.database, usage.window_start, usage.window_end, count)
        series["events"].append(rates)
        series["db_cores"].append(db_cores)
        series["client_cores"].append(client_cores(run, count))
        series["db_memory"].append(db_memory)
    means = {name: _mean(columns) for name, columns in series.items()}
    edges = [float(i) for i in range(len(means["events"]) + 1)]

    figure = Figure(figsize=SIZE, layout="constrained")
    events_axes, cpu_axes, memory_axes = figure.subplots(3, 1, sharex=True)
    workers = runs[0].workers
    events_axes.stairs(_zeros(means["events"]), edges, linewidth=1.5, baseline=None)
    events_axes.set(ylabel="events/s", title=f"{workers} worker{'s' if workers != 1 else ''}: rate and resources during the timed phase")
    events_axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    database = runs[0].report.resources.database
    in_workers = runs[0].report.resources.database_in_workers
    _line(cpu_axes, edges, means["db_cores"], "database", database, in_workers)
    _line(cpu_axes, edges, means["client_cores"], "client (workers, collector, CLI)", None, False)
    cpu_axes.set(ylabel="CPU cores")
    cpu_axes.legend(fontsize="small")
    memory_mb = [None if value is None else value / 1e6 for value in means["db_memory"]]
    _line(memory_axes, edges, memory_mb, "database", database, in_workers)
    memory_axes.set(ylabel="database memory MB", xlabel="seconds since the common start")
    for axes, values in ((events_axes, means["events"]), (cpu_axes, means["db_cores"] + means["client_cores"]), (memory_axes, memory_mb)):
        top = max((value for value in values if value is not None), default=0.0)
        axes.set_ylim(0, top * 1.15 if top > 0 else 1.0)  # a flat line must not sit on the frame
        axes.set_xlim(left=0)
        axes.grid(alpha=0.3)
    figure.savefig(path, dpi=110)
    return path


def _line(axes, edges: list[float], values: list[float | None], label: str, group: ResourceGroup | None, in_workers: bool) -> None:
    if any(value is not None for value in values):
        axes.stairs(_zeros(values), edges, label=label, linewidth=1.5, baseline=None)
        return
    if in_workers:
        reason = "an embedded database: its work is in the workers' CPU"
    else:
        reason = "not measured" + (f": {next(iter(group.not_measured.values()), '')}" if group and group.not_measured else "")
    axes.text(0.02, 0.5, f"{label}: {reason}", transform=axes.transAxes, fontsize="small", wrap=True)


def _zeros(values: list[float | None]) -> list[float]:
    """Windows without a reading drawn at 0 would claim a measurement; they are left as gaps (NaN)."""
    return [float("nan") if value is None else value for value in values]
