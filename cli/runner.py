"""Plans the runs of one invocation (worker counts x runs, or fill-level steps), executes them on a
platform, verifies every insert run against the database's own count, and summarises the figures."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli.errors import RunFailed
from cli.platforms import Platform, StatusCallback
from simulator import stats
from simulator.spec import RunSpec


@dataclass
class PlannedRun:
    label: str
    spec: RunSpec
    workers: int
    run: int
    step: int | None = None


@dataclass
class Outcome:
    planned: PlannedRun
    report: dict[str, Any]


@dataclass
class Invocation:
    """What one command asked for: the base spec plus the sets to iterate over."""

    base: RunSpec
    worker_counts: tuple[int, ...]
    runs: int
    steps: int = 0
    timeout: float = 0
    outcomes: list[Outcome] = field(default_factory=list)


def new_run_id(label: str = "") -> str:
    return f"run-{secrets.token_hex(4)}{label}"


def plan(invocation: Invocation) -> list[PlannedRun]:
    base = invocation.base
    if base.task == "query":
        return [
            PlannedRun(f"{w} workers", base.model_copy(update={"workers": w, "run_id": new_run_id()}), w, 1)
            for w in invocation.worker_counts
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
                label = f"{w} workers, run {run}/{invocation.runs}" if total > 1 else f"{w} workers"
            spec = base.model_copy(update={**update, "workers": w, "run_id": new_run_id()})
            planned.append(PlannedRun(label, spec, w, run, run if invocation.steps else None))
            offset += base.num_inserts + math.ceil(base.prefill / w)
    return planned


def execute(
    invocation: Invocation,
    platform: Platform,
    log_dir: Path,
    on_start: Callable[[PlannedRun], StatusCallback],
) -> list[Outcome]:
    """Run every planned run in order; stop at the first failure (already finished runs are kept)."""
    for planned in plan(invocation):
        on_status = on_start(planned)
        report = platform.run(planned.spec, invocation.timeout, on_status, log_dir / planned.spec.run_id)
        invocation.outcomes.append(Outcome(planned, report))
        if planned.spec.task == "insert":
            verify(report)
    return invocation.outcomes


def verify(report: dict[str, Any]) -> None:
    check = report["verification"]
    if check.get("applicable", True) and not check["ok"]:
        raise RunFailed(
            f"verification failed: the database holds {check['counted']} events but {check['expected']} were expected "
            f"({check['count_before']} before + {check['prefilled']} prefilled + {check['inserted']} reported by the workers)"
        )


# -- summaries ------------------------------------------------------------------------------------

def insert_summary(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """One row per worker count: throughput across runs and the latency of the calls."""
    rows = []
    for workers in dict.fromkeys(o.planned.workers for o in outcomes):
        figures = [o.report["figures"] for o in outcomes if o.planned.workers == workers]
        latency = [f["latency"] for f in figures]
        rows.append({
            "workers": workers,
            "runs": len(figures),
            "throughput": stats.spread([f["throughput"] for f in figures]).model_dump(),
            "seed_formula_throughput": stats.spread([f["seed_formula_throughput"] for f in figures]).model_dump(),
            "p50_ms": _mean(l["p50_ms"] for l in latency),
            "p95_ms": _mean(l["p95_ms"] for l in latency),
            "p99_ms": _mean(l["p99_ms"] for l in latency),
            "max_ms": max(l["max_ms"] for l in latency),
            "client_overhead": _mean(f["client_overhead"] for f in figures),
            "start_skew_s": max(f["start_skew_s"] for f in figures),
            "retries": sum(f["retries"] for f in figures),
        })
    return rows


def steps_summary(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Fill level: events present before each step, and the step's insert rate."""
    return [
        {"step": o.planned.step, "level": o.report["verification"]["count_before"], "throughput": o.report["figures"]["throughput"]}
        for o in outcomes
    ]


def query_summary(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    return [
        {"workers": o.planned.workers, "query": name, **figures}
        for o in outcomes
        for name, figures in o.report["queries"].items()
    ]


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)
