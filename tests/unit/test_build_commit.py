"""The build a run names in its conditions (results.json's `commit`): this checkout's commit, found from
where the code lives (a path that broke when simulator/ was split into folders gave `unknown`)."""

from __future__ import annotations

import subprocess

from iotdb_bench.simulator.measurement import conditions
from tests.conftest import REPO_ROOT


def test_a_run_in_a_checkout_names_its_commit():
    head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    build = conditions.build()
    assert build.commit == head and build.modified is not None
