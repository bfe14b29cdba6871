"""Tests of the helm chart in deployment/: rendering, Kubernetes schemas, the pod contract,
the restricted Pod Security Standard, labels, credentials and the values schema."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

KUBERNETES_VERSION = "1.33"
RUN_ID_LABEL = "iotdb-bench/run-id"

DEFAULTS: dict = {}
EIGHT_WORKERS = {
    "workers": 8,
    "timeoutSeconds": 1800,
    "runId": "run-8w-20250101",
    "collector": {
        "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "nodeSelector": {"iotdb-bench/role": "client"},
        "tolerations": [{"key": "iotdb-bench/role", "operator": "Equal", "value": "client", "effect": "NoSchedule"}],
    },
    "worker": {
        "resources": {"requests": {"cpu": "1", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
        "nodeSelector": {"iotdb-bench/role": "client"},
        "tolerations": [{"key": "iotdb-bench/role", "operator": "Exists", "effect": "NoSchedule"}],
        "avoidDatabaseNodes": {"enabled": True},
    },
}
EXISTING_SECRET = {"existingSecret": "iotdb-bench-postgresql", "runId": "existing"}
SECRET_ENV = {
    "secretEnv": {"PGPASSWORD": "pw-Zq81-very-secret", "INFLUXDB_TOKEN": "tok-4711-also-secret"},
    "runId": "with-secret",
}
NO_NETWORK_POLICY = {"networkPolicy": {"enabled": False}, "runId": "no-netpol"}

VALUE_SETS = {
    "defaults": DEFAULTS,
    "eight-workers": EIGHT_WORKERS,
    "existing-secret": EXISTING_SECRET,
    "secret-env": SECRET_ENV,
    "no-network-policy": NO_NETWORK_POLICY,
}


@pytest.fixture(params=list(VALUE_SETS), ids=list(VALUE_SETS))
def rendered(request, render):
    values = VALUE_SETS[request.param]
    return values, render(values)


def chart_yaml(chart) -> dict:
    return yaml.safe_load((chart.chart_dir / "Chart.yaml").read_text())


def container(pod_template: dict) -> dict:
    containers = pod_template["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def env_map(c: dict) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in c.get("env", [])}


def fullname(chart) -> str:
    return f"{chart.release}-{chart_yaml(chart)['name']}"


# --- every value set ---------------------------------------------------------------------


def test_objects_validate_against_kubernetes_schemas(rendered):
    _, objects = rendered
    assert objects
    for obj in objects:
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']}: {e.message} at {list(e.path)}")


def test_validator_has_kubernetes_schemas_for_our_version():
    versions = kubernetes_validate.utils.all_versions()
    assert any(v.startswith(KUBERNETES_VERSION + ".") for v in versions), versions


def test_rendered_kinds(rendered, chart):
    values, objects = rendered
    kinds = sorted(o["kind"] for o in objects)
    expected = ["ConfigMap", "Job", "Job", "Service"]
    if values.get("networkPolicy", {}).get("enabled", True):
        expected.append("NetworkPolicy")
    if values.get("secretEnv"):
        expected.append("Secret")
    assert kinds == sorted(expected)
    for obj in objects:
        assert obj["metadata"]["namespace"] == chart.namespace


def test_worker_job_is_indexed(rendered, chart):
    values, objects = rendered
    job = chart.role(objects, "worker")["spec"]
    workers = values.get("workers", 1)
    assert job["completionMode"] == "Indexed"
    assert job["parallelism"] == workers
    assert job["completions"] == workers
    assert job["backoffLimit"] == 0
    assert job["ttlSecondsAfterFinished"] == values.get("ttlSecondsAfterFinished", 600)
    assert job["template"]["spec"]["restartPolicy"] == "Never"
    assert "podFailurePolicy" not in job
    timeout = values.get("timeoutSeconds", 0)
    if timeout > 0:
        assert job["activeDeadlineSeconds"] == timeout
    else:
        assert "activeDeadlineSeconds" not in job


def test_pod_specs_satisfy_restricted_pod_security_standard(rendered, chart):
    _, objects = rendered
    templates = chart.pod_templates(objects)
    assert len(templates) == 2
    for name, template in templates:
        assert chart.restricted_violations(template["spec"]) == [], name
        spec = template["spec"]
        assert spec["securityContext"]["runAsUser"] == 10001
        assert spec["securityContext"]["fsGroup"] == 10001
        assert spec["automountServiceAccountToken"] is False


def test_run_id_and_standard_labels_on_every_object(rendered, chart):
    values, objects = rendered
    run_id = values.get("runId", "manual")
    version = chart_yaml(chart)["appVersion"]
    for obj in objects:
        labels = obj["metadata"]["labels"]
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        assert labels[RUN_ID_LABEL] == run_id, where
        assert labels["app.kubernetes.io/name"] == "iotdb-bench", where
        assert labels["app.kubernetes.io/instance"] == chart.release, where
        assert labels["app.kubernetes.io/version"] == version, where
        assert labels["app.kubernetes.io/managed-by"] == "Helm", where
        assert labels["app.kubernetes.io/part-of"] == "iotdb-bench", where
        assert labels["app.kubernetes.io/component"], where
    components = sorted((o["kind"], o["metadata"]["labels"]["app.kubernetes.io/component"]) for o in objects)
    assert {("Job", "collector"), ("Service", "collector"), ("Job", "worker")} <= set(components)
    for name, template in chart.pod_templates(objects):
        labels = template["metadata"]["labels"]
        assert labels[RUN_ID_LABEL] == run_id, name
        assert labels["app.kubernetes.io/part-of"] == "iotdb-bench", name


def test_both_roles_mount_spec_and_tmp(rendered, chart):
    _, objects = rendered
    for name, template in chart.pod_templates(objects):
        c = container(template)
        mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
        assert mounts["/etc/iotbench"].get("readOnly") is True, name
        volumes = {v["name"]: v for v in template["spec"]["volumes"]}
        assert volumes[mounts["/etc/iotbench"]["name"]]["configMap"]["name"] == f"{fullname(chart)}-spec"
        assert "emptyDir" in volumes[mounts["/tmp"]["name"]], name
        assert env_map(c)["IOTBENCH_SPEC"] == "/etc/iotbench/spec.json", name


# --- the pod contract --------------------------------------------------------------------


def test_collector_job_and_service(render, chart):
    """The collector runs once: a Job without retries (a new collector would prepare the database
    again), with the run's deadline when it has one."""
    objects = render({})
    deployment = chart.role(objects, "collector")
    service = chart.one(objects, "Service")
    name = f"{fullname(chart)}-collector"
    assert deployment["metadata"]["name"] == name
    assert deployment["spec"]["backoffLimit"] == 0 and deployment["spec"]["completions"] == 1
    assert deployment["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert "activeDeadlineSeconds" not in deployment["spec"]
    assert chart.role(render({"timeoutSeconds": 90}), "collector")["spec"]["activeDeadlineSeconds"] == 90
    c = container(deployment["spec"]["template"])
    assert c["args"] == ["collector"]
    env = env_map(c)
    assert env["IOTBENCH_HOST"] == "0.0.0.0"
    assert env["IOTBENCH_PORT"] == "8080" and env["IOTBENCH_METRICS_PORT"] == "8081"
    assert [(p["name"], p["containerPort"]) for p in c["ports"]] == [("http", 8080), ("metrics", 8081)]
    probe = c["readinessProbe"]["httpGet"]
    assert probe["path"] == "/health"
    assert probe["port"] in (8080, "http")

    assert service["metadata"]["name"] == name
    assert service["spec"]["type"] == "ClusterIP"
    assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [(8080, "http"), (8081, "metrics")]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()


def test_worker_contract(render, chart):
    objects = render({})
    job = chart.role(objects, "worker")
    assert job["metadata"]["name"] == f"{fullname(chart)}-worker"
    c = container(job["spec"]["template"])
    assert c["args"] == ["worker"]
    env = env_map(c)
    assert env["IOTBENCH_COLLECTOR_URL"] == f"http://{fullname(chart)}-collector:8080"
    # Kubernetes sets the index itself for Indexed Jobs; the chart must not override it.
    assert "JOB_COMPLETION_INDEX" not in env


def test_image_defaults_to_app_version(render, chart):
    objects = render({})
    app_version = chart_yaml(chart)["appVersion"]
    repository = yaml.safe_load((chart.chart_dir / "values.yaml").read_text())["image"]["repository"]
    for name, template in chart.pod_templates(objects):
        c = container(template)
        assert c["image"] == f"{repository}:{app_version}", name
        assert not c["image"].endswith(":latest")
        assert c["imagePullPolicy"] == "IfNotPresent"
    custom = render({"image": {"repository": "local.test/simulator", "tag": "ci", "pullPolicy": "Never"}})
    for name, template in chart.pod_templates(custom):
        assert container(template)["image"] == "local.test/simulator:ci", name
        assert container(template)["imagePullPolicy"] == "Never", name


def test_spec_is_passed_verbatim_with_set_file(helm_template, chart):
    spec = json.dumps(
        {"target": "postgresql", "workers": 2, "options": {"note": "ä <&> \"quoted\" \\ end"}},
        ensure_ascii=False,
        indent=2,
    ) + "\n"
    objects = helm_template({}, set_files={"spec": spec})
    configmap = chart.one(objects, "ConfigMap")
    assert configmap["data"] == {"spec.json": spec}
    default_spec = chart.one(helm_template({}), "ConfigMap")["data"]["spec.json"]
    assert json.loads(default_spec) == {}


def test_spec_must_be_a_json_object(helm_template, chart):
    with pytest.raises(chart.HelmError, match="spec must be a JSON object"):
        helm_template({}, set_files={"spec": '{"target": '})


# --- credentials ---------------------------------------------------------------------------


def test_secret_env_creates_secret_and_never_reaches_a_configmap(render, chart):
    objects = render(SECRET_ENV)
    secret = chart.one(objects, "Secret")
    decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert decoded == SECRET_ENV["secretEnv"]
    assert "stringData" not in secret

    forbidden = set(SECRET_ENV["secretEnv"].values())
    forbidden |= {base64.b64encode(v.encode()).decode() for v in SECRET_ENV["secretEnv"].values()}
    for configmap in chart.by_kind(objects, "ConfigMap"):
        text = json.dumps(configmap)
        for value in forbidden:
            assert value not in text, f"secret value found in ConfigMap {configmap['metadata']['name']}"
    for name, template in chart.pod_templates(objects):
        c = container(template)
        assert c["envFrom"] == [{"secretRef": {"name": secret["metadata"]["name"]}}], name
        assert not forbidden & set(env_map(c).values()), name


def test_existing_secret_is_referenced_not_created(render, chart):
    objects = render(EXISTING_SECRET)
    assert chart.by_kind(objects, "Secret") == []
    for name, template in chart.pod_templates(objects):
        assert container(template)["envFrom"] == [{"secretRef": {"name": "iotdb-bench-postgresql"}}], name


def test_no_credentials_means_no_env_from(render, chart):
    objects = render({})
    assert chart.by_kind(objects, "Secret") == []
    for name, template in chart.pod_templates(objects):
        assert "envFrom" not in container(template), name


def test_both_secret_sources_are_rejected(render, chart):
    with pytest.raises(chart.HelmError, match="either existingSecret or secretEnv"):
        render({"existingSecret": "x", "secretEnv": {"A": "b"}})


# --- placement -----------------------------------------------------------------------------


def test_placement_values_reach_the_pods(render, chart):
    objects = render(EIGHT_WORKERS)
    collector = chart.role(objects, "collector")["spec"]["template"]
    worker = chart.role(objects, "worker")["spec"]["template"]
    for template, values in ((collector, EIGHT_WORKERS["collector"]), (worker, EIGHT_WORKERS["worker"])):
        assert template["spec"]["nodeSelector"] == values["nodeSelector"]
        assert template["spec"]["tolerations"] == values["tolerations"]
        assert container(template)["resources"] == values["resources"]
    assert "affinity" not in collector["spec"]


def test_workers_avoid_database_nodes(render, chart):
    worker = chart.role(render(EIGHT_WORKERS), "worker")["spec"]["template"]["spec"]
    terms = worker["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == [
        {
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"iotdb-bench/role": "database"}},
            "namespaceSelector": {},
        }
    ]
    custom = {
        "worker": {
            "avoidDatabaseNodes": {
                "enabled": True,
                "labelSelector": {"app.kubernetes.io/name": "postgresql"},
                "namespaces": ["default"],
            },
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "iotdb-bench/role", "operator": "NotIn", "values": ["database"]}]}
                        ]
                    }
                }
            },
        }
    }
    worker = chart.role(render(custom), "worker")["spec"]["template"]["spec"]
    assert "nodeAffinity" in worker["affinity"]
    terms = worker["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == [
        {
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "postgresql"}},
            "namespaces": ["default"],
        }
    ]
    assert "affinity" not in chart.role(render({}), "worker")["spec"]["template"]["spec"]


