"""results.json as typed models: what one invocation of the CLI ran and measured.

`format_version` changes whenever a reader of an older file would misread it. The run reports are
the collector's own typed reports (simulator/report.py); the rows across runs are derived from them
in one place (cli/results/summary.py) and saved with them so the files keep every figure.
"""

from __future__ import annotations

import os
import platform
import sys
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from iotdb_bench import simulator
from iotdb_bench.cli.config import ConfigSource
from iotdb_bench.cli.results import host as host_info
from iotdb_bench.cli.results.cost import Cost, InsertCost, QueryCost
from iotdb_bench.cli.results.host import Host
from iotdb_bench.cli.results.rate_search import MaxRateSearch
from iotdb_bench.cli.results.resource_figures import ResourceFigures
from iotdb_bench.cli.results.row_flags import RowFlag
from iotdb_bench.simulator.measurement import conditions
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.measurement.stats import InsertRunFigures, QueryFigures, Spread

FORMAT_VERSION = 2
Status = Literal["running", "ok", "failed", "interrupted"]
Task = Literal["insert", "query", "scan"]


class Environment(BaseModel):
    """Where and how the invocation ran: the CLI's build and machine, and every option it was given.
    (What the collector and the workers ran, and where, is in each run report's `conditions`.)"""

    tool_version: str = ""
    commit: str = Field(default="", description="git commit of the CLI's checkout, 'unknown' outside one")
    modified: bool | None = Field(default=None, description="the checkout had uncommitted changes")
    python: str = ""
    platform: str = ""
    machine: str = ""
    cpus: int | None = None
    host: Host | None = Field(default=None, description="the CLI's machine; on the local platform, also the run's")
    created: str = ""
    command: list[str] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict, description="every option of the command, defaults included")
    command_line: list[str] = Field(default_factory=list, description="the command and every option as the CLI spells them, "
                                    "defaults included: it reproduces the invocation")
    config: ConfigSource | None = Field(default=None, description="the config file the command read, and what chose it")

    @classmethod
    def here(cls, options: dict[str, Any], command_line: list[str], command: list[str]) -> Environment:
        """This machine's and build's, with the command's options, its command line and the process's arguments."""
        build = conditions.build()
        return cls(
            tool_version=simulator.__version__, commit=build.commit, modified=build.modified, python=sys.version.split()[0],
            platform=platform.platform(), machine=platform.node(), cpus=os.cpu_count(), host=host_info.describe(),
            created=datetime.now(UTC).isoformat(timespec="seconds"), command=command, options=_plain(options),
            command_line=command_line,
        )


