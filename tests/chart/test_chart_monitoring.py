"""The chart's side of the collector's Prometheus metrics: the metrics port on the collector's pod and
Service, the prometheus-operator's PodMonitor and ServiceMonitor (off by default) selecting exactly the
collectors, the NetworkPolicy letting a named scraper reach the metrics port and nothing else, and the
Grafana dashboard's ConfigMap.

The prometheus-operator's CRDs are not installed in the local cluster and no package this project can
install carries their schemas in a form the tests can use: the monitors are checked against a schema
written here, a subset of the CRDs' (monitoring.coreos.com/v1) with only the fields the chart renders
and their types and patterns as the CRDs define them, strict about any other field (which the API
server would drop). tests/kubernetes/test_metrics_k8s.py has a real scraper follow the rendered
PodMonitor's selector in the cluster.
"""

from __future__ import annotations

import json

import jsonschema
import kubernetes_validate
import pytest

from tests.scraper import DASHBOARD

KUBERNETES_VERSION = "1.33"
MONITORS = {"monitoring": {"podMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
                           "serviceMonitor": {"enabled": True, "interval": "30s", "scrapeTimeout": "10s"}}}
SCRAPER_NAMESPACE, SCRAPER_LABELS = "monitoring", {"app.kubernetes.io/name": "prometheus"}

# The CRDs' Duration pattern (monitoring.coreos.com/v1).
DURATION = {"type": "string", "pattern": r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"}
LABELS = {"type": "object", "additionalProperties": {"type": "string"}}
LABEL_SELECTOR = {"type": "object", "additionalProperties": False, "properties": {
    "matchLabels": LABELS,
    "matchExpressions": {"type": "array", "items": {"type": "object", "required": ["key", "operator"]}}}}
ENDPOINT = {"type": "object", "additionalProperties": False, "required": ["port"], "properties": {
    "port": {"type": "string", "minLength": 1}, "path": {"type": "string"}, "scheme": {"enum": ["http", "https"]},
    "interval": DURATION, "scrapeTimeout": DURATION, "honorLabels": {"type": "boolean"}}}


def monitor_schema(kind: str, endpoints: str) -> dict:
    return {"type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"], "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"}, "kind": {"const": kind},
        "metadata": {"type": "object", "required": ["name", "namespace"], "properties": {
            "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}, "labels": LABELS}},
        "spec": {"type": "object", "additionalProperties": False, "required": ["selector", endpoints], "properties": {
            "selector": LABEL_SELECTOR, endpoints: {"type": "array", "minItems": 1, "items": ENDPOINT}}}}}


SCHEMAS = {"PodMonitor": monitor_schema("PodMonitor", "podMetricsEndpoints"), "ServiceMonitor": monitor_schema("ServiceMonitor", "endpoints")}


def labels_match(selector: dict, labels: dict) -> bool:
    return selector["matchLabels"].items() <= labels.items()


def pod_labels(objects: list[dict], chart, component: str) -> dict:
    return chart.role(objects, component)["spec"]["template"]["metadata"]["labels"]


def test_no_monitor_and_no_dashboard_by_default_and_the_metrics_port_closed_to_other_pods(render, chart):
    objects = render({})
    assert not [o for o in objects if o["kind"] in SCHEMAS or "dashboard" in o["metadata"]["name"]]
    policy = chart.one(objects, "NetworkPolicy")["spec"]
    assert [port["port"] for rule in policy["ingress"] for port in rule["ports"]] == [8080]


