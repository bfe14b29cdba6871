"""The kubernetes platform: every run is one helm release of deployment/, followed through the collector.

For each run the CLI writes the release's values (run id, worker count, image, credentials) to a
private temporary file, installs the chart, waits for the collector pod, reaches the collector through
a port-forward made with the kubernetes client, follows the run while watching the pods for failures,
saves every pod's log and uninstalls the release, whatever happened (unless --keep).

Credentials: when the target names an `existing_secret`, the pods get that Secret (it must exist in
the namespace); otherwise the CLI puts the environment variables the target's options reference
(`${VAR}`) into the values file and the chart makes a Secret of them. They never appear on a command
line, in a ConfigMap or in a log.

Environment: IOTBENCH_IMAGE=REPOSITORY:TAG replaces the config's image; IOTBENCH_HELM_VALUES names
extra values files (separated by ':') for anything else the chart offers (resources, nodeSelector,
tolerations, ...), applied before the CLI's own values.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from iotdb_bench.cli.config import Config, Image, Target
from iotdb_bench.cli.errors import ReleaseLeft, RunFailed, UsageProblem
from iotdb_bench.cli.run.platforms import Notice, StatusCallback
from iotdb_bench.cli.run.platforms.follow import Deadline, Patience, SuspendWatch, follow_run, wait_for_collector
from iotdb_bench.cli.run.platforms.helm import Helm
from iotdb_bench.cli.run.platforms.sampling import marking, timed_window
from iotdb_bench.cli.terminal import error_line, warning_line
from iotdb_bench.simulator.collector_client import CollectorClient
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec

try:
    import urllib3
    from kubernetes import config as kubeconfig
    from kubernetes.client import ApiClient, BatchV1Api, Configuration, CoreV1Api, V1Pod
    from kubernetes.client.exceptions import ApiException
except ImportError:
    raise UsageProblem("the kubernetes platform needs the kubernetes package: pip install -r requirements.txt") from None

from iotdb_bench.cli.run.platforms import placement, releases
from iotdb_bench.cli.run.platforms.portforward import PodPortForward

log = logging.getLogger(__name__)

CHART = Path(__file__).resolve().parents[3] / "deployment"
IMAGE_ENV = "IOTBENCH_IMAGE"
VALUES_ENV = "IOTBENCH_HELM_VALUES"
# How long cleanup waits for an unreachable API server before it gives up (the release stays, the
# command fails and says how to remove it).
API_WAIT_ENV = "IOTBENCH_API_WAIT"
API_WAIT_S = 120.0
API_WAIT_INTERVAL_S = 2.0
COLLECTOR_PORT = 8080
API_TIMEOUT_S = 10
POD_CHECK_INTERVAL_S = 1.0
COLLECTOR_POLL_S = 0.5
# A pod may be unschedulable for a moment (e.g. while the previous run's pods terminate).
UNSCHEDULABLE_GRACE_S = 10.0
NODE_CHECK_INTERVAL_S = 5.0
# The longest wait for the history of pods gone between two checks (it is replayed at once).
HISTORY_WAIT_S = 2
LOG_TAIL_LINES = 3
WORKER_STOP_GRACE_S = 2
PODS_GONE_WAIT_S = 120
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
# Concurrent calls that delete the worker pods at cleanup.
DELETE_THREADS = 16
LOG_THREADS = 8
# The CLI enforces --timeout itself; the worker Job's deadline is the safety net for a CLI that was
# killed, a little later so that it never races the CLI's own, faster cleanup.
JOB_DEADLINE_MARGIN_S = 30
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
# Container states from which a pod does not recover by itself.
FATAL_WAITING = {
    "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
    "CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff",
}
API_ERRORS = (ApiException, urllib3.exceptions.HTTPError, OSError)


def pod_list(core: CoreV1Api, namespace: str, selector: str) -> dict[str, Any]:
    """The list of pods as plain JSON (its items, and its metadata.resourceVersion): the client's own
    models cost about 1.5 ms of CPU per pod."""
    response = core.list_namespaced_pod(namespace, label_selector=selector, _request_timeout=API_TIMEOUT_S, _preload_content=False)
    try:
        return json.loads(response.data)
    finally:
        response.release_conn()


def pods_as_json(core: CoreV1Api, namespace: str, selector: str) -> list[dict[str, Any]]:
    return pod_list(core, namespace, selector)["items"]


def release_name(run_id: str) -> str:
    """One release per run; the chart names every object after it (run ids are short DNS labels)."""
    return f"iotdb-bench-{run_id}"


class KubernetesPlatform:
    def __init__(self, config: Config, target_config: Target, namespace: str, context: str | None = None, keep: bool = False):
        self.namespace, self.keep, self.target = namespace, keep, target_config
        self.image = _image(config.image)
        self.extra_values = _extra_values_files()
        self.api_wait_s = _api_wait_s()
        self.helm = Helm(namespace, context)
        self.configuration = _load_kubeconfig(context)
        # One connection per thread of the cleanup and log collection (the client's default pool is
        # 5 per CPU; beyond it urllib3 warns on the terminal and discards connections).
        self.configuration.connection_pool_maxsize = max(self.configuration.connection_pool_maxsize, DELETE_THREADS, LOG_THREADS)
        client = ApiClient(self.configuration)
        self.core, self.batch = CoreV1Api(client), BatchV1Api(client)
        self._check_namespace()
        left_behind = releases.warning(self.core, self.namespace)
        if left_behind:
            warning_line(left_behind)
        self.credentials = self._credentials()

    # -- checks before the first run ------------------------------------------------------------
    def _check_namespace(self) -> None:
        try:
            self.core.read_namespace(self.namespace, _request_timeout=API_TIMEOUT_S)
        except ApiException as error:
            if error.status == 404:
                raise UsageProblem(f"namespace '{self.namespace}' does not exist in the cluster (--namespace or the config's namespace)") from None
            if error.status == 401:
                raise UsageProblem(f"the Kubernetes API server at {self.configuration.host} refused the kubeconfig's credentials") from None
            # 403: this user may not read namespaces; helm reports a missing namespace itself.
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise UsageProblem(f"cannot reach the Kubernetes API server at {self.configuration.host}: {_short(error)}") from None

    def _credentials(self) -> dict[str, Any]:
        secret = self.target.existing_secret
        if secret:
            try:
                self.core.read_namespaced_secret(secret, self.namespace, _request_timeout=API_TIMEOUT_S)
            except ApiException as error:
                if error.status == 404:
                    names = ", ".join(self.target.env_references()) or "the variables the target's options reference"
                    raise UsageProblem(
                        f"Secret '{secret}' (existing_secret of the target) not found in namespace '{self.namespace}'; "
                        f"create it with the keys {names} (see dbinstall/README.md), or remove existing_secret to pass them from the environment"
                    ) from None
                # 403: we may not read Secrets; a missing one shows up as CreateContainerConfigError.
            except (urllib3.exceptions.HTTPError, OSError) as error:
                raise UsageProblem(f"cannot reach the Kubernetes API server at {self.configuration.host}: {_short(error)}") from None
            return {"existingSecret": secret}
        env = {name: os.environ[name] for name in self.target.env_references() if name in os.environ}
        return {"secretEnv": env} if env else {}

    def close(self) -> None:
        """Nothing is kept between runs: each run removes its own release."""

    # -- one run ----------------------------------------------------------------------------------
    def run(self, spec: RunSpec, timeout: float, on_status: StatusCallback, log_dir: Path) -> RunReport:
        log_dir.mkdir(parents=True, exist_ok=True)
        deadline = Deadline(timeout)
        release = release_name(spec.run_id)
        # The API server may be away for a while (restarted, a dropped connection, a laptop changing
        # networks): the run goes on in the cluster, and the CLI waits as long as the collector does.
        patience_s = releases.silence_limit(spec.heartbeat_timeout)
        pods = PodWatch(self.core, self.batch, self.namespace, release, log_dir, api_patience_s=patience_s)
        from iotdb_bench.cli.run.platforms.kubelet_sampler import KubeletSampler

        sampler = KubeletSampler(self.core, self.namespace, pods.selector, dict(self.target.database_pod_labels))
        report: RunReport | None = None
        heartbeat: releases.Heartbeat | None = None
        failure: BaseException | None = None
        with tempfile.TemporaryDirectory(prefix="iotdb-bench-") as folder, SuspendWatch() as suspension:
            try:
                self.install(spec, timeout, Path(folder))
                sampler.start()
                # Tells `cleanup` (and later runs) that this release's CLI is alive.
                heartbeat = releases.Heartbeat(self.core, self.namespace, release, spec.heartbeat_timeout).started()
                try:
                    finished = self._follow(pods, deadline, marking(on_status, sampler, spec.workers), spec.heartbeat_timeout, patience_s,
                                            suspension)
                except RunFailed as failed:
                    pods.problem(force=True)
                    failed = suspension.explained(failed, spec.heartbeat_timeout)
                    raise type(failed)(f"{failed} (logs: {pods.failed_log or log_dir})") from None
                sampler.stop()
                window = timed_window(finished)
                if window is not None:
                    finished.resources = sampler.usage(*window)
                finished.conditions = placement.record(finished.conditions, self.core, self.namespace, pods.selector,
                                                       self.target.database_pod_labels)
                report = finished
                return report
            except BaseException as error:
                failure = error
                raise
            finally:
                if heartbeat is not None:
                    heartbeat.stop(kept=self.keep)
                if sampler.is_alive():
                    sampler.stop()
                left = self._clean_up(release, pods, report is not None, on_status)
                if left:
                    _raise_left(left, report, failure)

    def _clean_up(self, release: str, pods: PodWatch, finished: bool, on_status: StatusCallback) -> str | None:
        """Save the pods' logs and remove the release (stopping the workers of an unfinished run at once);
        returns why the release is still installed, or None."""
        unreachable = self._wait_for_api(on_status)
        if unreachable and self.keep:
            warning_line(f"kept helm release {release} (--keep); the Kubernetes API server is unreachable ({unreachable})")
            return None
        if unreachable:
            return (f"release {release} was not removed: the Kubernetes API server at {self.configuration.host} stayed unreachable "
                    f"({unreachable}); its pods stop by themselves (dead-man switch); remove it with: "
                    f"python run.py cleanup --namespace {self.namespace}")
        on_status(Notice("cleaning up"))
        try:
            pods.save_logs()
            if not finished and not self.keep:
                pods.stop_workers()
        finally:
            problem = self.remove(release)
        return problem

    def _wait_for_api(self, on_status: StatusCallback) -> str | None:
        """Wait, bounded, for an API server that does not answer; returns why it is still unreachable."""
        limit_s = self.api_wait_s
        started = time.monotonic()
        while True:
            try:
                self.core.read_namespace(self.namespace, _request_timeout=API_TIMEOUT_S)
                return None
            except ApiException:
                return None  # it answered
            except (urllib3.exceptions.HTTPError, OSError) as error:
                waited = time.monotonic() - started
                if waited >= limit_s:
                    return f"{waited:.0f} s: {_short(error)}"
                on_status(Notice(f"cleaning up: waiting for the Kubernetes API server ({waited:.0f} of {limit_s:g} s: {_short(error)})"))
                time.sleep(API_WAIT_INTERVAL_S)

    def install(self, spec: RunSpec, timeout: float, folder: Path) -> str:
        """Install the run's release (the user's extra values files, then the CLI's own); return its name."""
        values_file = self._write_values(folder / "values.yaml", spec, timeout)
        spec_file = folder / "spec.json"
        spec.dump(spec_file)
        release = release_name(spec.run_id)
        self.helm.install(release, CHART, [*self.extra_values, values_file], spec_file)
        return release

    def _follow(self, pods: PodWatch, deadline: Deadline, on_status: StatusCallback, heartbeat_timeout: float,
                patience_s: float, suspension: SuspendWatch) -> RunReport:
        collector = self._wait_for_collector_pod(pods, deadline)
        with PodPortForward(self.configuration, self.namespace, collector, COLLECTOR_PORT) as forward:
            # A relayed connection can drop (a websocket closed by the API server or a proxy)
            # without anything being wrong with the collector: GETs are tried again, then the
            # follower reconnects with backoff for as long as the collector waits for the CLI.
            http = CollectorClient(forward.url, get_attempts=3)

            def problem() -> str | None:
                return pods.problem() or forward.problem()

            def reason() -> str | None:
                if pods.api_error:
                    return f"the Kubernetes API server is unreachable: {pods.api_error}"
                return forward.last_error

            wait_for_collector(http, deadline, problem)
            return follow_run(http, deadline, on_status, problem, heartbeat_timeout, Patience(patience_s, reason), suspension)

    def _write_values(self, path: Path, spec: RunSpec, timeout: float) -> Path:
        return write_private_yaml(path, self.values(spec, timeout))

    def values(self, spec: RunSpec, timeout: float) -> dict[str, Any]:
        """The CLI's values for the release of `spec`'s run (credentials included)."""
        values: dict[str, Any] = {
            "runId": spec.run_id,
            "workers": spec.workers,
            "queryWorkers": spec.query_workers,
            "timeoutSeconds": math.ceil(timeout) + JOB_DEADLINE_MARGIN_S if timeout > 0 else 0,
            "image": self.image,
            **self.credentials,
        }
        if self.target.database_pod_labels and self.target.avoid_database_nodes:
            # Neither role on a database node: the collector serves every worker's progress.
            for role in ("collector", "worker"):
                values[role] = {"avoidDatabaseNodes": {"enabled": True, "labelSelector": dict(self.target.database_pod_labels)}}
        return values

    def _wait_for_collector_pod(self, pods: PodWatch, deadline: Deadline) -> str:
        while True:
            problem = pods.problem(force=True)
            if problem:
                raise RunFailed(problem)
            ready = pods.ready_collector()
            if ready:
                return ready
            deadline.check("starting the collector")
            time.sleep(COLLECTOR_POLL_S)

    def remove(self, release: str) -> str | None:
        """Uninstall the release (unless --keep); returns why it is still installed, or None."""
        if self.keep:
            print(f"kept helm release {release} (--keep); remove it with: helm uninstall {release} --namespace {self.namespace}",
                  file=sys.stderr)
            return None
        try:
            self._delete_workers(release)
        finally:  # helm runs even after a second Ctrl-C here (it defers interrupts itself)
            start = time.monotonic()
            problem = self.helm.uninstall(release)
            log.debug("cleanup: helm uninstall took %.1f s", time.monotonic() - start)
        if problem:
            return f"{problem}; remove it with: python run.py cleanup --namespace {self.namespace}"
        start = time.monotonic()
        lingering = self._wait_until_pods_gone(release)
        log.debug("cleanup: the last pods were gone %.1f s after helm", time.monotonic() - start)
        if lingering:
            print(f"warning: {lingering}", file=sys.stderr)
        return None

    def _delete_workers(self, release: str) -> None:
        """The worker Job without waiting for its pods, then each of its pods, many calls at a time.

        Left to helm's foreground deletion, the garbage collector deletes the pods one API call at a
        time, at the controller manager's client rate (20/s by default): 76 s for 1,000 workers on the
        local cluster. One delete-collection call is no better under load: the API server deletes its
        items one after another (one storage write each; 14 s for 1,000 pods on a quiet local cluster,
        about a minute beside CI's other suites), while concurrent calls share the storage's writes."""
        workers = f"app.kubernetes.io/instance={release},app.kubernetes.io/component=worker"
        start = time.monotonic()
        try:
            # Gone at once, so that it cannot replace the pods deleted next.
            self.batch.delete_collection_namespaced_job(
                self.namespace, label_selector=workers, propagation_policy="Background", _request_timeout=API_TIMEOUT_S,
            )
            pods = pods_as_json(self.core, self.namespace, workers)
        except API_ERRORS as error:
            log.debug("cannot delete the workers ahead of helm (helm removes them, more slowly): %s", error)
            return
        lost = self._lost_nodes({pod["spec"].get("nodeName") for pod in pods} - {None})
        with ThreadPoolExecutor(DELETE_THREADS) as pool:
            ended = sum(pool.map(lambda pod: self._end_worker_pod(pod, force=pod["spec"].get("nodeName") in lost), pods))
        log.debug("cleanup: %d of %d worker pods deleted and freed in %.1f s", ended, len(pods), time.monotonic() - start)

    def _lost_nodes(self, names: set[str]) -> set[str]:
        """Those of the nodes that are not ready, or gone: no kubelet there will confirm that a pod
        stopped, and a deleted pod would stay Terminating until the node comes back or is removed."""
        if not names:
            return set()
        try:
            nodes = self.core.list_node(_request_timeout=API_TIMEOUT_S).items
        except API_ERRORS as error:
            log.debug("cannot read the nodes: %s", error)
            return set()
        return names - {node.metadata.name for node in nodes if _node_ready(node) == "True"}

    def _end_worker_pod(self, pod: dict[str, Any], force: bool = False) -> bool:
        """Delete one worker pod (the kubelet stops its container as usual, within the grace period) and
        remove the finalizer batch.kubernetes.io/job-tracking, which would hold it: the Job controller
        removes it from the pods of a deleted Job one call at a time, at 20/s, and nothing counts these
        pods any more. Where the CLI may not (RBAC), the controller still does. True when both were done.
        `force` (a pod on a lost node): removed at once, as `kubectl delete --force` does; a worker that
        still runs behind a network partition stops by itself once the collector is gone (dead-man switch)."""
        name = pod["metadata"]["name"]
        try:
            self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0 if force else None, _request_timeout=API_TIMEOUT_S)
            finalizers = pod["metadata"].get("finalizers") or []
            if JOB_TRACKING_FINALIZER in finalizers:
                path = f"/metadata/finalizers/{finalizers.index(JOB_TRACKING_FINALIZER)}"
                # "test" first: the finalizers may have changed since the list.
                self.core.patch_namespaced_pod(
                    name, self.namespace, [{"op": "test", "path": path, "value": JOB_TRACKING_FINALIZER}, {"op": "remove", "path": path}],
                    _content_type="application/json-patch+json", _request_timeout=API_TIMEOUT_S,
                )
            return True
        except API_ERRORS as error:
            log.debug("cannot delete worker pod %s or release its finalizer: %s", name, error)
            return False

    def _wait_until_pods_gone(self, release: str) -> str | None:
        """helm waits for the objects it knows; the worker pods of the Job deleted before it may still be terminating."""
        deadline = time.monotonic() + PODS_GONE_WAIT_S
        while time.monotonic() < deadline:
            try:
                if not self.core.list_namespaced_pod(
                    self.namespace, label_selector=f"app.kubernetes.io/instance={release}", limit=1, _request_timeout=API_TIMEOUT_S,
                ).items:
                    return None
            except API_ERRORS as error:
                log.debug("cannot list the pods of %s: %s", release, error)
            time.sleep(COLLECTOR_POLL_S)
        return f"pods of {release} still there {PODS_GONE_WAIT_S:g} s after helm uninstall"


