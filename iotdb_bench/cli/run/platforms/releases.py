"""The helm releases of runs, and whether the CLI that installed each one is still there.

While it follows a run, the CLI renews a heartbeat annotation on the release's spec ConfigMap (the
chart gives every release one, labelled as part of iotdb-bench). A CLI killed with SIGKILL stops
renewing it: once the heartbeat is older than the run's heartbeat timeout, the release is left
behind. (The collector has stopped the run by then: the CLI's status requests are its own dead-man
switch, see simulator/collector/service.py.) `python run.py cleanup` removes such releases, and the next
`insert` or `query` in the namespace warns about them. A release kept with --keep is marked so and
counts as left behind too: its CLI is gone by design. A detached run (insert --detach) has no heartbeat:
its own deadline replaces it, and it counts as left behind only once that has passed.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass

from kubernetes.client import CoreV1Api

from iotdb_bench.cli.terminal import warning_line

log = logging.getLogger(__name__)

HEARTBEAT_ANNOTATION = "iotdb-bench/heartbeat"
KEPT_ANNOTATION = "iotdb-bench/kept"
DETACHED_LABEL = "iotdb-bench/detached"
DEADLINE_ANNOTATION = "iotdb-bench/deadline"
SPEC_SELECTOR = "app.kubernetes.io/part-of=iotdb-bench,app.kubernetes.io/component=spec"
RELEASE_LABEL = "app.kubernetes.io/instance"
# The bound for releases of runs whose dead-man switch was off (heartbeat timeout 0).
DEFAULT_SILENCE_S = 30.0
LONGEST_RENEWAL_S = 5.0
API_TIMEOUT_S = 10


def silence_limit(heartbeat_timeout: float) -> float:
    return heartbeat_timeout if heartbeat_timeout > 0 else DEFAULT_SILENCE_S


class Heartbeat(threading.Thread):
    """Renews the release's heartbeat annotation a few times per silence limit, until stopped."""

    def __init__(self, core: CoreV1Api, namespace: str, release: str, heartbeat_timeout: float):
        super().__init__(name=f"heartbeat {release}", daemon=True)
        self.core, self.namespace, self.release = core, namespace, release
        self.interval = min(LONGEST_RENEWAL_S, silence_limit(heartbeat_timeout) / 3)
        self.stopped = threading.Event()

    def started(self) -> Heartbeat:
        problem = self.renew()  # at once: the release exists from now on
        if problem:
            warning_line(f"cannot renew the heartbeat on release {self.release} ({problem}): `python run.py cleanup` would count "
                         "this run as left behind once its heartbeat timeout passes")
        self.start()
        return self

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.renew()

    def renew(self, **extra: str) -> str | None:
        """Set the heartbeat to now; returns why it could not, or None."""
        annotations = {HEARTBEAT_ANNOTATION: f"{time.time():.0f}", **extra}
        try:
            for config_map in self.core.list_namespaced_config_map(
                self.namespace, label_selector=f"{SPEC_SELECTOR},{RELEASE_LABEL}={self.release}", _request_timeout=API_TIMEOUT_S,
            ).items:
                self.core.patch_namespaced_config_map(config_map.metadata.name, self.namespace, {"metadata": {"annotations": annotations}},
                                                      _request_timeout=API_TIMEOUT_S)
        except Exception as error:  # a missed beat is retried at the next one; the run goes on
            log.debug("cannot renew the heartbeat of %s: %s", self.release, error)
            status = getattr(error, "status", None)
            return f"{status} {getattr(error, 'reason', '')}".strip() if status else f"{type(error).__name__}: {error}"
        return None

    def stop(self, kept: bool = False) -> None:
        self.stopped.set()
        if kept:
            self.renew(**{KEPT_ANNOTATION: "true"})


@dataclass
class Release:
    name: str
    namespace: str
    run_id: str
    target: str
    task: str
    last_heard: float = 0.0  # epoch: the last heartbeat, or the release's creation
    limit_s: float = DEFAULT_SILENCE_S
    kept: bool = False
    deadline: float | None = None  # epoch: a detached run's deadline (None: an attached run)

    def silent_s(self, now: float | None = None) -> float:
        return max((now or time.time()) - self.last_heard, 0.0)

    def left_behind(self, now: float | None = None) -> bool:
        """Its CLI is gone: kept with --keep, or silent for longer than the run's heartbeat timeout; a
        detached run: past its own deadline."""
        if self.deadline is not None:
            return (now or time.time()) > self.deadline
        return self.kept or self.silent_s(now) > self.limit_s

    def state(self, now: float | None = None) -> str:
        if self.deadline is not None:
            left = self.deadline - (now or time.time())
            return f"detached, {left:.0f} s to its deadline" if left > 0 else "detached, past its deadline"
        if self.kept:
            return "kept with --keep"
        if self.left_behind(now):
            return "CLI gone"
        return "running (CLI alive)"


def list_releases(core: CoreV1Api, namespace: str | None) -> list[Release]:
    """The tool's releases in a namespace (None: in every namespace), from their spec ConfigMaps."""
    if namespace is None:
        items = core.list_config_map_for_all_namespaces(label_selector=SPEC_SELECTOR, _request_timeout=API_TIMEOUT_S).items
    else:
        items = core.list_namespaced_config_map(namespace, label_selector=SPEC_SELECTOR, _request_timeout=API_TIMEOUT_S).items
    found = []
    for config_map in items:
        metadata = config_map.metadata
        labels, annotations = metadata.labels or {}, metadata.annotations or {}
        spec = _spec(config_map.data or {})
        heartbeat = annotations.get(HEARTBEAT_ANNOTATION, "")
        deadline = annotations.get(DEADLINE_ANNOTATION, "")
        created = metadata.creation_timestamp.timestamp() if metadata.creation_timestamp else 0.0
        found.append(Release(
            name=labels.get(RELEASE_LABEL, metadata.name), namespace=metadata.namespace,
            run_id=labels.get("iotdb-bench/run-id", "?"), target=str(spec.get("target", "?")), task=str(spec.get("task", "?")),
            last_heard=float(heartbeat) if heartbeat.replace(".", "", 1).isdigit() else created,
            limit_s=silence_limit(float(spec.get("heartbeat_timeout") or 0)), kept=annotations.get(KEPT_ANNOTATION) == "true",
            deadline=(float(deadline) if deadline.isdigit() else 0.0) if labels.get(DETACHED_LABEL) == "true" else None,
        ))
    return sorted(found, key=lambda release: (release.namespace, release.last_heard))


def left_behind(core: CoreV1Api, namespace: str | None) -> list[Release]:
    now = time.time()
    return [release for release in list_releases(core, namespace) if release.left_behind(now)]


def warning(core: CoreV1Api, namespace: str) -> str | None:
    """One line about the releases left behind in the namespace, or None (also when they cannot be listed)."""
    try:
        found = left_behind(core, namespace)
    except Exception as error:
        log.debug("cannot list the releases left behind: %s", error)
        return None
    if not found:
        return None
    names = ", ".join(release.name for release in found[:3]) + (", ..." if len(found) > 3 else "")
    return (f"{len(found)} helm release(s) of earlier runs whose CLI is gone are still installed in namespace '{namespace}' ({names}): "
            f"remove them with: python run.py cleanup --namespace {namespace}")


def _spec(data: dict[str, str]) -> dict:
    try:
        spec = json.loads(data.get("spec.json", "{}"))
    except ValueError:
        return {}
    return spec if isinstance(spec, dict) else {}
