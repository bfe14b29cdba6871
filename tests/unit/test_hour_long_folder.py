"""The results folder of an hour-long 50-worker run stays readable (docs/scale.md): results.json keeps each
series at most DISPLAY_WINDOWS windows long and report.html holds images and tables, while series.csv
beside them keeps every window of every series as measured. The report is a synthetic one of that size
(tests/factories.py: every worker's 1 s series kept); the sizes are printed for the docs (pytest -s)."""

from __future__ import annotations

import csv
import json

from iotdb_bench.cli.commands.saving import run_done, save_results
from iotdb_bench.cli.results.results_files import DISPLAY_WINDOWS
from tests import factories

WORKERS, SECONDS = 50, 3600


def test_an_hour_long_50_worker_folder_keeps_short_series_in_its_files_and_every_window_beside_them(tmp_path):
    document = factories.document([(WORKERS, factories.hour_long_report(workers=WORKERS, seconds=SECONDS))])
    record = document.runs[0]
    measured = list(record.report.figures.per_second)
    run_done(document, [record], tmp_path, record)  # as the CLI does when the run ends
    save_results(document, [record], tmp_path)

    saved = json.loads((tmp_path / "results.json").read_text())
    report = saved["runs"][0]["report"]
    assert len(report["figures"]["per_second"]) <= DISPLAY_WINDOWS
    assert all(len(worker["per_second"]) <= DISPLAY_WINDOWS for worker in report["workers"])
    with (tmp_path / "series.csv").open() as series:
        rows = list(csv.DictReader(series))
    assert len(rows) == (WORKERS + 1) * SECONDS  # the workers' sum and each worker's own, every 1 s window
    assert [int(row["count"]) for row in rows if row["worker"] == "all"] == measured
    assert sum(report["figures"]["per_second"]) == sum(measured)  # coarsened, nothing lost
    sizes = {name: (tmp_path / name).stat().st_size for name in ("results.json", "report.html", "series.csv")}
    print(f"\n{WORKERS} workers, {SECONDS} s: " + ", ".join(f"{name} {size / 1e3:,.0f} kB" for name, size in sizes.items()))
    assert sizes["results.json"] < 1_000_000 and sizes["report.html"] < 500_000
