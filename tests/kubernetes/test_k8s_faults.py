"""The faults a long run meets on a real cluster, injected at a random moment of a run of a few tens of
seconds (issue 23): the connection to the API server cut (the port-forward with it) or the API server
restarted, the CLI suspended (a laptop asleep), the collector or a worker pod deleted or evicted, a
worker's node not ready or drained (a KWOK node: tests/kubernetes/lost_node.py).

What must hold: a fault that can be survived is (the figures exact: the database's own row count
against them); one that cannot ends the run in one line naming what happened, without figures for
that run, with the runs before it kept; the release is removed, or the command fails and says so;
nothing of the run keeps running.

The connection is cut with tests/tcp_link.py, a relay to the real API server between the
CLI and the cluster, so that nothing else using the cluster is disturbed; one test restarts the real
kube-apiserver. In a namespace and a database of this module's own.
"""

from __future__ import annotations

import json
import random
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
import pytest
import yaml
from kubernetes import client

from tests.conftest import REPO_ROOT, postgres_env, run_cli
from tests.kubernetes import lost_node, simulated_nodes
from tests.kubernetes.conftest import KUBECONFIG, ROLE
from tests.tcp_link import ApiLink

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

NAMESPACE = "iotbench-faults"
DATABASE = FAULTS_ROLE = "iotbench_faults"
FAULTS_PASSWORD = f"faults-{secrets.token_hex(8)}"
HEARTBEAT_S = 8
RUN = ["insert", "--platform", "kubernetes", "-r", "1", "--batch", "200"]
K8S_STATE = KUBECONFIG.parent


@pytest.fixture(scope="module")
def faults(cluster, tmp_path_factory) -> Path:
    """The test config pointed at this module's namespace and database."""
    admin = postgres_env()
    with psycopg.connect(host=admin["PGHOST"], port=admin["PGPORT"], user=admin["PGUSER"], password=admin["PGPASSWORD"],
                         dbname=admin["PGDATABASE"], autocommit=True) as server:
        # A role of its own too: other suites (and other checkouts' CI) set the shared role's password.
        exists = server.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (FAULTS_ROLE,)).fetchone()
        server.execute(f"{'ALTER' if exists else 'CREATE'} ROLE {FAULTS_ROLE} LOGIN PASSWORD '{FAULTS_PASSWORD}'")
        server.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        server.execute(f"CREATE DATABASE {DATABASE} OWNER {FAULTS_ROLE}")
    if not cluster.core.list_namespace(field_selector=f"metadata.name={NAMESPACE}").items:
        cluster.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    config = yaml.safe_load(cluster.config.read_text())
    config["namespace"] = NAMESPACE
    target = config["targets"]["postgresql"]
    target["connection_string"] = target["connection_string"].replace("dbname=iotbench_e2e", f"dbname={DATABASE}").replace(
        f"user={ROLE}", f"user={FAULTS_ROLE}")
    target["password"] = "${FAULTS_PGPASSWORD}"
    path = tmp_path_factory.mktemp("faults") / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.fixture
def link(tmp_path):
    relay = ApiLink(KUBECONFIG, tmp_path)
    yield relay
    relay.close()