class PodWatch:
    """The pods of one release: what went wrong with them, if anything, and their logs."""

    def __init__(self, core: CoreV1Api, batch: BatchV1Api, namespace: str, release: str, log_dir: Path, api_patience_s: float = 30.0):
        self.core, self.batch, self.namespace, self.log_dir = core, batch, namespace, log_dir
        self.selector = f"app.kubernetes.io/instance={release}"
        self.api_patience_s = api_patience_s
        self.pods: list[V1Pod] = []
        self.failed_log: Path | None = None
        self.api_error: str | None = None  # while the API server does not answer: why
        self._checked_at = 0.0
        self._problem: str | None = None
        self._unreachable_since: float | None = None
        self._unschedulable_since: dict[str, float] = {}
        self._seen: dict[str, str] = {}  # uid -> label of every pod of the run seen so far
        self._nodes_checked_at = 0.0
        self._parsed: dict[tuple[str, str], V1Pod] = {}  # (uid, resourceVersion) -> pod
        self._listed_version: str | None = None  # resourceVersion of the last list of the pods
        self._judged_version: str | None = None  # ... of the list last judged: the pods of _seen were there

    def problem(self, force: bool = False) -> str | None:
        """Why the run cannot succeed, judged from its pods, their nodes and Jobs; None while all is well.
        Asks the API at most once a second (the followers call this often). An API server that does
        not answer is no problem of the run until it has been away longer than the collector waits
        for the CLI (the run goes on in the cluster meanwhile)."""
        if self._problem or (not force and time.monotonic() - self._checked_at < POD_CHECK_INTERVAL_S):
            return self._problem
        self._checked_at = time.monotonic()
        try:
            self.pods = self._list_pods()
            jobs = self.batch.list_namespaced_job(self.namespace, label_selector=self.selector, _request_timeout=API_TIMEOUT_S).items
        except API_ERRORS as error:
            now = time.monotonic()
            self._unreachable_since = self._unreachable_since or now
            self.api_error = _short(error)
            if now - self._unreachable_since > self.api_patience_s:
                self._problem = (f"lost contact with the Kubernetes API for {now - self._unreachable_since:.0f} s ({self.api_error}), "
                                 f"longer than the heartbeat timeout ({self.api_patience_s:g} s): the run stops by its dead-man switch")
            return self._problem
        self._unreachable_since = self.api_error = None
        self._problem = self._judge(jobs)
        return self._problem

    def _judge(self, jobs: list) -> str | None:
        present = {pod.metadata.uid for pod in self.pods}
        gone = {uid: label for uid, label in self._seen.items() if uid not in present}
        self._seen.update({pod.metadata.uid: _label(pod) for pod in self.pods})
        since, self._judged_version = self._judged_version, self._listed_version
        # A pod that fails takes the others with it (its Job fails and deletes its other pods): the
        # one with a cause (evicted, preempted, crashed) is named before those merely deleted, and of
        # those, the one whose deletion was asked for first (a gone pod without history: first). The
        # times are whole seconds: in the same second, a pod whose container has ended goes before one
        # still running (the Job deletes the others only once a pod has ended).
        last_states = self._last_states(set(gone), since)
        plainly_deleted: list[tuple[tuple[float, bool], str]] = []
        for uid, label in gone.items():
            last = last_states.get(uid)
            problem = self._pod_problem(last) if last is not None else None
            if problem and not _plainly_deleted(last):
                return problem
            plainly_deleted.append(((_deletion_asked_at(last), _still_running(last)), problem or f"{label} was deleted"))
        for pod in sorted(self.pods, key=_pod_order):
            problem = self._pod_problem(pod)
            if problem and _plainly_deleted(pod):
                plainly_deleted.append(((_deletion_asked_at(pod), _still_running(pod)), problem))
            elif problem:
                return problem
        if plainly_deleted:
            return min(plainly_deleted, key=lambda asked_and_said: asked_and_said[0])[1]  # ties: in the order above
        problem = self._node_problem()
        if problem:
            return problem
        for job in jobs:
            for condition in job.status.conditions or []:
                if condition.type == "Failed" and condition.status == "True":
                    return f"the {_job_role(job)} Job failed: {condition.reason}: {condition.message}"
        return None

    def _last_states(self, gone: set[str], since: str | None) -> dict[str, V1Pod]:
        """The last state of pods that went between two checks, from the API server's history of changes
        since the earlier list, replayed by a watch. A pod that ends quickly (an evicted worker exits at
        SIGTERM; KWOK removes it at once) can be gone within a second, before the next check, and only
        its history says why. Empty where the history is not available (expired, or no right to watch)."""
        if not gone or since is None:
            return {}
        last: dict[str, dict[str, Any]] = {}
        deleted: set[str] = set()
        try:
            response = self.core.list_namespaced_pod(
                self.namespace, label_selector=self.selector, watch=True, resource_version=since, timeout_seconds=HISTORY_WAIT_S,
                _preload_content=False, _request_timeout=API_TIMEOUT_S,
            )
            try:
                for line in response:  # one event per line
                    event = json.loads(line) if line.strip() else {}
                    if event.get("type") == "ERROR":  # 410 Gone: the history no longer goes back that far
                        break
                    item = event.get("object") or {}
                    uid = item.get("metadata", {}).get("uid")
                    if uid in gone:
                        last[uid] = item
                        if event["type"] == "DELETED":
                            deleted.add(uid)
                    if deleted == gone:
                        break
            finally:  # closed: an unfinished watch's connection is no use to the pool
                response.close()
                response.release_conn()
        except (*API_ERRORS, ValueError) as error:
            log.debug("no history of the pods gone since resourceVersion %s: %s", since, error)
        return {uid: self.core.api_client.deserialize(_Body(json.dumps(item)), "V1Pod") for uid, item in last.items()}

    def _node_problem(self) -> str | None:
        """A node of the run's pods that is not ready (its kubelet silent, the node shutting down):
        its pods' work is lost or cannot be followed. Read every few seconds; skipped where the user
        may not read nodes."""
        if time.monotonic() - self._nodes_checked_at < NODE_CHECK_INTERVAL_S:
            return None
        self._nodes_checked_at = time.monotonic()
        placed = {}
        for pod in sorted(self.pods, key=_pod_order):
            if pod.spec.node_name and pod.status.phase in ("Pending", "Running"):
                placed.setdefault(pod.spec.node_name, pod)
        if not placed:
            return None
        try:
            nodes = self.core.list_node(_request_timeout=API_TIMEOUT_S).items  # one call, however many nodes
        except API_ERRORS as error:
            log.debug("cannot read the nodes: %s", error)
            return None
        for node in nodes:
            pod = placed.get(node.metadata.name)
            ready = next((c for c in node.status.conditions or [] if c.type == "Ready"), None)
            if pod is not None and ready is not None and ready.status != "True":
                return f"{_label(pod)}: node {node.metadata.name} not ready ({ready.reason}: {ready.message})"
        return None

    def _list_pods(self) -> list[V1Pod]:
        """The release's pods. The client's own parsing of a pod list costs about 1.5 ms of CPU per pod,
        more than a second per check at 1,000 workers: the list is parsed as plain JSON, and only pods
        that changed since the last check become V1Pod objects again."""
        document = pod_list(self.core, self.namespace, self.selector)
        self._listed_version = document["metadata"]["resourceVersion"]
        known, self._parsed = self._parsed, {}
        for item in document["items"]:
            key = (item["metadata"]["uid"], item["metadata"]["resourceVersion"])
            self._parsed[key] = known.get(key) or self.core.api_client.deserialize(_Body(json.dumps(item)), "V1Pod")
        return list(self._parsed.values())

    def ready_collector(self) -> str | None:
        for pod in self.pods:
            if _component(pod) == "collector" and pod.metadata.deletion_timestamp is None and _is_ready(pod):
                return pod.metadata.name
        return None

    def _pod_problem(self, pod: V1Pod) -> str | None:
        name, status = _label(pod), pod.status
        if pod.metadata.deletion_timestamp is not None:  # deleted, evicted, preempted while the run needs it
            return f"{name} {_disruption(pod)}"
        if status.reason == "Evicted":
            return f"{name} was evicted by the kubelet of node {pod.spec.node_name}: {status.message}"
        for condition in status.conditions or []:
            if condition.type == "PodScheduled" and condition.status == "False" and condition.reason == "Unschedulable":
                since = self._unschedulable_since.setdefault(pod.metadata.uid, time.monotonic())
                if time.monotonic() - since >= UNSCHEDULABLE_GRACE_S and not self._scale_up_triggered(pod):
                    return f"{name} cannot be scheduled (Pending, FailedScheduling): {condition.message}"
        for container in status.container_statuses or []:
            waiting, terminated = container.state.waiting, container.state.terminated
            if waiting and waiting.reason in FATAL_WAITING:
                detail = f": {waiting.message}" if waiting.message else ""
                return f"{name}: {waiting.reason} for image {container.image}{detail}"
            if terminated and terminated.exit_code != 0:
                return self._termination(pod, name, terminated, previous=False)
            last = container.last_state.terminated if container.last_state else None
            if last and last.exit_code != 0:  # restarted in place
                return self._termination(pod, name, last, previous=True)
            if terminated and _component(pod) == "collector":  # it ends by itself once nobody follows the run
                tail = self._log_tail(pod, previous=False)
                return f"{name} ended (exit code 0) before the run's report was fetched" + (f"; log: {tail}" if tail else "")
        if status.phase == "Failed":
            return f"{name} failed: {status.reason or 'Failed'}: {status.message or 'no message'}"
        return None

    def _termination(self, pod: V1Pod, name: str, terminated, previous: bool) -> str:
        reason = terminated.reason or "Error"
        text = f"{name} ended with {reason} (exit code {terminated.exit_code})"
        if reason == "OOMKilled":
            limits = pod.spec.containers[0].resources.limits or {}
            text += f": out of memory, its limit is {limits.get('memory', 'none')} (chart value {_component(pod)}.resources)"
        tail = self._log_tail(pod, previous)
        self.failed_log = self.log_dir / _log_name(pod)
        return text + (f"; log: {tail}" if tail else "")

    def _log_tail(self, pod: V1Pod, previous: bool) -> str:
        try:
            text = self._read_log(pod, tail_lines=LOG_TAIL_LINES, previous=previous)
        except API_ERRORS:
            return ""
        return " | ".join(line.strip() for line in text.splitlines() if line.strip())

    def _read_log(self, pod: V1Pod, **options: Any) -> str:
        # Unparsed: the client would turn the bytes into the text of their repr.
        response = self.core.read_namespaced_pod_log(
            pod.metadata.name, self.namespace, _preload_content=False, _request_timeout=API_TIMEOUT_S, **options,
        )
        return response.data.decode(errors="replace")

    def _scale_up_triggered(self, pod: V1Pod) -> bool:
        """A cluster autoscaler is adding a node for this pod: keep waiting for it."""
        try:
            events = self.core.list_namespaced_event(
                self.namespace, field_selector=f"involvedObject.uid={pod.metadata.uid},reason=TriggeredScaleUp",
                _request_timeout=API_TIMEOUT_S,
            ).items
        except API_ERRORS:
            return False
        return bool(events)

    def stop_workers(self) -> None:
        """End the workers of an aborted run at once. A worker is PID 1 in its container, where
        SIGTERM without a handler does nothing: the kubelet would wait out the whole grace period."""
        try:
            self.core.delete_collection_namespaced_pod(
                self.namespace, label_selector=f"{self.selector},app.kubernetes.io/component=worker",
                grace_period_seconds=WORKER_STOP_GRACE_S, _request_timeout=API_TIMEOUT_S,
            )
        except API_ERRORS as error:
            log.debug("cannot stop the workers: %s", error)

    def save_logs(self) -> None:
        """Write each pod's log into the run's log folder (best effort: the run's outcome matters more)."""
        try:
            self.pods = self._list_pods()
        except API_ERRORS as error:
            log.debug("cannot list the pods for their logs: %s", error)

        def save(pod: V1Pod) -> None:
            try:
                text = self._read_log(pod)
            except API_ERRORS as error:
                text = f"(no log of pod {pod.metadata.name}, phase {pod.status.phase}: {_short(error)})\n"
            (self.log_dir / _log_name(pod)).write_text(text)

        # A few at a time: one by one, 1,000 workers' logs take as many round trips to the kubelets.
        with ThreadPoolExecutor(LOG_THREADS) as pool:
            list(pool.map(save, self.pods))