def test_collector_avoids_database_nodes_on_its_own_setting(render, chart):
    avoid = {"enabled": True, "labelSelector": {"app": "cassandra"}}
    collector = chart.role(render({"collector": {"avoidDatabaseNodes": avoid}}), "collector")["spec"]["template"]["spec"]
    assert collector["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "cassandra"}}, "namespaceSelector": {}}
    ]


def test_workers_spread_over_nodes(render, chart):
    worker = chart.role(render({}), "worker")["spec"]["template"]
    (constraint,) = worker["spec"]["topologySpreadConstraints"]
    assert constraint["topologyKey"] == "kubernetes.io/hostname"
    assert (constraint["maxSkew"], constraint["whenUnsatisfiable"]) == (1, "ScheduleAnyway")
    assert labels_match(constraint["labelSelector"], worker["metadata"]["labels"])
    assert constraint["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "worker"
    off = chart.role(render({"worker": {"spreadOverNodes": {"enabled": False}}}), "worker")["spec"]["template"]["spec"]
    assert "topologySpreadConstraints" not in off


# --- network policy ------------------------------------------------------------------------


def labels_match(selector: dict, labels: dict) -> bool:
    return selector["matchLabels"].items() <= labels.items()


def test_network_policy_admits_only_this_releases_workers(render, chart):
    objects = render({})
    policy = chart.one(objects, "NetworkPolicy")["spec"]
    collector_labels = chart.role(objects, "collector")["spec"]["template"]["metadata"]["labels"]
    worker_labels = chart.role(objects, "worker")["spec"]["template"]["metadata"]["labels"]
    assert labels_match(policy["podSelector"], collector_labels)
    assert not labels_match(policy["podSelector"], worker_labels)
    assert policy["policyTypes"] == ["Ingress"]
    assert len(policy["ingress"]) == 1
    rule = policy["ingress"][0]
    assert rule["ports"] == [{"port": 8080, "protocol": "TCP"}]
    assert len(rule["from"]) == 1
    peer = rule["from"][0]
    assert set(peer) == {"podSelector"}, "only pods of the release's own namespace"
    assert labels_match(peer["podSelector"], worker_labels)
    assert not labels_match(peer["podSelector"], collector_labels)
    assert peer["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] == chart.release


def test_network_policy_can_be_disabled(render, chart):
    assert chart.by_kind(render(NO_NETWORK_POLICY), "NetworkPolicy") == []


# --- names, lint, schema ---------------------------------------------------------------------


def test_long_release_names_give_valid_object_names(helm_template, chart):
    release = "iotdb-bench-" + "x" * 41  # 53 characters
    objects = helm_template({}, release=release)
    for obj in objects:
        name = obj["metadata"]["name"]
        assert len(name) <= 63, name
        assert re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name), name
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_helm_lint_passes(helm, chart, tmp_path):
    chart.run_helm(helm, ["lint", "--strict", str(chart.chart_dir)])
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(EIGHT_WORKERS))
    chart.run_helm(helm, ["lint", "--strict", str(chart.chart_dir), "-f", str(values)])


