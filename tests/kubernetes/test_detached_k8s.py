"""Detached runs (insert --detach, attach, cleanup) end to end on the local cluster.

A detached run goes on without the CLI: one release holds every planned run, a conductor Job starts
them one after another and keeps the reports in the cluster until `attach` fetches them. Its results
folder must be the one an attached run of the same invocation saves (all but timings), and nothing of
the release may be left afterwards. The tests use a namespace, an image tag and a PostgreSQL role and
database of their own, so that other suites running against the same cluster and server are untouched.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli
from tests.kubernetes.conftest import node_address, prepare_database

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

NAMESPACE = "iotbench-detached"
DATABASE = ROLE = "iotbench_detached"
SMALL = ["-w", "1,2", "-r", "1", "--num-inserts", "2000", "--batch", "500", "--timeout", "180"]
RUN_ID = re.compile(r"Detached run (run-[0-9a-f]{8})")
# Every kind of object the chart makes for a detached release.
KINDS = "all,configmap,secret,serviceaccount,role,rolebinding,networkpolicy"


@pytest.fixture(scope="module")
def detached_env(cluster_and_image, tmp_path_factory):
    """The local cluster with the simulator image built from this checkout in this session
    (tests/kubernetes/conftest.py), a namespace, and a PostgreSQL role and database reachable from the
    pods; yields the environment for the CLI and the config file."""
    env, image = dict(cluster_and_image[0]), cluster_and_image[1]
    env["IOTBENCH_IMAGE"] = image
    node_ip = node_address(env)
    password = f"detached-{secrets.token_hex(12)}"
    prepare_database(ROLE, DATABASE, password, node_ip)
    config = tmp_path_factory.mktemp("detached") / "config.yaml"
    repository, _, tag = image.rpartition(":")
    config.write_text(yaml.safe_dump({
        "namespace": NAMESPACE, "platform": "kubernetes",
        "image": {"repository": repository, "tag": tag, "pull_policy": "Never"},
        "targets": {
            "postgresql": {"module": "postgres", "password": "${DETACHED_PGPASSWORD}",
                           "connection_string": f"host={node_ip} port=5432 dbname={DATABASE} user={ROLE} connect_timeout=10"},
            "postgresql-refused": {"module": "postgres", "password": "${DETACHED_WRONG_PASSWORD}",
                                   "connection_string": f"host={node_ip} port=5432 dbname={DATABASE} user={ROLE} connect_timeout=10"},
            "null": {"module": "null"},
        },
    }))
    env["DETACHED_PGPASSWORD"], env["DETACHED_WRONG_PASSWORD"] = password, "not-the-password"
    deadline = time.monotonic() + 180
    while _namespace_phase(env) == "Terminating" and time.monotonic() < deadline:  # an earlier session's, going
        time.sleep(2)
    subprocess.run(["kubectl", "create", "namespace", NAMESPACE], env=env, capture_output=True, timeout=60)
    # Every pod of a release, the conductor's too, must be admitted under the restricted standard.
    _kubectl(env, "label", "--overwrite", "namespace", NAMESPACE, "pod-security.kubernetes.io/enforce=restricted")
    yield env, config
    subprocess.run(["kubectl", "delete", "namespace", NAMESPACE, "--wait=false"], env=env, capture_output=True, timeout=60)


def _namespace_phase(env: dict[str, str]) -> str:
    done = subprocess.run(["kubectl", "get", "namespace", NAMESPACE, "-o", "jsonpath={.status.phase}"], env=env, capture_output=True,
                          text=True, timeout=60)
    return done.stdout.strip()


def _kubectl(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["kubectl", *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def bench(detached_env, cwd: Path, command: str, *args: str, timeout: float = 600):
    env, config = detached_env
    # Wide enough that rich does not fold a release name over two lines of a table.
    return run_cli([command, "--config", str(config), *args], cwd, env={**env, "COLUMNS": "250"}, timeout=timeout)


def detach(detached_env, cwd: Path, *args: str) -> str:
    """insert --detach ARGS; the run id it printed."""
    started = time.monotonic()
    done = bench(detached_env, cwd, "insert", "--platform", "kubernetes", "--detach", *args)
    assert done.code == 0, done.stderr
    found = RUN_ID.search(done.stdout)
    assert found, done.stdout
    assert f"python run.py attach {found.group(1)} --namespace {NAMESPACE}" in done.stdout
    print(f"insert --detach returned after {time.monotonic() - started:.1f} s")
    return found.group(1)


def objects_of(env: dict[str, str], run_id: str) -> list[str]:
    listed = _kubectl(env, "get", KINDS, "-n", NAMESPACE, "-l", f"app.kubernetes.io/instance=iotdb-bench-{run_id}", "-o", "name")
    return listed.split()


def assert_gone(env: dict[str, str], run_id: str, limit_s: float = 90) -> None:
    deadline = time.monotonic() + limit_s
    while objects_of(env, run_id) and time.monotonic() < deadline:
        time.sleep(1)
    assert objects_of(env, run_id) == []
    assert f"iotdb-bench-{run_id}" not in _kubectl(env, "get", "jobs,pods", "-n", NAMESPACE, "-o", "name")


def results(cwd: Path) -> dict:
    [path] = list(cwd.glob("results/*/results.json"))
    return json.loads(path.read_text())


def comparable(document: dict) -> dict:
    """Everything of a results document that does not depend on timing or on where it ran."""
    runs = [{
        "label": run["label"], "workers": run["workers"], "run": run["run"], "step": run["step"],
        "without_queries": run["without_queries"], "events": run["report"]["figures"]["events"],
        "verification": {key: run["report"]["verification"][key] for key in ("expected", "counted", "ok", "applicable")},
        "worker_events": sorted(worker["events"] for worker in run["report"]["workers"]),
        "stream_ends": sorted(worker["stream_end"] for worker in run["report"]["workers"]),
    } for run in document["runs"]]
    inserts = [{key: row[key] for key in ("workers", "step", "level", "runs", "insert_mode", "count_check", "retries", "values_per_row", "query_workers")}
               for row in document["inserts"]]
    return {key: document[key] for key in ("status", "error", "task", "target", "platform", "worker_counts",
                                           "runs_per_worker_count", "steps")} | {"runs": runs, "inserts": inserts}


def test_a_detached_run_saves_the_results_of_an_attached_one(detached_env, tmp_path):
    env, _ = detached_env
    attached, detached = tmp_path / "attached", tmp_path / "detached"
    attached.mkdir(), detached.mkdir()
    done = bench(detached_env, attached, "insert", "--target", "postgresql", "--platform", "kubernetes", *SMALL)
    assert done.code == 0, done.stderr

    run_id = detach(detached_env, detached, "--target", "postgresql", *SMALL)
    # Followed from a second shell: a separate process, which knows nothing but the run id.
    follower = bench(detached_env, detached, "attach", run_id, "--namespace", NAMESPACE)
    assert follower.code == 0, follower.stderr
    assert "Results saved in" in follower.stdout

    expected, got = comparable(results(attached)), comparable(results(detached))
    assert got == expected
    assert [run["verification"]["ok"] for run in got["runs"]] == [True, True]
    assert [run["events"] for run in got["runs"]] == [2000, 4000]
    saved = results(detached)
    assert saved["spec"]["heartbeat_timeout"] == 0  # no dead-man switch: the deadline replaces it
    for run in saved["runs"]:  # resource figures absent and said why, never zeros
        database = run["report"]["resources"]["database"]
        assert database["cpu_s"] is None and "detached" in database["not_measured"]["cpu"]
    folder = next((detached / "results").iterdir())
    assert {path.name for path in folder.iterdir()} >= {"results.json", "report.html"}
    assert env["DETACHED_PGPASSWORD"] not in (folder / "results.json").read_text()
    assert_gone(env, run_id)


def test_detached_steps_continue_the_streams_as_attached_ones_do(detached_env, tmp_path):
    """--steps: each step continues the workers' event streams where the step before stopped; in a
    detached run the conductor sets the offset before it starts the step."""
    env, _ = detached_env
    steps = ["--target", "postgresql", "-w", "2", "-r", "1", "--steps", "2", "--num-inserts", "1000", "--batch", "250", "--prefill", "0",
             "--timeout", "180"]
    attached, detached = tmp_path / "attached", tmp_path / "detached"
    attached.mkdir(), detached.mkdir()
    done = bench(detached_env, attached, "insert", "--platform", "kubernetes", *steps)
    assert done.code == 0, done.stderr
    run_id = detach(detached_env, detached, *steps)
    follower = bench(detached_env, detached, "attach", run_id, "--namespace", NAMESPACE)
    assert follower.code == 0, follower.stderr
    expected, got = comparable(results(attached)), comparable(results(detached))
    assert got == expected
    assert [run["stream_ends"] for run in got["runs"]] == [[1000, 1000], [2000, 2000]]
    assert [run["verification"]["counted"] for run in got["runs"]] == [2000, 4000]
    assert_gone(env, run_id)


def wait_for_conductor(env: dict[str, str], release: str, limit_s: float = 120) -> None:
    """Until the conductor's Job has succeeded: the detached run is over, with nobody following it."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if _kubectl(env, "get", "job", f"{release}-conductor", "-n", NAMESPACE, "-o", "jsonpath={.status.succeeded}") == "1":
            return
        time.sleep(1)
    pytest.fail(f"the conductor of {release} did not end within {limit_s:g} s")


