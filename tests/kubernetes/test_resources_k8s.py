"""Resource figures on Kubernetes: a PostgreSQL running in a pod of the local cluster (Debian's
packages, scripts/k8s-postgres-image.sh), selected by its labels; its CPU and memory in the results,
the CPU set against the pod's processes read from /proc on the node (this machine) over the same
window. A user without the permission the chart's resourceReader grants gets "not measured" and
why; with it bound (rendered from the chart), the same user gets the figures."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT, run_cli
from tests.integration.test_resources_local import ServerCpu

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

LABELS = {"iotbench-test/database": "resources"}
NAME = "iotbench-resources-pg"
ACCOUNT = "iotbench-resources-limited"
READER = "iotbench-resources-reader-test"
PASSWORD = "resources-test-password"


def _kubectl(cluster, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(["kubectl", *args], env=cluster.env, input=stdin, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def database(cluster, postgres_pod_image):
    """A PostgreSQL pod and Service in the tests' namespace, labelled LABELS."""
    manifest = [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": NAME}, "stringData": {"PGPASSWORD": PASSWORD, "POSTGRES_PASSWORD": PASSWORD}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": NAME, "labels": {**LABELS, "app": NAME}},
         "spec": {"containers": [{
             "name": "postgres", "image": postgres_pod_image, "imagePullPolicy": "Never",
             "envFrom": [{"secretRef": {"name": NAME}}], "ports": [{"containerPort": 5432}],
             "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql"}, {"name": "tmp", "mountPath": "/tmp"}],
             "readinessProbe": {"exec": {"command": ["/usr/lib/postgresql/15/bin/pg_isready", "-h", "/tmp"]}, "periodSeconds": 1},
             "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
         }], "volumes": [{"name": "data", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": NAME},
         "spec": {"selector": {"app": NAME}, "ports": [{"port": 5432, "targetPort": 5432}]}},
    ]
    text = yaml.safe_dump_all(manifest)
    _kubectl(cluster, "apply", "-n", cluster.namespace, "-f", "-", stdin=text)
    _kubectl(cluster, "wait", "-n", cluster.namespace, f"pod/{NAME}", "--for=condition=Ready", "--timeout=120s")
    yield
    _kubectl(cluster, "delete", "-n", cluster.namespace, "--ignore-not-found", "--wait=false", "-f", "-", stdin=text)


@pytest.fixture(scope="module")
def config(cluster, database, tmp_path_factory) -> Path:
    base = yaml.safe_load(cluster.config.read_text())
    base["targets"] = {"postgresql-in-cluster": {
        "module": "postgres",
        "connection_string": f"host={NAME}.{cluster.namespace}.svc.cluster.local port=5432 dbname=postgres user=postgres",
        "password": "${PGPASSWORD}",
        "existing_secret": NAME,
        "database_pod_labels": LABELS,
        "avoid_database_nodes": False,  # one node: the workers share it with the database
    }}
    path = tmp_path_factory.mktemp("resources") / "config.yaml"
    path.write_text(yaml.safe_dump(base))
    return path


def _insert(cluster, config: Path, folder: Path, env: dict[str, str] | None = None, events: int = 150_000):
    return run_cli(["insert", "--config", str(config), "--target", "postgresql-in-cluster", "--platform", "kubernetes",
                    "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", str(events)],
                   folder, env={**cluster.env, **(env or {})}, timeout=600)


def _pod_processes_cpu_reader(cluster, path: Path) -> ServerCpu:
    """The pod's postmaster on this machine (the node), read from /proc like the local test does."""
    uid = cluster.core.read_namespaced_pod(NAME, cluster.namespace).metadata.uid
    needles = (uid, uid.replace("-", "_"))
    candidates = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cgroup = (entry / "cgroup").read_text()
                command = (entry / "cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if any(needle in cgroup for needle in needles) and command.endswith(b"bin/postgres"):
                candidates.append(int(entry.name))
    parents = {pid: int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) for pid in candidates}
    [postmaster] = [pid for pid, parent in parents.items() if parent not in parents]
    return ServerCpu(postmaster, path)


@pytest.mark.plots
def test_database_pod_cpu_and_memory(cluster, config, tmp_path):
    reader = _pod_processes_cpu_reader(cluster, tmp_path / "pod-cpu.txt")
    try:
        result = _insert(cluster, config, tmp_path, events=300_000)
    finally:
        reader.stop()
    assert result.code == 0, result.stderr
    document = result.results()
    usage = document["runs"][0]["report"]["resources"]
    database = usage["database"]
    assert "iotbench-test/database=resources" in database["source"] and "Summary API" in database["source"]
    assert [series["name"] for series in database["series"]] == [f"{cluster.namespace}/{NAME}/postgres"]
    independent = reader.between(usage["window_start"], usage["window_end"])
    print(f"database CPU: tool {database['cpu_s']:.3f} s, pod processes from /proc {independent:.3f} s, "
          f"window {usage['window_end'] - usage['window_start']:.2f} s")
    assert independent > 0.3
    assert database["cpu_s"] == pytest.approx(independent, rel=0.25)
    assert database["memory_peak_bytes"] > 10_000_000
    assert database["written_bytes"] is None and "no disk writes per pod" in database["not_measured"]["written"]
    assert all(worker["cpu_s"] > 0 for worker in document["runs"][0]["report"]["workers"])  # their own rusage, in the pods
    sampled = usage["workers"]  # the worker pods as the kubelet saw them: read, or said why not
    assert sampled["cpu_s"] > 0 if sampled["cpu_s"] is not None else sampled["not_measured"]["cpu"]
    row = document["inserts"][0]["resources"]
    assert row["db_cpu_s_per_million"] > 0 and 0 < row["client_share"] < 1
    # the client's share of what its pods could use: no CPU limits, so the one node's CPUs (this machine's),
    # which the database shares; the CLI (on the "laptop") is not part of it
    import os

    assert usage["client_cores"] == os.cpu_count() and usage["client_cores_of"] == "pods" and usage["database_shares_cores"]
    pods_cpu = sum(worker["cpu_s"] for worker in document["runs"][0]["report"]["workers"]) + row["collector_cpu_s"]
    window = document["runs"][0]["report"]["figures"]["duration_s"]
    assert row["client_machine_share"] == pytest.approx(pods_cpu / (os.cpu_count() * window), rel=1e-6)
    assert 0 < row["client_machine_share"] <= 1 and row["impossible_cpu"] is None
    assert f"of the {os.cpu_count()} cores its pods could use" in " ".join(result.stdout.split())
    assert (result.results_folders()[-1] / "resources.png").is_file()


