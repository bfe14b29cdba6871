"""The live progress line's figures come from the collector's status: during a real local run the
status carries the p99 of the workers' last progress interval, a figure the run's own latencies bear
out (the null target with a 2 ms delay per call: no call is faster)."""

from __future__ import annotations

import pytest

from iotdb_bench.cli.run.platforms.local import LocalPlatform
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.spec import RunSpec

pytestmark = pytest.mark.slow


def test_the_status_carries_the_last_intervals_p99_while_the_run_goes_on(tmp_path):
    spec = RunSpec(run_id="live", task="insert", target="null", module="null", workers=2, duration_s=3.5, extra={"call_delay_ms": "2"})
    seen: list[Status] = []
    platform = LocalPlatform()
    try:
        report = platform.run(spec, 120, seen.append, tmp_path / "logs")
    finally:
        platform.close()
    live = [status.interval_p99_ms for status in seen if status.phase == "running" and status.interval_p99_ms is not None]
    assert len(live) >= 3, [(s.phase, s.interval_p99_ms) for s in seen]
    latency = report.figures.latency
    assert all(2.0 <= p99 <= latency.max_ms * 1.01 for p99 in live), (live, latency)
    # once every worker has finished there is no live figure left
    assert seen[-1].interval_p99_ms is None
