"""The kubernetes platform end to end on a real cluster: helm release per run, pods, results, cleanup.

Every run must leave nothing behind: no release and no object labelled with a run id, whether it
succeeded, failed, timed out or was interrupted.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT, run_cli

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

SMALL_INSERT = ["-w", "1", "-r", "1", "--num-inserts", "2000", "--batch", "1000"]
ENDLESS_INSERT = ["-w", "2", "-r", "1", "--num-inserts", "50000000", "--batch", "1000"]


@pytest.fixture
def bench(cluster, tmp_path):
    """`python run.py COMMAND --config <test config> ARGS` on the kubernetes platform, in a fresh folder."""

    def invoke(command: str, *args: str, target: str = "postgresql", env: dict[str, str] | None = None, timeout: float = 300):
        return run_cli([command, "--config", str(cluster.config), "--target", target, "--platform", "kubernetes", *args],
                       tmp_path, env={**cluster.env, **(env or {})}, timeout=timeout)

    return invoke


def assert_secret_nowhere(cluster, result) -> None:
    saved = [path.read_text(errors="replace") for path in result.cwd.rglob("*") if path.is_file()]
    for text in [result.stdout, result.stderr, *saved]:
        assert cluster.password not in text


class CommandLines(threading.Thread):
    """Samples the command lines of every process on the machine while a run goes on."""

    def __init__(self):
        super().__init__(daemon=True)
        self.seen: set[str] = set()
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.02):
            for path in Path("/proc").glob("[0-9]*/cmdline"):
                with contextlib.suppress(OSError):  # the process ended meanwhile
                    self.seen.add(path.read_bytes().replace(b"\0", b" ").decode(errors="replace"))

    def __enter__(self) -> CommandLines:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.join()


def test_insert_with_steps(cluster, bench):
    with CommandLines() as commands:
        result = bench("insert", "-w", "2", "-r", "1", "--num-inserts", "20000", "--batch", "1000", "--steps", "2")
    assert result.code == 0, result.stderr
    installs = [line for line in commands.seen if " install iotdb-bench-run-" in line]
    assert installs, "the sampler saw no helm install"
    assert not [line for line in commands.seen if cluster.password in line]
    document = result.results()
    assert document["status"] == "ok" and document["platform"] == "kubernetes"
    runs = document["runs"]
    assert [run["step"] for run in runs] == [1, 2]
    for step, run in enumerate(runs):
        check = run["report"]["verification"]
        assert check["ok"] and check["inserted"] == 40_000
        assert check["count_before"] == step * 40_000
        assert check["counted"] == (step + 1) * 40_000
        logs = result.results_folders()[-1] / "logs" / run["report"]["run_id"]
        assert sorted(p.name for p in logs.iterdir()) == ["collector.log", "worker-0.log", "worker-1.log"]
        assert "database prepared" in (logs / "collector.log").read_text()
    assert [row["level"] for row in document["inserts"]] == [0, 40_000]
    assert cluster.count() == 80_000
    assert_secret_nowhere(cluster, result)
    cluster.assert_nothing_left()


def test_query_and_scan(cluster, bench):
    assert bench("insert", *SMALL_INSERT).code == 0  # the queries' data, and its record of expected answers
    rows = cluster.count()
    result = bench("query", "-w", "1", "-r", "2")
    assert result.code == 0, result.stderr
    queries = result.results()["runs"][0]["report"]["queries"]
    assert set(queries) == {"count-events", "temperature-min-max", "temperature-stats", "temperature-stats-per-device", "newest-per-device",
                            "device-downsample"}
    for figures in queries.values():
        # The worker pods read the record of expected answers the collector pod of the insert saved.
        assert figures["executions"] == 2 and figures["errors"] == [] and figures["answer"] == "ok", figures
    assert queries["count-events"]["rows"] == 1
    assert rows > 0
    scan = bench("scan", "-w", "2", "-r", "1")
    assert scan.code == 0, scan.stderr
    assert scan.results()["scans"][0]["check"] == "ok" and scan.results()["scans"][0]["rows"] == rows
    cluster.assert_nothing_left()


def test_failing_worker_stops_the_run_with_its_error(cluster, bench):
    first = bench("insert", *SMALL_INSERT, "--primary-key", "client")
    assert first.code == 0, first.stderr
    # The same client-generated keys again, without cleaning: the workers hit duplicate keys.
    result = bench("insert", *SMALL_INSERT, "--primary-key", "client", "--no-clean")
    assert result.code == 1
    error = result.stderr.strip()
    assert error.startswith("error: worker 0 failed: duplicate key value violates unique constraint"), error
    assert error.endswith(")") and "(logs: results/" in error
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert result.results()["status"] == "failed"
    log = next(result.results_folders()[-1].glob("logs/*/worker-0.log")).read_text()
    assert "duplicate key" in log
    assert cluster.count() == 2000  # the failed run added nothing
    cluster.assert_nothing_left()


def test_ctrl_c_uninstalls_the_release(cluster, tmp_path):
    process = subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "run.py"), "insert", "--config", str(cluster.config), "--target", "postgresql",
         "--platform", "kubernetes", *ENDLESS_INSERT],
        cwd=tmp_path, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A shell's background job ignores SIGINT, and so would Python: give the CLI the default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        wait_for(lambda: any("iotdb-bench" in name for name in cluster.releases()), "the release to be installed", 120)
        wait_for(lambda: cluster.core.list_namespaced_pod(
            cluster.namespace, label_selector="app.kubernetes.io/component=worker").items,
                 "the worker pods", 60)
        process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        _, stderr = process.communicate(timeout=240)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert time.monotonic() - interrupted < 60
    folder = sorted((tmp_path / "results").glob("*"))[-1]
    assert '"status": "interrupted"' in (folder / "results.json").read_text()
    cluster.assert_nothing_left()


def test_timeout_uninstalls_the_release(cluster, bench):
    started = time.monotonic()
    result = bench("insert", *ENDLESS_INSERT, "--timeout", "20")
    assert result.code == 1
    assert "did not finish within --timeout 20 s" in result.stderr
    assert time.monotonic() - started < 90
    assert result.results()["status"] == "failed"
    cluster.assert_nothing_left()


def test_image_that_cannot_be_pulled(cluster, bench):
    repository = cluster.image.rpartition(":")[0]
    result = bench("insert", *SMALL_INSERT, env={"IOTBENCH_IMAGE": f"{repository}:no-such-tag"})
    assert result.code == 1
    assert "ErrImageNeverPull" in result.stderr and f"{repository}:no-such-tag" in result.stderr
    cluster.assert_nothing_left()


def test_unschedulable_workers(cluster, bench):
    result = bench("insert", *SMALL_INSERT, target="postgresql-unschedulable")
    assert result.code == 1
    assert re.search(r"^error: worker \d \(pod iotdb-bench-run-\S+\) cannot be scheduled \(Pending, FailedScheduling\)", result.stderr)
    assert "anti-affinity" in result.stderr
    cluster.assert_nothing_left()


def test_out_of_memory_worker(cluster, bench, tmp_path):
    """Enough memory to start, not for one batch of a million events."""
    values = tmp_path / "small-workers.yaml"
    values.write_text("worker:\n  resources:\n    requests: {cpu: 50m, memory: 64Mi}\n    limits: {memory: 96Mi}\n")
    result = bench("insert", "-w", "1", "-r", "1", "--num-inserts", "1000000", "--batch", "1000000",
                   env={"IOTBENCH_HELM_VALUES": str(values)})
    assert result.code == 1
    assert re.search(r"^error: worker 0 \(pod \S+\) ended with OOMKilled \(exit code 137\): out of memory, its limit is 96Mi",
                     result.stderr), result.stderr
    cluster.assert_nothing_left()


def test_pregenerated_batches_in_a_pod_stay_within_half_its_memory_limit(cluster, bench, tmp_path):
    """--pregenerate in a worker pod: a run that fits stores its events; one whose batches would not fit
    in half the pod's memory limit (read from its cgroup) stops before the start in one line, instead of
    the kernel killing the pod."""
    values = tmp_path / "workers.yaml"
    values.write_text("worker:\n  resources:\n    requests: {cpu: 50m, memory: 64Mi}\n    limits: {memory: 256Mi}\n")
    env = {"IOTBENCH_HELM_VALUES": str(values)}
    fits = bench("insert", "-w", "1", "-r", "1", "--num-inserts", "20000", "--batch", "1000", "--pregenerate", env=env)
    assert fits.code == 0, fits.stderr
    [run] = fits.results()["runs"]
    assert run["report"]["verification"]["ok"] and run["report"]["workers"][0]["pregenerated_bytes"] > 0
    too_many = bench("insert", "-w", "1", "-r", "1", "--num-inserts", "5000000", "--batch", "1000", "--pregenerate", env=env)
    assert too_many.code == 1, too_many.stderr
    assert re.search(r"^error: worker 0 .*--pregenerate: [\d,]+ of this worker's 5,000,000 events already took [\d,]+ MiB, above the 128 MiB "
                     r"a worker may hold", too_many.stderr, re.MULTILINE), too_many.stderr
    assert "OOMKilled" not in too_many.stderr and "Traceback" not in too_many.stderr
    cluster.assert_nothing_left()


def test_keep_leaves_the_release_and_the_secret_stays_out_of_the_configmap(cluster, bench):
    result = bench("insert", *SMALL_INSERT, "--keep")
    assert result.code == 0, result.stderr
    release = f"iotdb-bench-{result.results()['runs'][0]['report']['run_id']}"
    assert f"kept helm release {release}" in result.stderr
    try:
        assert release in cluster.releases()
        spec = cluster.core.read_namespaced_config_map(f"{release}-spec", cluster.namespace).data["spec.json"]
        assert "${E2E_PGPASSWORD}" in spec and cluster.password not in spec
        secret = cluster.core.read_namespaced_secret(f"{release}-env", cluster.namespace)
        assert list(secret.data) == ["E2E_PGPASSWORD"]
    finally:
        cluster.helm("uninstall", release, "--namespace", cluster.namespace, "--wait")
    cluster.assert_nothing_left()


def test_context_option_and_unreachable_cluster(cluster, bench, tmp_path):
    """A kubeconfig whose current context points at nothing: one-line error, exit 2; with --context
    naming the working context, helm and the client both use that one and the run succeeds."""
    kubeconfig = yaml.safe_load(Path(cluster.env["KUBECONFIG"]).read_text())
    working = kubeconfig["current-context"]
    broken_cluster = {**kubeconfig["clusters"][0], "name": "broken"}
    broken_cluster["cluster"] = {**broken_cluster["cluster"], "server": "https://127.0.0.1:1"}
    kubeconfig["clusters"].append(broken_cluster)
    context = next(c for c in kubeconfig["contexts"] if c["name"] == working)
    kubeconfig["contexts"].append({"name": "broken", "context": {**context["context"], "cluster": "broken"}})
    kubeconfig["current-context"] = "broken"
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))

    result = bench("insert", *SMALL_INSERT, env={"KUBECONFIG": str(path)})
    assert result.code == 2
    assert result.stderr.startswith("error: cannot reach the Kubernetes API server at https://127.0.0.1:1")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (result.cwd / "results").exists()  # nothing ran: no (empty) results folder either

    result = bench("insert", *SMALL_INSERT, "--context", working, env={"KUBECONFIG": str(path)})
    assert result.code == 0, result.stderr
    cluster.assert_nothing_left()


def test_missing_port_forward_permission(cluster, bench, tmp_path):
    """An account that may install the chart but not port-forward: the API server's reason, at once."""
    from kubernetes import client

    name, namespace = "iotbench-no-portforward", cluster.namespace
    rbac = client.RbacAuthorizationV1Api(cluster.core.api_client)
    everything_but_portforward = [
        client.V1PolicyRule(api_groups=[""], resources=["pods", "pods/log", "configmaps", "secrets", "services", "events"], verbs=["*"]),
        client.V1PolicyRule(api_groups=["apps", "batch", "networking.k8s.io"], resources=["*"], verbs=["*"]),
    ]
    cluster.core.create_namespaced_service_account(namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=name)))
    try:
        rbac.create_namespaced_role(namespace, client.V1Role(metadata=client.V1ObjectMeta(name=name), rules=everything_but_portforward))
        rbac.create_namespaced_role_binding(namespace, client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name=name),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=name),
            subjects=[client.RbacV1Subject(kind="ServiceAccount", name=name, namespace=namespace)],
        ))
        token = cluster.core.create_namespaced_service_account_token(
            name, namespace, client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=600)),
        ).status.token
        kubeconfig = yaml.safe_load(Path(cluster.env["KUBECONFIG"]).read_text())
        kubeconfig["users"] = [{"name": "limited", "user": {"token": token}}]
        for context in kubeconfig["contexts"]:
            context["context"]["user"] = "limited"
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(kubeconfig))

        result = bench("insert", *SMALL_INSERT, env={"KUBECONFIG": str(path)})
    finally:
        for delete in (rbac.delete_namespaced_role_binding, rbac.delete_namespaced_role, cluster.core.delete_namespaced_service_account):
            with contextlib.suppress(client.ApiException):
                delete(name, namespace)
    assert result.code == 1
    assert "error: cannot port-forward to pod iotdb-bench-run-" in result.stderr
    assert 'cannot get resource "pods/portforward"' in result.stderr
    cluster.assert_nothing_left()


def test_missing_helm_is_a_one_line_error(cluster, bench):
    result = bench("insert", *SMALL_INSERT, env={"PATH": os.path.dirname(sys.executable)})
    assert result.code == 2
    assert result.stderr.strip() == "error: helm not found on PATH; the kubernetes platform needs helm 3"


def wait_for(condition, what: str, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


def test_open_loop_rate_merges_both_latencies_across_pods(cluster, bench):
    result = bench("insert", "-w", "2", "-r", "1", "--batch", "20", "--rate", "2000", "--duration", "3")
    assert result.code == 0, result.stderr
    [run] = result.results()["runs"]
    report = run["report"]
    figures = report["figures"]
    # one service and one response time per call of both pods, merged by the collector
    assert figures["response_latency"]["calls"] == figures["latency"]["calls"] == figures["events"] // 20 > 0
    assert figures["rate"]["target"] == 2000 and abs(figures["throughput"] - 2000) <= 0.05 * 2000, figures["rate"]
    assert len(report["workers"]) == 2 and all(worker["behind_s"] is not None for worker in report["workers"])
    assert "Target/s" in result.stdout
    cluster.assert_nothing_left()
