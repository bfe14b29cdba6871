"""A real single-node Kubernetes for the end-to-end tests (../shared/k8s-local), with the simulator image
built into it and the host's PostgreSQL reachable from the pods.

The cluster is brought up if it is not running (and then taken down again at the end, unless
K8S_LOCAL_KEEP=1); one already running is reused and left running. Nothing here skips: without a
cluster, helm or PostgreSQL the tests fail and say what to start.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import yaml

from tests.conftest import REPO_ROOT, postgres_env

K8S_LOCAL = Path(os.environ.get("K8S_LOCAL", REPO_ROOT.parent / "shared" / "k8s-local"))
K8S_LOCAL_BIN = Path(os.environ.get("K8S_LOCAL_CACHE", "/var/cache/k8s-local")) / "bin"
KUBECONFIG = Path(os.environ.get("K8S_LOCAL_STATE", "/tmp/k8s-local")) / "kubeconfig"
NAMESPACE = "iotbench-e2e"
DATABASE = ROLE = "iotbench_e2e"
RUN_ID_LABEL = "iotdb-bench/run-id"


@dataclass
class Cluster:
    env: dict[str, str]  # KUBECONFIG, PATH with helm, the database password
    config: Path  # config.yaml of the tests: targets on the host's PostgreSQL
    image: str
    node_ip: str
    password: str
    core: object  # kubernetes CoreV1Api
    batch: object  # kubernetes BatchV1Api
    namespace: str = NAMESPACE

    def db(self) -> psycopg.Connection:
        return psycopg.connect(host=self.node_ip, port=5432, user=ROLE, password=self.password, dbname=DATABASE,
                               autocommit=True, connect_timeout=5)

    def count(self, table: str = "events") -> int:
        with self.db() as db:
            return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def helm(self, *args: str) -> str:
        done = subprocess.run(["helm", *args], env=self.env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def releases(self) -> list[str]:
        return self.helm("list", "--all-namespaces", "--all", "--short").split()

    def leftovers(self) -> list[str]:
        """Objects of the tool still in the cluster: anything labelled with a run id."""
        found = []
        for kind, lister in (
            ("pod", self.core.list_pod_for_all_namespaces), ("configmap", self.core.list_config_map_for_all_namespaces),
            ("secret", self.core.list_secret_for_all_namespaces), ("service", self.core.list_service_for_all_namespaces),
            ("job", self.batch.list_job_for_all_namespaces),
        ):
            found += [f"{kind}/{item.metadata.name}" for item in lister(label_selector=RUN_ID_LABEL).items]
        return found

    def assert_nothing_left(self, limit_s: float = 60.0) -> None:
        """No release, and (after a bounded wait for deletions in progress) no object of the tool."""
        assert [name for name in self.releases() if "iotdb-bench" in name] == []
        deadline = time.monotonic() + limit_s
        while self.leftovers() and time.monotonic() < deadline:
            time.sleep(1.0)
        assert self.leftovers() == []


def _cluster_running(env: dict[str, str]) -> bool:
    probe = subprocess.run(["kubectl", "get", "--raw", "/readyz"], env=env, capture_output=True, timeout=30) \
        if KUBECONFIG.exists() else None
    return probe is not None and probe.returncode == 0


def _run_script(args: list[str], what: str, env: dict[str, str], timeout: float) -> str:
    try:
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        pytest.fail(f"{what}: {args[0]} not found (set K8S_LOCAL to the k8s-local folder)")
    if done.returncode != 0:
        pytest.fail(f"{what} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


def node_address(env: dict[str, str]) -> str:
    """The real node's address: simulated (KWOK) nodes of other tests may be listed first, without one."""
    listed = subprocess.run(
        ["kubectl", "get", "nodes", "-o", "jsonpath={range .items[*]}{.status.addresses[?(@.type=='InternalIP')].address}{'\\n'}{end}"],
        env=env, capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert listed, "no node of the local cluster has an InternalIP"
    return listed[0]


def prepare_database(role: str, database: str, password: str, node_ip: str) -> None:
    """A role and database of their own, so other suites using PostgreSQL at the same time do not interfere;
    checked reachable from the pods (at the node address)."""
    admin = postgres_env()
    try:
        server = psycopg.connect(host=admin["PGHOST"], port=admin["PGPORT"], user=admin["PGUSER"], password=admin["PGPASSWORD"],
                                 dbname=admin["PGDATABASE"], autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:
        pytest.fail(f"PostgreSQL is not reachable ({error}); start it with scripts/servers/start-postgres.sh")
    with server:
        exists = server.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        server.execute(f"{'ALTER' if exists else 'CREATE'} ROLE {role} LOGIN PASSWORD '{password}'")
        server.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        server.execute(f"CREATE DATABASE {database} OWNER {role}")
    try:
        psycopg.connect(host=node_ip, port=5432, user=role, password=password, dbname=database, connect_timeout=5).close()
    except psycopg.OperationalError as error:
        pytest.fail(f"PostgreSQL does not accept logins at the node address {node_ip} ({error}); "
                    "scripts/servers/start-postgres.sh configures listen_addresses and pg_hba for that")


def _write_config(path: Path, image: str, node_ip: str) -> None:
    repository, _, tag = image.rpartition(":")
    target = {
        "module": "postgres",
        "connection_string": f"host={node_ip} port=5432 dbname={DATABASE} user={ROLE} connect_timeout=10",
        "password": "${E2E_PGPASSWORD}",
    }
    config = {
        "namespace": NAMESPACE,
        "platform": "kubernetes",
        "image": {"repository": repository, "tag": tag, "pull_policy": "Never"},
        "targets": {
            "postgresql": target,
            # Workers must avoid the nodes of these pods: CoreDNS runs on the only node.
            "postgresql-unschedulable": {**target, "database_pod_labels": {"k8s-app": "kube-dns"}},
        },
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))


@contextmanager
def local_cluster() -> Iterator[dict[str, str]]:
    """The local cluster up, with its environment (KUBECONFIG, PATH with helm): brought up if it is not
    running, and then taken down again at the end (unless K8S_LOCAL_KEEP=1), also after a failure."""
    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG), "PATH": f"{K8S_LOCAL_BIN}{os.pathsep}{os.environ['PATH']}"}
    started_here = not _cluster_running(env)
    try:
        kubeconfig = _run_script([str(K8S_LOCAL / "up")], "bringing up the local cluster", env, timeout=1800)
        assert Path(kubeconfig) == KUBECONFIG, f"k8s-local printed an unexpected kubeconfig path: {kubeconfig}"
        yield env
    finally:
        if started_here and os.environ.get("K8S_LOCAL_KEEP") != "1":
            subprocess.run([str(K8S_LOCAL / "down")], env=env, capture_output=True, timeout=300)


