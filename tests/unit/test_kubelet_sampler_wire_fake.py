"""The Kubernetes sampler against fakes of the API server's answers (the kubelet Summary API's JSON
and metrics.k8s.io's PodMetrics, as documented): which containers count for which side, the
kubelet's timestamps, the fallback to metrics.k8s.io and the reasons when nothing can be read. The
real Summary API is exercised on the local cluster by tests/kubernetes/test_resources_k8s.py; no
metrics-server runs there, hence this fake for the fallback."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from kubernetes.client.exceptions import ApiException

from iotdb_bench.cli.run.platforms.kubelet_sampler import KubeletSampler


def pod(name: str, namespace: str = "bench", component: str | None = None, labels: dict | None = None, node: str = "node-1") -> dict:
    labels = dict(labels or {})
    if component:
        labels["app.kubernetes.io/component"] = component
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": {"nodeName": node}, "status": {"phase": "Running"}}


def pod_list(*pods: dict) -> SimpleNamespace:
    """A list answer as the client returns it unparsed (_preload_content=False)."""
    return SimpleNamespace(data=json.dumps({"kind": "PodList", "items": list(pods)}).encode())


class FakeCore:
    def __init__(self, summaries: list[dict] | None, forbid_all_namespaces: bool = False):
        self.summaries, self.forbid_all_namespaces = summaries, forbid_all_namespaces
        self.api_client = None

    def list_namespaced_pod(self, namespace, label_selector, **_):
        if label_selector.startswith("app.kubernetes.io/instance"):
            return pod_list(pod("w0", component="worker"), pod("c", component="collector"))
        return pod_list(pod("pg-0", labels={"role": "db"}))

    def list_pod_for_all_namespaces(self, label_selector, **_):
        if self.forbid_all_namespaces:
            raise ApiException(status=403, reason="Forbidden")
        return pod_list(pod("pg-0", namespace="databases", labels={"role": "db"}))

    def connect_get_node_proxy_with_path(self, node, path, **_):
        if self.summaries is None:
            raise ApiException(status=403, reason="Forbidden")
        return SimpleNamespace(data=json.dumps(self.summaries.pop(0)).encode())


def summary(second: int, db_cpu_s: float, worker_cpu_s: float) -> dict:
    def container(name: str, cpu_s: float, memory: int) -> dict:
        stamp = f"2030-01-01T00:00:{second:02d}Z"
        return {"name": name, "cpu": {"time": stamp, "usageCoreNanoSeconds": int(cpu_s * 1e9)},
                "memory": {"time": stamp, "workingSetBytes": memory}}

    return {"pods": [
        {"podRef": {"name": "pg-0", "namespace": "databases"}, "containers": [container("postgres", db_cpu_s, 300 << 20)]},
        {"podRef": {"name": "w0", "namespace": "bench"}, "containers": [container("worker", worker_cpu_s, 50 << 20)]},
        {"podRef": {"name": "other", "namespace": "bench"}, "containers": [container("x", 99.0, 1)]},
    ]}


EPOCH_2030 = 1893456000.0


def sampler(core, metrics=None) -> KubeletSampler:
    return KubeletSampler(core, "bench", "app.kubernetes.io/instance=iotdb-bench-run-x", {"role": "db"}, metrics=metrics)


def usage_after(readings: list[dict]):
    """The figures over [1.5 s, 3.5 s] after the sampler has read each Summary API answer once."""
    taken = sampler(FakeCore(readings))
    for _ in range(len(readings)):  # each read takes the next answer off the list
        taken._read()
    return taken.usage(EPOCH_2030 + 1.5, EPOCH_2030 + 3.5)


def test_summary_api_readings_per_side():
    # readings stamped with whole seconds count from the middle of their second (0.5, 2.5, 4.5 s)
    usage = usage_after([summary(0, 10.0, 1.0), summary(2, 12.0, 1.5), summary(4, 13.0, 1.6)])
    assert usage.database.cpu_s == pytest.approx(1.5)  # 11.0 at 1.5 s, 12.5 at 3.5 s: interpolated
    assert usage.database.memory_peak_bytes == 300 << 20
    assert "pods labelled role=db in every namespace" in usage.database.source and "Summary API" in usage.database.source
    assert usage.database.written_bytes is None and "no disk writes" in usage.database.not_measured["written"]
    assert usage.workers.cpu_s == pytest.approx(0.3)  # 1.25 at 1 s, 1.55 at 3 s
    assert [series.name for series in usage.database.series] == ["databases/pg-0/postgres"]


def test_pods_of_the_run_namespace_when_all_namespaces_are_forbidden():
    taken = sampler(FakeCore([summary(0, 1.0, 1.0)], forbid_all_namespaces=True))
    taken._read()
    assert "in namespace bench" in taken.database_where


class FakeMetrics:
    def __init__(self, items: list[dict] | None):
        self.items = items

    def get_namespaced_custom_object(self, group, version, namespace, plural, name, **_):
        assert (group, version, plural) == ("metrics.k8s.io", "v1beta1", "pods")
        if self.items is None:
            raise ApiException(status=404, reason="Not Found")
        return {**self.items[0], "metadata": {"name": name, "namespace": namespace}}


def test_metrics_k8s_io_when_the_summary_api_is_forbidden():
    metrics = FakeMetrics([{"timestamp": "2030-01-01T00:00:10Z", "window": "10s",
                            "containers": [{"name": "postgres", "usage": {"cpu": "500m", "memory": "200Mi"}}]}])
    taken = sampler(FakeCore(None), metrics)
    taken._read()
    metrics.items = [{"timestamp": "2030-01-01T00:00:20Z", "window": "10s",
                      "containers": [{"name": "postgres", "usage": {"cpu": "1500000000n", "memory": "210Mi"}}]}]
    taken._read()
    usage = taken.usage(EPOCH_2030 + 5, EPOCH_2030 + 15)
    # 0.5 cores over 0-10 s, 1.5 cores over 10-20 s: 2.5 + 7.5 CPU seconds between 5 and 15 s
    assert usage.database.cpu_s == pytest.approx(10.0)
    assert "metrics.k8s.io" in usage.database.source and usage.database.memory_peak_bytes == 200 * 2**20


def test_nothing_readable_says_why():
    taken = sampler(FakeCore(None), FakeMetrics(None))
    taken._read()
    usage = taken.usage(EPOCH_2030, EPOCH_2030 + 1)
    reason = usage.database.not_measured["cpu"]
    assert usage.database.cpu_s is None and "may not get nodes/proxy" in reason and "forbidden" in reason
    assert "could not get pods.metrics.k8s.io: 404" in reason


def test_no_labels_no_database_figures():
    taken = KubeletSampler(FakeCore([summary(0, 1.0, 1.0)]), "bench", "app.kubernetes.io/instance=x", {})
    taken._read()
    usage = taken.usage(EPOCH_2030, EPOCH_2030 + 1)
    assert "names no database_pod_labels" in usage.database.not_measured["cpu"]


def test_worker_only_nodes_are_read_a_few_at_a_time():
    core = FakeCore([], forbid_all_namespaces=True)
    workers = [pod(f"w{i}", component="worker", node=f"node-{i % 10}") for i in range(100)]
    core.list_namespaced_pod = lambda namespace, label_selector, **_: (
        pod_list(*workers, pod("c", component="collector", node="node-0")) if label_selector.startswith("app.")
        else pod_list(pod("pg-0", labels={"role": "db"}, node="db-node")))
    taken = sampler(core)
    taken._list_pods()
    first, second = taken._nodes_to_read(), taken._nodes_to_read()
    assert first[:2] == ["db-node", "node-0"] and len(first) == 6 and len(second) == 6
    assert set(first[2:]).isdisjoint(second[2:])  # the worker-only nodes take turns


def test_reading_time_meets_the_request_and_the_whole_second():
    from iotdb_bench.cli.run.platforms.kubelet_sampler import _reading_time

    # a fresh reading, stamped 100 (so taken in [100, 101)), asked at 100.6, answered at 100.8
    assert _reading_time(100.0, 100.6, 100.8) == pytest.approx(100.7)
    # the request straddles the second: the reading lies in [100.9, 101)
    assert _reading_time(100.0, 100.9, 101.3) == pytest.approx(100.95)
    # a cached reading, older than the request: the middle of its second
    assert _reading_time(100.0, 103.2, 103.4) == pytest.approx(100.5)


def test_cpu_counters_that_never_advance_are_not_measured_rather_than_zero():
    # The kubelet served the worker's same cumulative CPU reading all along (a cached reading): the
    # pods ran, so 0 CPU seconds would be a wrong figure.
    usage = usage_after([summary(0, 10.0, 1.0), summary(2, 12.0, 1.0), summary(4, 13.0, 1.0)])
    assert usage.workers.cpu_s is None and "did not advance" in usage.workers.not_measured["cpu"]
    assert usage.workers.memory_peak_bytes == 50 << 20  # the other figures stand
    assert usage.database.cpu_s == pytest.approx(1.5) and "cpu" not in usage.database.not_measured
