"""A detached run's report kept whole whatever its size, on the real local cluster: a detached release of
the chart installed (its conductor Job removed at once: nothing needs to run), then the conductor's own
code keeps synthetic reports of long runs with the conductor's ServiceAccount and Role, and attach's own
code reads them back. A report of the size a 50-worker, one-hour run makes fits the run's ConfigMap; a
larger one than a ConfigMap holds goes into parts, which Kubernetes deletes with the release.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from iotdb_bench.cli.results.document import Environment, ResultsDocument
from iotdb_bench.cli.run.platforms.detached import DetachedRun
from iotdb_bench.cli.run.platforms.kubernetes import CHART
from iotdb_bench.simulator.detached.conductor import keep_report
from iotdb_bench.simulator.detached.kube_api import KubeApi
from iotdb_bench.simulator.detached.plan import gzipped
from tests import factories
from tests.kubernetes.conftest import KUBECONFIG, local_cluster

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

NAMESPACE = "iotbench-report-size"
RUN_ID = "run-5125a11e"
RELEASE = f"iotdb-bench-{RUN_ID}"
MEBIBYTE = 1024 * 1024


def _kubectl(env, *args: str) -> str:
    done = subprocess.run(["kubectl", *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """The detached release installed in a namespace of its own (two runs, their Jobs suspended, the
    conductor's Job deleted); yields (env, the conductor's KubeApi, a CoreV1Api as attach has it)."""
    with local_cluster() as env:
        subprocess.run(["kubectl", "delete", "namespace", NAMESPACE, "--wait=true", "--timeout=120s"], env=env, capture_output=True, timeout=180)
        _kubectl(env, "create", "namespace", NAMESPACE)
        folder = tmp_path_factory.mktemp("report-size")
        runs = [{"runId": f"{RUN_ID}{i}", "workers": 50, "spec": json.dumps({"run_id": f"{RUN_ID}{i}"}),
                 "record": {"label": f"step {i + 1}", "workers": 50, "run": 1, "step": i + 1}} for i in range(2)]
        values = {"runId": RUN_ID, "timeoutSeconds": 3600, "image": {"repository": "iotbench/absent", "tag": "none", "pullPolicy": "Never"},
                  "detached": {"enabled": True, "runs": runs, "runTimeoutSeconds": 3600, "deadlineSeconds": 600,
                               "deadline": int(time.time()) + 600,
                               "document": ResultsDocument(task="insert", target="postgresql", platform="kubernetes", environment=Environment(),
                                                           spec=factories.spec(workers=50), worker_counts=[50]).model_dump_json()}}
        (folder / "values.yaml").write_text(yaml.safe_dump(values))
        (folder / "spec.json").write_text(runs[0]["spec"])
        try:
            subprocess.run(["helm", "install", RELEASE, str(CHART), "--namespace", NAMESPACE, "-f", str(folder / "values.yaml"),
                            "--set-file", f"spec={folder / 'spec.json'}"], env=env, check=True, capture_output=True, timeout=180)
            _kubectl(env, "delete", "job", f"{RELEASE}-conductor", "-n", NAMESPACE, "--wait=true")
            yield env, _conductor_api(env, folder), k8s.CoreV1Api(k8s_config.new_client_from_config(str(KUBECONFIG)))
        finally:
            for name in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
                os.environ.pop(name, None)
            subprocess.run(["helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait"], env=env, capture_output=True, timeout=180)
            subprocess.run(["kubectl", "delete", "namespace", NAMESPACE, "--wait=false"], env=env, capture_output=True, timeout=60)


def _conductor_api(env, folder) -> KubeApi:
    """The conductor's KubeApi as in its pod: the API server's address, its ServiceAccount's token and the cluster's CA."""
    token = _kubectl(env, "create", "token", f"{RELEASE}-conductor", "-n", NAMESPACE, "--duration", "10m").strip()
    kubeconfig = yaml.safe_load(KUBECONFIG.read_text())
    cluster = kubeconfig["clusters"][0]["cluster"]
    account = folder / "account"
    account.mkdir()
    (account / "token").write_text(token)
    (account / "ca.crt").write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    host, _, port = cluster["server"].removeprefix("https://").partition(":")
    os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"] = host, port or "443"
    return KubeApi(account)


def _attach_reads(core, spec_config_map: str):
    return DetachedRun(core, k8s.BatchV1Api(core.api_client), NAMESPACE, RUN_ID).kept_report(spec_config_map)


def test_a_fifty_worker_hour_report_and_a_larger_one_are_kept_whole_and_removed_with_the_release(release):
    env, conductor, core = release
    hour = factories.hour_long_report()  # 50 workers, 3,600 s, every worker's 1 s series
    assert keep_report(conductor, NAMESPACE, f"{RELEASE}-0-spec", hour) == 0
    assert _attach_reads(core, f"{RELEASE}-0-spec") == hour

    larger = factories.hour_long_report(workers=100, seconds=4800)
    assert len(gzipped(larger)) > MEBIBYTE  # more than any ConfigMap holds
    parts = keep_report(conductor, NAMESPACE, f"{RELEASE}-1-spec", larger)
    assert parts >= 3
    assert _attach_reads(core, f"{RELEASE}-1-spec") == larger

    # The parts are the release's: `helm uninstall` (attach, cleanup) leaves none behind.
    selector = f"app.kubernetes.io/instance={RELEASE},app.kubernetes.io/component=report-part"
    assert len(_kubectl(env, "get", "configmaps", "-n", NAMESPACE, "-l", selector, "-o", "name").split()) == parts
    subprocess.run(["helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait"], env=env, check=True, capture_output=True, timeout=180)
    deadline = time.monotonic() + 90
    while _kubectl(env, "get", "configmaps", "-n", NAMESPACE, "-l", selector, "-o", "name").split():
        assert time.monotonic() < deadline, "the report's parts outlived their release"
        time.sleep(2)
