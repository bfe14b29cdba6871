"""Helpers for the chart tests: find helm, render the chart, check pod specs.

The tests need the helm binary: $IOTBENCH_HELM if set, else helm on PATH, else the local
cluster's cache ($K8S_LOCAL_CACHE/bin, default /var/cache/k8s-local/bin, built by shared/k8s-local/build).
Without helm the tests fail: a chart test that silently skips tests nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART_DIR = REPO_ROOT / "iotdb_bench" / "deployment"
HELM_FALLBACKS = (Path(os.environ.get("K8S_LOCAL_CACHE", "/var/cache/k8s-local")) / "bin" / "helm",)
RELEASE = "bench-t1"
NAMESPACE = "bench"

# Volume types the restricted Pod Security Standard allows.
RESTRICTED_VOLUME_TYPES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}


def find_helm() -> str | None:
    explicit = os.environ.get("IOTBENCH_HELM")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    on_path = shutil.which("helm")
    if on_path:
        return on_path
    for candidate in HELM_FALLBACKS:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


@pytest.fixture(scope="session")
def helm() -> str:
    path = find_helm()
    if path is None:
        pytest.fail(
            "helm not found: the chart tests need the helm binary ($IOTBENCH_HELM, on PATH or at "
            f"{HELM_FALLBACKS[0]}; build it with shared/k8s-local/build, or install helm >= 3.14)",
            pytrace=False,
        )
    return path


class HelmError(Exception):
    """helm exited non-zero; the message holds its stderr."""


def run_helm(helm: str, args: list[str]) -> str:
    proc = subprocess.run([helm, *args], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise HelmError(proc.stderr.strip() or proc.stdout.strip())
    return proc.stdout


@pytest.fixture
def helm_template(helm: str, tmp_path: Path) -> Callable[..., list[dict[str, Any]]]:
    """Render the chart: helm_template(values, set_files={"spec": text}, release=...)."""

    def _render(
        values: dict[str, Any] | None = None,
        *,
        set_files: dict[str, str] | None = None,
        release: str = RELEASE,
    ) -> list[dict[str, Any]]:
        args = ["template", release, str(CHART_DIR), "--namespace", NAMESPACE]
        values_file = tmp_path / f"values-{len(list(tmp_path.iterdir()))}.yaml"
        values_file.write_text(yaml.safe_dump(values or {}))
        args += ["-f", str(values_file)]
        for key, text in (set_files or {}).items():
            path = tmp_path / f"file-{key}-{len(list(tmp_path.iterdir()))}"
            path.write_text(text)
            args += ["--set-file", f"{key}={path}"]
        out = run_helm(helm, args)
        return [doc for doc in yaml.safe_load_all(out) if doc]

    return _render


@pytest.fixture
def render(helm_template) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """render(values) -> the rendered objects, as dicts."""
    return lambda values=None: helm_template(values)


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(objects, kind)
    assert len(found) == 1, f"expected one {kind}, got {len(found)}"
    return found[0]


def role(objects: list[dict[str, Any]], component: str) -> dict[str, Any]:
    """The one workload of a role: the collector's Job or the workers' Job."""
    found = [o for o in by_kind(objects, "Job") if o["metadata"]["labels"]["app.kubernetes.io/component"] == component]
    assert len(found) == 1, f"expected one Job of the {component}, got {len(found)}"
    return found[0]


def pod_templates(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(object name, pod template) of every workload in objects."""
    return [
        (o["metadata"]["name"], o["spec"]["template"])
        for o in objects
        if o["kind"] in {"Deployment", "Job", "StatefulSet", "DaemonSet", "ReplicaSet"}
    ]


def restricted_violations(pod_spec: dict[str, Any]) -> list[str]:
    """Everything in pod_spec that the restricted Pod Security Standard (v1.33) forbids,
    plus the chart's own rule that every container has a read-only root filesystem."""
    problems: list[str] = []
    pod_sc = pod_spec.get("securityContext") or {}

    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if pod_spec.get(field):
            problems.append(f"pod: {field} is set")
    if pod_sc.get("windowsOptions", {}).get("hostProcess"):
        problems.append("pod: hostProcess")

    for volume in pod_spec.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUME_TYPES:
            problems.append(f"volume {volume['name']}: type {sorted(kinds)} not allowed")

    for sysctl in pod_sc.get("sysctls") or []:
        if sysctl["name"] not in SAFE_SYSCTLS:
            problems.append(f"pod: unsafe sysctl {sysctl['name']}")

    pod_seccomp = (pod_sc.get("seccompProfile") or {}).get("type")
    if pod_seccomp not in (None, "RuntimeDefault", "Localhost"):
        problems.append(f"pod: seccompProfile {pod_seccomp}")
    if pod_sc.get("runAsUser") == 0:
        problems.append("pod: runAsUser 0")
    se_linux = pod_sc.get("seLinuxOptions") or {}
    if se_linux.get("user") or se_linux.get("role"):
        problems.append("pod: seLinuxOptions user/role set")

    containers = [
        *(pod_spec.get("initContainers") or []),
        *(pod_spec.get("containers") or []),
        *(pod_spec.get("ephemeralContainers") or []),
    ]
    if not pod_spec.get("containers"):
        problems.append("pod: no containers")
    for c in containers:
        name = f"container {c.get('name')}"
        sc = c.get("securityContext") or {}
        if sc.get("privileged"):
            problems.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name}: allowPrivilegeEscalation is not false")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            problems.append(f"{name}: capabilities do not drop ALL")
        extra_caps = set(caps.get("add") or []) - {"NET_BIND_SERVICE"}
        if extra_caps:
            problems.append(f"{name}: adds capabilities {sorted(extra_caps)}")
        run_as_non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
        if run_as_non_root is not True:
            problems.append(f"{name}: runAsNonRoot is not true")
        if sc.get("runAsUser") == 0:
            problems.append(f"{name}: runAsUser 0")
        seccomp = (sc.get("seccompProfile") or {}).get("type", pod_seccomp)
        if seccomp not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{name}: seccompProfile is {seccomp}, not RuntimeDefault/Localhost")
        if sc.get("procMount") not in (None, "Default"):
            problems.append(f"{name}: procMount {sc.get('procMount')}")
        c_se_linux = sc.get("seLinuxOptions") or {}
        if c_se_linux.get("user") or c_se_linux.get("role"):
            problems.append(f"{name}: seLinuxOptions user/role set")
        for port in c.get("ports") or []:
            if port.get("hostPort"):
                problems.append(f"{name}: hostPort {port['hostPort']}")
        if sc.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{name}: readOnlyRootFilesystem is not true")
    return problems


class ChartHelpers:
    """Helper functions, handed to the tests by the `chart` fixture (importing conftest
    directly is fragile when several test folders have one)."""

    release = RELEASE
    namespace = NAMESPACE
    chart_dir = CHART_DIR
    by_kind = staticmethod(by_kind)
    one = staticmethod(one)
    role = staticmethod(role)
    pod_templates = staticmethod(pod_templates)
    restricted_violations = staticmethod(restricted_violations)
    run_helm = staticmethod(run_helm)
    HelmError = HelmError


@pytest.fixture(scope="session")
def chart() -> type[ChartHelpers]:
    return ChartHelpers
