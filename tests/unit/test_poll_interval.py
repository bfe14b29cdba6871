"""How often the CLI asks the collector for the run's status: every poll costs the CLI and the
collector CPU, which inside the timed phase is taken from the database on shared cores."""

from __future__ import annotations

import time

from iotdb_bench.cli.run.platforms.follow import POLL_INTERVAL_BUSY_S, POLL_INTERVAL_EDGE_S, POLL_INTERVAL_S, _poll_interval
from iotdb_bench.simulator.protocol import Status


def status(phase: str, events: int = 0, finished: int = 0, duration_s: float = 0.0, start_at: float | None = None) -> Status:
    return Status(phase=phase, workers=2, registered=2, ready=2, finished=finished, events=events, expected_events=1_000_000,
                  prefilled=0, expected_prefill=0, duration_s=duration_s, start_at=start_at)


def test_fast_outside_the_timed_phase_slower_at_its_edges_slow_in_its_bulk():
    started = time.monotonic() - 1.0
    assert _poll_interval(status("preparing"), None) == POLL_INTERVAL_S
    assert _poll_interval(status("running"), started) == POLL_INTERVAL_EDGE_S  # no progress reported yet
    assert _poll_interval(status("running", events=100_000), started) == POLL_INTERVAL_BUSY_S  # 9 s to go at this rate
    assert _poll_interval(status("running", events=800_000), started) == POLL_INTERVAL_EDGE_S  # a quarter second to go
    assert _poll_interval(status("running", events=900_000, finished=1), started) == POLL_INTERVAL_EDGE_S
    now = time.time()
    assert _poll_interval(status("running", events=5, duration_s=30, start_at=now - 1), started) == POLL_INTERVAL_BUSY_S
    assert _poll_interval(status("running", events=5, duration_s=30, start_at=now - 29), started) == POLL_INTERVAL_EDGE_S
    assert POLL_INTERVAL_S < POLL_INTERVAL_EDGE_S < POLL_INTERVAL_BUSY_S