class Cli:
    """`python run.py ...` in the background, as a terminal shows it: rich is told the output is one, so
    the progress line (what the CLI says while it reconnects or waits) is written out as it changes."""

    def __init__(self, cluster, config: Path, args: list[str], cwd: Path, **env: str):
        if "--target" not in args:
            args = ["--target", "postgresql", *args]
            empty_database(cluster)
        self.cwd = cwd
        with (cwd / "stdout.txt").open("w") as out, (cwd / "stderr.txt").open("w") as err:  # the CLI has its own copies
            self.process = subprocess.Popen(
                [sys.executable, str(REPO_ROOT / "run.py"), *RUN, "--config", str(config), *args], cwd=cwd,
                env={**cluster.env, "FAULTS_PGPASSWORD": FAULTS_PASSWORD, "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1", "COLUMNS": "250", **env},
                stdout=out, stderr=err,
            )

    def wait(self, limit_s: float = 300) -> int:
        try:
            return self.process.wait(limit_s)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    @property
    def stdout(self) -> str:
        return plain((self.cwd / "stdout.txt").read_text(errors="replace"))

    @property
    def stderr(self) -> str:
        return " ".join(self.stderr_lines())

    def stderr_lines(self) -> list[str]:
        return [line.strip() for line in plain((self.cwd / "stderr.txt").read_text(errors="replace")).splitlines()]

    def said(self) -> str:
        state = "running" if self.process.poll() is None else f"exit {self.process.returncode}"
        return f"(CLI {state}) stdout: ...{self.stdout[-1500:]} stderr: {self.stderr[-1500:]}"

    def results(self) -> dict:
        [folder] = sorted((self.cwd / "results").glob("*"))
        return json.loads((folder / "results.json").read_text())