# -- helpers ---------------------------------------------------------------------------------------

class _Body:
    """A response body as the client's deserialize() expects it."""

    def __init__(self, data: str):
        self.data = data


def _component(pod: V1Pod) -> str:
    return (pod.metadata.labels or {}).get("app.kubernetes.io/component", "pod")


def _job_role(job) -> str:
    return (job.metadata.labels or {}).get("app.kubernetes.io/component", "worker")


# Why Kubernetes ends a pod early: the DisruptionTarget condition's reasons.
DISRUPTIONS = {
    "EvictionByEvictionAPI": "was evicted (a node drain or the eviction API)",
    "PreemptionByScheduler": "was preempted by a pod of higher priority",
    "DeletionByTaintManager": "was deleted because its node is not ready or unreachable",
    "DeletionByPodGC": "was deleted because its node is gone",
    "TerminationByKubelet": "was stopped by its node's kubelet (node pressure or shutdown)",
}


def _plainly_deleted(pod: V1Pod) -> bool:
    """Deleted with no reason Kubernetes gives (a user, or a Job controller ending its pods)."""
    return pod.metadata.deletion_timestamp is not None and not any(
        c.type == "DisruptionTarget" and c.status == "True" for c in pod.status.conditions or [])


def _deletion_asked_at(pod: V1Pod | None) -> float:
    """When the pod's deletion was asked for (its deletionTimestamp is that plus its grace period);
    -inf when not known."""
    if pod is None or pod.metadata.deletion_timestamp is None:
        return float("-inf")
    return pod.metadata.deletion_timestamp.timestamp() - (pod.metadata.deletion_grace_period_seconds or 0)


