"""A detached run's report kept whole whatever its size, against a fake of the API server's ConfigMaps
(tests/kubernetes/test_detached_report_size_k8s.py does the same on the real local cluster, with the
chart's Role): the conductor keeps it in the run's spec ConfigMap or, larger than a part, in part
ConfigMaps owned by it, and `attach` reads it back the same."""

from __future__ import annotations

import base64
import copy
from types import SimpleNamespace

import pytest

from iotdb_bench.cli.run.platforms.detached import DetachedRun
from iotdb_bench.simulator.detached.conductor import keep_report
from iotdb_bench.simulator.detached.plan import PART_BYTES, PartsProblem, gzipped
from tests import factories

NAMESPACE, SPEC = "ns", "iotdb-bench-run-1-0-spec"
MEBIBYTE = 1024 * 1024


class FakeConfigMaps:
    """The few ConfigMap calls of the conductor (KubeApi's get, create, merge_patch) and of attach
    (CoreV1Api.read_namespaced_config_map), on a dict; each object held to Kubernetes' 1 MiB."""

    def __init__(self):
        self.maps = {SPEC: {"metadata": {"name": SPEC, "uid": "uid-1", "labels": {"app.kubernetes.io/instance": "iotdb-bench-run-1"}},
                            "data": {"spec.json": "{}"}}}

    def _name(self, path: str) -> str:
        assert path.startswith(f"/api/v1/namespaces/{NAMESPACE}/configmaps/")
        return path.rsplit("/", 1)[1]

    def get(self, path: str) -> dict:
        return copy.deepcopy(self.maps[self._name(path)])

    def merge_patch(self, path: str, patch: dict) -> dict:
        found = self.maps[self._name(path)]
        for key, values in patch.items():
            found.setdefault(key, {}).update(values)
        self._check_size(found)
        return found

    def create(self, path: str, body: dict) -> dict:
        assert path == f"/api/v1/namespaces/{NAMESPACE}/configmaps"
        assert body["metadata"]["name"] not in self.maps
        self._check_size(body)
        self.maps[body["metadata"]["name"]] = copy.deepcopy(body)
        return body

    @staticmethod
    def _check_size(found: dict) -> None:
        held = sum(len(base64.b64decode(value)) for value in found.get("binaryData", {}).values())
        held += sum(len(value) for value in found.get("data", {}).values())
        assert held <= MEBIBYTE, "a ConfigMap holds at most 1 MiB"

    def read_namespaced_config_map(self, name: str, namespace: str, _request_timeout=None):
        found = self.maps[name]
        return SimpleNamespace(data=found.get("data"), binary_data=found.get("binaryData"))


def attach_reads(api: FakeConfigMaps):
    reader = DetachedRun.__new__(DetachedRun)  # attach's reading of a kept report, without its plan
    reader.core, reader.namespace = api, NAMESPACE
    return reader.kept_report(SPEC)


def test_a_fifty_worker_hour_report_is_kept_and_read_back_whole():
    api, report = FakeConfigMaps(), factories.hour_long_report()
    keep_report(api, NAMESPACE, SPEC, report)
    assert attach_reads(api) == report


@pytest.fixture(scope="module")
def larger():
    """A report of 100 workers over 80 minutes, every worker's series kept: more than a ConfigMap holds."""
    return factories.hour_long_report(workers=100, seconds=4800)


def test_a_report_larger_than_a_configmap_is_kept_in_parts_owned_by_the_runs_configmap(larger):
    api, report = FakeConfigMaps(), larger
    assert len(gzipped(report)) > MEBIBYTE  # more than any one ConfigMap holds
    parts = keep_report(api, NAMESPACE, SPEC, report)
    assert parts == -(-len(gzipped(report)) // PART_BYTES) > 2
    for index in range(parts):
        metadata = api.maps[f"{SPEC}-report-{index}"]["metadata"]
        assert metadata["ownerReferences"] == [{"apiVersion": "v1", "kind": "ConfigMap", "name": SPEC, "uid": "uid-1"}]
        assert metadata["labels"]["app.kubernetes.io/instance"] == "iotdb-bench-run-1"
    assert attach_reads(api) == report


def test_a_part_that_changed_is_said_not_read(larger):
    api = FakeConfigMaps()
    keep_report(api, NAMESPACE, SPEC, larger)
    part = api.maps[f"{SPEC}-report-1"]["binaryData"]
    part["part"] = base64.b64encode(b"x" + base64.b64decode(part["part"])[1:]).decode()
    with pytest.raises(PartsProblem, match="do not add up"):
        attach_reads(api)