BAD_VALUES = {
    "workers-zero": {"workers": 0},
    "workers-string": {"workers": "x"},
    "negative-timeout": {"timeoutSeconds": -1},
    "latest-tag": {"image": {"tag": "latest"}},
    "bad-pull-policy": {"image": {"pullPolicy": "Sometimes"}},
    "spec-not-object": {"spec": "[1, 2]"},
    "unknown-key": {"replicas": 3},
    "bad-env-name": {"secretEnv": {"not-an-env-name": "x"}},
    "run-id-not-a-label": {"runId": "has spaces"},
    "empty-run-id": {"runId": ""},
}


@pytest.mark.parametrize("values", list(BAD_VALUES.values()), ids=list(BAD_VALUES))
def test_values_schema_rejects_bad_values(render, chart, values):
    with pytest.raises(chart.HelmError, match="schema"):
        render(values)


def test_values_yaml_satisfies_its_schema(chart):
    schema = json.loads((chart.chart_dir / "values.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    values = yaml.safe_load((chart.chart_dir / "values.yaml").read_text())
    jsonschema.Draft7Validator(schema).validate(values)
    # Every top-level value is described by the schema.
    assert set(values) <= set(schema["properties"])


def test_restricted_check_detects_violations(chart):
    bad_pod = {
        "hostNetwork": True,
        "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        "containers": [
            {
                "name": "c",
                "securityContext": {
                    "privileged": True,
                    "capabilities": {"add": ["SYS_ADMIN"]},
                    "seccompProfile": {"type": "Unconfined"},
                },
                "ports": [{"containerPort": 80, "hostPort": 80}],
            }
        ],
    }
    problems = "\n".join(chart.restricted_violations(bad_pod))
    for expected in (
        "hostNetwork",
        "hostPath",
        "privileged",
        "allowPrivilegeEscalation",
        "drop ALL",
        "SYS_ADMIN",
        "runAsNonRoot",
        "Unconfined",
        "hostPort",
        "readOnlyRootFilesystem",
    ):
        assert expected in problems, expected


def test_chart_files_exist(chart):
    for name in ("Chart.yaml", "values.yaml", "values.schema.json", "templates/_helpers.tpl"):
        assert Path(chart.chart_dir, name).is_file(), name
