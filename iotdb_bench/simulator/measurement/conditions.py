"""The conditions a run's figures were measured under, as the processes of the run see them.

Figures compared months later are close to useless without them: which build of the tool, which
Python and driver versions, which database server version (as the server itself reports it), and on
Kubernetes which nodes ran what, from which image. The collector fills what it can see (software and
server); the platform adds where the pods ran (it alone talks to the Kubernetes API).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from pydantic import BaseModel, Field

from iotdb_bench import simulator

# Set at image build (Dockerfile ARG, scripts/k8s-image.sh): the image has no .git to ask.
COMMIT_ENV = "IOTBENCH_COMMIT"
UNKNOWN = "unknown"
_REPO = Path(__file__).resolve().parents[3]


class Build(BaseModel):
    """Which code produced the figures."""

    version: str
    commit: str = Field(UNKNOWN, description="git commit of the checkout or of the image's build; 'unknown' when neither says")
    modified: bool | None = Field(None, description="the checkout had uncommitted changes (None: not a checkout)")


class Software(BaseModel):
    """What the simulator processes (collector and workers) ran."""

    build: Build
    python: str
    drivers: dict[str, str] = Field(default_factory=dict, description="the target module's driver distributions and their versions")


class Node(BaseModel):
    """A Kubernetes node that ran part of the run, as its Node object describes it."""

    name: str
    roles: list[str] = Field(default_factory=list, description="database, collector, workers")
    instance_type: str | None = None
    zone: str | None = None
    architecture: str | None = None
    os_image: str | None = None
    kernel: str | None = None
    kubelet: str | None = None
    container_runtime: str | None = None
    cpu: str | None = Field(None, description="the node's CPU capacity")
    memory: str | None = Field(None, description="the node's memory capacity")
    labels: dict[str, str] = Field(default_factory=dict)


class Placement(BaseModel):
    """Where the pods of a Kubernetes run ran, and from which image."""

    nodes: list[Node] = Field(default_factory=list)
    image: str | None = None
    image_digest: str | None = Field(None, description="the image ID the kubelet reports in the pods' status")
    database: str = Field("", description="how the database's nodes were found, or why they are unknown")


class RunConditions(BaseModel):
    server_version: str | None = Field(None, description="the database server's version as the server reports it")
    server_version_error: str | None = Field(None, description="why the server's version could not be read")
    software: Software | None = None
    placement: Placement | None = Field(None, description="Kubernetes runs: nodes, image and digest")
    metrics_url: str | None = Field(None, description="where the collector served the run's Prometheus metrics (local runs; "
                                                      "in a cluster: the collector pod's port 'metrics')")


def build() -> Build:
    """This code's version and commit: from the git checkout it runs in, else from the image's build."""
    commit, modified = _git_commit()
    if commit is None:
        # scripts/k8s-image.sh marks an image built from a checkout with uncommitted changes.
        commit = os.environ.get(COMMIT_ENV) or UNKNOWN
        if commit.endswith("-modified"):
            commit, modified = commit.removesuffix("-modified"), True
    return Build(version=simulator.__version__, commit=commit, modified=modified)


@functools.cache  # one process asks git once (two subprocesses); the local platform's forked roles inherit it
def _git_commit() -> tuple[str | None, bool | None]:
    if not (_REPO / ".git").exists():
        return None, None
    try:
        head = subprocess.run(["git", "-C", str(_REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(["git", "-C", str(_REPO), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head.stdout.strip(), bool(status.stdout.strip()) if status.returncode == 0 else None


def distribution_versions(names: tuple[str, ...]) -> dict[str, str]:
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def software(drivers: tuple[str, ...]) -> Software:
    return Software(build=build(), python=sys.version.split()[0], drivers=distribution_versions(drivers))
