"""A simulated node to lose under a running worker (tests/kubernetes/test_k8s_faults.py): one KWOK node
(scripts/kwok.sh) of the tests' own, so that the real node is never disturbed.

Pods on a KWOK node do not really run, so a run that loses one is a `-w 1,2` invocation with the
collector on the real node and the workers over the real node and this one (a hard spread over
exactly those two, `placement`): the first run (one worker) completes on the real node while the
node's gate taint keeps it out; the test lifts the gate, and the second run's two workers land one on
each node. Its real worker registers, the collector waits for the other: the CLI follows the run
("1/2 workers ready") when the test takes the node away:

- `stop_kubelet`: the node is deleted and created again at once without KWOK's annotation, so that
  KWOK forgets it (a node whose annotation merely changes keeps its lease and pods handled): its pods
  stay bound to it, and nothing confirms their end when they are deleted, as on a node whose kubelet
  is gone. The test writes the verdict the node controller gives such a node (Ready Unknown, "Kubelet
  stopped posting node status."), at once instead of after the controller's 50 s grace period;
- `drain`: what `kubectl drain` does, a cordon and an eviction of the pod through the Eviction API.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import yaml
from kubernetes.client import CoreV1Api, V1Eviction, V1Node, V1NodeSpec, V1NodeStatus, V1ObjectMeta, V1Pod, V1Taint
from kubernetes.client.exceptions import ApiException

from tests.kubernetes.simulated_nodes import CAPACITY, TAINT, ready, wait_for

NODE = "iotbench-lost-node"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
# Keeps the first run's worker off the simulated node.
GATE = {"key": "iotbench-lost-node/first-run", "value": "real-node", "effect": "NoSchedule"}
SILENT_KUBELET = {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}


@contextmanager
def simulated_node(core: CoreV1Api) -> Iterator[str]:
    """The node, Ready and schedulable but for the gate; deleted afterwards."""
    _delete(core)  # left by a session that was killed
    core.create_node(_node("fake", [TAINT, GATE]))
    try:
        # The node controller lifts its not-ready taint a few seconds after KWOK marks the node Ready.
        wait_for(lambda: ready(core.read_node(NODE)) == "True" and _taint_keys(core.read_node(NODE)) == {TAINT["key"], GATE["key"]},
                 "the simulated node to be Ready and schedulable (is KWOK running? its log: /tmp/iotbench-kwok)", 60)
        yield NODE
    finally:
        _delete(core)


def real_node(core: CoreV1Api) -> str:
    [name] = [node.metadata.name for node in core.list_node().items if KWOK_ANNOTATION not in (node.metadata.annotations or {})]
    return name


def placement(path: Path, nodes: list[str]) -> Path:
    """Values (IOTBENCH_HELM_VALUES): workers on exactly these nodes, evenly (a hard spread); the
    collector on the real node (it does not tolerate KWOK's taint)."""
    path.write_text(yaml.safe_dump({"worker": {
        "tolerations": [{**TAINT, "operator": "Equal"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}]}}},
        "spreadOverNodes": {"enabled": True, "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"},
    }}))
    return path


def lift_gate(core: CoreV1Api) -> None:
    core.patch_node(NODE, {"spec": {"taints": [TAINT]}})


def stop_kubelet(core: CoreV1Api) -> None:
    _delete(core)
    core.create_node(_node("gone", [TAINT]))
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    core.patch_node_status(NODE, {"status": {"conditions": [{**SILENT_KUBELET, "lastHeartbeatTime": now, "lastTransitionTime": now}]}})


def drain(core: CoreV1Api, pod: V1Pod) -> None:
    core.patch_node(NODE, {"spec": {"unschedulable": True}})
    core.create_namespaced_pod_eviction(pod.metadata.name, pod.metadata.namespace, V1Eviction(
        metadata=V1ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace)))


def _node(kwok_annotation: str, taints: list[dict[str, str]]) -> V1Node:
    return V1Node(
        metadata=V1ObjectMeta(name=NODE, annotations={KWOK_ANNOTATION: kwok_annotation}, labels={
            "type": "kwok", "kubernetes.io/hostname": NODE, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}),
        spec=V1NodeSpec(taints=[V1Taint(**taint) for taint in taints]),
        status=V1NodeStatus(allocatable=CAPACITY, capacity=CAPACITY),
    )


def _delete(core: CoreV1Api) -> None:
    try:
        core.delete_node(NODE)
    except ApiException as error:
        if error.status != 404:
            raise
    wait_for(lambda: not core.list_node(field_selector=f"metadata.name={NODE}").items, "the simulated node to be gone", 60)


def _taint_keys(node: V1Node) -> set[str]:
    return {taint.key for taint in node.spec.taints or []}
