"""A study's --dry-run estimate (cli/run/study_estimate.py): from what the study's completed cells
measured where they can (rates of the same database, the overhead beyond the timed phases), from the
data a scan or query reads, and capped by a cell's time limit."""

from __future__ import annotations

import textwrap

from iotdb_bench.cli import study_file
from iotdb_bench.cli.commands.study_cells import CELL_COMMANDS
from iotdb_bench.cli.config import load_config
from iotdb_bench.cli.run.study_estimate import ASSUMED, EMBEDDED_SCAN_DEVICE_S, Measured, StudyEstimate, capabilities, random_into_device_btree, whole_table
from iotdb_bench.cli.run.study_plan import Passthrough, expand
from iotdb_bench.simulator.spec import RunSpec
from tests import factories

STUDY = """
name: estimate
targets:
  - {name: sqlite, options: {primary-key: none}, extra_options: {primary_key_constraint: "PRIMARY KEY (device_id, timestamp)"}}
  - {name: sqlite-time-first, target: sqlite, options: {primary-key: none}, extra_options: {primary_key_constraint: "PRIMARY KEY (timestamp, device_id)"}}
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


def planned(tmp_path, target="sqlite"):
    path = tmp_path / "study.yaml"
    path.write_text(textwrap.dedent(STUDY))
    found = expand(study_file.load(path), load_config(None), CELL_COMMANDS, Passthrough(), str(path))
    return found, {cell.workload: cell for cell in found.cells if cell.target == target}


def test_nothing_measured_the_assumed_rates_and_the_datas_size_decide(tmp_path):
    found, cells = planned(tmp_path)
    estimate = StudyEstimate(found.cells, found.invocations, {})
    insert = estimate.of(cells["insert"])
    overhead = ASSUMED["run_overhead_s"] + ASSUMED["worker_start_s"]  # one worker
    assert not insert.measured and insert.seconds == overhead + 4_000_000 / ASSUMED["batch"] + 4_000_000 / ASSUMED["check_events_per_s"]
    # the scan reads the insert cell's 4 million rows of 100,000 devices
    scan = estimate.of(cells["scan"])
    assert scan.seconds == overhead + 100_000 * EMBEDDED_SCAN_DEVICE_S + 4_000_000 / ASSUMED["scan_rows_per_s"]
    queries = estimate.of(cells["queries"])
    assert queries.seconds == overhead + 10 * (4_000_000 / ASSUMED["full_scan_rows_per_s"] + ASSUMED["query_s"])


def test_a_scan_of_a_table_whose_key_leads_with_the_time_is_a_pass_over_it_per_device(tmp_path):
    """No index leads with the device (the module's layout says so): each device reads every row."""
    found, cells = planned(tmp_path, target="sqlite-time-first")
    estimate = StudyEstimate(found.cells, found.invocations, {})
    per_device = EMBEDDED_SCAN_DEVICE_S + 4_000_000 / ASSUMED["whole_table_rows_per_s"]
    overhead = ASSUMED["run_overhead_s"] + ASSUMED["worker_start_s"]
    assert estimate.of(cells["scan"]).seconds == overhead + 100_000 * per_device + 4_000_000 / ASSUMED["scan_rows_per_s"]
    limited = estimate.of(cells["scan-limited"])  # 4.4 hours without the limit
    assert limited.limited and limited.seconds == 600 + overhead


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


def test_the_modules_say_which_layouts_read_the_whole_table_for_a_device():
    def scan_spec(module, **extra):
        return RunSpec(run_id="r", task="scan", target=module, module=module, workers=1, extra=extra)

    assert whole_table(scan_spec("postgres"))  # the key is the generated id: nothing leads with the device
    assert whole_table(scan_spec("postgres", primary_key_constraint="PRIMARY KEY (timestamp, device_id)"))
    assert not whole_table(scan_spec("postgres", primary_key_constraint="primary key ( device_id, timestamp )"))
    assert not whole_table(scan_spec("sqlite", create_indices="true"))  # an index on (device_id, temperature)
    assert not whole_table(scan_spec("clickhouse"))  # sorted by device, then time
    assert not whole_table(scan_spec("null"))


def test_more_query_workers_than_cores_queue_for_them_unless_the_time_was_measured_so():
    spec = RunSpec(run_id="r", target="sqlite", module="sqlite", task="query", workers=50, queries=["device-downsample"], query_runs=200)
    seconds, measured = StudyEstimate._query_s(spec, 2_592_000, Measured(), cores=2)
    assert not measured and seconds == 200 * ASSUMED["query_s"] * 25  # 50 workers on 2 cores: 25 to a core
    seconds, measured = StudyEstimate._query_s(spec, 2_592_000, Measured(query_s={"device-downsample": 1.5}), cores=2)
    assert measured and seconds == 200 * 1.5  # measured with the 50 workers side by side: their queueing is in it
    alone = spec.model_copy(update={"workers": 1})
    assert StudyEstimate._query_s(alone, 2_592_000, Measured(), cores=2)[0] == 200 * ASSUMED["query_s"]


SEED_003 = """
name: tsbs
targets: [timescaledb-local, influxdb-local, questdb-local]
workers: [50]
runs: 1
workloads:
  - name: ingest
    insert: {schema: tsbs-cpu, devices: 1000, time-range: 432m, interval: 10s, batch: 1000}
  - name: single-groupby
    query: {queries: [single-groupby-1-1-1, double-groupby-1]}
    runs: 200
"""


def test_a_database_far_from_the_rough_rates_has_its_own_and_fifty_workers_take_time_to_start(tmp_path):
    """Seed 003's shape at scale 0.1: 2,592,000 rows of ten values by 50 workers. InfluxDB stores each value as a
    point (its pace is in values/s), QuestDB's ILP over HTTP commits each request: both far below 100,000 rows/s."""
    path = tmp_path / "tsbs.yaml"
    path.write_text(textwrap.dedent(SEED_003))
    found = expand(study_file.load(path), load_config(None), CELL_COMMANDS, Passthrough(), str(path))
    cells = {(cell.target, cell.workload): cell for cell in found.cells}
    estimate = StudyEstimate(found.cells, found.invocations, {})
    overhead = ASSUMED["run_overhead_s"] + 50 * ASSUMED["worker_start_s"]
    checks = 2_592_000 / ASSUMED["check_events_per_s"]
    rows_per_s = {"timescaledb-local": 2 * ASSUMED["batch"], "influxdb-local": 2 * capabilities("influxdb").pace.batch_values_per_s / 10,
                  "questdb-local": 2 * capabilities("questdb").pace.batch_rows_per_s}
    for target, rate in rows_per_s.items():
        assert estimate.of(cells[(target, "ingest")]).seconds == overhead + 2_592_000 / rate + checks, target
    # TSBS's types: each worker's 200 executions of each, 25 workers to a core, then the answers checked on the cores;
    # double-groupby-1 reads all hosts over 12 of the 7.2 hours written: the whole table, and its check recomputes it
    query = estimate.of(cells[("questdb-local", "single-groupby")])
    alone = capabilities("questdb").pace.tsbs_query_s
    each = {"single-groupby-1-1-1": alone, "double-groupby-1": alone + 2_592_000 / ASSUMED["tsbs_rows_per_s"]}
    check = {"single-groupby-1-1-1": ASSUMED["tsbs_check_s"], "double-groupby-1": ASSUMED["tsbs_check_s"] + 2_592_000 / ASSUMED["tsbs_check_rows_per_s"]}
    checked = sum(200 * 50 * value / 2 for value in check.values())
    assert abs(query.seconds - (overhead + sum(200 * 25 * value for value in each.values()) + checked)) < 1e-6


def test_random_devices_into_a_btree_keyed_by_device_slow_once_it_outgrows_memory(tmp_path):
    """Seed 004's 100m-c: 100 million rows of random devices into PostgreSQL's or SQLite's table keyed by
    (device, time): the first rows at the rough pace, the rest at a random page of the key each."""
    text = STUDY.replace("num-inserts: 4000000", "num-inserts: 100000000")
    path = tmp_path / "big.yaml"
    path.write_text(textwrap.dedent(text).replace("devices: 100000}", "devices: 100000, order: random}"))
    found = expand(study_file.load(path), load_config(None), CELL_COMMANDS, Passthrough(), str(path))
    cells = {(cell.target, cell.workload): cell for cell in found.cells}
    estimate = StudyEstimate(found.cells, found.invocations, {})
    fits = ASSUMED["btree_in_memory_rows"]
    overhead = ASSUMED["run_overhead_s"] + ASSUMED["worker_start_s"] + 100_000_000 / ASSUMED["check_events_per_s"]
    slowed = fits / ASSUMED["batch"] + (100_000_000 - fits) / ASSUMED["btree_random_rows_per_s"]
    assert estimate.of(cells[("sqlite", "insert")]).seconds == overhead + slowed  # key (device_id, timestamp)
    # a key led by the time appends (the random devices land in the newest pages)
    assert estimate.of(cells[("sqlite-time-first", "insert")]).seconds == overhead + 100_000_000 / ASSUMED["batch"]

    def insert_spec(module, **extra):
        return RunSpec(run_id="r", task="insert", target=module, module=module, workers=1, order="random", extra=extra)

    assert random_into_device_btree(insert_spec("postgres", primary_key_constraint="PRIMARY KEY (device_id, timestamp)"))
    assert not random_into_device_btree(insert_spec("postgres"))  # its generated id leads
    assert not random_into_device_btree(insert_spec("clickhouse"))  # parts, merged later: not a B-tree
    assert not random_into_device_btree(insert_spec("null"))