def _still_running(pod: V1Pod | None) -> bool:
    """A container of the pod is still running (False when not known)."""
    if pod is None or pod.status is None:
        return False
    return any(container.state is not None and container.state.running is not None for container in pod.status.container_statuses or [])


def _disruption(pod: V1Pod) -> str:
    for condition in pod.status.conditions or []:
        if condition.type == "DisruptionTarget" and condition.status == "True":
            what = DISRUPTIONS.get(condition.reason, f"was ended by Kubernetes ({condition.reason})")
            return f"{what} on node {pod.spec.node_name}"
    return f"was deleted (on node {pod.spec.node_name})" if pod.spec.node_name else "was deleted"


def _index(pod: V1Pod) -> str:
    return (pod.metadata.annotations or {}).get(COMPLETION_INDEX, "?")


def _label(pod: V1Pod) -> str:
    role = f"worker {_index(pod)}" if _component(pod) == "worker" else _component(pod)
    return f"{role} (pod {pod.metadata.name})"


def _log_name(pod: V1Pod) -> str:
    return f"worker-{_index(pod)}.log" if _component(pod) == "worker" else f"{_component(pod)}.log"


def _pod_order(pod: V1Pod) -> tuple[int, str]:
    """Workers before the collector: a failing worker is usually the cause, the collector the victim."""
    return (0 if _component(pod) == "worker" else 1, _index(pod).zfill(6))


