"""The chart in detached mode (insert --detach): every planned run's Jobs created suspended, a conductor
with a Role limited to the release's own objects by name, and the restricted Pod Security Standard for
every pod of the release."""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

KUBERNETES_VERSION = "1.33"
RUNS = [
    {"runId": "run-00000001", "workers": 1, "spec": '{"run_id": "run-00000001"}', "record": {"label": "1 worker", "workers": 1, "run": 1}},
    {"runId": "run-00000002", "workers": 2, "queryWorkers": 1, "spec": '{"run_id": "run-00000002"}',
     "record": {"label": "2 workers", "workers": 2, "run": 1}},
]
DETACHED = {
    "runId": "run-0000abcd", "timeoutSeconds": 90, "secretEnv": {"PGPASSWORD": "pw-detached-secret"},
    "detached": {"enabled": True, "runs": RUNS, "runTimeoutSeconds": 60, "deadlineSeconds": 420, "deadline": 1800000000,
                 "document": '{"task": "insert"}'},
}


@pytest.fixture
def objects(render):
    return render(DETACHED)


def full(chart) -> str:
    """The release's full name, which every object's name starts with."""
    return f"{chart.release}-iotdb-bench"


def named(objects, kind: str, name_part: str) -> dict:
    [found] = [o for o in objects if o["kind"] == kind and o["metadata"]["name"].endswith(name_part)]
    return found


def test_objects_validate_against_kubernetes_schemas(objects):
    for obj in objects:
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']}: {e.message} at {list(e.path)}")


def test_every_run_has_its_suspended_jobs_service_policy_and_spec(objects, chart):
    jobs = {o["metadata"]["name"]: o for o in chart.by_kind(objects, "Job")}
    for index, run in enumerate(RUNS):
        for role in ("collector", "worker"):
            job = jobs[f"{full(chart)}-{index}-{role}"]
            assert job["spec"]["suspend"] is True
            assert job["spec"]["activeDeadlineSeconds"] == 90
            labels = job["spec"]["template"]["metadata"]["labels"]
            assert labels["iotdb-bench/run-id"] == run["runId"]
        worker = jobs[f"{full(chart)}-{index}-worker"]["spec"]
        assert worker["parallelism"] == run["workers"] + run.get("queryWorkers", 0)
        spec_map = named(objects, "ConfigMap", f"-{index}-spec")
        assert spec_map["data"]["spec.json"] == run["spec"]
        assert spec_map["metadata"]["labels"]["app.kubernetes.io/component"] == "run-spec"
        service = named(objects, "Service", f"-{index}-collector")
        assert service["spec"]["selector"]["iotdb-bench/run-id"] == run["runId"]  # never another run's collector
    assert "suspend" not in jobs[f"{full(chart)}-conductor"]["spec"]
    assert jobs[f"{full(chart)}-conductor"]["spec"]["activeDeadlineSeconds"] == 420
    assert len(jobs) == 2 * len(RUNS) + 1


def test_every_pod_satisfies_the_restricted_standard_and_only_the_conductor_reaches_the_api(objects, chart):
    templates = chart.pod_templates(objects)
    assert len(templates) == 2 * len(RUNS) + 1
    for name, template in templates:
        assert chart.restricted_violations(template["spec"]) == [], name
        if name.endswith("-conductor"):
            assert template["spec"]["automountServiceAccountToken"] is True
            assert template["spec"]["serviceAccountName"] == f"{full(chart)}-conductor"
            assert "envFrom" not in template["spec"]["containers"][0], "the conductor gets no database credentials"
        else:
            assert template["spec"]["automountServiceAccountToken"] is False, name
            assert "serviceAccountName" not in template["spec"], name


def test_the_conductors_role_names_only_the_releases_objects(objects, chart):
    """By name, but for creating a large report's parts (Kubernetes cannot restrict `create` to names)."""
    role = chart.one(objects, "Role")
    jobs = {f"{full(chart)}-{i}-{r}" for i in range(len(RUNS)) for r in ("collector", "worker")}
    rules = [(tuple(rule["apiGroups"]), tuple(rule["resources"]), tuple(rule["verbs"]), set(rule.get("resourceNames", ()))) for rule in role["rules"]]
    assert rules == [
        (("batch",), ("jobs",), ("get", "patch", "delete"), jobs),
        (("",), ("configmaps",), ("get", "patch"), {f"{full(chart)}-{i}-spec" for i in range(len(RUNS))}),
        (("",), ("configmaps",), ("patch",), {f"{full(chart)}-reports"}),
        (("",), ("configmaps",), ("create",), set()),
    ]
    binding = chart.one(objects, "RoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": f"{full(chart)}-conductor", "namespace": chart.namespace}]
    assert chart.by_kind(objects, "ClusterRole") == [] and chart.by_kind(objects, "ClusterRoleBinding") == []


def test_each_collector_admits_its_own_workers_and_the_conductor_only(objects, chart):
    policies = chart.by_kind(objects, "NetworkPolicy")
    assert len(policies) == len(RUNS)
    for index, run in enumerate(RUNS):
        policy = named(objects, "NetworkPolicy", f"-{index}-collector")["spec"]
        peers = [peer["podSelector"]["matchLabels"] for peer in policy["ingress"][0]["from"]]
        assert policy["podSelector"]["matchLabels"]["iotdb-bench/run-id"] == run["runId"]
        assert [peer["app.kubernetes.io/component"] for peer in peers] == ["worker", "conductor"]
        assert peers[0]["iotdb-bench/run-id"] == run["runId"]


def test_the_plan_names_every_runs_objects_in_order(objects, chart):
    spec_map = named(objects, "ConfigMap", f"{full(chart)}-spec")
    assert spec_map["metadata"]["labels"]["iotdb-bench/detached"] == "true"
    assert spec_map["metadata"]["annotations"]["iotdb-bench/deadline"] == "1800000000"
    plan = json.loads(spec_map["data"]["runs.json"])
    assert plan["namespace"] == chart.namespace and plan["reports"] == f"{full(chart)}-reports"
    assert plan["runTimeoutSeconds"] == 60
    assert [(run["runId"], run["collectorJob"], run["workerJob"], run["specConfigMap"], run["record"]["label"]) for run in plan["runs"]] == [
        (r["runId"], f"{full(chart)}-{i}-collector", f"{full(chart)}-{i}-worker", f"{full(chart)}-{i}-spec", r["record"]["label"])
        for i, r in enumerate(RUNS)]
    assert plan["runs"][1]["collectorUrl"] == f"http://{full(chart)}-1-collector:8080"
    assert spec_map["data"]["document.json"] == DETACHED["detached"]["document"]
    assert "pw-detached-secret" not in json.dumps([o for o in objects if o["kind"] != "Secret"])


def test_attached_releases_have_no_conductor(render, chart):
    objects = render({})
    assert chart.by_kind(objects, "Role") == [] and chart.by_kind(objects, "ServiceAccount") == []
    assert all("suspend" not in job["spec"] for job in chart.by_kind(objects, "Job"))
