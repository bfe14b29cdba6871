"""Memory does not grow with a run's length (docs/scale.md): every process of a run of the null target
(the CLI, the collector, each worker) read from /proc every second by benchmarks/scale_run.py, as a
user watching a long run would, and its growth after the first seconds extrapolated to ten minutes must
stay far below what anything kept per call or per event would take (the null target makes thousands of
calls a second).

CI runs this 45-second run, not a 1-minute one beside a 10-minute one (benchmarks/memory_flat.py does
that); the bounds themselves (per-second series at a bounded resolution, resource readings thinned) are
driven over hours of data in tests/unit/test_bounded_series.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

# A process may grow by this much over ten minutes, extrapolated: far below a leak per call (batches of
# 100: thousands of calls a second) or per event (millions a second), which would take hundreds of MB.
# A worker's first minutes fill its allocator's pools (about 25 MB per 10 min extrapolated from them;
# it levels off within two minutes: benchmarks/memory_flat.py).
MOST_PER_TEN_MINUTES = 50e6


def test_no_process_of_a_run_grows_with_its_length(tmp_path):
    figures = tmp_path / "figures.json"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "scale_run.py"), "--sample-s", "1", "--settled-s", "20",
                           "--json", str(figures), "--", "insert", "--target", "null", "-w", "2", "-r", "1", "--batch", "100",
                           "--duration", "45", "--output", str(tmp_path / "results")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "IOTBENCH_PLOTS": "0"})
    assert done.returncode == 0, done.stderr
    grown = json.loads(figures.read_text())["growth_bytes_per_10_min"]
    assert {"cli", "collector", "worker 0", "worker 1"} <= set(grown), "every process of the run was read through its timed phase"
    assert max(grown.values()) < MOST_PER_TEN_MINUTES, {name: f"{value / 1e6:.1f} MB per 10 min" for name, value in grown.items()}
