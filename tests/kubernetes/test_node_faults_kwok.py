"""A node lost under a running worker (issue 23): the node goes not ready, or it is drained (cordoned,
its pods evicted through the Eviction API, as `kubectl drain` does). The CLI must end in one line
naming the pod and what happened, exit 1, remove the release and everything of the run, keep no
figures for that run and keep the runs before it.

The node is a KWOK node of the test's own (scripts/kwok.sh), so the real node is never disturbed.
Pods on it do not really run, so the invocation is `-w 1,2` with the collector on the real node and
the workers spread over the real node and the simulated one (a hard spread over exactly those two):
the first run (one worker) completes on the real node while a taint of the test keeps the simulated
node out; then the taint goes, and the second run's two workers land one on each node. Its real
worker registers, the collector waits for the other: the CLI is following the run ("1/2 workers
ready") when the test takes the node away.

Not ready: KWOK stops playing the node's stages once its annotation no longer selects it, and the
test writes the verdict the node controller gives a node whose kubelet went silent (Ready Unknown,
"Kubelet stopped posting node status."), at once instead of after the controller's 50 s grace
period. KWOK still removes the node's pods when they are deleted (its pod controller keeps the node),
where pods on a really dead node would stay Terminating.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from kubernetes.client import V1Eviction, V1Namespace, V1Node, V1NodeSpec, V1NodeStatus, V1ObjectMeta, V1Taint
from kubernetes.client.exceptions import ApiException

from tests.conftest import REPO_ROOT
from tests.kubernetes.simulated_nodes import CAPACITY, TAINT, kwok, start_kwok, wait_for

pytestmark = [pytest.mark.kubernetes, pytest.mark.kwok, pytest.mark.slow]

NAMESPACE = "iotbench-node-faults"
NODE = "iotbench-node-faults-0"
MANAGED = {"kwok.x-k8s.io/node": "fake"}
# Keeps the first run's worker off the simulated node; removed once that worker runs.
GATE = {"key": "iotbench-node-faults/first-run", "value": "real-node", "effect": "NoSchedule"}
INSTANCE = "app.kubernetes.io/instance"
COMPONENT = "app.kubernetes.io/component"
RUN = ["insert", "--platform", "kubernetes", "--target", "postgresql", "-w", "1,2", "-r", "1", "--duration", "3", "--batch", "200"]


@pytest.fixture(scope="module")
def kwok_running(cluster):
    started = start_kwok(cluster.env)
    yield
    if started:
        kwok("stop", cluster.env)


@pytest.fixture(scope="module")
def config(cluster, tmp_path_factory) -> Path:
    """The suite's config (the host's PostgreSQL) in a namespace of this module's own."""
    if not cluster.core.list_namespace(field_selector=f"metadata.name={NAMESPACE}").items:
        cluster.core.create_namespace(V1Namespace(metadata=V1ObjectMeta(name=NAMESPACE)))
    document = yaml.safe_load(cluster.config.read_text())
    document["namespace"] = NAMESPACE
    path = tmp_path_factory.mktemp("node-faults") / "config.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.fixture
def node(cluster, kwok_running):
    """The simulated node, Ready and schedulable (but for the gate); removed afterwards."""
    core = cluster.core
    _delete_node(core)  # left by a session that was killed
    core.create_node(V1Node(
        metadata=V1ObjectMeta(name=NODE, annotations=dict(MANAGED), labels={
            "type": "kwok", "kubernetes.io/hostname": NODE, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}),
        spec=V1NodeSpec(taints=[V1Taint(**TAINT), V1Taint(**GATE)]),
        status=V1NodeStatus(allocatable=CAPACITY, capacity=CAPACITY),
    ))
    # The node controller lifts its not-ready taint a few seconds after KWOK marks the node Ready.
    wait_for(lambda: _ready(core.read_node(NODE)) == "True" and _taint_keys(core.read_node(NODE)) == {TAINT["key"], GATE["key"]},
             "the simulated node to be Ready and schedulable (is KWOK running? its log: /tmp/iotbench-kwok)", 60)
    yield NODE
    _delete_node(core)


def _delete_node(core) -> None:
    try:
        core.delete_node(NODE)
    except ApiException as error:
        if error.status != 404:
            raise
    wait_for(lambda: not core.list_node(field_selector=f"metadata.name={NODE}").items, "the simulated node to be gone", 60)


def _ready(node) -> str | None:
    return next((c.status for c in node.status.conditions or [] if c.type == "Ready"), None)


def _taint_keys(node) -> set[str]:
    return {taint.key for taint in node.spec.taints or []}


def real_node(core) -> str:
    [name] = [node.metadata.name for node in core.list_node().items if "kwok.x-k8s.io/node" not in (node.metadata.annotations or {})]
    return name


def placement(path: Path, nodes: list[str]) -> Path:
    """Workers on exactly these nodes, one more per node at most (a hard spread); the collector stays
    on the real node (it does not tolerate KWOK's taint)."""
    path.write_text(yaml.safe_dump({"worker": {
        "tolerations": [{**TAINT, "operator": "Equal"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}]}}},
        "spreadOverNodes": {"enabled": True, "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"},
    }}))
    return path


