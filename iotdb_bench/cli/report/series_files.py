"""series.csv: every finished run's series at the resolution it was measured, one line per window,
appended as each run ends (a run of hours keeps the series of its finished runs and steps).

results.json keeps each series at most windows.DISPLAY_WINDOWS windows long (coarsened: what the plots
draw, and a file a person can still open); this file keeps them as the run reported them: 1 s windows,
or 2, 4, ... s in a run longer than windows.MAX_WINDOWS s (simulator/measurement/windows.py).

    run,run_id,series,worker,window_start_s,window_s,count
    "4 workers",run-1a2b3c4d,events,all,0,1,51234          the workers' sum (insert runs: events, scans: rows)
    "4 workers",run-1a2b3c4d,events,0,0,1,12801            each worker's own, where the report kept them
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from iotdb_bench.cli.results.document import RunRecord

SERIES = "series.csv"
HEADER = ("run", "run_id", "series", "worker", "window_start_s", "window_s", "count")


def append(folder: Path, record: RunRecord) -> None:
    """The run's series, added to the folder's series.csv (made with its header by the first run)."""
    report = record.report
    lines: list[tuple] = []

    def add(series: str, worker: str, counts: Sequence[int], width_s: int) -> None:
        lines.extend((record.label, report.run_id, series, worker, index * width_s, width_s, count) for index, count in enumerate(counts))

    if report.figures is not None:
        add("events", "all", report.figures.per_second, report.figures.series_window_s)
    if report.scan is not None:
        add("rows", "all", report.scan.per_second, report.scan.series_window_s)
    what = "rows" if report.scan is not None else "events"
    for worker in report.workers:
        add(what, str(worker.worker), worker.per_second, worker.series_window_s)
    if not lines:
        return
    path = Path(folder) / SERIES
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.writer(handle)
        if new:
            writer.writerow(HEADER)
        writer.writerows(lines)