def test_a_detached_run_stops_at_its_first_failed_run(detached_env, tmp_path):
    env, _ = detached_env
    run_id = detach(detached_env, tmp_path, "--target", "postgresql-refused", "-w", "1,2", "-r", "1", "--num-inserts", "1000",
                    "--timeout", "120")
    release = f"iotdb-bench-{run_id}"
    wait_for_conductor(env, release)
    # The second run was never started: its Jobs are still suspended, and never had a pod.
    for role in ("collector", "worker"):
        job = json.loads(_kubectl(env, "get", "job", f"{release}-1-{role}", "-n", NAMESPACE, "-o", "json"))
        assert job["spec"]["suspend"] is True and "startTime" not in job["status"], role

    follower = bench(detached_env, tmp_path, "attach", run_id, "--namespace", NAMESPACE)
    assert follower.code == 1
    lines = [line for line in follower.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: run 1 of 2 (1 worker, run 1/1): "), follower.stderr
    assert "password authentication failed" in lines[0]
    saved = results(tmp_path)
    assert saved["status"] == "failed" and saved["runs"] == [] and saved["error"] == lines[0].removeprefix("error: ")
    assert_gone(env, run_id)


def test_a_detached_run_past_its_deadline_ends_by_itself(detached_env, tmp_path):
    env, _ = detached_env
    # 100,000 events at 200/s would take 500 s; --timeout gives the run 8.
    run_id = detach(detached_env, tmp_path, "--target", "null", "-w", "1", "-r", "1", "--rate", "200", "--num-inserts", "100000",
                    "--batch", "10", "--timeout", "8")
    release = f"iotdb-bench-{run_id}"
    wait_for_conductor(env, release)  # nobody follows it: it must end by itself
    assert _kubectl(env, "get", "pods", "-n", NAMESPACE, "-l", f"app.kubernetes.io/instance={release},app.kubernetes.io/component=worker",
                    "-o", "name").strip() == "" or _pods_ending(env, release)

    follower = bench(detached_env, tmp_path, "attach", run_id, "--namespace", NAMESPACE)
    assert follower.code == 1
    lines = [line for line in follower.stderr.splitlines() if line.strip()]
    [line] = lines
    assert line.startswith("error: run 1 of 1 (1 worker at 200/s): the run did not finish within --timeout 8 s (the collector"), line
    # where the run stood: the collector's last status (if it answered within the 8 s) and the Jobs' pods
    assert "worker pods 1 active" in line and line.endswith("; stopped it"), line
    assert results(tmp_path)["status"] == "failed"
    assert_gone(env, run_id)


def _pods_ending(env: dict[str, str], release: str) -> bool:
    """The worker pods of the stopped run are being deleted (their Job was)."""
    listed = _kubectl(env, "get", "pods", "-n", NAMESPACE, "-l", f"app.kubernetes.io/instance={release}", "-o",
                      "jsonpath={range .items[*]}{.metadata.deletionTimestamp}{'\\n'}{end}")
    return all(line.strip() for line in listed.splitlines())


def test_cleanup_leaves_a_detached_run_within_its_deadline_unless_named(detached_env, tmp_path):
    env, _ = detached_env
    run_id = detach(detached_env, tmp_path, "--target", "null", "-w", "1", "-r", "1", "--rate", "100", "--num-inserts", "100000",
                    "--batch", "10", "--timeout", "600")
    listing = bench(detached_env, tmp_path, "cleanup", "--namespace", NAMESPACE)
    assert listing.code == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if run_id[4:] in line)
    assert "detached" in row and "left alone" in row, listing.stdout
    assert objects_of(env, run_id)

    named = bench(detached_env, tmp_path, "cleanup", run_id, "--namespace", NAMESPACE)
    assert named.code == 0, named.stderr
    assert "removed" in named.stdout
    assert_gone(env, run_id)
