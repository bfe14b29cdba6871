"""scripts/k8s-smoke.sh, the steps of the minikube workflow (.github/workflows/k8s-smoke.yaml), run as
they are against the local cluster. No image can be pulled here, so instead of the in-cluster PostgreSQL
of the workflow the script gets the host's PostgreSQL at the node address (SMOKE_POSTGRES), with a role
and database of its own; everything else (Secret, config, runs, checks, leftovers, cleanup) is the
workflow's code path.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import time

import psycopg
import pytest

from tests.conftest import REPO_ROOT
from tests.kubernetes.conftest import node_address, prepare_database

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

SCRIPT = REPO_ROOT / "scripts" / "k8s-smoke.sh"
DATABASE = ROLE = "iotbench_smoke"
EVENTS = 2 * 20_000  # the script's insert: 2 workers x 20000 events


@pytest.fixture(scope="module")
def local(cluster_and_image):
    """The local cluster with the simulator image built from this checkout in this session
    (tests/kubernetes/conftest.py), and a PostgreSQL role and database for the smoke test on the host,
    reachable at the node address."""
    env = dict(cluster_and_image[0])
    env.pop("IOTBENCH_IMAGE", None)
    node_ip = node_address(env)
    password = f"smoke-{secrets.token_hex(12)}"
    prepare_database(ROLE, DATABASE, password, node_ip)
    env.update(PYTHON=sys.executable, PGPASSWORD=password,
               SMOKE_POSTGRES=f"host={node_ip} port=5432 dbname={DATABASE} user={ROLE}")
    return env


@pytest.fixture
def image(cluster_and_image) -> str:
    return cluster_and_image[1]


def smoke(env: dict[str, str], namespace: str, output, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], env={**env, "SMOKE_NAMESPACE": namespace, "SMOKE_OUTPUT": str(output)},
                          capture_output=True, text=True, timeout=840)


def namespace_exists(env: dict[str, str], namespace: str) -> bool:
    done = subprocess.run(["kubectl", "get", "namespace", namespace], env=env, capture_output=True, text=True, timeout=60)
    return done.returncode == 0


def test_the_smoke_script_passes_on_the_local_cluster(local, image, tmp_path):
    namespace = "iotbench-smoke"
    started = time.monotonic()
    done = smoke(local, namespace, tmp_path / "results", image)
    print(done.stderr[-3000:])
    assert done.returncode == 0, done.stderr[-6000:]
    assert f"insert ok: {EVENTS} events counted in the database" in done.stdout
    assert "query ok: 6 queries x 2 executions" in done.stdout  # the five canonical queries and device-downsample, answers ok
    assert f"no benchmark release or object left in namespace {namespace}" in done.stderr
    # What the script reported is what the database holds (the query run reads, it does not insert).
    with psycopg.connect(local["SMOKE_POSTGRES"], password=local["PGPASSWORD"], connect_timeout=5) as db:
        assert db.execute("SELECT count(*) FROM events").fetchone()[0] == EVENTS
    saved = sorted(path.relative_to(tmp_path) for path in tmp_path.glob("results/smoke-*/*/*/results.json"))
    assert [path.parts[2] for path in saved] == ["insert", "query"]
    # The namespace it created (with the Secret in it) is gone again; the password was never printed.
    assert not namespace_exists(local, namespace)
    assert local["PGPASSWORD"] not in done.stdout + done.stderr
    print(f"smoke script: {time.monotonic() - started:.0f} s")


def test_a_failing_run_fails_the_script_with_diagnostics_and_cleans_up(local, image, tmp_path):
    namespace = "iotbench-smoke-failing"
    wrong = f"wrong-{secrets.token_hex(8)}"
    done = smoke({**local, "PGPASSWORD": wrong}, namespace, tmp_path / "results", image)
    assert done.returncode == 1, done.stderr[-6000:]
    assert "ERROR: python run.py insert failed (exit 1)" in done.stderr
    assert 'password authentication failed for user "iotbench_smoke"' in done.stderr
    assert "diagnostics" in done.stderr and "removing what the smoke test created" in done.stderr
    assert not namespace_exists(local, namespace)
    assert wrong not in done.stdout + done.stderr


def test_usage_errors(local, image, tmp_path):
    env = {key: value for key, value in local.items() if key != "IOTBENCH_IMAGE"}
    done = smoke(env, "iotbench-smoke-usage", tmp_path)
    assert (done.returncode, done.stderr.strip()) == (
        2, "error: no image: pass NAME:TAG or set IOTBENCH_IMAGE (scripts/k8s-smoke.sh [IMAGE])")
    done = smoke({key: value for key, value in env.items() if key != "PGPASSWORD"}, "iotbench-smoke-usage", tmp_path, image)
    assert (done.returncode, done.stderr.strip()) == (2, "error: SMOKE_POSTGRES is set: give its password in PGPASSWORD")
    assert not namespace_exists(local, "iotbench-smoke-usage")
