"""The HTTP payloads exchanged by workers, the collector and the CLI."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from iotdb_bench.simulator.checks.answer_digest import KeptAnswer
from iotdb_bench.simulator.checks.expected import Expected

Phase = Literal["preparing", "waiting", "running", "done", "failed"]
PHASES: tuple[Phase, ...] = ("preparing", "waiting", "running", "done", "failed")
# The header every request names its run by: a collector refuses another run's (collector/service.py), so a
# worker or CLI that reached the wrong collector (two local runs that drew one port, a worker of an earlier
# release still running beside a new one) fails instead of mixing its figures into that run.
RUN_HEADER = "X-Iotbench-Run"

# Upper bounds of the latency buckets of the live figures, in seconds (the `le` bounds of the
# collector's Prometheus histograms): 10 us to 1 minute, 1-2.5-5 per decade, and above that +Inf.
LATENCY_BUCKETS_S = (1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2,
                     0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0)


class WorkerHello(BaseModel):
    worker: int = Field(ge=0)


class LatencyCounts(BaseModel):
    """Timed calls so far and their durations: the running form of a latency histogram."""

    count: int = Field(0, ge=0)
    sum_s: float = Field(0.0, ge=0, description="their durations added up")
    buckets: list[int] = Field(default_factory=list, description="cumulative: how many took at most each of LATENCY_BUCKETS_S "
                                                                 "(empty: none yet)")


class QueryProgress(BaseModel):
    """One named query's executions by one worker so far."""

    latency: LatencyCounts = Field(default_factory=LatencyCounts, description="the executions that returned")
    errors: int = Field(0, ge=0, description="executions that failed")


class LiveFigures(BaseModel):
    """A worker's running totals, sent with each progress report and with its result: what the
    collector's Prometheus metrics show (simulator/collector/metrics.py)."""

    latency: LatencyCounts = Field(default_factory=LatencyCounts, description="every timed call's service time (inserts, scan pages)")
    retries: int = Field(0, ge=0)
    errors: int = Field(0, ge=0, description="calls that failed without failing the worker (query executions)")
    behind_s: float | None = Field(None, description="open-loop runs: how far behind its schedule the worker is")
    max_lag_s: float | None = Field(None, description="open-loop runs: the most a call started after its intended start so far")
    queries: dict[str, QueryProgress] = Field(default_factory=dict)


class WorkerProgress(BaseModel):
    worker: int = Field(ge=0)
    events: int = Field(ge=0, description="events of the timed phase done so far")
    prefilled: int = Field(0, ge=0)
    interval_p99_ms: float | None = Field(None, description="p99 latency of the calls since the worker's last progress report (None: no call)")
    live: LiveFigures | None = None
    work_done: int = Field(0, ge=0, description="query and scan runs: executions done (or given up) and devices scanned so far")
    work_total: int = Field(0, ge=0, description="query and scan runs: the executions and devices this worker has to do (0: not known yet)")


class WorkerFailure(BaseModel):
    worker: int = Field(ge=0)
    error: str
    # The module refused what it was asked (a ModuleError: e.g. data it cannot query), not a crash.
    refused: bool = False


class QueryRuns(BaseModel):
    """Every execution of one named query by one worker, in order (the first one is 'cold')."""

    seconds: list[float] = Field(default_factory=list)
    rows: int | None = None
    error: str | None = None
    answer: Literal["ok", "wrong", "not checked"] | None = Field(None, description="the check of the answers (wrong if any execution was)")
    answer_detail: str | None = Field(None, description="the first difference from the expected answer, or why it was not checked")
    check_s: float = Field(0.0, description="seconds spent checking the answers (outside the timed calls)")
    empty: int = Field(0, description="executions that returned no row")
    # query-file queries (simulator/queries/query_file.py): what the answers were, for the comparison across targets
    answers: list[KeptAnswer] = Field(default_factory=list, description="each distinct (parameters, answer) of the executions, normalised and hashed")
    data: str | None = Field(None, description="fingerprint of the data the answers are over (the record of what the tool wrote); None: unknown")