class Cli:
    """`python run.py ...` in the background, its progress line written out as on a terminal."""

    def __init__(self, cluster, config: Path, cwd: Path, values: Path):
        self.cwd = cwd
        self.out, self.err = (cwd / "stdout.txt").open("w"), (cwd / "stderr.txt").open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "run.py"), *RUN, "--config", str(config)], cwd=cwd,
            env={**cluster.env, "IOTBENCH_HELM_VALUES": str(values), "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1", "COLUMNS": "250"},
            stdout=self.out, stderr=self.err,
        )

    def wait(self, limit_s: float = 180) -> int:
        try:
            return self.process.wait(limit_s)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    @property
    def stdout(self) -> str:
        return _plain((self.cwd / "stdout.txt").read_text(errors="replace"))

    def stderr_lines(self) -> list[str]:
        return [line.strip() for line in _plain((self.cwd / "stderr.txt").read_text(errors="replace")).splitlines() if line.strip()]

    def said(self) -> str:
        state = "running" if self.process.poll() is None else f"exit {self.process.returncode}"
        return f"(CLI {state}) stdout: ...{self.stdout[-1500:]} stderr: {' '.join(self.stderr_lines())[-1500:]}"

    def results(self) -> dict:
        [folder] = sorted((self.cwd / "results").glob("*"))
        return json.loads((folder / "results.json").read_text())


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def workers(cluster) -> list:
    return cluster.core.list_namespaced_pod(NAMESPACE, label_selector=f"iotdb-bench/run-id,{COMPONENT}=worker").items


def second_run_following(cluster, cli: Cli, real: str):
    """Run 1 done on the real node, the gate lifted, run 2 followed with one worker ready: its worker
    on the simulated node."""
    def first_worker_running():
        pods = [pod for pod in workers(cluster) if pod.status.phase == "Running"]
        return pods[0] if len(pods) == 1 else None

    first = wait_for(lambda: cli.process.poll() is not None or first_worker_running(), "the first run's worker to run", 180)
    assert cli.process.poll() is None, cli.said()
    assert first.spec.node_name == real, "the gate taint should have kept the first run's worker on the real node"
    cluster.core.patch_node(NODE, {"spec": {"taints": [TAINT]}})
    wait_for(lambda: cli.process.poll() is not None or "1/2 workers ready" in cli.stdout, "the second run's first worker to be ready", 180)
    assert cli.process.poll() is None, cli.said()
    [simulated] = [pod for pod in workers(cluster) if pod.spec.node_name == NODE]
    return simulated


def assert_ended_with(cluster, cli: Cli, said: str) -> None:
    """Exit 1 with one error line matching `said`; the first run kept with its figures, none of the
    second; no release and nothing of the runs left."""
    assert cli.wait() == 1, cli.said()
    errors = [line for line in cli.stderr_lines() if line.startswith("error:")]
    assert len(errors) == 1, cli.said()
    assert re.search(said, errors[0]), errors[0]
    print(f"\n{errors[0]}")
    document = cli.results()
    assert document["status"] == "failed"
    [kept] = document["runs"]
    assert kept["workers"] == 1 and kept["report"]["verification"]["ok"] and kept["report"]["figures"]["events"] > 0
    assert cluster.helm("list", "--namespace", NAMESPACE, "--all", "--short").split() == []
    wait_for(lambda: not cluster.core.list_namespaced_pod(NAMESPACE, label_selector="iotdb-bench/run-id").items,
             "the run's pods to be gone", 60)


def test_a_node_not_ready_under_a_worker_is_named_and_the_run_removed(cluster, config, node, tmp_path):
    real = real_node(cluster.core)
    cli = Cli(cluster, config, tmp_path, placement(tmp_path / "placement.yaml", [real, node]))
    pod = second_run_following(cluster, cli, real)
    # The kubelet goes silent: KWOK no longer answers for the node, the node controller's verdict.
    cluster.core.patch_node(node, {"metadata": {"annotations": {"kwok.x-k8s.io/node": "silent"}}})
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cluster.core.patch_node_status(node, {"status": {"conditions": [{
        "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status.",
        "lastHeartbeatTime": now, "lastTransitionTime": now}]}})
    name = re.escape(pod.metadata.name)
    assert_ended_with(cluster, cli, rf"^error: worker \d \(pod {name}\)(: node {node} not ready \(NodeStatusUnknown: Kubelet stopped "
                                    rf"posting node status\.\)| was deleted because its node is not ready or unreachable on node {node})")


def test_a_node_drained_under_a_worker_is_named_and_the_run_removed(cluster, config, node, tmp_path):
    """The evicted pod is gone before the CLI looks again: here because the CLI is stopped (SIGSTOP,
    well within the heartbeat timeout) until it is. KWOK removes an evicted pod within a second, and on
    a real node a worker (which exits at SIGTERM) takes about as long, less than the CLI's check
    interval: what the CLI reports must not depend on catching the pod while it terminates."""
    real = real_node(cluster.core)
    cli = Cli(cluster, config, tmp_path, placement(tmp_path / "placement.yaml", [real, node]))
    pod = second_run_following(cluster, cli, real)
    cli.process.send_signal(signal.SIGSTOP)
    try:
        # kubectl drain: cordon, then evict every pod of the node through the Eviction API.
        cluster.core.patch_node(node, {"spec": {"unschedulable": True}})
        cluster.core.create_namespaced_pod_eviction(pod.metadata.name, NAMESPACE, V1Eviction(
            metadata=V1ObjectMeta(name=pod.metadata.name, namespace=NAMESPACE)))
        wait_for(lambda: not cluster.core.list_namespaced_pod(NAMESPACE, field_selector=f"metadata.name={pod.metadata.name}").items,
                 "the evicted pod to be gone", 30)
    finally:
        cli.process.send_signal(signal.SIGCONT)
    name = re.escape(pod.metadata.name)
    assert_ended_with(cluster, cli, rf"^error: worker \d \(pod {name}\) was evicted \(a node drain or the eviction API\) on node {node}")