def plain(text: str) -> str:
    """Without the terminal's colours and cursor movements."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def count(cluster) -> int:
    with psycopg.connect(host=cluster.node_ip, port=5432, user=FAULTS_ROLE, password=FAULTS_PASSWORD, dbname=DATABASE,
                         autocommit=True, connect_timeout=5) as db:
        try:
            return db.execute("SELECT count(*) FROM events").fetchone()[0]
        except psycopg.errors.UndefinedTable:  # not there yet, or dropped by the next run's clean a moment ago
            return 0


def empty_database(cluster) -> None:
    with psycopg.connect(host=cluster.node_ip, port=5432, user=FAULTS_ROLE, password=FAULTS_PASSWORD, dbname=DATABASE,
                         autocommit=True, connect_timeout=5) as db:
        db.execute("DROP TABLE IF EXISTS events")


def wait_for(condition, what: str, limit_s: float, explain=lambda: "") -> float:
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        if condition():
            return time.monotonic() - started
        time.sleep(0.3)
    pytest.fail(f"timed out waiting for {what} {explain()}")


def run_pods(cluster, component: str | None = None) -> list:
    selector = "iotdb-bench/run-id" + (f",app.kubernetes.io/component={component}" if component else "")
    return cluster.core.list_namespaced_pod(NAMESPACE, label_selector=selector).items


def wait_until_inserting(cluster, cli: Cli, then_up_to_s: float = 6.0) -> None:
    """Until the timed phase runs (the database grows from one look to the next: rows a run before
    left, until this run's collector cleans the table, are no sign of it), then a random moment of it
    (1 s to `then_up_to_s` in)."""
    seen = [count(cluster)]

    def growing() -> bool:
        now, before = count(cluster), seen[0]
        seen[0] = now
        return cli.process.poll() is None and now > before

    wait_for(growing, "the workers to insert", 240, cli.said)
    time.sleep(random.uniform(1.0, then_up_to_s))


def releases(cluster) -> list[str]:
    return cluster.helm("list", "--namespace", NAMESPACE, "--all", "--short").split()


def assert_nothing_left(cluster) -> None:
    """No release in the namespace and, after a bounded wait for deletions under way, no object of a run
    (what `kubectl get all` would show, and the run's ConfigMaps and Secrets)."""
    assert releases(cluster) == []

    def objects() -> list[str]:
        found = []
        for kind, lister in (("pod", cluster.core.list_namespaced_pod), ("service", cluster.core.list_namespaced_service),
                             ("configmap", cluster.core.list_namespaced_config_map), ("secret", cluster.core.list_namespaced_secret),
                             ("job", cluster.batch.list_namespaced_job)):
            found += [f"{kind}/{item.metadata.name}" for item in lister(NAMESPACE, label_selector="iotdb-bench/run-id").items]
        return found

    wait_for(lambda: not objects(), "the run's objects to go", 60, lambda: str(objects()))


def assert_exact(cluster, cli: Cli) -> dict:
    """The run finished, its count check passed, and the database's own count agrees with its figures."""
    assert cli.process.returncode == 0, cli.said()
    [run] = cli.results()["runs"]
    report = run["report"]
    check = report["verification"]
    assert check["ok"] and check["count_before"] == 0 and check["counted"] == check["expected"] == report["figures"]["events"] > 0, check
    assert count(cluster) == report["figures"]["events"]
    return report


def assert_stopped_without_figures(cluster, cli: Cli, runs_kept: int = 0) -> None:
    """Exit 1 with one line; no figures of the failed run; the database stops growing; nothing left."""
    assert cli.process.returncode == 1, cli.said()
    errors = [line for line in cli.stderr_lines() if line.startswith("error:")]
    assert len(errors) == 1, cli.said()
    document = cli.results()
    assert document["status"] == "failed" and len(document["runs"]) == runs_kept
    stored = count(cluster)
    time.sleep(2)
    assert count(cluster) == stored
    assert_nothing_left(cluster)


# -- the connection to the API server ----------------------------------------------------------------

def test_a_cut_connection_to_the_api_server_is_survived_with_exact_figures(cluster, faults, link, tmp_path):
    cli = Cli(cluster, faults, ["-w", "2", "--duration", "20", "--heartbeat-timeout", "20"], tmp_path, KUBECONFIG=str(link.kubeconfig))
    wait_until_inserting(cluster, cli)
    away_s = random.uniform(3.0, 8.0)
    link.cut()
    time.sleep(away_s)
    link.restore()
    cli.wait()
    assert link.refused > 0  # the CLI did try while it was cut off
    assert "reconnecting to the collector" in cli.stdout, cli.said()
    report = assert_exact(cluster, cli)
    print(f"cut for {away_s:.1f} s: {report['figures']['events']:,} events, counted {report['verification']['counted']:,}")
    assert_nothing_left(cluster)


def test_an_api_server_away_longer_than_the_heartbeat_stops_the_run_and_cleanup_waits_for_it(cluster, faults, link, tmp_path):
    cli = Cli(cluster, faults, ["-w", "2", "--duration", "60", "--heartbeat-timeout", str(HEARTBEAT_S)], tmp_path,
              KUBECONFIG=str(link.kubeconfig), IOTBENCH_API_WAIT="120")
    wait_until_inserting(cluster, cli)
    link.cut()
    time.sleep(HEARTBEAT_S + 10)
    assert cli.process.poll() is None, cli.said()  # still waiting to clean up
    link.restore()
    cli.wait()
    assert re.search(r"error: lost contact with the (collector|Kubernetes API) for \d+ s \(.*\), longer than the heartbeat timeout "
                     rf"\({HEARTBEAT_S} s\): the run stops by its dead-man switch", cli.stderr), cli.said()
    assert "cleaning up: waiting for the Kubernetes API server" in cli.stdout, cli.said()
    assert_stopped_without_figures(cluster, cli)


def test_an_api_server_that_stays_away_fails_the_command_and_the_run_ends_by_itself(cluster, faults, link, tmp_path):
    cli = Cli(cluster, faults, ["-w", "2", "--duration", "60", "--heartbeat-timeout", str(HEARTBEAT_S)], tmp_path,
              KUBECONFIG=str(link.kubeconfig), IOTBENCH_API_WAIT="4")
    wait_until_inserting(cluster, cli)
    [release] = releases(cluster)
    link.cut()
    assert cli.wait(HEARTBEAT_S + 60) == 1, cli.said()
    assert re.search(rf"release {release} was not removed: the Kubernetes API server at https://127.0.0.1:\d+ stayed unreachable "
                     rf"\(\d+ s: .*\); its pods stop by themselves \(dead-man switch\); remove it with: python run.py cleanup "
                     rf"--namespace {NAMESPACE}", cli.stderr), cli.said()
    assert releases(cluster) == [release]
    # Nothing keeps running: the workers stop, the collector ends once nobody asks about the run.
    wait_for(lambda: all(pod.status.phase in ("Succeeded", "Failed") for pod in run_pods(cluster)), "every pod of the run to end",
             3 * HEARTBEAT_S + 30, lambda: str([(pod.metadata.name, pod.status.phase) for pod in run_pods(cluster)]))
    [collector] = run_pods(cluster, "collector")
    log = cluster.core.read_namespaced_pod_log(collector.metadata.name, NAMESPACE)
    assert "nobody has asked about it for 8 s: the collector ends" in log
    stored = count(cluster)
    time.sleep(2)
    assert count(cluster) == stored
    # `cleanup` (API server back) removes the release.
    done = run_cli(["cleanup", "--config", str(faults)], tmp_path, env={**cluster.env, "FAULTS_PGPASSWORD": FAULTS_PASSWORD}, timeout=300)
    assert done.code == 0 and "removed" in done.stdout, done.stderr
    assert_nothing_left(cluster)


# How long kube-apiserver may take to end after SIGTERM before it is killed. Its graceful shutdown
# waits up to 60 s for open watches (CI saw 60): with the new one started only after that, the API
# server was away 40 s, the node controller's grace period, and marked the local node NodeStatusUnknown
# for 35 s after the test, which failed the next test's run ("node local-node not ready").
API_SERVER_STOP_S = 3.0


def restart_api_server(away_s: float) -> float:
    """Stop the local cluster's kube-apiserver (SIGTERM, then SIGKILL after API_SERVER_STOP_S) and start
    it again, after away_s, with the same command line (its pid file updated, so that k8s-local's `down`
    still stops it). Returns the wall time (time.time()) at which it was stopped."""
    pid_file = K8S_STATE / "pids" / "kube-apiserver.pid"
    server = psutil.Process(int(pid_file.read_text()))
    command = server.cmdline()
    stopped_at = time.time()
    server.terminate()
    try:
        server.wait(API_SERVER_STOP_S)
    except psutil.TimeoutExpired:
        server.kill()
        server.wait(10.0)
    time.sleep(away_s)
    with (K8S_STATE / "logs" / "kube-apiserver.log").open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    pid_file.write_text(f"{process.pid}\n")
    return stopped_at


def wait_for_the_kubelet(cluster, since: float) -> None:
    """The real node's kubelet renewed its lease after `since` and the node is Ready: the cluster as the
    next test expects it (a lease older than the grace period has the node marked not ready)."""
    node = lost_node.real_node(cluster.core)
    leases = client.CoordinationV1Api(cluster.core.api_client)

    def renewed_and_ready() -> bool:
        renewed = leases.read_namespaced_lease(node, "kube-node-lease").spec.renew_time
        return renewed is not None and renewed.timestamp() > since and simulated_nodes.ready(cluster.core.read_node(node)) == "True"

    wait_for(renewed_and_ready, f"the kubelet of {node} to renew its lease and the node to be Ready", 120)


def test_a_restart_of_the_api_server_is_survived_with_exact_figures(cluster, faults, tmp_path):
    cli = Cli(cluster, faults, ["-w", "2", "--duration", "25", "--heartbeat-timeout", "60"], tmp_path)
    wait_until_inserting(cluster, cli)
    stopped_at = restart_api_server(random.uniform(2.0, 6.0))
    wait_for(lambda: subprocess.run(["kubectl", "get", "--raw", "/readyz"], env=cluster.env, capture_output=True).returncode == 0,
             "the API server to be ready again", 120)
    cli.wait()
    report = assert_exact(cluster, cli)
    print(f"API server restarted: {report['figures']['events']:,} events, counted {report['verification']['counted']:,}")
    assert_nothing_left(cluster)
    wait_for_the_kubelet(cluster, stopped_at)


# -- the laptop sleeps --------------------------------------------------------------------------------

def test_a_cli_suspended_longer_than_the_heartbeat_finds_its_run_stopped_and_keeps_the_runs_before(cluster, faults, tmp_path):
    # Suspended 1-3 s into the second run's timed phase: its switch fires 8 s (+ up to 2 s between
    # its looks) later, while the 15 s phase still runs. (It once waited on the first run's rows,
    # suspended the command before the second run was up, and the run then completed.)
    cli = Cli(cluster, faults, ["-w", "1,2", "--duration", "15", "--heartbeat-timeout", str(HEARTBEAT_S)], tmp_path)
    wait_for(lambda: "2 workers" in cli.stdout, "the second run to start", 240, cli.said)
    wait_until_inserting(cluster, cli, then_up_to_s=3.0)
    asleep_s = HEARTBEAT_S + random.uniform(4.0, 14.0)
    cli.process.send_signal(signal.SIGSTOP)
    time.sleep(asleep_s)
    cli.process.send_signal(signal.SIGCONT)
    cli.wait()
    assert re.search(rf"error: the run was stopped by its dead-man switch while this command was suspended for \d+ s "
                     rf"\(heartbeat timeout {HEARTBEAT_S} s\)", cli.stderr), cli.said()
    [kept] = cli.results()["runs"]
    assert kept["workers"] == 1 and kept["report"]["verification"]["ok"]
    assert_stopped_without_figures(cluster, cli, runs_kept=1)


def test_a_cli_suspended_shorter_than_the_heartbeat_completes_its_run(cluster, faults, tmp_path):
    cli = Cli(cluster, faults, ["-w", "2", "--duration", "15", "--heartbeat-timeout", "15"], tmp_path)
    wait_until_inserting(cluster, cli)
    cli.process.send_signal(signal.SIGSTOP)
    time.sleep(random.uniform(3.0, 7.0))
    cli.process.send_signal(signal.SIGCONT)
    cli.wait()
    assert_exact(cluster, cli)
    assert_nothing_left(cluster)


# -- pods ended under the run -------------------------------------------------------------------------

def evict(cluster, pod) -> None:
    """What a node drain does to each pod: the eviction API."""
    cluster.core.create_namespaced_pod_eviction(pod.metadata.name, NAMESPACE, client.V1Eviction(
        metadata=client.V1ObjectMeta(name=pod.metadata.name, namespace=NAMESPACE)))


@pytest.mark.parametrize(("component", "action", "said"), [
    ("collector", "delete", r"collector \(pod {pod}\) was deleted( \(on node [\w.-]+\))?"),
    ("worker", "delete", r"worker \d \(pod {pod}\) was deleted( \(on node [\w.-]+\))?"),
    ("worker", "evict", r"worker \d \(pod {pod}\) was evicted \(a node drain or the eviction API\) on node [\w.-]+"),
])
def test_a_pod_ended_under_the_run_is_named_and_the_run_removed(cluster, faults, tmp_path, component, action, said):
    cli = Cli(cluster, faults, ["-w", "2", "--duration", "40"], tmp_path)
    wait_until_inserting(cluster, cli)
    pod = random.choice(run_pods(cluster, component))
    if action == "evict":
        evict(cluster, pod)
    else:
        cluster.core.delete_namespaced_pod(pod.metadata.name, NAMESPACE)
    cli.wait()
    assert re.search("error: " + said.format(pod=re.escape(pod.metadata.name)), cli.stderr), cli.said()
    assert_stopped_without_figures(cluster, cli)


# -- a node lost under a running worker ------------------------------------------------------------

@pytest.fixture
def node(cluster, kwok_controller):
    with lost_node.simulated_node(cluster.core) as name:
        yield name


def second_run_followed(cluster, faults, node: str, tmp_path: Path) -> tuple[Cli, client.V1Pod]:
    """`-w 1,2` (tests/kubernetes/lost_node.py): the first run on the real node, then the gate lifted;
    returns the CLI once it follows the second run with one worker ready, and that run's worker on
    the simulated node."""
    real = lost_node.real_node(cluster.core)
    values = lost_node.placement(tmp_path / "placement.yaml", [real, node])
    cli = Cli(cluster, faults, ["-w", "1,2", "--duration", "3"], tmp_path, IOTBENCH_HELM_VALUES=str(values))

    first: list = []

    def first_worker_runs() -> bool:
        first[:] = [pod for pod in run_pods(cluster, "worker") if pod.status.phase == "Running"]
        return len(first) == 1 and cli.process.poll() is None

    wait_for(first_worker_runs, "the first run's worker to run", 180, cli.said)
    assert first[0].spec.node_name == real, "the gate should keep the first run's worker on the real node"
    lost_node.lift_gate(cluster.core)
    wait_for(lambda: cli.process.poll() is None and "1/2 workers ready" in cli.stdout, "the second run's first worker to be ready",
             180, cli.said)
    [simulated] = [pod for pod in run_pods(cluster, "worker") if pod.spec.node_name == node]
    return cli, simulated


def assert_ended_with_the_first_run_kept(cluster, cli: Cli, said: str) -> None:
    cli.wait()
    errors = [line for line in cli.stderr_lines() if line.startswith("error:")]
    assert len(errors) == 1, cli.said()
    line = errors[0]
    print(f"\n{line}")
    assert re.search(said, line), line
    [kept] = cli.results()["runs"]
    assert kept["workers"] == 1 and kept["report"]["verification"]["ok"] and kept["report"]["figures"]["events"] > 0
    assert_stopped_without_figures(cluster, cli, runs_kept=1)


@pytest.mark.kwok
def test_a_node_not_ready_under_a_worker_is_named_and_the_run_removed(cluster, faults, node, tmp_path):
    cli, pod = second_run_followed(cluster, faults, node, tmp_path)
    lost_node.stop_kubelet(cluster.core)
    name = re.escape(pod.metadata.name)
    assert_ended_with_the_first_run_kept(cluster, cli, rf"^error: worker \d \(pod {name}\)(: node {node} not ready \(NodeStatusUnknown: "
                                                       rf"Kubelet stopped posting node status\.\)| was deleted because its node is not "
                                                       rf"ready or unreachable on node {node})")


@pytest.mark.kwok
def test_a_node_drained_under_a_worker_is_named_and_the_run_removed(cluster, faults, node, tmp_path):
    """The evicted pod is gone before the CLI looks again: here because the CLI is stopped (SIGSTOP,
    well within the heartbeat timeout) until it is. KWOK removes an evicted pod within a second, and on
    a real node a worker (which exits at SIGTERM) takes about as long, less than the CLI's check
    interval: what the CLI says must not depend on catching the pod while it terminates (the test
    above with a worker evicted on the real node catches it)."""
    cli, pod = second_run_followed(cluster, faults, node, tmp_path)
    cli.process.send_signal(signal.SIGSTOP)
    try:
        lost_node.drain(cluster.core, pod)
        wait_for(lambda: pod.metadata.name not in {other.metadata.name for other in run_pods(cluster)}, "the evicted pod to be gone", 30)
    finally:
        cli.process.send_signal(signal.SIGCONT)
    name = re.escape(pod.metadata.name)
    assert_ended_with_the_first_run_kept(cluster, cli, rf"^error: worker \d \(pod {name}\) was evicted \(a node drain or the eviction "
                                                       rf"API\) on node {node}")


# -- the database restarts ----------------------------------------------------------------------------

DATABASE_POD = "iotbench-faults-pg"
DATABASE_PASSWORD = "faults-test-password"


@pytest.fixture(scope="module")
def in_cluster_database(cluster, faults, postgres_pod_image, tmp_path_factory) -> Path:
    """A PostgreSQL StatefulSet in the module's namespace (scripts/k8s-postgres-image.sh) and a config
    whose target is it."""
    labels = {"app": DATABASE_POD}
    manifest = [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": DATABASE_POD},
         "stringData": {"PGPASSWORD": DATABASE_PASSWORD, "POSTGRES_PASSWORD": DATABASE_PASSWORD}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": DATABASE_POD},
         "spec": {"selector": labels, "ports": [{"port": 5432, "targetPort": 5432}]}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": DATABASE_POD},
         "spec": {"serviceName": DATABASE_POD, "replicas": 1, "selector": {"matchLabels": labels}, "template": {
             "metadata": {"labels": labels},
             "spec": {"terminationGracePeriodSeconds": 5, "containers": [{
                 "name": "postgres", "image": postgres_pod_image, "imagePullPolicy": "Never",
                 "envFrom": [{"secretRef": {"name": DATABASE_POD}}], "ports": [{"containerPort": 5432}],
                 "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql"}, {"name": "tmp", "mountPath": "/tmp"}],
                 "readinessProbe": {"exec": {"command": ["/usr/lib/postgresql/15/bin/pg_isready", "-h", "/tmp"]}, "periodSeconds": 1},
                 "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
             }], "volumes": [{"name": "data", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]}}}},
    ]
    text = yaml.safe_dump_all(manifest)
    kubectl = ["kubectl", "-n", NAMESPACE]
    subprocess.run([*kubectl, "apply", "-f", "-"], env=cluster.env, input=text, text=True, check=True, capture_output=True)
    subprocess.run([*kubectl, "rollout", "status", f"statefulset/{DATABASE_POD}", "--timeout=180s"], env=cluster.env, check=True,
                   capture_output=True)
    config = yaml.safe_load(faults.read_text())
    config["targets"]["postgresql-in-cluster"] = {
        "module": "postgres", "password": "${PGPASSWORD}", "existing_secret": DATABASE_POD,
        "connection_string": f"host={DATABASE_POD}.{NAMESPACE}.svc.cluster.local port=5432 dbname=postgres user=postgres connect_timeout=5",
    }
    path = tmp_path_factory.mktemp("in-cluster-database") / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    yield path
    subprocess.run([*kubectl, "delete", "--ignore-not-found", "--wait=false", "-f", "-"], env=cluster.env, input=text, text=True,
                   capture_output=True)


