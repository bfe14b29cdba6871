"""Which compared rows `compare` marks as measured under other conditions, and the conditions line."""

from __future__ import annotations

from iotdb_bench.cli.results import run_conditions
from iotdb_bench.cli.results.document import Environment, ResultsDocument, RunRecord
from iotdb_bench.cli.results.host import Host
from iotdb_bench.simulator.measurement.conditions import Build, Node, Placement, RunConditions, Software
from iotdb_bench.simulator.protocol import WorkerResult
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec


def document(module: str = "postgres", batch: int = 1000, server: str = "PostgreSQL 15.8 on x86_64-pc-linux-gnu, compiled by gcc",
             platform: str = "local", instance_type: str | None = None, pregenerated_bytes: list[int] | None = None) -> ResultsDocument:
    spec = RunSpec(run_id="r", task="insert", target=module, module=module, workers=2, batch=batch, pregenerate=pregenerated_bytes is not None)
    conditions = RunConditions(server_version=server, software=Software(build=Build(version="0.1.0", commit="a" * 40), python="3.11.2",
                                                                       drivers={"psycopg": "3.3.9"}))
    if instance_type:
        conditions.placement = Placement(nodes=[Node(name="n1", roles=["collector", "workers"], instance_type=instance_type, kubelet="v1.33.1")])
    environment = Environment(tool_version="0.1.0", commit="b" * 40, modified=True, python="3.11.7",
                              host=Host(cpu_model="AMD EPYC", logical_cpus=2, memory_bytes=24 * 2**30, os="Debian GNU/Linux 12"))
    workers = [WorkerResult(worker=index, started_at=0, finished_at=1, pregenerated_bytes=held) for index, held in enumerate(pregenerated_bytes or [])]
    return ResultsDocument(task="insert", target=module, platform=platform, environment=environment, spec=spec, worker_counts=[2],
                           runs=[RunRecord(label="2 workers", workers=2, run=1, report=RunReport(run_id="r", task="insert", spec=spec,
                                                                                               start_at=None, conditions=conditions,
                                                                                               workers=workers))])


def test_the_row_that_differs_is_marked_with_what_differs():
    rows = [run_conditions.key_conditions(d) for d in (document(), document(batch=100), document(module="sqlite", server="SQLite 3.40.1"))]
    assert run_conditions.differences(rows) == [[], ["batch 100 (others: 1000)"], []]


def test_server_versions_are_compared_within_one_module_only():
    rows = [run_conditions.key_conditions(d) for d in (
        document(), document(server="PostgreSQL 16.4 on x86_64-pc-linux-gnu, compiled by gcc"), document(module="sqlite", server="SQLite 3.40.1"))]
    marks = run_conditions.differences(rows)
    assert marks[1] == ["server version (postgres) PostgreSQL 16.4 (others: PostgreSQL 15.8)"]
    assert marks[2] == []  # SQLite's version is not compared with PostgreSQL's


def test_platform_and_node_type_differences_are_marked():
    rows = [run_conditions.key_conditions(d) for d in (
        document(platform="kubernetes", instance_type="m5.xlarge"), document(platform="kubernetes", instance_type="m5.xlarge"),
        document(platform="kubernetes", instance_type="c6i.large"), document())]
    marks = run_conditions.differences(rows)
    assert marks[2] == ["node type collector, workers: c6i.large (others: collector, workers: m5.xlarge)"]
    assert marks[3][0].startswith("platform local on AMD EPYC, 2 CPUs, 24.0 GiB, Debian GNU/Linux 12 (others: kubernetes)")


def test_the_caption_names_build_server_drivers_python_and_machine():
    assert run_conditions.caption(document()) == (
        f"Conditions: iotdb-bench 0.1.0 {'b' * 12} (modified); server PostgreSQL 15.8; psycopg 3.3.9; Python 3.11.7; "
        "local: AMD EPYC, 2 CPUs, 24.0 GiB, Debian GNU/Linux 12.")


def test_the_short_server_version_drops_the_compiler_but_keeps_an_extension():
    postgres = "PostgreSQL 15.20 (Debian 15.20-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit"
    assert run_conditions.short_server_version(postgres) == "PostgreSQL 15.20 (Debian 15.20-0+deb12u1)"
    assert run_conditions.short_server_version(f"{postgres}; TimescaleDB 2.28.3") == "PostgreSQL 15.20 (Debian 15.20-0+deb12u1); TimescaleDB 2.28.3"


def test_pregenerated_batches_are_named_in_the_caption_and_set_a_row_apart():
    pregenerated = document(pregenerated_bytes=[40 * 2**20, 52 * 2**20])
    assert run_conditions.caption(pregenerated).endswith(
        "; batches pre-generated before the timed phase (--pregenerate, up to 52 MiB per worker): the figures leave out making the events.")
    assert "pre-generated" not in run_conditions.caption(document())
    marks = run_conditions.differences([run_conditions.key_conditions(d) for d in (document(), pregenerated)])
    assert marks[1] == ["events made before the timed phase (--pregenerate) (others: during the timed phase)"]
