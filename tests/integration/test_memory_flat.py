"""Memory does not grow with a run's length (docs/scale.md): every process of a run of the null target
(the CLI, the collector, each worker) read from /proc every second, as a user watching a long run would,
and its growth after the first seconds extrapolated to ten minutes must stay far below what anything
kept per call or per event would take (the null target makes thousands of calls a second).

CI runs this 40-second run, not a 1-minute one beside a 10-minute one (benchmarks/memory_flat.py does
that); the bounds themselves (per-second series at a bounded resolution, resource readings thinned) are
driven over hours of data in tests/unit/test_bounded_series.py.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import psutil
import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

DURATION_S = 45
SETTLED_S = 20  # the first seconds fill caches and pools: not growth with the run's length
# A process may grow by this much over ten minutes, extrapolated: far below a leak per call (batches of
# 100: thousands of calls a second) or per event (millions a second), which would take hundreds of MB.
# A worker's first minutes fill its allocator's pools (about 25 MB per 10 min extrapolated from them;
# it levels off within two minutes: benchmarks/memory_flat.py).
MOST_PER_TEN_MINUTES = 50e6


def test_no_process_of_a_run_grows_with_its_length(tmp_path):
    cli = subprocess.Popen([sys.executable, str(REPO_ROOT / "run.py"), "insert", "--target", "null", "-w", "2", "-r", "1", "--batch", "100",
                            "--duration", str(DURATION_S), "--output", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env={**os.environ, "IOTBENCH_PLOTS": "0"})
    readings: dict[int, list[tuple[float, int]]] = {}
    began = time.monotonic()
    root = psutil.Process(cli.pid)
    while cli.poll() is None:
        try:
            processes = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        for process in processes:
            try:
                readings.setdefault(process.pid, []).append((time.monotonic() - began, process.memory_info().rss))
            except psutil.Error:
                continue
        time.sleep(1.0)
    assert cli.wait(timeout=60) == 0, cli.stderr.read().decode()
    grown = {}
    for pid, found in readings.items():
        settled = [(at, rss) for at, rss in found if at >= SETTLED_S]
        if len(settled) < 15:  # a process of the run's start or end, not of its timed phase
            continue
        start, end = statistics.median(rss for _, rss in settled[:5]), statistics.median(rss for _, rss in settled[-5:])
        span = statistics.fmean(at for at, _ in settled[-5:]) - statistics.fmean(at for at, _ in settled[:5])
        grown[pid] = (end - start) / span * 600
    assert len(grown) >= 4, f"the CLI, the collector and both workers were read through the timed phase: {sorted(grown)}"
    assert max(grown.values()) < MOST_PER_TEN_MINUTES, {pid: f"{bytes_ / 1e6:.1f} MB per 10 min" for pid, bytes_ in grown.items()}
