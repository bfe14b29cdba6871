"""The launcher's control plane at 1,000 workers, on simulated nodes (KWOK): installing the release,
watching its pods, collecting their logs, and cleaning up, with the launcher's own code for each.

The worker pods only "run" on KWOK nodes (no container starts), so no worker reports to a collector
and the run itself cannot be followed here (the collector at 1,000 workers is measured by its own
benchmark); what is measured is what the launcher does with the pods: its pod checks (one list of
the release's pods and Job per check, as while following a run), its log collection and its
uninstall. The figures are printed (pytest -s) for docs/kubernetes.md.
"""

from __future__ import annotations

import logging
import time

import pytest

from iotdb_bench.cli.run.platforms.kubernetes import JOB_TRACKING_FINALIZER, POD_CHECK_INTERVAL_S, PodWatch, release_name
from tests.kubernetes.simulated_nodes import CLIENT_NODES, PLACEMENT, RUN_NAMESPACE, installed, is_running, run_spec

pytestmark = [pytest.mark.kubernetes, pytest.mark.kwok, pytest.mark.slow]

WORKERS = 1000
SEEN_LIMIT_S = 600
# The wall times below depend on how busy the machine is (beside CI's other suites the API server's
# writes take three to five times longer), so they are printed, and what is asserted is what does not:
# the cleanup ended every pod itself (before helm, none left running or held by the Job's finalizer,
# which only the garbage collector would otherwise remove, at 20 pods/s), and a check costs the CLI
# less CPU than the kubernetes client's own parsing of the same list, measured beside it (1.5 ms per
# pod, which the check avoids). The time limit is the one the command itself would fail at.
CLEANUP_LIMIT_S = 180.0
CHECK_CPU_SHARE_OF_CLIENT_PARSING = 0.6


def test_launcher_watches_and_cleans_up_1000_worker_pods(simulated, launcher, tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="iotdb_bench.cli.run.platforms.kubernetes")
    platform = launcher(PLACEMENT)
    spec = run_spec(WORKERS)
    release = release_name(spec.run_id)
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    pods = PodWatch(platform.core, platform.batch, RUN_NAMESPACE, release, log_dir)
    checks: list[tuple[float, float, int]] = []  # wall s, CPU s, pods listed

    def check() -> int:
        wall, cpu = time.monotonic(), time.process_time()
        problem = pods.problem(force=True)
        checks.append((time.monotonic() - wall, time.process_time() - cpu, len(pods.pods)))
        assert problem is None, problem
        return sum(is_running(pod) for pod in pods.pods if pod.metadata.labels["app.kubernetes.io/component"] == "worker")

    start = time.monotonic()
    with installed(platform, spec, tmp_path):
        installed_s = time.monotonic() - start
        while check() < WORKERS:
            assert time.monotonic() - start < SEEN_LIMIT_S, f"not all {WORKERS} workers running after {SEEN_LIMIT_S} s"
            time.sleep(POD_CHECK_INTERVAL_S)
        seen_s = time.monotonic() - start
        assert pods.ready_collector()
        assert {pod.spec.node_name for pod in pods.pods} <= set(CLIENT_NODES)
        parsing: list[float] = []  # the client's own parsing of the same list, CPU s
        for _ in range(5):
            check()
            parsing.append(client_parsing_cpu_s(platform.core, pods.selector))
            time.sleep(POD_CHECK_INTERVAL_S)
        platform._delete_workers = looked_at_after(platform._delete_workers, lambda: simulated.release_pods(release, "worker"), after_delete := [])
        steady = checks[-5:]
        logs_start = time.monotonic()
        pods.save_logs()
        logs_s = time.monotonic() - logs_start
        assert len(list(log_dir.iterdir())) == WORKERS + 1
        cleanup_start = time.monotonic()
    cleanup_s = time.monotonic() - cleanup_start
    left = simulated.release_pods(release)

    wall = sorted(c[0] for c in steady)
    cpu = sorted(c[1] for c in steady)
    parsing.sort()
    print(f"\n{WORKERS} workers on {len(CLIENT_NODES)} simulated nodes:"
          f"\n  helm install (launcher values)       {installed_s:6.1f} s"
          f"\n  all workers running, seen by checks  {seen_s:6.1f} s after the install began ({len(checks)} checks)"
          f"\n  one check at {steady[-1][2]} pods: wall {wall[len(wall) // 2]:.2f} s (max {wall[-1]:.2f}), "
          f"CLI CPU {cpu[len(cpu) // 2]:.2f} s (max {cpu[-1]:.2f}); the client's own parsing {parsing[len(parsing) // 2]:.2f} s"
          f"\n  log collection                       {logs_s:6.1f} s"
          f"\n  cleanup (helm uninstall --wait)      {cleanup_s:6.1f} s, pods left: {len(left)}"
          + "".join(f"\n    {record.getMessage()}" for record in caplog.records if record.getMessage().startswith("cleanup:")))
    assert left == []
    held = [pod.metadata.name for pod in after_delete if pod.metadata.deletion_timestamp is None or JOB_TRACKING_FINALIZER in (pod.metadata.finalizers or [])]
    assert held == [], f"{len(held)} worker pods still running or held by the Job's finalizer after the CLI deleted the workers"
    assert cleanup_s < CLEANUP_LIMIT_S
    assert cpu[len(cpu) // 2] < CHECK_CPU_SHARE_OF_CLIENT_PARSING * parsing[len(parsing) // 2]


def client_parsing_cpu_s(core, selector: str) -> float:
    """CPU seconds of one list of the pods parsed by the kubernetes client itself (its V1Pod models)."""
    start = time.process_time()
    core.list_namespaced_pod(RUN_NAMESPACE, label_selector=selector)
    return time.process_time() - start


def looked_at_after(method, look, seen: list):
    """method, which afterwards puts what look() returns into seen."""
    def wrapped(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        finally:
            seen.extend(look())
    return wrapped