def test_the_monitors_select_the_collector_and_its_metrics_port(render, chart):
    objects = render(MONITORS)
    collector, worker = pod_labels(objects, chart, "collector"), pod_labels(objects, chart, "worker")
    [container] = chart.role(objects, "collector")["spec"]["template"]["spec"]["containers"]
    service = chart.one(objects, "Service")
    for kind in SCHEMAS:
        monitor = chart.one(objects, kind)
        jsonschema.validate(monitor, SCHEMAS[kind])
        assert monitor["metadata"]["namespace"] == chart.namespace
        selector = monitor["spec"]["selector"]
        if kind == "PodMonitor":
            assert labels_match(selector, collector) and not labels_match(selector, worker)
            [endpoint] = monitor["spec"]["podMetricsEndpoints"]
            assert {"name": endpoint["port"], "containerPort": 8081, "protocol": "TCP"} in container["ports"]
            assert endpoint["interval"] == "15s" and "scrapeTimeout" not in endpoint
            assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        else:
            assert labels_match(selector, service["metadata"]["labels"])
            [endpoint] = monitor["spec"]["endpoints"]
            assert {"name": endpoint["port"], "port": 8081, "targetPort": "metrics", "protocol": "TCP"} in service["spec"]["ports"]
            assert (endpoint["interval"], endpoint["scrapeTimeout"]) == ("30s", "10s")
        assert endpoint["path"] == "/metrics"
    for obj in objects:
        if obj["kind"] not in SCHEMAS:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_a_detached_releases_monitor_selects_every_runs_collector(render, chart):
    runs = [{"runId": f"run-0000000{i}", "workers": 1, "spec": f'{{"run_id": "run-0000000{i}"}}'} for i in (1, 2)]
    objects = render({**MONITORS, "runId": "run-0000abcd", "timeoutSeconds": 60,
                      "detached": {"enabled": True, "runs": runs, "runTimeoutSeconds": 30, "deadlineSeconds": 300, "deadline": 1800000000}})
    [monitor] = chart.by_kind(objects, "PodMonitor")
    templates = {name: template["metadata"]["labels"] for name, template in chart.pod_templates(objects)}
    selected = sorted(name for name, labels in templates.items() if labels_match(monitor["spec"]["selector"], labels))
    assert selected == [f"{chart.release}-iotdb-bench-{i}-collector" for i in (0, 1)]


@pytest.mark.parametrize(("scraper", "peer"), [
    ({"namespace": SCRAPER_NAMESPACE, "podLabels": SCRAPER_LABELS},
     {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": SCRAPER_NAMESPACE}}, "podSelector": {"matchLabels": SCRAPER_LABELS}}),
    ({"namespace": SCRAPER_NAMESPACE}, {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": SCRAPER_NAMESPACE}}, "podSelector": {}}),
    ({"podLabels": SCRAPER_LABELS}, {"podSelector": {"matchLabels": SCRAPER_LABELS}}),  # the release's own namespace
], ids=["namespace-and-labels", "a-whole-namespace", "labels-here"])
def test_a_named_scraper_may_reach_the_metrics_port_only(render, chart, scraper, peer):
    objects = render({"monitoring": {"scraper": scraper}})
    policy = chart.one(objects, "NetworkPolicy")
    kubernetes_validate.validate(policy, KUBERNETES_VERSION, strict=True)
    protocol, metrics = policy["spec"]["ingress"]
    assert protocol["ports"] == [{"port": 8080, "protocol": "TCP"}] and peer not in protocol["from"]
    assert metrics == {"from": [peer], "ports": [{"port": 8081, "protocol": "TCP"}]}


def test_the_dashboard_configmap_holds_the_dashboard_with_the_sidecars_label(render, chart):
    objects = render({"monitoring": {"dashboard": {"enabled": True, "namespace": "monitoring", "annotations": {"grafana_folder": "Benchmarks"}}}})
    [config_map] = [o for o in chart.by_kind(objects, "ConfigMap") if o["metadata"]["name"] == "iotdb-bench-dashboard"]
    kubernetes_validate.validate(config_map, KUBERNETES_VERSION, strict=True)
    assert config_map["metadata"]["namespace"] == "monitoring"
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["annotations"] == {"grafana_folder": "Benchmarks"}
    assert json.loads(config_map["data"]["iotdb-bench.json"]) == json.loads(DASHBOARD.read_text())


@pytest.mark.parametrize("monitoring", [
    {"podMonitor": {"enabled": True, "interval": "fifteen seconds"}},
    {"serviceMonitor": {"enabled": True, "scrapeTimeout": "10"}},
    {"scraper": {"namespace": "Not_A_Namespace"}},
    {"podMonitor": {"enabled": True, "selector": {}}},
    {"dashboard": {"enabled": "yes"}},
], ids=["interval", "timeout-without-unit", "namespace", "unknown-key", "not-a-boolean"])
def test_the_values_schema_refuses_bad_monitoring_values(render, chart, monitoring):
    with pytest.raises(chart.HelmError, match="schema"):
        render({"monitoring": monitoring})
