"""A study's --dry-run estimate (cli/run/study_estimate.py): from what the study's completed cells
measured where they can (rates of the same database, the overhead beyond the timed phases), from the
data a scan or query reads, and capped by a cell's time limit."""

from __future__ import annotations

import textwrap

from iotdb_bench.cli import study_file
from iotdb_bench.cli.commands.study_cells import CELL_COMMANDS
from iotdb_bench.cli.config import load_config
from iotdb_bench.cli.run.study_estimate import ASSUMED, Measured, StudyEstimate
from iotdb_bench.cli.run.study_plan import Passthrough, expand
from tests import factories

STUDY = """
name: estimate
targets: [sqlite]
workers: [1]
runs: 1
workloads:
  - name: insert
    insert: {num-inserts: 4000000, batch: 5000, devices: 100000}
  - name: scan
    scan: {page-size: 10000}
  - name: scan-limited
    scan: {page-size: 10000, time-limit: 600}
  - name: queries
    query: {queries: [count-events, device-downsample]}
    runs: 10
"""


def planned(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text(textwrap.dedent(STUDY))
    found = expand(study_file.load(path), load_config(None), CELL_COMMANDS, Passthrough(), str(path))
    return found, {cell.workload: cell for cell in found.cells}


def test_nothing_measured_the_assumed_rates_and_the_datas_size_decide(tmp_path):
    found, cells = planned(tmp_path)
    estimate = StudyEstimate(found.cells, found.invocations, {})
    insert = estimate.of(cells["insert"])
    overhead = ASSUMED["run_overhead_s"]
    assert not insert.measured and insert.seconds == overhead + 4_000_000 / ASSUMED["batch"] + 4_000_000 / ASSUMED["check_events_per_s"]
    # the scan reads the insert cell's 4 million rows of 100,000 devices
    scan = estimate.of(cells["scan"])
    assert scan.seconds == overhead + 100_000 * ASSUMED["scan_device_s"] + 4_000_000 / ASSUMED["scan_rows_per_s"]
    queries = estimate.of(cells["queries"])
    assert queries.seconds == overhead + 10 * (4_000_000 / ASSUMED["full_scan_rows_per_s"] + ASSUMED["query_s"])


def test_what_earlier_cells_measured_replaces_the_assumptions(tmp_path):
    found, cells = planned(tmp_path)
    measured = Measured()
    inserted = factories.document([(1, factories.insert_report([100_000] * 40, 40.0))])  # 100,000 inserts/s over 40 s
    measured.add(cells["insert"], inserted, seconds=46.0)  # 6 s beyond its timed phase
    measured.scan_rows_per_s.append(271.0)  # a time-first table, each device a full scan
    estimate = StudyEstimate(found.cells, found.invocations, {"sqlite": measured})
    insert = estimate.of(cells["insert"])
    assert insert.measured and insert.seconds == 6.0 + 40.0 + 4_000_000 / ASSUMED["check_events_per_s"]
    assert estimate.of(cells["scan"]).seconds == 6.0 + 4_000_000 / 271.0
    # a cell's time limit caps its estimate, and says so
    limited = estimate.of(cells["scan-limited"])
    assert limited.limited and limited.seconds == 600 + 6.0
