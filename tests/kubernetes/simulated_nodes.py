"""Simulated nodes on the local cluster, with KWOK (scripts/kwok.sh): real scheduling, pods that do not run.

Eleven nodes join the cluster: three "database" nodes, each carrying one fake database pod with the
labels a target names in `database_pod_labels`, and eight client nodes. KWOK manages only these
nodes (annotation kwok.x-k8s.io/node=fake): it keeps them Ready, marks their pods Running and
removes deleted pods at once. All of them are tainted, so nothing else on the shared cluster lands
there by accident; the real node is left alone, and a run reaches the simulated nodes only through
the placement values of `PLACEMENT` (nodeSelector type=kwok and the toleration of the taint).
"""

from __future__ import annotations

import secrets
import subprocess
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from kubernetes.client import (
    CoreV1Api,
    V1Container,
    V1Namespace,
    V1Node,
    V1NodeSpec,
    V1NodeStatus,
    V1ObjectMeta,
    V1Pod,
    V1PodSpec,
    V1Taint,
    V1Toleration,
)
from kubernetes.client.exceptions import ApiException

from iotdb_bench.cli.config import Config, Image, Target
from iotdb_bench.cli.run.platforms.kubernetes import KubernetesPlatform, release_name
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import REPO_ROOT

KWOK_SCRIPT = REPO_ROOT / "scripts" / "kwok.sh"
PREFIX = "iotbench-kwok"
RUN_NAMESPACE = PREFIX
DB_NAMESPACE = f"{PREFIX}-db"
POOL_LABEL = f"{PREFIX}/pool"
RACK_LABEL = f"{PREFIX}/rack"
TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
# What a target would name in database_pod_labels; the fake database pods carry it.
DATABASE_POD_LABELS = {"app.kubernetes.io/name": "cassandra-kwok"}
DB_NODES = [f"{PREFIX}-db-{i}" for i in range(3)]
CLIENT_NODES = [f"{PREFIX}-client-{i}" for i in range(8)]
# Rack "a": one database node and four client nodes (for a nodeSelector narrower than the pool).
RACK_A = {DB_NODES[0], *CLIENT_NODES[:4]}
# Large nodes: 1,000 workers with the chart's requests (250m CPU, 256Mi) fit on the eight client nodes.
CAPACITY = {"cpu": "64", "memory": "512Gi", "pods": "250"}
TARGET = "cassandra-kwok"
# The pods never run a container: the image is only a name.
IMAGE = Image(repository="local.test/simulator", tag="kwok", pull_policy="Never")
# The user's placement values (IOTBENCH_HELM_VALUES): only simulated nodes, tainted ones included.
PLACEMENT = {
    role: {"nodeSelector": {"type": "kwok"}, "tolerations": [{**TAINT, "operator": "Equal"}]}
    for role in ("collector", "worker")
}


@dataclass
class SimulatedNodes:
    core: CoreV1Api
    env: dict[str, str]
    db_nodes: list[str] = field(default_factory=lambda: list(DB_NODES))
    client_nodes: list[str] = field(default_factory=lambda: list(CLIENT_NODES))
    namespace: str = RUN_NAMESPACE

    def release_pods(self, release: str, component: str | None = None) -> list[V1Pod]:
        selector = f"app.kubernetes.io/instance={release}" + (f",app.kubernetes.io/component={component}" if component else "")
        return self.core.list_namespaced_pod(self.namespace, label_selector=selector).items

    def database_nodes(self) -> set[str]:
        """Where the scheduler put the fake database pods."""
        pods = self.core.list_namespaced_pod(DB_NAMESPACE, label_selector=_selector(DATABASE_POD_LABELS)).items
        return {pod.spec.node_name for pod in pods}


def config(database_pod_labels: dict[str, str]) -> Config:
    """The tool's config.yaml: one target whose database pods are the fake ones."""
    target = Target(module="postgres", connection_string="host=127.0.0.1 port=5432 dbname=kwok user=kwok",
                    database_pod_labels=database_pod_labels)
    return Config(namespace=RUN_NAMESPACE, image=IMAGE, targets={TARGET: target})


def run_spec(workers: int) -> RunSpec:
    return RunSpec(run_id=f"kwok-{workers}-{secrets.token_hex(3)}", task="insert", target=TARGET, module="postgres",
                   workers=workers)


@contextmanager
def installed(platform: KubernetesPlatform, spec: RunSpec, folder: Path):
    """One run's release, installed as the launcher installs it and always removed by its cleanup."""
    try:
        yield platform.install(spec, timeout=600, folder=folder)
    finally:
        platform.remove(release_name(spec.run_id))


def kwok(command: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(KWOK_SCRIPT), command], env=env, capture_output=True, text=True, timeout=timeout)


def wait_for(condition: Callable[[], object], what: str, limit_s: float, interval_s: float = 0.5):
    deadline = time.monotonic() + limit_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {limit_s:g} s waiting for {what}")
        time.sleep(interval_s)


def is_running(pod: V1Pod) -> bool:
    return pod.status.phase == "Running" and pod.metadata.deletion_timestamp is None


def per_node(pods: list[V1Pod], nodes: list[str]) -> dict[str, int]:
    """Pods per node, the given nodes included when they got none."""
    counts = dict.fromkeys(nodes, 0)
    for pod in pods:
        counts[pod.spec.node_name] = counts.get(pod.spec.node_name, 0) + 1
    return counts


