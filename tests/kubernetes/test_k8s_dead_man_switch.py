"""A CLI killed with SIGKILL in the middle of a Kubernetes run: within the heartbeat timeout the
workers stop and the database sees no more inserts; the next run in the namespace warns about the
release left behind, `cleanup` removes it. Also: the conditions a Kubernetes run records (nodes,
kubelet, kernel, image digest, server version) against the cluster's and the server's own answers.

In a namespace and a database of its own, so that other suites on the cluster are not touched.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import psycopg
import pytest
import yaml
from kubernetes import client

from tests.conftest import REPO_ROOT, postgres_env, run_cli
from tests.kubernetes.conftest import ROLE

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

NAMESPACE = "iotbench-deadman"
DATABASE = "iotbench_deadman"
HEARTBEAT_S = 10
# The collector looks once a second, a worker hears it at its next progress report (1 s) and stops
# after its current batch; a pod's phase then needs the kubelet's next status update.
STOP_MARGIN_S = 15


@pytest.fixture(scope="module")
def deadman(cluster, tmp_path_factory):
    """The test config pointed at a namespace and a database of this module's own."""
    admin = postgres_env()
    with psycopg.connect(host=admin["PGHOST"], port=admin["PGPORT"], user=admin["PGUSER"], password=admin["PGPASSWORD"],
                         dbname=admin["PGDATABASE"], autocommit=True) as server:
        server.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        server.execute(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
    if not cluster.core.list_namespace(field_selector=f"metadata.name={NAMESPACE}").items:
        cluster.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    config = yaml.safe_load(cluster.config.read_text())
    config["namespace"] = NAMESPACE
    target = config["targets"]["postgresql"]
    target["connection_string"] = target["connection_string"].replace("dbname=iotbench_e2e", f"dbname={DATABASE}")
    path = tmp_path_factory.mktemp("deadman") / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def count(cluster) -> int:
    with psycopg.connect(host=cluster.node_ip, port=5432, user=ROLE, password=cluster.password, dbname=DATABASE,
                         autocommit=True, connect_timeout=5) as db:
        exists = db.execute("SELECT to_regclass('events')").fetchone()[0]
        return db.execute("SELECT count(*) FROM events").fetchone()[0] if exists else 0


def releases(cluster) -> list[str]:
    return cluster.helm("list", "--namespace", NAMESPACE, "--all", "--short").split()


def workers(cluster) -> list:
    return cluster.core.list_namespaced_pod(NAMESPACE, label_selector="app.kubernetes.io/component=worker").items


def wait_for(condition, what: str, limit_s: float, explain=lambda: "") -> float:
    """Seconds until the condition held; fails after limit_s."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        if condition():
            return time.monotonic() - started
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what} {explain()}")


def test_kill_9_of_the_cli_stops_the_run_and_cleanup_removes_it(cluster, deadman, tmp_path):
    output = tmp_path / "cli-output.txt"
    with output.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "run.py"), "insert", "--config", str(deadman), "--target", "postgresql", "--platform", "kubernetes",
             "-w", "2", "-r", "1", "--num-inserts", "50000000", "--batch", "1000", "--heartbeat-timeout", str(HEARTBEAT_S)],
            cwd=tmp_path, env=cluster.env, stdout=sink, stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: len(workers(cluster)) == 2 and count(cluster) > 0, "the workers to insert", 180,
                 lambda: f"the CLI ({'running' if process.poll() is None else f'exit {process.returncode}'}) said: {output.read_text()[-2000:]}")
        before = count(cluster)
        wait_for(lambda: count(cluster) > before, "more inserts", 30)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    killed_at = time.monotonic()
    [release] = releases(cluster)

    # The workers stop within the bound, and the database sees no more inserts.
    wait_for(lambda: all(pod.status.phase in ("Succeeded", "Failed") for pod in workers(cluster)), "the workers to stop",
             HEARTBEAT_S + STOP_MARGIN_S)
    stopped_after = time.monotonic() - killed_at
    assert stopped_after < HEARTBEAT_S + STOP_MARGIN_S
    stored = count(cluster)
    time.sleep(5)
    assert count(cluster) == stored > 0
    logs = [cluster.core.read_namespaced_pod_log(pod.metadata.name, NAMESPACE) for pod in workers(cluster)]
    assert all("the collector stopped the run: run abandoned: the CLI has not asked for the run's status" in log for log in logs)
    assert releases(cluster) == [release]  # still installed: nothing removed it yet
    print(f"workers stopped {stopped_after:.1f} s after kill -9 (heartbeat timeout {HEARTBEAT_S} s); {stored:,} events stored")

    # The next run in the namespace warns about it, and records where it ran.
    wait_for(lambda: time.monotonic() - killed_at > HEARTBEAT_S + 1, "the heartbeat to age", HEARTBEAT_S + 5)
    result = run_cli(["insert", "--config", str(deadman), "--target", "postgresql", "--platform", "kubernetes", "-w", "1", "-r", "1",
                      "--num-inserts", "2000", "--batch", "1000"], tmp_path, env=cluster.env, timeout=300)
    assert result.code == 0, result.stderr
    assert (f"warning: 1 helm release(s) of earlier runs whose CLI is gone are still installed in namespace '{NAMESPACE}' ({release}): "
            f"remove them with: python run.py cleanup --namespace {NAMESPACE}") in " ".join(result.stderr.split())
    assert_kubernetes_conditions(cluster, result.results())

    # cleanup removes it (and only it: the finished run left nothing).
    result = run_cli(["cleanup", "--config", str(deadman)], tmp_path, env=cluster.env, timeout=300)
    assert result.code == 0, result.stderr
    assert release in result.stdout.replace("\n", "").replace("│", "").replace(" ", "") or release[:20] in result.stdout
    assert "CLI gone" in result.stdout and "removed" in result.stdout
    assert releases(cluster) == []
    wait_for(lambda: not cluster.core.list_namespaced_pod(NAMESPACE).items, "the release's pods to go", 60)
    again = run_cli(["cleanup", "--namespace", NAMESPACE, "--config", str(deadman)], tmp_path, env=cluster.env, timeout=120)
    assert again.code == 0 and f"No release of iotdb-bench in namespace '{NAMESPACE}'." in again.stdout


def assert_kubernetes_conditions(cluster, document: dict) -> None:
    conditions = document["runs"][0]["report"]["conditions"]
    recorded_nodes = conditions["placement"]["nodes"]
    assert {role for recorded in recorded_nodes for role in recorded["roles"]} == {"collector", "workers"}
    for recorded in recorded_nodes:
        node = cluster.core.read_node(recorded["name"])
        assert recorded["kubelet"] == node.status.node_info.kubelet_version
        assert recorded["kernel"] == node.status.node_info.kernel_version
        assert recorded["labels"]["kubernetes.io/hostname"] == node.metadata.labels["kubernetes.io/hostname"]
    assert conditions["placement"]["image"].endswith(cluster.image.rpartition("/")[2])
    assert conditions["placement"]["image_digest"]
    with psycopg.connect(host=cluster.node_ip, port=5432, user=ROLE, password=cluster.password, dbname=DATABASE, connect_timeout=5) as db:
        assert conditions["server_version"] == db.execute("SELECT version()").fetchone()[0]
    software = conditions["software"]
    assert software["build"]["commit"].split("-")[0] == subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert software["drivers"]["psycopg"] and software["python"].startswith("3.11")
    assert document["environment"]["options"]["heartbeat_timeout"] == 30
    assert json.dumps(document).count(cluster.password) == 0
