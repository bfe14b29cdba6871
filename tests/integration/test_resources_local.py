"""Resource figures of local runs against readings the test makes itself: the database's CPU against
the server's processes read straight from /proc over the same window, storage per event against
pg_total_relation_size, the cost at a known price; an embedded database and a database that
cannot be found say so instead of giving figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT, dedicated_database, pg_connect

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

# The independent reader: a process of its own, at a higher priority than the run's processes so
# that a busy machine does not leave gaps in its readings; one line "epoch_seconds cpu_seconds" every
# 20 ms with the CPU seconds (user + system, with reaped children) of the postmaster and its children.
READER = """
import os, sys, time
postmaster, ticks = int(sys.argv[1]), os.sysconf("SC_CLK_TCK")
def stat(pid):
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), sum(int(value) for value in fields[11:15]) / ticks
while True:
    total = 0.0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = stat(entry)
            if found and (int(entry) == postmaster or found[0] == postmaster):
                total += found[1]
    print(time.time(), total, flush=True)
    time.sleep(0.02)
"""


class ServerCpu:
    def __init__(self, postmaster: int, path: Path):
        self.path = path
        self.process = subprocess.Popen([sys.executable, "-c", READER, str(postmaster)], stdout=path.open("w"),
                                        preexec_fn=lambda: os.nice(-10))

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()

    def between(self, start: float, end: float) -> float:
        readings = [tuple(map(float, line.split())) for line in self.path.read_text().splitlines() if len(line.split()) == 2]

        def at(moment: float) -> float:
            after = next(index for index, (stamp, _) in enumerate(readings) if stamp >= moment)
            (t0, v0), (t1, v1) = readings[after - 1], readings[after]
            assert t1 - t0 < 0.3, f"the reader had a gap of {t1 - t0:.2f} s around the window's edge"
            return v0 + (v1 - v0) * (moment - t0) / (t1 - t0)

        return at(end) - at(start)


@pytest.fixture
def resources_env(pg_env):
    return dedicated_database(pg_env, "iotbench_resources")


def _postmaster(env) -> int:
    with pg_connect(env) as db:
        folder = db.execute("SHOW data_directory").fetchone()[0]
    return int(Path(folder, "postmaster.pid").read_text().split()[0])


def _config(tmp_path: Path, **target_options) -> Path:
    config = yaml.safe_load((REPO_ROOT / "iotdb_bench" / "config.yaml").read_text())
    config["targets"]["postgresql-local"].update(target_options)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.plots
def test_database_cpu_and_storage_against_independent_readings(cli, resources_env, tmp_path):
    reader = ServerCpu(_postmaster(resources_env), tmp_path / "server-cpu.txt")
    config = _config(tmp_path, cost={"per_hour": 7.2, "currency": "USD"})
    try:
        # a timed phase of fixed length: the edges' readings weigh the same however fast the machine is
        result = cli("insert", "--config", str(config), "--target", "postgresql-local", "-w", "2", "-r", "1", "--batch", "1000",
                     "--duration", "6", env=resources_env)
    finally:
        reader.stop()
    assert result.code == 0, result.stderr
    document = result.results()
    usage = document["runs"][0]["report"]["resources"]
    database = usage["database"]
    assert "listening on" in database["source"] and database["not_measured"] == {}
    independent = reader.between(usage["window_start"], usage["window_end"])
    assert independent > 0.2, "the run was too short to compare CPU readings"
    assert database["cpu_s"] == pytest.approx(independent, rel=0.15)
    assert database["memory_peak_bytes"] > 10_000_000 and database["written_bytes"] > 0

    row = document["inserts"][0]
    with pg_connect(resources_env) as db:
        size = db.execute("SELECT pg_total_relation_size('events')").fetchone()[0]
        stored = db.execute("SELECT count(*) FROM events").fetchone()[0]
    events = document["runs"][0]["report"]["figures"]["events"]
    assert stored == events > 0
    # within a few 8 kB pages of ~50 MB: autovacuum may add the visibility and free-space maps after the run
    assert row["resources"]["storage_bytes_per_event"] == pytest.approx(size / stored, rel=1e-3)
    assert row["resources"]["db_cpu_s_per_million"] == pytest.approx(database["cpu_s"] / events * 1e6, rel=1e-6)
    workers = document["runs"][0]["report"]["workers"]
    assert all(worker["cpu_s"] > 0 for worker in workers)
    assert 0 < row["resources"]["client_share"] < 1

    # 7.2 USD per hour = 0.002 USD per second: one million events at R events/s cost 2000 / R
    assert row["cost"]["per_million_inserts"] == pytest.approx(2000 / row["throughput"]["avg"], rel=1e-9)
    assert row["cost"]["currency"] == "USD"
    assert "USD per million inserts" in result.stdout
    assert (result.results_folders()[-1] / "resources.png").stat().st_size > 10_000
    header = (result.results_folders()[-1] / "summary.csv").read_text().splitlines()[0]
    assert "resources.db_cpu_s_per_million" in header and "cost.per_million_inserts" in header


def test_a_database_that_cannot_be_found_is_not_measured(cli, resources_env, tmp_path):
    config = _config(tmp_path, database_process="no-such-database-server")
    result = cli("insert", "--config", str(config), "--target", "postgresql-local", "-w", "1", "-r", "1", "--batch", "1000",
                 "--duration", "2", env=resources_env)  # long enough for the workers' CPU to be read within it
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    database = report["resources"]["database"]
    assert database["cpu_s"] is None and database["memory_peak_bytes"] is None and database["written_bytes"] is None
    assert database["not_measured"]["cpu"] == "no process named 'no-such-database-server' is running (target option database_process)"
    assert "database CPU not measured (no process named 'no-such-database-server'" in " ".join(result.stdout.split())
    assert report["resources"]["workers"]["cpu_s"] > 0 and report["workers"][0]["cpu_s"] > 0
    assert "cost" not in result.results()["inserts"][0] or result.results()["inserts"][0]["cost"] is None


def test_an_embedded_database_is_reported_inside_the_workers(cli):
    result = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--batch", "500", "--num-inserts", "2000")
    assert result.code == 0, result.stderr
    document = result.results()
    assert document["runs"][0]["report"]["resources"]["database_in_workers"] is True
    row = document["inserts"][0]["resources"]
    assert row["database_in_workers"] and row["db_cpu_s"] is None and row["client_may_be_bottleneck"] is None
    assert "embedded database, its work is inside the workers" in result.stdout


def test_the_client_share_of_the_machine_and_the_bottleneck_flag_of_workers_that_fill_it(cli):
    """Four workers of the null target (client work only, as fast as they can) on a machine with fewer
    cores: the run reports the client's share of the machine, every process counted once, and flags
    the client whenever that share or a worker's core share is high enough (on a machine other work
    keeps busy the workers may get less than that: then the flag must stay off, with the same figures)."""
    cores = os.cpu_count() or 1
    result = cli("insert", "--target", "null", "--platform", "local", "-w", str(cores * 2), "-r", "1", "--batch", "1000", "--duration", "2")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    row = result.results()["inserts"][0]["resources"]
    duration = report["figures"]["duration_s"]
    client = sum(w["cpu_s"] for w in report["workers"]) + (report["collector_cpu_s"] or 0) + report["resources"]["cli"]["cpu_s"]
    assert row["client_cores"] == cores
    assert row["client_machine_share"] == pytest.approx(min(client / (cores * duration), 1.0), rel=1e-6)
    assert 0 < row["client_machine_share"] <= 1
    saturated = row["client_machine_share"] >= 0.9 or row["worker_peak_core_share"] >= 0.9
    assert row["client_may_be_bottleneck"] is saturated
    if saturated:
        assert "core" in row["bottleneck_reason"]
        assert "Client may be the bottleneck" in result.stdout
    assert f"of the machine's {cores} cores" in " ".join(result.stdout.split())
