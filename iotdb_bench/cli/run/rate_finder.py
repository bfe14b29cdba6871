"""--find-max-rate: the highest rate a target sustains within a response-time p99, found by short
real open-loop runs (each saved with all its figures like any run); the choice of rates is in
cli/results/rate_search.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from iotdb_bench.cli.results.rate_search import MaxRateSearch, RateStep, answer, next_rate, passed
from iotdb_bench.cli.run import runner
from iotdb_bench.cli.run.platforms import Platform, StatusCallback


def search(invocation: runner.Invocation, platform: Platform, log_dir: Path, on_start: Callable[[runner.PlannedRun], StatusCallback],
           found: MaxRateSearch) -> MaxRateSearch:
    """Run the steps into `invocation.finished` and `found` (kept up to date, so an interrupted
    search still saves what it tried)."""
    while (rate := next_rate(found.steps, found.max_rate)) is not None:
        step = runner.Invocation(invocation.base.model_copy(update={"rate": rate}), invocation.worker_counts, 1, 0,
                                 invocation.timeout, finished=invocation.finished, on_run_done=invocation.on_run_done)
        runner.execute(step, platform, log_dir, on_start)
        report = invocation.finished[-1].report
        figures = report.figures
        response = figures.response_latency
        found.steps.append(RateStep(
            run_id=report.run_id, target_rate=rate, achieved_rate=figures.throughput, response_p50_ms=response.p50_ms,
            response_p99_ms=response.p99_ms, service_p99_ms=figures.latency.p99_ms, sustained=figures.rate.sustained,
            passed=passed(response.p99_ms, figures.rate.sustained, found.latency_p99_ms),
        ))
        found.answer = answer(found.steps)
    found.limited_by_max_rate = bool(found.max_rate and found.answer is not None and found.answer >= found.max_rate)
    found.finished = True
    return found