# -- setting up and removing -----------------------------------------------------------------------

def add_nodes_and_databases(core: CoreV1Api) -> None:
    for name in DB_NODES + CLIENT_NODES:
        pool = "database" if name in DB_NODES else "clients"
        labels = {
            "type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            POOL_LABEL: pool, RACK_LABEL: "a" if name in RACK_A else "b",
        }
        core.create_node(V1Node(
            metadata=V1ObjectMeta(name=name, labels=labels, annotations={"kwok.x-k8s.io/node": "fake"}),
            spec=V1NodeSpec(taints=[V1Taint(**TAINT)]),
            status=V1NodeStatus(allocatable=CAPACITY, capacity=CAPACITY),
        ))
    # Ready, and schedulable: the node controller removes its not-ready taint some seconds after the
    # node turns Ready, and pods scheduled in between avoid those nodes (a spread test saw two empty).
    wait_for(lambda: all(ready(node) == "True" and _only_our_taint(node) for node in _nodes(core)) and len(_nodes(core)) == len(DB_NODES + CLIENT_NODES),
             "the simulated nodes to be Ready and schedulable (is KWOK running? see its log in /tmp/iotbench-kwok)", 60)
    _ensure_namespace(core, DB_NAMESPACE)
    for index, node in enumerate(DB_NODES):
        # Placed by the scheduler like a StatefulSet's pod would be (here: one per database node).
        core.create_namespaced_pod(DB_NAMESPACE, V1Pod(
            metadata=V1ObjectMeta(name=f"cassandra-{index}", labels=dict(DATABASE_POD_LABELS)),
            spec=V1PodSpec(
                containers=[V1Container(name="cassandra", image="local.test/fake-cassandra:kwok")],
                node_selector={"kubernetes.io/hostname": node},
                tolerations=[V1Toleration(operator="Equal", **TAINT)],
            ),
        ))
    wait_for(lambda: sum(is_running(pod) for pod in _db_pods(core)) == len(DB_NODES),
             "the fake database pods to run", 60)


def remove_everything(core: CoreV1Api) -> None:
    """The namespaces first (with any release left in them: KWOK removes their pods as soon as they are
    deleted), then the nodes. Runs after failures too."""
    for namespace in (RUN_NAMESPACE, DB_NAMESPACE):
        try:
            core.delete_namespace(namespace)
        except ApiException as error:
            if error.status != 404:
                raise
    wait_for(lambda: not _our_pods_on_simulated_nodes(core), "the pods on the simulated nodes to be gone", 180)
    for node in _nodes(core):
        core.delete_node(node.metadata.name)
    wait_for(lambda: not _nodes(core), "the simulated nodes to be gone", 60)


def _ensure_namespace(core: CoreV1Api, name: str) -> None:
    def terminating() -> bool:
        found = core.list_namespace(field_selector=f"metadata.name={name}").items
        return bool(found) and found[0].status.phase == "Terminating"

    wait_for(lambda: not terminating(), f"namespace {name} of an earlier run to be deleted", 120)
    if not core.list_namespace(field_selector=f"metadata.name={name}").items:
        core.create_namespace(V1Namespace(metadata=V1ObjectMeta(name=name)))


def _nodes(core: CoreV1Api) -> list[V1Node]:
    return core.list_node(label_selector=POOL_LABEL).items


def ready(node: V1Node) -> str | None:
    """The status of the node's Ready condition ("True", "False", "Unknown"), None without one."""
    return next((c.status for c in node.status.conditions or [] if c.type == "Ready"), None)


def _only_our_taint(node: V1Node) -> bool:
    return {taint.key for taint in node.spec.taints or []} <= {TAINT["key"]}


def _db_pods(core: CoreV1Api) -> list[V1Pod]:
    return core.list_namespaced_pod(DB_NAMESPACE, label_selector=_selector(DATABASE_POD_LABELS)).items


def _our_pods_on_simulated_nodes(core: CoreV1Api) -> list[V1Pod]:
    return [pod for namespace in (RUN_NAMESPACE, DB_NAMESPACE) for pod in core.list_namespaced_pod(namespace).items]


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in labels.items())


def start_kwok(env: dict[str, str]) -> bool:
    """Start KWOK (building it on first use); True when it was not running before."""
    started = kwok("status", env).returncode != 0
    done = kwok("start", env, timeout=1800)  # a cold build takes minutes
    said = [line for line in done.stderr.splitlines() if "ERROR:" in line or "once more" in line]
    if done.returncode != 0:
        # The script's own ERROR line first: CI's list of failures shows a message's beginning.
        pytest.fail(f"scripts/kwok.sh start failed: {' '.join(said)[:1500]}\n{done.stderr[-3000:]}")
    if said:  # a start that stalled and was made again: not a failure, but worth seeing
        warnings.warn(f"scripts/kwok.sh start: {' '.join(said)[:1500]}", stacklevel=2)
    return started


def setup(core: CoreV1Api, env: dict[str, str]) -> SimulatedNodes:
    # Leftovers of a session that was killed before it could clean up.
    if _nodes(core) or core.list_namespace(field_selector=f"metadata.name={DB_NAMESPACE}").items:
        remove_everything(core)
    add_nodes_and_databases(core)
    _ensure_namespace(core, RUN_NAMESPACE)
    return SimulatedNodes(core, env)


def values_file(path: Path, values: dict) -> Path:
    path.write_text(yaml.safe_dump(values, sort_keys=False))
    return path
