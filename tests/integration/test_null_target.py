"""The null target: the full client path (generation, encoding, timing, reporting), nothing sent."""

import pytest

from iotdb_bench.cli.config import load_config
from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EventGenerator

pytestmark = pytest.mark.slow


@pytest.mark.plots
def test_batch_run_reports_figures_and_no_fake_verification(cli):
    result = cli("insert", "--target", "null", "--platform", "local", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "20000")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    figures = report["figures"]
    assert figures["events"] == 40000
    assert figures["latency"]["calls"] == 40  # one timed call per batch, as with a database
    assert sum(figures["per_second"]) == 40000
    assert figures["throughput"] > 0
    # nothing is stored, so the count check does not apply: neither passed nor failed
    assert report["verification"]["applicable"] is False
    assert report["verification"]["ok"] is None and report["verification"]["counted"] is None
    assert report["server"]["counters_at_start"] is None and report["server"]["storage_bytes"] is None
    assert "not applicable" in result.stdout
    assert (result.results_folders()[-1] / "inserts-per-second.png").is_file()


@pytest.mark.parametrize("args", [
    ["--extra-option", "encoding=rows", "--batch", "500"],
    ["--primary-key", "client", "--batch", "500", "--tables", "multiple"],
    [],  # single inserts: one call per event
], ids=["rows", "client-key-multiple-tables", "single"])
def test_other_modes(cli, args):
    result = cli("insert", "--target", "null", "--platform", "local", "-w", "1", "-r", "1", "--num-inserts", "3000", *args)
    assert result.code == 0, result.stderr
    figures = result.results()["runs"][0]["report"]["figures"]
    assert figures["events"] == 3000
    assert figures["latency"]["calls"] == (6 if "--batch" in args else 3000)  # batches of 500, or one call per event


def test_bad_encoding_is_one_line(cli):
    result = cli("insert", "--target", "null", "--platform", "local", "-w", "1", "--extra-option", "encoding=xml")
    assert result.code == 2
    assert "encoding" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_queries_run_and_return_nothing(cli):
    result = cli("query", "--target", "null", "--platform", "local", "-w", "1", "-r", "2")
    assert result.code == 0, result.stderr
    queries = result.results()["runs"][0]["report"]["queries"]
    assert len(queries) == 6
    assert all(q["executions"] == 2 and q["rows"] == 0 and not q["errors"] and q["answer"] == "not checked" for q in queries.values())


def test_encodes_exactly_what_postgres_would_send():
    """Same spec, same events: the null module's COPY buffers are the PostgreSQL module's, byte for byte."""
    spec = RunSpec(run_id="run-x", task="insert", target="t", module="null", workers=1, batch=1000, primary_key="client",
                   tables="multiple")
    null = module_class("null")(spec)
    postgres = module_class("postgres")(spec.model_copy(update={"module": "postgres"}))
    batch = EventGenerator(7, 0, 10).batch(0, 1000)
    assert null.writer.prepare_batch(batch) == postgres.writer.prepare_batch(batch)
    assert sum(len(payload) for _, payload in null.writer.prepare_batch(batch)) > 1000 * 60


def test_null_target_is_not_tied_to_the_local_platform():
    target = load_config(None).targets["null"]
    assert target.module == "null" and target.platform is None
