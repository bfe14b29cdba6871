"""A study on the local Kubernetes: every cell its own helm release, as a single run; nothing left."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]

STUDY = """\
name: cluster
targets: [postgresql]
workers: [1, 2]
runs: 1
workloads:
  - {name: copy, insert: {num-inserts: 2000, batch: 500}}
  - {name: queries, query: {queries: [count-events, device-downsample]}, workers: [1], runs: 2}
"""


def test_a_study_runs_each_cell_as_its_own_release(cluster, tmp_path):
    (tmp_path / "study.yaml").write_text(STUDY)
    result = run_cli(["study", "study.yaml", "--config", str(cluster.config)], tmp_path, env=cluster.env, timeout=900)
    assert result.code == 0, result.stderr
    document = json.loads((tmp_path / "results" / "study-cluster" / "study.json").read_text())
    assert [cell["status"] for cell in document["cells"]] == ["ok", "ok", "ok"]
    run_ids = set()
    for cell in document["cells"]:
        results = json.loads((tmp_path / "results" / "study-cluster" / cell["folder"] / "results.json").read_text())
        assert results["platform"] == "kubernetes" and results["status"] == "ok"
        run_ids |= {run["report"]["run_id"] for run in results["runs"]}
    assert len(run_ids) == 3  # one release (run id) per run of each cell
    queries = document["cells"][2]["queries"]
    assert [row["answer"] for row in queries] == ["ok", "ok"]
    cluster.assert_nothing_left()
