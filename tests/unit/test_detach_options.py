"""insert --detach: the options it needs, refused in one line with exit 2 (before anything is installed)."""

from __future__ import annotations

from tests.conftest import run_cli


def test_detach_needs_a_timeout(tmp_path):
    done = run_cli(["insert", "--target", "null", "--platform", "kubernetes", "--detach"], tmp_path)
    assert done.code == 2
    assert done.stderr.strip().splitlines() == [
        "error: --detach needs --timeout (seconds one run may take): a detached run's own deadline replaces this command's heartbeat"]


def test_detach_needs_the_kubernetes_platform(tmp_path):
    done = run_cli(["insert", "--target", "null", "--platform", "local", "--detach", "--timeout", "60"], tmp_path)
    assert done.code == 2
    assert done.stderr.strip().splitlines() == ["error: --detach needs the kubernetes platform (this run's platform is local)"]


def test_detach_refuses_keep_and_find_max_rate(tmp_path):
    keep = run_cli(["insert", "--target", "null", "--platform", "kubernetes", "--detach", "--timeout", "60", "--keep"], tmp_path)
    assert keep.code == 2 and len(keep.stderr.strip().splitlines()) == 1 and "--keep" in keep.stderr
    search = run_cli(["insert", "--target", "null", "--platform", "kubernetes", "--detach", "--timeout", "60", "--find-max-rate",
                      "--latency-p99", "5"], tmp_path)
    assert search.code == 2 and len(search.stderr.strip().splitlines()) == 1 and "--find-max-rate" in search.stderr
    assert not (tmp_path / "results").exists()
