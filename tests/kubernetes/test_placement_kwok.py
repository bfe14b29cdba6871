"""Placement on a multi-node cluster, simulated with KWOK: the scheduler's real decisions for the
chart installed exactly as the launcher installs it (its values function and helm path, the user's
placement values file named by IOTBENCH_HELM_VALUES).

Nodes (tests/kubernetes/simulated_nodes.py): three database nodes, each with a fake database pod
labelled as the target's `database_pod_labels` say, and eight client nodes; all tainted and
labelled type=kwok. The placement values select type=kwok and tolerate the taint, so the real node
never gets a pod of these runs, and the database nodes are eligible but for the anti-affinity.
"""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from iotdb_bench.cli.run.platforms.kubernetes import CHART
from tests.conftest import run_cli
from tests.kubernetes.simulated_nodes import (
    CLIENT_NODES,
    DATABASE_POD_LABELS,
    DB_NODES,
    PLACEMENT,
    RACK_A,
    RACK_LABEL,
    RUN_NAMESPACE,
    TARGET,
    config,
    installed,
    is_running,
    per_node,
    run_spec,
    values_file,
    wait_for,
)

pytestmark = [pytest.mark.kubernetes, pytest.mark.kwok, pytest.mark.slow]

SPREAD = yaml.safe_load((CHART / "values.yaml").read_text())["worker"]["spreadOverNodes"]


def placed(simulated, release: str, workers: int):
    """The collector and the workers once all of them run (KWOK marks them Running once scheduled)."""
    def all_running():
        pods = simulated.release_pods(release)
        return pods if len(pods) == workers + 1 and all(is_running(pod) for pod in pods) else None

    pods = wait_for(all_running, f"{workers} workers and the collector to be scheduled and running", 180)
    collector = [pod for pod in pods if pod.metadata.labels["app.kubernetes.io/component"] == "collector"]
    assert len(collector) == 1
    return collector[0], [pod for pod in pods if pod.metadata.labels["app.kubernetes.io/component"] == "worker"]


def show(title: str, collector, workers, nodes: list[str]) -> None:
    """The node assignments, for reading by hand (pytest -s)."""
    print(f"\n{title}: collector on {collector.spec.node_name}")
    for node, count in per_node(workers, nodes).items():
        print(f"  {node:28} {count:3} workers")


def skew(counts: dict[str, int]) -> int:
    return max(counts.values()) - min(counts.values())


@pytest.mark.parametrize("workers", [16, 64])
def test_workers_and_collector_stay_off_database_nodes_and_spread_over_client_nodes(simulated, launcher, tmp_path, workers):
    assert simulated.database_nodes() == set(DB_NODES)
    platform = launcher(PLACEMENT)
    with installed(platform, run_spec(workers), tmp_path) as release:
        collector, worker_pods = placed(simulated, release, workers)
        show(f"{workers} workers", collector, worker_pods, DB_NODES + CLIENT_NODES)
        used = {pod.spec.node_name for pod in worker_pods}
        assert not used & set(DB_NODES), "a worker was placed on a node that hosts a database pod"
        assert collector.spec.node_name in CLIENT_NODES
        # Only simulated nodes (nodeSelector type=kwok), all of them tainted (the toleration was needed).
        assert used <= set(CLIENT_NODES)
        counts = per_node(worker_pods, CLIENT_NODES)
        assert set(counts) == set(CLIENT_NODES)
        assert skew(counts) <= SPREAD["maxSkew"], counts
    assert simulated.release_pods(release) == []


def test_without_database_pod_labels_the_database_nodes_get_workers_too(simulated, launcher, tmp_path):
    """The control for the test above: the database nodes are eligible, only the anti-affinity keeps
    the workers off them; the spread rule then covers all eleven nodes."""
    platform = launcher(PLACEMENT, database_pod_labels={})
    with installed(platform, run_spec(22), tmp_path) as release:
        collector, worker_pods = placed(simulated, release, 22)
        show("22 workers, no database_pod_labels", collector, worker_pods, DB_NODES + CLIENT_NODES)
        counts = per_node(worker_pods, DB_NODES + CLIENT_NODES)
        assert set(counts) == set(DB_NODES + CLIENT_NODES)
        assert skew(counts) <= SPREAD["maxSkew"], counts
        assert sum(counts[node] for node in DB_NODES) >= len(DB_NODES)


def test_node_selector_narrows_the_nodes_and_the_anti_affinity_still_applies(simulated, launcher, tmp_path):
    """Rack a = one database node and four client nodes: the workers go to those four only."""
    narrow = {role: {**values, "nodeSelector": {**values["nodeSelector"], RACK_LABEL: "a"}} for role, values in PLACEMENT.items()}
    platform = launcher(narrow)
    rack_clients = sorted(RACK_A - set(DB_NODES))
    with installed(platform, run_spec(16), tmp_path) as release:
        collector, worker_pods = placed(simulated, release, 16)
        show("16 workers, nodeSelector rack=a", collector, worker_pods, sorted(RACK_A))
        assert collector.spec.node_name in rack_clients
        counts = per_node(worker_pods, rack_clients)
        assert set(counts) == set(rack_clients)
        assert skew(counts) <= SPREAD["maxSkew"], counts


def test_workers_that_cannot_be_placed_are_reported_unschedulable(simulated, tmp_path):
    """The CLI end to end: a nodeSelector that no node satisfies, reported with the scheduler's reason."""
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(config(DATABASE_POD_LABELS).model_dump(mode="json", exclude_none=True)))
    nowhere = {role: {**values, "nodeSelector": {**values["nodeSelector"], RACK_LABEL: "nowhere"}}
               for role, values in PLACEMENT.items()}
    env = {**simulated.env, "IOTBENCH_HELM_VALUES": str(values_file(tmp_path / "nowhere.yaml", nowhere))}
    result = run_cli(["insert", "--config", str(config_file), "--target", TARGET, "--platform", "kubernetes",
                      "-w", "4", "-r", "1", "--num-inserts", "1000"], tmp_path, env=env, timeout=300)
    assert result.code == 1, result.stderr
    error = result.stderr.strip()
    # Both roles select the missing rack; whichever passes the grace period first is reported.
    assert re.search(r"^error: (worker \d+|collector) \(pod iotdb-bench-run-\S+\) cannot be scheduled \(Pending, FailedScheduling\): "
                     r"0/\d+ nodes are available: .*didn't match Pod's node affinity/selector", error), error
    assert "Traceback" not in error
    assert not [name for name in releases(simulated) if "iotdb-bench" in name]
    assert simulated.core.list_namespaced_pod(RUN_NAMESPACE).items == []


def releases(simulated) -> list[str]:
    done = subprocess.run(["helm", "list", "-n", RUN_NAMESPACE, "--all", "--short"], env=simulated.env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()
