"""The run's report: the one output of a run, as the run spec is its one input.

The collector serves it at `/report`, every platform returns it, the CLI renders and saves it. A new
figure is a field here, the code that fills it, and the one place that renders it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from iotdb_bench.simulator.measurement.conditions import RunConditions
from iotdb_bench.simulator.measurement.query_latency import QueryUnderIngest
from iotdb_bench.simulator.measurement.resources import ResourceUsage
from iotdb_bench.simulator.measurement.stats import InsertRunFigures, Latency, QueryFigures, ScanFigures
from iotdb_bench.simulator.protocol import WorkerResult
from iotdb_bench.simulator.spec import RunSpec


class IngestionWait(BaseModel):
    """For databases that acknowledge writes before they are stored (queued ingestion, asynchronous
    commits): how long after the timed phase the database held every acknowledged event."""

    expected: int
    counted: int
    reached: bool
    seconds_after_run: float | None = Field(description="from the end of the timed phase until the count was reached")
    waited_s: float
    limit_s: float

    def sentence(self) -> str:
        if self.reached:
            return f"all {self.expected:,} events stored {self.seconds_after_run:.1f} s after the run"
        return f"only {self.counted:,} of {self.expected:,} events stored within {self.limit_s:g} s"


class Verification(BaseModel):
    """The database's count after an insert run against what it held before plus what was inserted."""

    count_before: int | None
    prefilled: int
    markers: int = Field(0, description="--visibility's marker events, stored through the same path and counted in")
    inserted: int
    expected: int | None
    counted: int | None
    applicable: bool = Field(description="false when nothing is stored to count (the null target)")
    ok: bool | None
    count_before_s: float | None = Field(None, description="seconds the count before the run took (None: the run before's count after was used)")
    count_after_s: float | None = Field(None, description="seconds the count after the run took")

    def seconds(self) -> float | None:
        """The count check's time: both counts (None: neither was timed, a report of an older version)."""
        timed = [s for s in (self.count_before_s, self.count_after_s) if s is not None]
        return sum(timed) if timed else None

    def verdict(self) -> str:
        if not self.applicable:
            return "not applicable"
        return "ok" if self.ok else "FAILED"

    def failure(self) -> str | None:
        """One line saying why the check failed; None when it passed or does not apply."""
        if not self.applicable or self.ok:
            return None
        markers = f" + {self.markers} visibility markers" if self.markers else ""
        return (f"the database holds {self.counted} events but {self.expected} were expected ({self.count_before} before "
                f"+ {self.prefilled} prefilled + {self.inserted} reported by the workers{markers})")


class ServerSide(BaseModel):
    """The database's own view of an insert run, where it exposes one."""

    storage_bytes: int | None = None
    storage_bytes_at_start: int | None = Field(None, description="data size before the timed phase (after the prefill)")
    counters_at_start: dict[str, int] | None = None
    counters_at_end: dict[str, int] | None = None


class VisibilityLag(BaseModel):
    """`--visibility`: marker events written through the module's insert path during the timed phase,
    each followed by queries until one sees it. Lag = from the start of the marker's write to the
    start of the first query that saw it (resolution: one poll, `poll_s` plus a query's time)."""

    markers: int = Field(description="markers the database acknowledged (they are in the count check's expected figure)")
    seen: int
    unseen: int = Field(description="markers no query saw within `limit_s`")
    lag: Latency | None = Field(None, description="one sample per seen marker, milliseconds")
    acknowledged: Latency | None = Field(None, description="the markers' write calls (until the database acknowledged)")
    poll_s: float
    limit_s: float
    error: str | None = None


class RunReport(BaseModel):
    run_id: str
    task: Literal["insert", "query", "scan"]
    spec: RunSpec
    start_at: float | None = Field(description="the common start of the timed phase, epoch seconds")
    insert_mode: str = Field("", description="how events reach the database, as the module names it")
    notes: list[str] = Field(default_factory=list, description="what a reader of the figures must know about the module")
    conditions: RunConditions | None = Field(None, description="software, server version and (Kubernetes) placement of the run")
    # insert runs
    figures: InsertRunFigures | None = None
    verification: Verification | None = None
    server: ServerSide | None = None
    ingestion: IngestionWait | None = None
    expected_record: str | None = Field(None, description="insert runs: what the run left as the record of expected answers")
    record_s: float | None = Field(None, description="insert runs: seconds to tally the expected answers after the timed phase (the slowest "
                                                     "worker's) and to merge and store the record (the collector's)")
    # mixed runs (--query-workers) and --visibility
    queries_under_ingest: dict[str, QueryUnderIngest] = Field(default_factory=dict, description="each query under ingest and idle")
    visibility: VisibilityLag | None = None
    # query runs
    queries: dict[str, QueryFigures] = Field(default_factory=dict)
    # scan runs
    scan: ScanFigures | None = None
    time_limit_reached: bool = Field(False, description="--time-limit ended the timed phase before the run's work was done: its figures "
                                                         "cover what was done by then")
    workers: list[WorkerResult] = Field(default_factory=list, description="each worker's result, histograms left out")
    worker_series: bool = Field(True, description="whether `workers` hold each worker's per-second series: left out when they "
                                                  "would be large (many workers, long runs); figures.per_second has their sum")
    collector_cpu_s: float | None = Field(None, description="the collector's CPU seconds (rusage) from publishing the common start (a moment before it) to the arrival of the last result, before it is decoded")
    # what the run cost the database and the client, sampled beside the run by the platform
    resources: ResourceUsage | None = None

    def failure(self) -> str | None:
        """Why the run must count as failed although it ran to the end (a check that did not pass), or None."""
        if self.verification is not None and self.verification.failure():
            return f"verification failed: {self.verification.failure()}"
        wrong = {name: figures for name, figures in self.queries.items() if figures.answer == "wrong"}
        if wrong:
            name, figures = next(iter(wrong.items()))
            others = f" (and {len(wrong) - 1} more: {', '.join(list(wrong)[1:])})" if len(wrong) > 1 else ""
            return f"wrong answer from query {name}: {figures.answer_detail}{others}"
        if self.scan is not None and self.scan.failure():
            return f"scan check failed: {self.scan.failure()}"
        return None
