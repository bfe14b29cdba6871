"""Seed 003's ingest cell with its 50 workers, as the launcher deploys it, on simulated nodes (KWOK): the
release installed with the preset's own spec, the 50 worker pods seen running, followed by the CLI's own
pod checks for a while (as while following a long run), their logs saved and the release removed. The
CLI's memory is read through the checks: following 50 pods must not grow it.

The pods only "run" on KWOK nodes (no container starts), so the run itself cannot proceed (its rows, its
checks: benchmarks/seed_sizes.py seed-003-local runs the preset's 50 workers on this machine's servers);
what is measured is what the CLI does with 50 worker pods. The figures are printed (pytest -s) for
docs/scale.md.
"""

from __future__ import annotations

import logging
import time

import psutil
import pytest

from iotdb_bench.cli import study_file
from iotdb_bench.cli.commands.study_cells import CELL_COMMANDS
from iotdb_bench.cli.config import load_config
from iotdb_bench.cli.run.platforms.kubernetes import POD_CHECK_INTERVAL_S, PodWatch, release_name
from iotdb_bench.cli.run.study_plan import Passthrough, expand
from tests.kubernetes.simulated_nodes import CLIENT_NODES, PLACEMENT, RUN_NAMESPACE, TARGET, installed, is_running

pytestmark = [pytest.mark.kubernetes, pytest.mark.kwok, pytest.mark.slow]

WORKERS = 50
FOLLOW_S = 30  # the CLI's pod checks (one a second) after every worker runs, as while following a run
MOST_GROWTH_BYTES = 5e6


def seed_003_ingest_spec():
    """The spec of seed 003's ingest cell as the preset ships it (its workers, batch, measurements), on the simulated target."""
    study = study_file.load(study_file.resolve("seed-003"), targets=["postgresql-local"])
    plan = expand(study, load_config(None), CELL_COMMANDS, Passthrough(), "seed-003")
    ingest = next(cell for cell in plan.cells if cell.workload == "ingest")
    spec = plan.invocations[ingest.key].base
    assert spec.workers == WORKERS
    return spec.model_copy(update={"target": TARGET, "module": "postgres", "run_id": f"kwok-seed3-{int(time.time()) % 100000}"})


def test_the_cli_follows_seed_003s_fifty_worker_pods_without_growing(simulated, launcher, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="iotdb_bench.cli.run.platforms.kubernetes")
    platform = launcher(PLACEMENT)
    spec = seed_003_ingest_spec()
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    pods = PodWatch(platform.core, platform.batch, RUN_NAMESPACE, release_name(spec.run_id), log_dir)
    cli = psutil.Process()
    start = time.monotonic()
    with installed(platform, spec, tmp_path):
        installed_s = time.monotonic() - start
        while sum(is_running(pod) for pod in pods.pods if pod.metadata.labels["app.kubernetes.io/component"] == "worker") < WORKERS:
            assert pods.problem(force=True) is None
            assert time.monotonic() - start < 300, f"not all {WORKERS} workers running after 300 s"
            time.sleep(POD_CHECK_INTERVAL_S)
        running_s = time.monotonic() - start
        assert {pod.spec.node_name for pod in pods.pods if pod.metadata.labels["app.kubernetes.io/component"] == "worker"} <= set(CLIENT_NODES)
        memory = [cli.memory_info().rss]
        checks = 0
        followed = time.monotonic()
        while time.monotonic() - followed < FOLLOW_S:
            assert pods.problem(force=True) is None
            checks += 1
            memory.append(cli.memory_info().rss)
            time.sleep(POD_CHECK_INTERVAL_S)
        logs_start = time.monotonic()
        pods.save_logs()
        logs_s = time.monotonic() - logs_start
        cleanup_start = time.monotonic()
    cleanup_s = time.monotonic() - cleanup_start
    settled, last = memory[len(memory) // 4], max(memory[-5:])
    print(f"\nseed 003's ingest cell ({WORKERS} workers, batch {spec.batch}, {spec.measurements} values per row) on {len(CLIENT_NODES)} simulated nodes:"
          f"\n  {'helm install':30} {installed_s:6.1f} s"
          f"\n  {f'all {WORKERS} workers running':30} {running_s:6.1f} s after the install began"
          f"\n  followed {FOLLOW_S} s ({checks} pod checks): CLI resident memory {memory[0] / 1e6:.1f} MB at the start, "
          f"{max(memory) / 1e6:.1f} MB at most, {last / 1e6:.1f} MB at the end"
          f"\n  {f'logs of {len(list(log_dir.iterdir()))} pods':30} {logs_s:6.1f} s"
          f"\n  {'cleanup':30} {cleanup_s:6.1f} s")
    assert last - settled < MOST_GROWTH_BYTES, f"the CLI grew by {(last - settled) / 1e6:.1f} MB while following {WORKERS} pods"