class ScanOutcome(BaseModel):
    """One worker's scan: what it read, its checks, and its rate over windows of 10,000 rows."""

    devices: int = 0
    devices_planned: int = Field(0, description="the devices of this worker's share (more than `devices` when --time-limit ended the scan)")
    rows: int = 0
    order_problems: int = 0
    first_order_problem: str | None = None
    counts_checked: bool = False
    count_note: str | None = Field(None, description="why the counts were not checked")
    count_problems: int = 0
    first_count_problem: str | None = None
    windows: int = 0
    window_min: float | None = None
    window_max: float | None = None
    window_sum: float = Field(0.0, description="sum of the window rates (their mean is window_sum / windows)")
    check_s: float = Field(0.0, description="seconds spent checking order and counts, between the pages")


class QueryHistograms(BaseModel):
    """One query client's executions of one query in a mixed run: HdrHistograms (microseconds, base64)."""

    under_ingest: str = Field("", description="while the insert workers ran")
    idle: str = Field("", description="on the idle database right after the timed phase")
    errors: list[str] = Field(default_factory=list)


class WorkerResult(BaseModel):
    worker: int = Field(ge=0)
    started_at: float = Field(description="wall-clock time the timed phase began on this worker")
    finished_at: float
    events: int = 0
    calls: int = 0
    prefilled: int = 0
    db_seconds: float = Field(0, description="time spent inside database calls")
    retries: int = 0
    histogram: str = Field("", description="HdrHistogram of call latencies in microseconds, base64")
    per_second: list[int] = Field(default_factory=list, description="events finished in each window of series_window_s from the common start")
    series_window_s: int = Field(1, ge=1, description="the windows' length: 1 s, coarser in a long run (simulator/measurement/windows.py)")
    response_histogram: str = Field("", description="open-loop runs: HdrHistogram of response times (intended start to end) in microseconds, base64")
    behind_s: float | None = Field(None, description="open-loop runs: how far behind its schedule the worker was at the end")
    max_lag_s: float | None = Field(None, description="open-loop runs: the most a call started after its intended start")
    cpu_s: float | None = Field(None, description="CPU seconds (user + system, every thread) of this worker process in its timed phase, from its own rusage")
    pregenerated_bytes: int | None = Field(None, description="--pregenerate: the memory the timed phase's batches took, made before the common start")
    stream_end: int | None = Field(None, description="insert runs: the position after the last event stored (where a continuing run starts)")
    queries: dict[str, QueryRuns] = Field(default_factory=dict)
    expected: Expected | None = Field(None, description="insert runs: aggregates of every event this worker inserted (prefill included)")
    scan: ScanOutcome | None = None
    role: Literal["worker", "query-client"] = Field("worker", description="a worker of the run's task, or a query client of a mixed insert run")
    query_latencies: dict[str, QueryHistograms] = Field(default_factory=dict, description="query clients of a mixed run")
    live: LiveFigures | None = Field(None, description="the live figures at the end (the metrics' final values; not kept in the report)")
    time_limit_reached: bool = Field(False, description="--time-limit ended the timed phase before this worker's work was done")
    work_done: int = Field(0, ge=0, description="query and scan runs: the executions or devices done by the end (those given up after an error count as done)")
    tally_s: float | None = Field(None, description="insert runs: seconds the expected answers of the timed phase took to tally, after it")


class ProgressAnswer(BaseModel):
    """The collector's answer to a progress report: a worker stops when the run has failed (another
    worker failed, or the CLI was not heard from: the dead-man switch)."""

    phase: Phase
    error: str | None = None


class StartSignal(BaseModel):
    start_at: float | None = None
    phase: Phase


class Status(BaseModel):
    phase: Phase
    workers: int
    registered: int
    ready: int
    finished: int
    events: int
    expected_events: int
    prefilled: int
    expected_prefill: int
    error: str | None = None
    refused_input: bool = Field(False, description="the run failed before its timed phase because the database refused the user's "
                                                   "input (a query file's text): a usage problem")
    start_at: float | None = Field(None, description="the common start of the timed phase, once published")
    duration_s: float = Field(0.0, description="length of the timed phase of a --duration run; 0 = a count of events")
    interval_p99_ms: float | None = Field(None, description="the highest of the running workers' p99 over their last progress interval "
                                                           "(about a second): a live figure, not the run's")
    work_done: int = Field(0, description="query and scan runs: executions done and devices scanned by every worker so far")
    work_total: int = Field(0, description="query and scan runs: the executions or devices of every worker that has said (0: none yet)")