def _node_ready(node) -> str | None:
    """The status of the node's Ready condition ("True", "False", "Unknown"), None before it has one."""
    return next((c.status for c in node.status.conditions or [] if c.type == "Ready"), None)


def _is_ready(pod: V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def _short(error: BaseException) -> str:
    """A one-line reason from the client's exceptions (urllib3 wraps the real cause in a long repr)."""
    if isinstance(error, ApiException):
        return f"{error.status} {error.reason}".strip()
    reason = getattr(error, "reason", None) or error
    text = re.sub(r"<[^>]*>: ", "", str(reason))
    text = re.sub(r"^\w*(Error|Exception)\((.*)\)$", r"\2", text).strip("'\" ")
    return " ".join(text.split())


def _raise_left(left: str, report: RunReport | None, failure: BaseException | None) -> None:
    """The release stayed installed: never a success. A finished run's report goes with the error (its
    figures are sound); a run that failed says both what went wrong and what was left."""
    if failure is None:
        raise ReleaseLeft(left, report)
    if isinstance(failure, RunFailed):
        raise type(failure)(f"{failure}; {left}") from None
    error_line(left)  # an interrupt stays one: said here, since its own line says everything was stopped


def write_private_yaml(path: Path, values: dict[str, Any]) -> Path:
    # Created private (0600) before anything is written: it may hold passwords.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        yaml.safe_dump(values, file, sort_keys=False)
    return path


def _api_wait_s() -> float:
    text = os.environ.get(API_WAIT_ENV, "")
    try:
        return float(text) if text else API_WAIT_S
    except ValueError:
        raise UsageProblem(f"{API_WAIT_ENV} must be a number of seconds, got '{text}'") from None


def _image(image: Image) -> dict[str, str]:
    override = os.environ.get(IMAGE_ENV)
    if override:
        repository, colon, tag = override.rpartition(":")
        if not colon or not repository or "/" in tag:
            raise UsageProblem(f"{IMAGE_ENV} must be REPOSITORY:TAG, got '{override}'")
        try:
            image = Image(repository=repository, tag=tag, pull_policy=image.pull_policy)
        except ValidationError as error:
            raise UsageProblem(f"{IMAGE_ENV}: {error.errors()[0]['msg']}") from None
    return {"repository": image.repository, "tag": image.tag, "pullPolicy": image.pull_policy}


def _extra_values_files() -> list[Path]:
    paths = [Path(part) for part in os.environ.get(VALUES_ENV, "").split(os.pathsep) if part]
    for path in paths:
        if not path.is_file():
            raise UsageProblem(f"{VALUES_ENV}: values file {path} not found")
    return paths


def _load_kubeconfig(context: str | None) -> Configuration:
    """The kubeconfig (KUBECONFIG or ~/.kube/config) and its current or the given context; in a pod
    without kubeconfig, the pod's service account."""
    configuration = Configuration()
    # Named here: the client reads KUBECONFIG once, when it is first imported, not at each call.
    where = os.environ.get("KUBECONFIG") or "~/.kube/config"
    try:
        kubeconfig.load_kube_config(config_file=where, context=context, client_configuration=configuration)
    except kubeconfig.ConfigException as error:
        if context or "KUBERNETES_SERVICE_HOST" not in os.environ:
            raise UsageProblem(f"cannot use the kubeconfig {where}: {' '.join(str(error).split())}") from None
        kubeconfig.load_incluster_config(client_configuration=configuration)
    # Fail fast when the API server is unreachable; the followers retry on their own.
    configuration.retries = 1
    return configuration
