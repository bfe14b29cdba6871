"""Resource sampling on Kubernetes, beside the run, in the CLI, through the API server only: the
kubelet's Summary API of each node that runs a sampled pod (GET nodes/NODE/proxy/stats/summary),
about once a second. No metrics-server is needed.

- the database: the pods selected by the target's `database_pod_labels` (in every namespace when
  the user may list them there, else in the run's namespace);
- the workers and the collector: the pods of the run's helm release.
Per container: CPU = usageCoreNanoSeconds (cumulative), memory = workingSetBytes (what `kubectl
top` shows), each with the kubelet's own timestamp of the reading. The Summary API reports no disk
writes per pod, so bytes written are not measured on Kubernetes (the data size before and after is
the database's own, read by the collector).

Where a node's Summary API cannot be read and the cluster serves metrics.k8s.io (a metrics-server),
the pods' PodMetrics are read instead: their CPU is a mean rate over the metrics-server's window,
integrated here into CPU seconds, and they refresh only every 15 s or so (the source says so).

Permissions (docs/kubernetes.md, the chart's resourceReader): get nodes/proxy, list pods. Without
them every figure says "not measured" and why; the run itself goes on.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import psutil

from iotdb_bench.simulator.measurement.resources import CPU, MEMORY, WRITTEN, ResourceGroup, ResourceUsage, Sample, Series, summarise

INTERVAL_S = 1.0
API_TIMEOUT_S = 5
POD_LIST_INTERVAL_S = 5.0
# Nodes that run only workers are read a few per reading, in turn: a run of hundreds of workers on
# tens of nodes must not ask every kubelet every second (counters interpolate between readings).
WORKER_NODES_PER_READING = 4
COMPONENT = "app.kubernetes.io/component"
NO_DISK_WRITES = "the kubelet's Summary API reports no disk writes per pod"
STALE_COUNTERS = "the kubelet's CPU counters of these pods did not advance during the timed phase (a cached reading served again)"
RBAC_HINT = "see 'Resource figures' in docs/kubernetes.md (the chart's resourceReader)"


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    node: str | None
    component: str | None
    running: bool
    cpu_limit: float | None = None  # cores: the sum of its containers' CPU limits; None when one has none


def _pods(response) -> list[Pod]:
    """Pods from a list answer read as plain JSON (a thousand worker pods parse in milliseconds, the
    client's models take seconds)."""
    items = json.loads(response.data).get("items") or []
    return [Pod(namespace=item["metadata"]["namespace"], name=item["metadata"]["name"], node=(item.get("spec") or {}).get("nodeName"),
                component=(item["metadata"].get("labels") or {}).get(COMPONENT), running=(item.get("status") or {}).get("phase") == "Running",
                cpu_limit=_cpu_limit(item.get("spec") or {}))
            for item in items]


def _cpu_limit(spec: dict[str, Any]) -> float | None:
    limits = [((container.get("resources") or {}).get("limits") or {}).get("cpu") for container in spec.get("containers") or []]
    if not limits or any(limit is None for limit in limits):
        return None
    return sum(_cores(limit) for limit in limits)


def _cores(quantity: str) -> float:
    from kubernetes.utils import parse_quantity

    return float(parse_quantity(quantity))


def client_capacity(pods: list[Pod], allocatable: dict[str, float | None]) -> float | None:
    """The cores the client's pods could use: on each of their nodes, the sum of their CPU limits when
    every one of them there has one (at most the node's allocatable CPU), else the node's allocatable
    CPU (pods without a limit may take all of it). None when a node's allocatable CPU is needed and
    unknown."""
    by_node: dict[str, list[Pod]] = {}
    for pod in pods:
        if pod.node:
            by_node.setdefault(pod.node, []).append(pod)
    total = 0.0
    for node, on_node in by_node.items():
        limits = [pod.cpu_limit for pod in on_node]
        cores = allocatable.get(node)
        if all(limit is not None for limit in limits):
            limited = sum(limits)
            total += limited if cores is None else min(limited, cores)
        elif cores is None:
            return None
        else:
            total += cores
    return total or None


class KubeletSampler(threading.Thread):
    def __init__(self, core, namespace: str, release_selector: str, database_labels: dict[str, str], metrics=None):
        super().__init__(daemon=True, name="kubelet-sampler")
        self.core, self.namespace, self.release_selector = core, namespace, release_selector
        self.metrics = metrics  # a CustomObjectsApi for metrics.k8s.io; made from `core` when needed
        self.via: dict[str, str] = {}
        self.database_labels = database_labels
        self.series: dict[str, dict[str, Series]] = {"database": {}, "worker": {}, "collector": {}}
        self.problems: dict[str, str] = {}
        self.database_where = ""
        self._pods: dict[str, list[Pod]] = {}
        self._client_pods: dict[str, Pod] = {}  # every worker and collector pod seen during the run
        self._database_nodes: set[str] = set()
        self._allocatable: dict[str, float | None] = {}
        self._listed_at = 0.0
        self._turn = 0
        self._unreadable_nodes: set[str] = set()  # asked once, refused or unreachable: not asked again
        self._cli = psutil.Process()
        self.cli_series = Series(name="the CLI")
        self._wake, self._stopped = threading.Event(), threading.Event()

    def mark(self, edge: str = "") -> None:
        """Read now (either edge of the timed phase: the kubelet's readings are the same)."""
        self._wake.set()

    def run(self) -> None:
        while not self._stopped.is_set():
            self._read()
            self._wake.wait(INTERVAL_S)
            self._wake.clear()

    def stop(self) -> None:
        """The last reading, unless the API is so slow that a reading is still under way: the run's end
        must not wait for the sampler."""
        self._stopped.set()
        self._wake.set()
        self.join(API_TIMEOUT_S)
        if not self.is_alive():
            self._read()

    # -- reading ------------------------------------------------------------------------------
    def _read(self) -> None:
        times = self._cli.cpu_times()
        self.cli_series.add(Sample(at=time.time(), cpu_s=times.user + times.system, memory_bytes=self._cli.memory_info().rss))
        try:
            self._list_pods()
        except Exception as error:  # the sampler never stops a run
            self.problems.setdefault("pods", _reason(error, "list pods"))
            return
        for node in self._nodes_to_read():
            if node in self._unreadable_nodes:  # its Summary API failed once: metrics.k8s.io, if served
                self._pod_metrics(node)
                continue
            try:
                asked_at = time.time()
                summary = self._summary(node)
                answered_at = time.time()
            except Exception as error:
                self.problems.setdefault("summary", _reason(error, f"get nodes/proxy (the kubelet Summary API of node {node})"))
                self._unreadable_nodes.add(node)
                self._pod_metrics(node)
                continue
            self._record(summary, asked_at, answered_at)

    def _nodes_to_read(self) -> list[str]:
        """Every node of the database and the collector; the workers' other nodes a few at a time."""
        always = sorted({pod.node for key in ("database", "collector") for pod in self._pods.get(key, []) if pod.node})
        others = sorted({pod.node for pod in self._pods.get("worker", []) if pod.node} - set(always))
        if len(others) > WORKER_NODES_PER_READING:
            start = self._turn % len(others)
            self._turn += WORKER_NODES_PER_READING
            others = (others[start:] + others[:start])[:WORKER_NODES_PER_READING]
        return always + others

    def _pod_metrics(self, node: str) -> None:
        """The PodMetrics of the sampled pods on `node`, from metrics.k8s.io, where it is served."""
        if self.problems.get("metrics"):
            return
        if self.metrics is None:
            from kubernetes.client import CustomObjectsApi

            self.metrics = CustomObjectsApi(self.core.api_client)
        for group, pods in self._pods.items():
            for pod in pods:
                if pod.node != node:
                    continue
                try:
                    item = self.metrics.get_namespaced_custom_object(
                        "metrics.k8s.io", "v1beta1", pod.namespace, "pods", pod.name, _request_timeout=API_TIMEOUT_S)
                except Exception as error:
                    self.problems["metrics"] = _reason(error, "get pods.metrics.k8s.io")
                    return
                self._record_metrics(group, item)

    def _record_metrics(self, group: str, item: dict[str, Any]) -> None:
        from kubernetes.utils import parse_quantity

        reference = item.get("metadata", {})
        at = _epoch(item.get("timestamp"))
        window = float(str(item.get("window", "0s")).rstrip("s") or 0)
        for container in item.get("containers") or []:
            usage = container.get("usage") or {}
            if "cpu" not in usage:
                continue
            name = f"{reference.get('namespace')}/{reference.get('name')}/{container.get('name')}"
            series = self.series[group].setdefault(name, Series(name=name))
            cores = float(parse_quantity(usage["cpu"]))
            memory = int(parse_quantity(usage["memory"])) if "memory" in usage else None
            last = series.samples[-1] if series.samples else None
            if last is not None and last.at >= at:
                continue
            if last is None:  # the rate covers the window that ends at `at`
                series.add(Sample(at=at - window, cpu_s=0.0, memory_bytes=memory))
                last = series.samples[-1]
            series.add(Sample(at=at, cpu_s=last.cpu_s + cores * (at - last.at), memory_bytes=memory))
            self.via[group] = "metrics.k8s.io (a mean rate over the metrics-server's window, integrated; coarse)"

    def _list_pods(self) -> None:
        if time.monotonic() - self._listed_at < POD_LIST_INTERVAL_S and all(self._pods.get(k) for k in ("worker", "collector")):
            return
        self._listed_at = time.monotonic()
        run = _pods(self.core.list_namespaced_pod(self.namespace, label_selector=self.release_selector, _request_timeout=API_TIMEOUT_S,
                                                  _preload_content=False))
        self._pods["worker"] = [pod for pod in run if pod.component == "worker"]
        self._pods["collector"] = [pod for pod in run if pod.component == "collector"]
        self._client_pods.update((pod.name, pod) for pod in self._pods["worker"] + self._pods["collector"])
        if self.database_labels:
            self._pods["database"] = self._database_pods()
            self._database_nodes.update(pod.node for pod in self._pods["database"] if pod.node)

    def _database_pods(self) -> list[Pod]:
        from kubernetes.client.exceptions import ApiException

        selector = ",".join(f"{key}={value}" for key, value in sorted(self.database_labels.items()))
        options = {"label_selector": selector, "_request_timeout": API_TIMEOUT_S, "_preload_content": False}
        try:
            pods = _pods(self.core.list_pod_for_all_namespaces(**options))
            self.database_where = "in every namespace"
        except ApiException as error:
            if error.status != 403:
                raise
            pods = _pods(self.core.list_namespaced_pod(self.namespace, **options))
            self.database_where = f"in namespace {self.namespace} (the user may not list pods in every namespace)"
        return [pod for pod in pods if pod.running]

    def _summary(self, node: str) -> dict[str, Any]:
        response = self.core.connect_get_node_proxy_with_path(node, "stats/summary", _preload_content=False, _request_timeout=API_TIMEOUT_S)
        return json.loads(response.data)

    def _record(self, summary: dict[str, Any], asked_at: float, answered_at: float) -> None:
        wanted = {(pod.namespace, pod.name): group for group, pods in self._pods.items() for pod in pods}
        for pod in summary.get("pods", []):
            reference = pod.get("podRef", {})
            group = wanted.get((reference.get("namespace"), reference.get("name")))
            if group is None:
                continue
            self.via[group] = "the kubelet Summary API"
            for container in pod.get("containers") or []:
                cpu, memory = container.get("cpu") or {}, container.get("memory") or {}
                if "usageCoreNanoSeconds" not in cpu:
                    continue
                name = f"{reference['namespace']}/{reference['name']}/{container.get('name')}"
                series = self.series[group].setdefault(name, Series(name=name))
                at = _reading_time(_epoch(cpu.get("time")), asked_at, answered_at)
                if series.samples and series.samples[-1].at >= at:
                    continue  # the kubelet has not read the container again since
                series.add(Sample(at=at, cpu_s=cpu["usageCoreNanoSeconds"] / 1e9, memory_bytes=memory.get("workingSetBytes")))

    def _node_cpu(self, node: str) -> float | None:
        """The node's allocatable CPU (cores), read once; None if it cannot be read (the reason kept)."""
        if node not in self._allocatable:
            try:
                response = self.core.read_node(node, _preload_content=False, _request_timeout=API_TIMEOUT_S)
                self._allocatable[node] = _cores(json.loads(response.data)["status"]["allocatable"]["cpu"])
            except Exception as error:
                self.problems.setdefault("nodes", _reason(error, f"get nodes (the allocatable CPU of node {node})"))
                self._allocatable[node] = None
        return self._allocatable[node]

    # -- figures ------------------------------------------------------------------------------
    def usage(self, start: float, end: float) -> ResourceUsage:
        usage = ResourceUsage(
            window_start=start, window_end=end, database=self._database(start, end),
            workers=self._group("worker", "the worker pods", start, end),
            collector=self._group("collector", "the collector pod", start, end),
            cli=summarise("the CLI process", [self.cli_series], start, end, {WRITTEN: "not read for the CLI on Kubernetes"}),
        )
        # The client's share is of what its pods could use (their limits, or their nodes' CPUs); the
        # CLI runs elsewhere (a laptop) and is not part of it.
        pods = list(self._client_pods.values())
        needs_node = {pod.node for pod in pods if pod.node and pod.cpu_limit is None}
        allocatable = {node: self._node_cpu(node) for node in {pod.node for pod in pods if pod.node}} if pods else {}
        usage.client_cores = client_capacity(pods, allocatable)
        usage.client_cores_of = "pods"
        if usage.client_cores is None and needs_node:
            usage.client_cores_unknown = self.problems.get("nodes", "the client pods' nodes were not read")
        client_nodes = {pod.node for pod in pods if pod.node}
        # Shared cores are judged only where the client's pods may take all of their nodes' CPUs.
        usage.database_shares_cores = (usage.database.cpu_s is not None and bool(self._database_nodes)
                                       and self._database_nodes <= client_nodes and all(pod.cpu_limit is None for pod in pods))
        return usage

    def _database(self, start: float, end: float) -> ResourceGroup:
        if not self.database_labels:
            reason = "the target names no database_pod_labels (the labels of the database's pods)"
            return ResourceGroup(source="not measured", not_measured=dict.fromkeys((CPU, MEMORY, WRITTEN), reason))
        selector = ", ".join(f"{key}={value}" for key, value in sorted(self.database_labels.items()))
        if not self.series["database"] and not self.problems and self._pods.get("database") == []:
            reason = f"no running pod has the labels {selector}"
            return ResourceGroup(source="not measured", not_measured=dict.fromkeys((CPU, MEMORY, WRITTEN), reason))
        return self._group("database", f"the pods labelled {selector} {self.database_where}".strip(), start, end)

    def _group(self, key: str, source: str, start: float, end: float) -> ResourceGroup:
        series = list(self.series[key].values())
        problem = "; ".join(self.problems.values()) or None
        missing = {WRITTEN: NO_DISK_WRITES}
        if not series and problem:
            missing.update(dict.fromkeys((CPU, MEMORY), problem))
        group = summarise(f"{source}, from {self.via.get(key, 'the kubelet Summary API')}", series, start, end, missing)
        if group.cpu_s == 0:
            # Running pods of a run always use CPU: a counter that did not move means the kubelet
            # served the same reading again (its stats are cached between housekeeping passes), not
            # an idle pod. Zero would be a wrong figure; say it was not measured.
            group.cpu_s = None
            group.not_measured[CPU] = STALE_COUNTERS
        return group


def _reason(error: Exception, what: str) -> str:
    status = getattr(error, "status", None)
    if status in (401, 403):
        return f"the Kubernetes user may not {what}: forbidden; {RBAC_HINT}"
    return f"could not {what}: {status or type(error).__name__} {getattr(error, 'reason', '') or error}".strip()


def _reading_time(stamp: float, asked_at: float, answered_at: float) -> float:
    """When the kubelet read a container's counters. Its timestamp has whole seconds only (the reading
    lies in [stamp, stamp + 1)); a fresh reading was also taken while we asked, so the reading lies
    where both intervals meet and its middle is the best estimate. A second's error at each end of a
    few-second window would be a third of the CPU figure."""
    earliest, latest = max(stamp, asked_at), min(stamp + 1.0, answered_at)
    return (earliest + latest) / 2 if earliest <= latest else stamp + 0.5


def _epoch(stamp: str | None) -> float:
    from datetime import datetime

    if not stamp:
        return time.time()
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