def _limited_kubeconfig(cluster, folder: Path) -> Path:
    """A kubeconfig of a service account that may do anything in the tests' namespace (helm, pods,
    port-forwards) and nothing outside it: no nodes/proxy."""
    from kubernetes import client

    namespace = cluster.namespace
    rbac = client.RbacAuthorizationV1Api(cluster.core.api_client)
    if not cluster.core.list_namespaced_service_account(namespace, field_selector=f"metadata.name={ACCOUNT}").items:
        cluster.core.create_namespaced_service_account(namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=ACCOUNT)))
    if not rbac.list_namespaced_role_binding(namespace, field_selector=f"metadata.name={ACCOUNT}").items:
        rbac.create_namespaced_role_binding(namespace, client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name=ACCOUNT),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="admin"),
            subjects=[client.RbacV1Subject(kind="ServiceAccount", name=ACCOUNT, namespace=namespace)]))
    token = cluster.core.create_namespaced_service_account_token(
        ACCOUNT, namespace, client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)),
    ).status.token
    admin = yaml.safe_load(Path(cluster.env["KUBECONFIG"]).read_text())
    server = admin["clusters"][0]["cluster"]
    kubeconfig = {
        "apiVersion": "v1", "kind": "Config", "current-context": "limited",
        "clusters": [{"name": "local", "cluster": server}],
        "users": [{"name": ACCOUNT, "user": {"token": token}}],
        "contexts": [{"name": "limited", "context": {"cluster": "local", "user": ACCOUNT, "namespace": namespace}}],
    }
    path = folder / "limited-kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    path.chmod(0o600)
    return path


def test_without_permission_not_measured_and_why_then_with_the_charts_reader(cluster, config, tmp_path):
    limited = _limited_kubeconfig(cluster, tmp_path)
    env = {"KUBECONFIG": str(limited)}
    first = tmp_path / "without"
    first.mkdir()
    result = _insert(cluster, config, first, env, events=20_000)
    assert result.code == 0, result.stderr
    database = result.results()["runs"][0]["report"]["resources"]["database"]
    assert database["cpu_s"] is None and database["memory_peak_bytes"] is None
    reason = database["not_measured"]["cpu"]
    assert "may not get nodes/proxy" in reason and "forbidden" in reason and "docs/kubernetes.md" in reason
    assert "database CPU not measured (the Kubernetes user may not get nodes/proxy" in " ".join(result.stdout.split())
    usage = result.results()["runs"][0]["report"]["resources"]
    assert usage["client_cores"] is None and "may not get nodes" in usage["client_cores_unknown"]  # the nodes' CPUs: not read

    subjects = json.dumps([{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": cluster.namespace}])
    rendered = subprocess.run(
        ["helm", "template", "iotdb-bench", str(REPO_ROOT / "iotdb_bench" / "deployment"), "--show-only", "templates/resource-reader.yaml",
         "--set", "resourceReader.create=true", "--set", f"resourceReader.name={READER}", "--set-json", f"resourceReader.subjects={subjects}"],
        env=cluster.env, capture_output=True, text=True, timeout=60)
    assert rendered.returncode == 0, rendered.stderr
    _kubectl(cluster, "apply", "-f", "-", stdin=rendered.stdout)
    try:
        # The API server's authorizer takes a moment to see the new binding (under load, over 1 s).
        limited_env = {**cluster.env, "KUBECONFIG": str(limited)}
        deadline = time.monotonic() + 60
        while any(subprocess.run(["kubectl", "auth", "can-i", "get", what], env=limited_env, capture_output=True, text=True,
                                 timeout=30).stdout.strip() != "yes" for what in ("nodes", "nodes/proxy")):
            assert time.monotonic() < deadline, "the chart's resource reader gave no get nodes, nodes/proxy within 60 s"
            time.sleep(0.5)
        second = tmp_path / "with"
        second.mkdir()
        result = _insert(cluster, config, second, env, events=150_000)
        assert result.code == 0, result.stderr
        database = result.results()["runs"][0]["report"]["resources"]["database"]
        assert database["cpu_s"] > 0 and database["memory_peak_bytes"] > 0, database["not_measured"]
        assert (result.results()["runs"][0]["report"]["resources"]["client_cores"] or 0) > 0, \
            result.results()["runs"][0]["report"]["resources"]["client_cores_unknown"]  # the chart's reader may get nodes
    finally:
        _kubectl(cluster, "delete", "--ignore-not-found", "-f", "-", stdin=rendered.stdout)

