"""Plots of the mixed runs and the visibility lag: each query's latency under ingest beside idle,
and the lag per worker count. Drawn with the other plots: cli/report/plots.py calls `draw` with its own
figure and save helpers, so both look alike (and this module needs nothing from it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from iotdb_bench.cli.results.document import ResultsDocument
from iotdb_bench.cli.results.tables import formats

# figure(fit_labels) -> (figure, axes); save(figure, path) -> path
NewFigure = Callable[..., tuple[Any, Any]]
Save = Callable[[Any, Path], Path]


def draw(document: ResultsDocument, folder: Path, figure: NewFigure, save: Save) -> list[Path]:
    written = []
    if document.queries_under_ingest:
        written.append(queries_under_ingest(document, folder / "queries-under-ingest.png", figure, save))
    if any(row.visibility_p50_ms is not None for row in document.inserts):
        written.append(visibility_lag(document, folder / "visibility-lag.png", figure, save))
    return written


def queries_under_ingest(document: ResultsDocument, path: Path, _figure: NewFigure, _save: Save) -> Path:
    rows = document.queries_under_ingest
    figure, axes = _figure(fit_labels=True)
    labels = [f"{row.query}\n{formats.workers(row.workers)}, {formats.plural(row.query_workers, 'query client')}" for row in rows]
    positions = range(len(rows))
    height = 0.27
    series = (("p50 under ingest", [row.p50_ms for row in rows]), ("p99 under ingest", [row.p99_ms for row in rows]),
              ("p50 idle", [row.idle_p50_ms for row in rows]))
    # Bars on a log axis start at its left edge: a decade below the smallest value keeps every bar visible.
    floor = min((value for _, values in series for value in values if value), default=1.0) / 10
    for offset, (name, values) in enumerate(series):
        axes.barh([p + (offset - 1) * height for p in positions], [(value or floor) - floor for value in values], left=floor,
                  height=height, label=name)
    axes.set_yticks(list(positions), labels, fontsize=7)
    axes.invert_yaxis()
    axes.set_xscale("log")
    axes.set_xlabel("ms per execution (log scale)")
    axes.set_title(f"{document.target}: queries under ingest and idle")
    axes.legend(fontsize=8)
    return _save(figure, path)


def visibility_lag(document: ResultsDocument, path: Path, _figure: NewFigure, _save: Save) -> Path:
    rows = [row for row in document.inserts if row.visibility_p50_ms is not None]
    figure, axes = _figure()
    positions = range(len(rows))
    width = 0.27
    for offset, (name, values) in enumerate((("p50", [row.visibility_p50_ms for row in rows]), ("p99", [row.visibility_p99_ms for row in rows]),
                                             ("max", [row.visibility_max_ms for row in rows]))):
        axes.bar([p + (offset - 1) * width for p in positions], values, width=width, label=name)
    axes.set_xticks(list(positions), [formats.workers(row.workers) for row in rows])
    axes.set_ylabel("ms from write to visible")
    axes.set_title(f"{document.target}: visibility lag")
    axes.legend(fontsize=8)
    return _save(figure, path)
