"""series.csv and readings.csv: every finished run's series as they were measured, appended as each run
ends (a run of hours keeps the series of its finished runs and steps).

results.json keeps each series at most windows.DISPLAY_WINDOWS windows long (coarsened) and each resource
series at most resources.DISPLAY_SAMPLES readings (thinned): what the plots draw, and a file a person can
still open. These files keep them as the run reported them: 1 s windows, or 2, 4, ... s in a run longer
than windows.MAX_WINDOWS s (simulator/measurement/windows.py), and every reading the sampler kept
(resources.MAX_SAMPLES per series at most).

    series.csv
    run,run_id,series,worker,window_start_s,window_s,count
    "4 workers",run-1a2b3c4d,events,all,0,1,51234          the workers' sum (insert runs: events, scans: rows)
    "4 workers",run-1a2b3c4d,events,0,0,1,12801            each worker's own, where the report kept them

    readings.csv
    run,run_id,group,series,at,cpu_s,memory_bytes,written_bytes
    "4 workers",run-1a2b3c4d,database,postgres 812 and its children,1764403200.5,812.31,1204322304,90112
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from iotdb_bench.cli.results.document import RunRecord

SERIES, READINGS = "series.csv", "readings.csv"
HEADER = ("run", "run_id", "series", "worker", "window_start_s", "window_s", "count")
READINGS_HEADER = ("run", "run_id", "group", "series", "at", "cpu_s", "memory_bytes", "written_bytes")


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
    _append(Path(folder) / SERIES, HEADER, lines)
    usage = report.resources
    groups = {"database": usage.database, "workers": usage.workers, "collector": usage.collector, "cli": usage.cli} if usage else {}
    readings = [(record.label, report.run_id, name, series.name, sample.at, sample.cpu_s, sample.memory_bytes, sample.written_bytes)
                for name, group in groups.items() if group is not None for series in group.series for sample in series.samples]
    _append(Path(folder) / READINGS, READINGS_HEADER, readings)


def _append(path: Path, header: tuple[str, ...], lines: list[tuple]) -> None:
    if not lines:
        return
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.writer(handle)
        if new:
            writer.writerow(header)
        writer.writerows(lines)
