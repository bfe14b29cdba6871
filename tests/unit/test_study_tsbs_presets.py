"""The TSBS presets (iotdb_bench/studies/seed-003.yaml, tsbs-devops.yaml): seed 003 as the seed ran it
(TSBS's cpu-only data at benchANT's sizes in TSBS's order, single-groupby-1-1-1, its four figures);
--scale shrinking a TSBS insert's rows (time range, then hosts); a target --targets picks under another
name keeping the preset's cost of its database, and priced by --set; a module that does not store
TSBS's data listed as not supported."""

from __future__ import annotations

from iotdb_bench.cli import study_file
from iotdb_bench.cli.commands.study_cells import CELL_COMMANDS
from iotdb_bench.cli.config import load_config
from iotdb_bench.cli.run.study_plan import Passthrough, expand
from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES

CONFIG = load_config(None)


def load(name: str, **options):
    path = study_file.resolve(name)
    return path, study_file.load(path, database_of=lambda target: CONFIG.targets[target].module if target in CONFIG.targets else None, **options)


def test_seed_003_is_tsbs_cpu_only_at_benchants_sizes_and_single_groupby():
    _, study = load("seed-003")
    ingest, query = study.workloads
    assert ingest.insert == {"schema": "tsbs-cpu", "devices": 1000, "time-range": "3d", "interval": "10s", "batch": 1000}  # TSBS's order: no --order
    assert query.query == {"queries": ["single-groupby-1-1-1"]} and study.runs_of(query) * study.workers[0] == 100_000
    assert [(item.workload, item.figure, item.query) for item in study.score] == [
        ("ingest", "values_per_s", None), ("single-groupby", "latency_s", "single-groupby-1-1-1"), ("ingest", "storage_bytes_per_event", None),
        ("single-groupby", "queries_per_cost", "single-groupby-1-1-1")]
    assert study.unsupported == "skip" and {target.name for target in study.targets} == {"iotdb", "influxdb", "timescaledb", "questdb"}


def test_scale_shrinks_a_tsbs_inserts_time_range_to_an_hour_then_its_hosts():
    for scale, time_range, devices, runs in ((0.1, "432m", 1000, 200), (0.01, "1h", 720, 20), (0.001, "1h", 72, 2), (0.00001, "1h", 8, 1)):
        _, study = load("seed-003", scale=scale)
        ingest, query = study.workloads
        assert (ingest.insert["time-range"], ingest.insert["devices"], query.runs) == (time_range, devices, runs), scale
    _, devops = load("tsbs-devops", scale=0.1)
    assert devops.workloads[0].insert["time-range"] == "144m" and devops.workloads[0].insert["devices"] == 100  # a day x 0.1 = 2.4 h
    assert devops.workloads[1].query == {"queries": ["tsbs-devops"]}


def test_targets_picked_under_other_names_keep_their_databases_cost_and_can_be_priced():
    _, study = load("seed-003", targets=["iotdb-local", "timescaledb-local", "sqlite"])
    costs = {target.name: target.cost for target in study.targets}
    assert costs["iotdb-local"] is not None and costs["iotdb-local"].per_hour == 0.192 and costs["timescaledb-local"].currency == "USD"
    assert costs["sqlite"] is None  # no entry of its database in the preset
    _, priced = load("seed-003", targets=["sqlite"], overrides=["targets.sqlite.cost={per_hour: 0.5, currency: USD}"])
    assert priced.targets[0].cost.per_hour == 0.5


def test_cells_a_module_does_not_store_are_listed_as_not_supported():
    path, study = load("seed-003", targets=["iotdb-local", "arangodb", "sqlite"], scale=0.01, overrides=["workers=[2]"])
    plan = expand(study, CONFIG, CELL_COMMANDS, Passthrough(), str(path))
    refused = {(cell.target, cell.workload): cell.refused for cell in plan.cells}
    assert {refused[(target, workload)] for target in ("sqlite", "iotdb-local") for workload in ("ingest", "single-groupby")} == {None}
    assert refused[("arangodb", "ingest")].startswith("module 'arangodb' does not support --schema tsbs-cpu: not yet: ")
    assert refused[("arangodb", "single-groupby")]  # its data's insert is refused
    [sqlite_query] = [cell for cell in plan.cells if cell.target == "sqlite" and cell.workload == "single-groupby"]
    assert sqlite_query.args[:2] == ["--queries", "single-groupby-1-1-1"] and "-r" in sqlite_query.args


def test_tsbs_devops_runs_the_whole_devops_suite():
    path, study = load("tsbs-devops", targets=["sqlite"])
    plan = expand(study, CONFIG, CELL_COMMANDS, Passthrough(), str(path))
    query = next(cell for cell in plan.cells if cell.workload == "devops")
    assert plan.invocations[query.key].base.queries == TSBS_DEVOPS_QUERIES
