"""The collector's Prometheus metrics scraped in the real cluster: a run of the kubernetes platform (the
CLI's own helm release) on the host's PostgreSQL, and a VictoriaMetrics on the host that scrapes what
the chart's PodMonitor, rendered for that release with `helm template`, selects: the pods of the
release's namespace carrying its selector's labels, on their port `metrics`, found through the API
server (the prometheus-operator's CRDs are not installed here, so the monitor is followed the way the
operator turns it into a scrape config). Every query of the shipped dashboard is then checked
against the run's results.json (tests/dashboard_checks.py).

Its own namespace, database role and database: the other cluster suites' are left alone.
"""

from __future__ import annotations

import secrets
import subprocess
import threading
import time

import psycopg
import pytest
import yaml

from tests.conftest import REPO_ROOT, run_cli
from tests.dashboard_checks import Answers, check_open_loop_mixed_run
from tests.kubernetes.conftest import KUBECONFIG, node_address, prepare_database
from tests.scraper import pod_monitor_scrape_config, scraping

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

NAMESPACE = "iotbench-metrics"
ROLE = DATABASE = "iotbench_metrics"
CHART = REPO_ROOT / "iotdb_bench" / "deployment"


@pytest.fixture(scope="module")
def metrics_cluster(cluster_and_image, tmp_path_factory):
    """The cluster's environment, a config whose target is a database of this module's own on the
    host's PostgreSQL, and that database's connection."""
    from kubernetes import client
    from kubernetes import config as kubeconfig_loader

    env, image = dict(cluster_and_image[0]), cluster_and_image[1]
    core = client.CoreV1Api(kubeconfig_loader.new_client_from_config(config_file=str(KUBECONFIG)))
    if not core.list_namespace(field_selector=f"metadata.name={NAMESPACE}").items:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    node_ip = node_address(env)
    password = f"metrics-{secrets.token_hex(12)}"
    prepare_database(ROLE, DATABASE, password, node_ip)
    repository, _, tag = image.rpartition(":")
    config = tmp_path_factory.mktemp("metrics-k8s") / "config.yaml"
    config.write_text(yaml.safe_dump({
        "namespace": NAMESPACE, "platform": "kubernetes", "image": {"repository": repository, "tag": tag, "pull_policy": "Never"},
        "targets": {"postgresql": {"module": "postgres", "password": "${METRICS_PGPASSWORD}",
                                   "connection_string": f"host={node_ip} port=5432 dbname={DATABASE} user={ROLE} connect_timeout=10"}},
    }))
    env["METRICS_PGPASSWORD"] = password
    yield env, config, lambda: psycopg.connect(host=node_ip, port=5432, user=ROLE, password=password, dbname=DATABASE, connect_timeout=5)


def collector_release(core, limit_s: float = 120.0) -> str:
    """The release of the run's collector pod, once the pod exists."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        pods = core.list_namespaced_pod(NAMESPACE, label_selector="app.kubernetes.io/component=collector").items
        if pods:
            return pods[0].metadata.labels["app.kubernetes.io/instance"]
        time.sleep(0.3)
    raise AssertionError(f"no collector pod in {NAMESPACE} within {limit_s:g} s")


def rendered_pod_monitor(release: str, env: dict[str, str]) -> dict:
    """The chart's PodMonitor for that release, as `helm template` renders it (scraped every second)."""
    done = subprocess.run(["helm", "template", release, str(CHART), "--namespace", NAMESPACE, "--show-only", "templates/podmonitor.yaml",
                           "--set", "monitoring.podMonitor.enabled=true", "--set", "monitoring.podMonitor.interval=1s"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def test_a_cluster_run_scraped_through_the_rendered_pod_monitor(metrics_cluster, tmp_path):
    from kubernetes import client
    from kubernetes import config as kubeconfig_loader

    env, config, database = metrics_cluster
    core = client.CoreV1Api(kubeconfig_loader.new_client_from_config(config_file=str(KUBECONFIG)))
    with scraping(tmp_path, []) as scraper:
        began = time.time()
        outcome: list = []
        with database() as db:
            # A table the collector drops first (the run cleans), held locked until the scraper has the
            # collector's zeros, so that no figure grows before the first scrape (a rate needs them).
            db.execute("CREATE TABLE events (placeholder integer)")
            db.commit()
            db.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
            run = threading.Thread(target=lambda: outcome.append(run_cli(
                ["insert", "--config", str(config), "--target", "postgresql", "--platform", "kubernetes", "-w", "2", "-r", "1",
                 "--batch", "50", "--rate", "4000", "--duration", "12", "--prefill", "2000", "--query-workers", "1",
                 "--queries", "count-events,temperature-stats", "--query-rate", "4"], tmp_path, env=env, timeout=400)))
            run.start()
            try:
                release = collector_release(core)
                scraper.reconfigure([pod_monitor_scrape_config(rendered_pod_monitor(release, env), KUBECONFIG)])
                scraper.wait_for(f'iotbench_run_info{{namespace="{NAMESPACE}"}}', began)
                # The monitor selects the collector alone (the workers have no metrics port).
                up = scraper.query_range("up", began, time.time())
                assert {dict(labels)["pod"].rsplit("-", 1)[0] for labels in up} == {f"{release}-collector"}, up
            finally:
                db.rollback()  # the lock goes; the run goes on
        run.join()
        [result] = outcome
        assert result.code == 0, result.stderr
        [record] = result.results()["runs"]
        report = record["report"]
        assert report["verification"]["ok"], report["verification"]
        assert report["conditions"]["metrics_url"] is None  # in a pod the address is the PodMonitor's business
        check_open_loop_mixed_run(Answers(scraper, report["run_id"], began, report), report)