def _plain(value: Any) -> Any:
    """Option values as JSON has them (paths and tuples from click)."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def insert_figures(report: RunReport) -> InsertRunFigures:
    """An insert run's figures; a report without them is no insert run (ResultsDocument.insert_runs
    leaves such runs out, so this never fails on the runs it gives)."""
    if report.figures is None:
        raise ValueError(f"run {report.run_id} has no insert figures")
    return report.figures


class RunRecord(BaseModel):
    """One run of the invocation (a worker count's repetition, or a fill-level step) and its report."""

    label: str
    workers: int
    run: int
    step: int | None = None
    report: RunReport
    without_queries: bool = Field(default=False, description="--compare-idle: the twin of a mixed run, without its query clients")


class InsertRow(BaseModel):
    """One worker count (or one fill-level step) across its runs."""

    workers: int
    step: int | None = None
    level: int | None = Field(default=None, description="events in the database before the step (fill level)")
    runs: int
    insert_mode: str
    throughput: Spread
    seed_formula_throughput: Spread
    p50_ms: float = Field(description="mean of the runs' p50 call latency")
    p95_ms: float
    p99_ms: Spread
    max_ms: float = Field(description="the slowest call of all runs")
    client_overhead: float = Field(description="mean of the runs' client overhead")
    start_skew_s: float = Field(description="the largest start skew of the runs")
    retries: int
    count_check: str = Field(description="ok, FAILED or not applicable, over the runs")
    count_check_s: float | None = Field(default=None, description="seconds the count check took (the counts before and after), mean over the runs")
    record_s: float | None = Field(default=None, description="seconds the record of expected answers took after the timed phase, mean over the runs")
    resources: ResourceFigures | None = Field(default=None, description="what the runs cost the database and the client (means over the runs)")
    flags: list[RowFlag] = Field(default_factory=list, description="why the row's figures are not worth reading as they stand")
    cost: InsertCost | None = Field(default=None, description="at the target's price (config.yaml cost:); absent without one")
    values_per_row: int | float = Field(default=1, description="measured values per event (row) of the run's shape (TSBS's devops "
                                        "and IoT: points / rows)")
    values_throughput: Spread | None = Field(default=None, description="values (data points) per second across the runs: inserts/s x values per row")
    # open-loop runs (--rate): the schedule's target, and latency from each call's intended start
    target_rate: float | None = Field(default=None, description="--rate: events per second asked for; throughput is the rate achieved")
    sustained: str | None = Field(default=None, description="yes, or NO when a run ended behind its schedule by more than its limit")
    behind_s: float | None = Field(default=None, description="the most a run was behind its schedule at its end")
    max_lag_s: float | None = Field(default=None, description="the most any call started after its intended start")
    response_p50_ms: float | None = Field(default=None, description="mean of the runs' p50 response time (intended start to end)")
    response_p95_ms: float | None = None
    response_p99_ms: Spread | None = None
    response_max_ms: float | None = None
    query_workers: int = Field(default=0, description="query clients beside the workers (mixed workload)")
    throughput_without_queries: Spread | None = Field(default=None, description="--compare-idle: inserts/s of the same runs without query clients")
    visibility_p50_ms: float | None = Field(default=None, description="--visibility: mean of the runs' p50 lag from writing a marker to a query seeing it")
    visibility_p99_ms: float | None = None
    visibility_max_ms: float | None = Field(default=None, description="the longest lag of all runs")
    visibility_unseen: int | None = Field(default=None, description="markers no query saw within the probe's limit, all runs")


class QueryUnderIngestRow(BaseModel):
    """One query of the mixed runs at one worker count: under ingest beside idle (means over the runs)."""

    workers: int
    query_workers: int
    query: str
    runs: int
    executions: int = Field(description="executions under ingest, all runs")
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    idle_executions: int = 0
    idle_p50_ms: float | None = None
    idle_p99_ms: float | None = None
    slowdown: float | None = Field(default=None, description="p50 under ingest / p50 idle")
    errors: list[str] = Field(default_factory=list)


class QueryRow(QueryFigures):
    """One query at one worker count."""

    workers: int
    query: str
    cost: QueryCost | None = Field(default=None, description="at the target's price (config.yaml cost:); absent without one")


class ScanRow(BaseModel):
    """One worker count's scan runs."""

    workers: int
    runs: int
    devices: int
    rows: int = Field(description="rows read per run (of the last run)")
    rows_per_s: Spread = Field(description="rows read by all workers per second, across runs")
    window_min: float | None = Field(default=None, description="slowest 10,000-row window of any worker in any run, rows/s")
    window_avg: float | None = Field(default=None, description="mean over the runs of their windows' mean rate, rows/s per worker")
    window_max: float | None = None
    page_p50_ms: float = Field(description="mean of the runs' p50 latency per page or fetch")
    page_p99_ms: float
    page_max_ms: float
    check: str = Field(description="ok, FAILED, or order ok, counts not checked; over the runs")
    check_s: float | None = Field(default=None, description="seconds the order and count checks took (all workers), mean over the runs")
    problem: str | None = Field(default=None, description="the first failed check, or why counts were not checked")


Operator = Literal[">=", "<=", ">", "<", "==", "!="]


class Threshold(BaseModel):
    """A line a figure must not cross (`--threshold`, a study file's `thresholds:`): parsed and checked
    by cli/results/thresholds.py, written as the user wrote it."""

    expression: str = Field(description="as given, e.g. inserts_per_s>=100000 or query.device-downsample.p95_ms<50")
    figure: str = Field(description="the figure's name in the catalogue (cli/results/tables/catalogue.py)")
    query: str | None = Field(default=None, description="query.<name>.<figure>: the rows of this query only")
    operator: Operator
    limit: float | str = Field(description="a number, or the words of a check (count_check==ok)")

    def __str__(self) -> str:
        return self.expression


class JudgedRow(BaseModel):
    """One row of the run a threshold was judged on (a worker count, a fill-level step, a query)."""

    where: str = Field(description="the row in words: '4 workers', 'step 2', 'query lastpoint at 1 worker'")
    workers: int
    step: int | None = None
    query: str | None = None
    value: float | str | None = Field(description="the figure's value (its words for a check); None: not measured")
    shown: str = Field(description="the value as the tables write it")
    passed: bool


class ThresholdVerdict(BaseModel):
    """A threshold and its verdict: it passes when every row it concerns passes (k6's rule for thresholds)."""

    threshold: Threshold
    passed: bool | None = Field(default=None, description="None: not judged yet (a detached run until `attach` saves it)")
    rows: list[JudgedRow] = Field(default_factory=list)
    problem: str | None = Field(default=None, description="why it failed without a row to show (no row has the figure)")


class ResultsDocument(BaseModel):
    format_version: int = FORMAT_VERSION
    task: Task
    target: str
    platform: str
    status: Status = "running"
    error: str | None = None
    environment: Environment
    spec: RunSpec
    worker_counts: list[int]
    runs_per_worker_count: int = 1
    steps: int = 0
    cost: Cost | None = Field(default=None, description="the target's price when the runs were made")
    runs: list[RunRecord] = Field(default_factory=list)
    planned_runs: int | None = Field(default=None, description="runs the invocation planned (None: not known in advance, --find-max-rate)")
    time_limit_reached: bool = Field(default=False, description="--time-limit ended the invocation: its last run cut short, or runs not started")
    inserts: list[InsertRow] = Field(default_factory=list)
    queries: list[QueryRow] = Field(default_factory=list)
    scans: list[ScanRow] = Field(default_factory=list)
    max_rate: MaxRateSearch | None = Field(default=None, description="--find-max-rate: the rates tried and the answer")
    queries_under_ingest: list[QueryUnderIngestRow] = Field(default_factory=list)
    thresholds: list[ThresholdVerdict] = Field(default_factory=list, description="--threshold: each threshold and its verdict")

    def insert_runs(self) -> list[RunRecord]:
        """The runs that finished with insert figures."""
        return [run for run in self.runs if run.report.figures is not None and not run.without_queries]

    def runs_without_queries(self) -> list[RunRecord]:
        """--compare-idle: the twins of the mixed runs, without their query clients."""
        return [run for run in self.runs if run.report.figures is not None and run.without_queries]
