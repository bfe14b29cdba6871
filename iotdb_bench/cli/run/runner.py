"""Plans the runs of one invocation (worker counts x runs, or fill-level steps), executes them on a
platform, and fails the invocation on the first run whose check did not pass."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from iotdb_bench.cli.errors import ReleaseLeft, RunFailed
from iotdb_bench.cli.results.document import RunRecord
from iotdb_bench.cli.run.platforms import Platform, StatusCallback
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.stream_continuation import continue_after, events_per_worker


@dataclass
class PlannedRun:
    label: str
    spec: RunSpec
    workers: int
    run: int
    step: int | None = None
    without_queries: bool = False  # the --compare-idle twin of a run with query clients


@dataclass
class Invocation:
    """What one command asked for: the base spec plus the sets to iterate over."""

    base: RunSpec
    worker_counts: tuple[int, ...]
    runs: int
    steps: int = 0
    timeout: float = 0
    finished: list[RunRecord] = field(default_factory=list)
    # --compare-idle: each run with query clients is followed by the same run without them
    compare_idle: bool = False
    # Called with each run's record as soon as the run has ended (passed or not): a run of hours
    # keeps the figures of its finished runs and steps even if the CLI dies before the last one.
    on_run_done: Callable[[RunRecord], None] | None = None
    # --time-limit: seconds the whole invocation may take (0: none), and whether it cut the invocation short
    time_limit: float = 0
    time_limit_reached: bool = False


def _workers(count: int) -> str:
    return f"{count} worker" + ("" if count == 1 else "s")


def new_run_id(label: str = "") -> str:
    return f"run-{secrets.token_hex(4)}{label}"


def plan(invocation: Invocation) -> list[PlannedRun]:
    base = invocation.base
    if base.task == "query":
        return [
            PlannedRun(_workers(w), base.model_copy(update={"workers": w, "run_id": new_run_id()}), w, 1)
            for w in invocation.worker_counts
        ]
    if base.task == "scan":
        return [
            PlannedRun(f"{_workers(w)}, run {run}/{invocation.runs}" if invocation.runs > 1 else _workers(w),
                       base.model_copy(update={"workers": w, "run_id": new_run_id()}), w, run)
            for w in invocation.worker_counts for run in range(1, invocation.runs + 1)
        ]
    planned: list[PlannedRun] = []
    # Without cleaning, data accumulates: each run continues the workers' event streams where the
    # previous one stopped, so client-generated keys never repeat within an invocation.
    offset = 0
    total = len(invocation.worker_counts) * invocation.runs
    for w in invocation.worker_counts:
        for run in range(1, (invocation.steps or invocation.runs) + 1):
            if invocation.steps:
                update = {"clean": base.clean and run == 1, "stream_offset": offset}
                label = f"step {run}/{invocation.steps}"
            else:
                update = {"stream_offset": 0 if base.clean else offset}
                label = f"{_workers(w)}, run {run}/{invocation.runs}" if total > 1 else _workers(w)
                label += f" at {base.rate:,.0f}/s" if base.rate else ""
            spec = base.model_copy(update={**update, "workers": w, "run_id": new_run_id()})
            planned.append(PlannedRun(label, spec, w, run, run if invocation.steps else None))
            offset += events_per_worker(base.model_copy(update={"workers": w}))
            if invocation.compare_idle and base.query_workers:
                alone = spec.model_copy(update={"query_workers": 0, "query_rate": 0.0, "run_id": new_run_id()})
                planned.append(PlannedRun(f"{label}, no queries", alone, w, run, run if invocation.steps else None, without_queries=True))
                offset += events_per_worker(base.model_copy(update={"workers": w}))
    return planned


def execute(
    invocation: Invocation,
    platform: Platform,
    log_dir: Path,
    on_start: Callable[[PlannedRun], StatusCallback],
) -> list[RunRecord]:
    """Run every planned run in order; stop at the first failure (already finished runs are kept): a
    run that failed, or one whose check did not pass (count, query answers, scan order and counts).
    With a time limit, each run's timed phase ends by the invocation's limit, and no run starts after it."""
    continue_at = 0
    counted: int | None = None  # the tables' events when the last run ended (exact: its count check passed)
    ends_at = time.monotonic() + invocation.time_limit if invocation.time_limit else None
    for planned in plan(invocation):
        if ends_at is not None:
            left = ends_at - time.monotonic()
            if left <= 0:
                invocation.time_limit_reached = True
                break
            planned.spec = planned.spec.model_copy(update={"time_limit_s": left})
        if planned.spec.stream_offset:
            # A run that continues the streams starts where the workers of the runs before stopped: only
            # they know where that is after a --duration run (or one with late events).
            planned.spec = planned.spec.model_copy(update={"stream_offset": continue_at})
        if not planned.spec.clean and counted is not None:  # its tables as the run before left them: no need to count again
            planned.spec = planned.spec.model_copy(update={"count_before": counted})
        on_status = on_start(planned)
        released: ReleaseLeft | None = None
        try:
            report = platform.run(planned.spec, invocation.timeout, on_status, log_dir / planned.spec.run_id)
        except ReleaseLeft as problem:
            if problem.report is None:
                raise
            report, released = problem.report, problem  # the figures are kept; the invocation stops as failed
        continue_at = continue_after(continue_at, planned.spec, report)
        counted = report.verification.counted if report.verification is not None and report.verification.ok else None
        record = RunRecord(label=planned.label, workers=planned.workers, run=planned.run, step=planned.step, report=report,
                           without_queries=planned.without_queries)
        invocation.finished.append(record)
        if invocation.on_run_done is not None:
            invocation.on_run_done(record)
        failure = report.failure()
        if failure:
            raise RunFailed(failure + (f"; {released}" if released else ""))
        if released:
            raise RunFailed(str(released))
        if report.time_limit_reached:
            invocation.time_limit_reached = True
            break
    return invocation.finished