@pytest.fixture(scope="session")
def cluster_and_image():
    """The local cluster up and the simulator image built from this tree, once per session (each build
    takes 20-30 s: once per test module, they were minutes of the suite)."""
    t0 = time.monotonic()
    with local_cluster() as env:
        # scripts/test.sh built it from this tree moments before and says so; otherwise build it now.
        image = os.environ.get("IOTBENCH_TEST_IMAGE") or _run_script([str(REPO_ROOT / "scripts" / "k8s-image.sh")],
                                                                      "building the simulator image", env, timeout=900)
        print(f"cluster and image ready in {time.monotonic() - t0:.0f} s")
        yield env, image


@pytest.fixture(scope="session")
def postgres_pod_image(cluster_and_image) -> str:
    """The PostgreSQL image of the in-cluster database pods (scripts/k8s-postgres-image.sh), loaded once per session."""
    done = subprocess.run([str(REPO_ROOT / "scripts" / "k8s-postgres-image.sh")], env=cluster_and_image[0], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def cluster(cluster_and_image, tmp_path_factory):
    """Per test module: a database of its own (emptied: made anew), its config and credentials."""
    shared_env, image = cluster_and_image
    env = dict(shared_env)

    from kubernetes import client
    from kubernetes import config as kubeconfig_loader

    api = kubeconfig_loader.new_client_from_config(config_file=str(KUBECONFIG))
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    # The real node: simulated (KWOK) nodes of the placement tests have no address of their own.
    node_ip = next(address.address for node in core.list_node().items for address in node.status.addresses or []
                   if address.type == "InternalIP" and node.metadata.annotations.get("kwok.x-k8s.io/node") != "fake")
    password = f"e2e-{secrets.token_hex(12)}"
    prepare_database(ROLE, DATABASE, password, node_ip)
    if not core.list_namespace(field_selector=f"metadata.name={NAMESPACE}").items:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    config = tmp_path_factory.mktemp("k8s") / "config.yaml"
    _write_config(config, image, node_ip)
    env["E2E_PGPASSWORD"] = password
    yield Cluster(env, config, image, node_ip, password, core, batch)


@pytest.fixture(scope="session")
def kwok_controller() -> Iterator[dict[str, str]]:
    """The local cluster up and KWOK running, once per session (its environment: KUBECONFIG, PATH with
    helm): the lost-node tests and the placement tests share one controller. KWOK is built on first use
    and stopped again at the end if started here."""
    from tests.kubernetes import simulated_nodes

    with local_cluster() as env:
        started_kwok = simulated_nodes.start_kwok(env)
        try:
            yield env
        finally:
            if started_kwok:
                simulated_nodes.kwok("stop", env)


@pytest.fixture(scope="session")
def simulated(kwok_controller):
    """Eleven KWOK nodes on the local cluster (tests/kubernetes/simulated_nodes.py), removed at the end
    together with everything on them."""
    from kubernetes import client
    from kubernetes import config as kubeconfig_loader

    from tests.kubernetes import simulated_nodes

    core = client.CoreV1Api(kubeconfig_loader.new_client_from_config(config_file=str(KUBECONFIG)))
    try:
        yield simulated_nodes.setup(core, kwok_controller)
    finally:
        simulated_nodes.remove_everything(core)


@pytest.fixture
def launcher(simulated, tmp_path, monkeypatch):
    """make(placement values[, database_pod_labels]): the kubernetes platform as the CLI makes it, for a
    target naming the fake database pods, with the placement values file in IOTBENCH_HELM_VALUES."""
    from iotdb_bench.cli.run.platforms.kubernetes import KubernetesPlatform
    from tests.kubernetes import simulated_nodes

    monkeypatch.setenv("KUBECONFIG", str(KUBECONFIG))
    monkeypatch.setenv("PATH", simulated.env["PATH"])  # helm

    def make(placement: dict, database_pod_labels: dict[str, str] = simulated_nodes.DATABASE_POD_LABELS):
        monkeypatch.setenv("IOTBENCH_HELM_VALUES", str(simulated_nodes.values_file(tmp_path / "placement.yaml", placement)))
        chosen = simulated_nodes.config(database_pod_labels)
        return KubernetesPlatform(chosen, chosen.target(simulated_nodes.TARGET), simulated_nodes.RUN_NAMESPACE)

    return make
