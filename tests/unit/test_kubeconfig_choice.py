"""The kubeconfig the CLI uses is the one KUBECONFIG names when the run starts. The client library
reads KUBECONFIG once, when it is first imported: a process (or a test session) that imported it
earlier with another or no KUBECONFIG must still use the file named now."""

from __future__ import annotations

import pytest
import yaml
from kubernetes.config import kube_config

from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.run.platforms.kubernetes import _load_kubeconfig


def write_kubeconfig(path, server: str) -> None:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "here",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "here", "context": {"cluster": "c", "user": "u"}}],
    }))


def test_the_kubeconfig_named_now_is_used_not_the_one_named_at_import(tmp_path, monkeypatch):
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(tmp_path / "absent-at-import"))
    write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:6443")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    assert _load_kubeconfig(None).host == "https://127.0.0.1:6443"


def test_a_missing_kubeconfig_is_named_in_a_usage_problem(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nothing-here"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(UsageProblem, match=r"cannot use the kubeconfig .*nothing-here"):
        _load_kubeconfig(None)