def test_a_database_restarted_mid_run_fails_the_run_naming_the_worker_and_the_lost_connection(cluster, in_cluster_database, tmp_path):
    pods = lambda: cluster.core.list_namespaced_pod(NAMESPACE, label_selector=f"app={DATABASE_POD}").items  # noqa: E731
    cli = Cli(cluster, in_cluster_database, ["--target", "postgresql-in-cluster", "-w", "2", "--duration", "40"], tmp_path)
    wait_for(lambda: "running" in cli.stdout.rsplit("waiting", 1)[-1], "the timed phase", 240, cli.said)
    time.sleep(random.uniform(2.0, 8.0))
    [database] = pods()
    cluster.core.delete_namespaced_pod(database.metadata.name, NAMESPACE)
    cli.wait()
    assert cli.process.returncode == 1, cli.said()
    [line] = [line for line in cli.stderr_lines() if line.startswith("error:")]
    assert re.search(r"^error: worker \d+ (failed: |\(pod \S+\) ended)", line), line
    assert re.search(r"connection|terminating|server closed", line, re.IGNORECASE), line
    document = cli.results()
    assert document["status"] == "failed" and document["runs"] == []
    assert_nothing_left(cluster)
    # The StatefulSet brings the database back.
    wait_for(lambda: any(pod.metadata.uid != database.metadata.uid and pod.status.phase == "Running" for pod in pods()),
             "the database pod to come back", 120)
