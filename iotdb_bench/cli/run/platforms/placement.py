"""Where a Kubernetes run ran: the nodes of the database, the collector and the workers (instance
type, zone, kubelet and kernel versions, capacity, labels) and the image with the digest the kubelet
reports. Read from the API once the run is over, while its pods still exist; recorded in the run
report's conditions beside what the collector saw.
"""

from __future__ import annotations

import logging

from kubernetes.client import CoreV1Api, V1Node, V1Pod

from iotdb_bench.simulator.measurement.conditions import Node, Placement, RunConditions

log = logging.getLogger(__name__)

API_TIMEOUT_S = 10
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
ROLE_OF_COMPONENT = {"collector": "collector", "worker": "workers"}


def record(conditions: RunConditions | None, core: CoreV1Api, namespace: str, selector: str,
           database_labels: dict[str, str]) -> RunConditions:
    """The report's conditions with the run's placement added (best effort: never fails a run)."""
    conditions = conditions or RunConditions()
    try:
        pods = core.list_namespaced_pod(namespace, label_selector=selector, _request_timeout=API_TIMEOUT_S).items
        conditions.placement = describe(core, pods, database_labels)
    except Exception as error:  # the figures stand without it; say why it is missing
        conditions.placement = Placement(database=f"placement not read: {type(error).__name__}: {error}")
        log.debug("cannot read the run's placement: %s", error)
    return conditions


def describe(core: CoreV1Api, pods: list[V1Pod], database_labels: dict[str, str]) -> Placement:
    roles: dict[str, list[str]] = {}
    for pod in pods:
        component = (pod.metadata.labels or {}).get("app.kubernetes.io/component", "")
        if pod.spec.node_name and component in ROLE_OF_COMPONENT:
            _add(roles, pod.spec.node_name, ROLE_OF_COMPONENT[component])
    database = _database_nodes(core, database_labels, roles)
    images = sorted({status.image for pod in pods for status in pod.status.container_statuses or [] if status.image})
    digests = sorted({status.image_id for pod in pods for status in pod.status.container_statuses or [] if status.image_id})
    # One list of the nodes rather than a read per node: a run of many workers spans many nodes.
    known = {node.metadata.name: node for node in core.list_node(_request_timeout=API_TIMEOUT_S).items} if roles else {}
    nodes = [_node(known[name], roles[name]) for name in sorted(roles) if name in known]
    return Placement(nodes=nodes, image=", ".join(images) or None, image_digest=", ".join(digests) or None, database=database)


def _database_nodes(core: CoreV1Api, labels: dict[str, str], roles: dict[str, list[str]]) -> str:
    if not labels:
        return "not known: the target names no database_pod_labels (a database outside the cluster, or unlabelled)"
    selector = ",".join(f"{key}={value}" for key, value in sorted(labels.items()))
    pods = core.list_pod_for_all_namespaces(label_selector=selector, _request_timeout=API_TIMEOUT_S).items
    names = sorted({pod.spec.node_name for pod in pods if pod.spec.node_name})
    for name in names:
        _add(roles, name, "database")
    if not names:
        return f"not known: no pod labelled {selector} runs in the cluster"
    return f"the nodes of the pods labelled {selector}"


def _node(node: V1Node, roles: list[str]) -> Node:
    labels = node.metadata.labels or {}
    info = node.status.node_info
    capacity = node.status.capacity or {}
    return Node(
        name=node.metadata.name, roles=roles,
        instance_type=_first(labels, INSTANCE_TYPE_LABELS), zone=_first(labels, ZONE_LABELS),
        architecture=info.architecture if info else labels.get("kubernetes.io/arch"),
        os_image=info.os_image if info else None, kernel=info.kernel_version if info else None,
        kubelet=info.kubelet_version if info else None, container_runtime=info.container_runtime_version if info else None,
        cpu=capacity.get("cpu"), memory=capacity.get("memory"), labels=dict(labels),
    )


def _add(roles: dict[str, list[str]], node: str, role: str) -> None:
    if role not in roles.setdefault(node, []):
        roles[node].append(role)


def _first(labels: dict[str, str], keys: tuple[str, ...]) -> str | None:
    return next((labels[key] for key in keys if labels.get(key)), None)
