"""Latency of the query clients of a mixed run: each named query under ingest (while the insert
workers run) and on the idle database right after (same data), one HdrHistogram per query and
phase per client, merged across clients and pods like the insert latencies (simulator/measurement/stats.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from hdrh.histogram import HdrHistogram
from pydantic import BaseModel, Field

from iotdb_bench.simulator.measurement import live_figures
from iotdb_bench.simulator.measurement.stats import Latency, latency_of, new_histogram
from iotdb_bench.simulator.protocol import QueryHistograms, QueryProgress

Phase = Literal["ingest", "idle"]
# A client keeps the first few distinct error lines of a query, not one per failed execution.
MAX_ERRORS = 3


def record_seconds(histogram: HdrHistogram, seconds: float) -> None:
    """One sample in microseconds, clamped to the histogram's range."""
    histogram.record_value(min(max(round(seconds * 1e6), 1), histogram.highest_trackable_value))


class QueryLatencyRecorder:
    """One query client's executions: a histogram (microseconds) per query and phase."""

    def __init__(self, names: Iterable[str]):
        self.histograms = {name: {"ingest": new_histogram(), "idle": new_histogram()} for name in names}
        self.seconds = {name: {"ingest": 0.0, "idle": 0.0} for name in self.histograms}  # the exact sums, for the live figures
        self.errors: dict[str, list[str]] = {name: [] for name in self.histograms}
        self.failures = dict.fromkeys(self.histograms, 0)

    def record(self, name: str, phase: Phase, seconds: float) -> None:
        record_seconds(self.histograms[name][phase], seconds)
        self.seconds[name][phase] += seconds

    def error(self, name: str, message: str) -> None:
        self.failures[name] += 1
        if message not in self.errors[name] and len(self.errors[name]) < MAX_ERRORS:
            self.errors[name].append(message)

    def live(self) -> dict[str, QueryProgress]:
        """Each query's executions so far, both phases together (read by the progress reporter)."""
        return {name: QueryProgress(latency=live_figures.added(live_figures.of_histogram(histogram, self.seconds[name][phase])
                                                               for phase, histogram in phases.items()),
                                    errors=self.failures[name])
                for name, phases in self.histograms.items()}

    def payload(self) -> dict[str, QueryHistograms]:
        def encoded(histogram: HdrHistogram) -> str:
            return histogram.encode().decode("ascii") if histogram.get_total_count() else ""

        return {name: QueryHistograms(under_ingest=encoded(phases["ingest"]), idle=encoded(phases["idle"]), errors=self.errors[name])
                for name, phases in self.histograms.items()}


class QueryUnderIngest(BaseModel):
    """One query of a mixed run, all query clients together."""

    under_ingest: Latency | None = Field(None, description="executions while the insert workers ran")
    idle: Latency | None = Field(None, description="executions on the idle database right after the timed phase (same data)")
    errors: list[str] = Field(default_factory=list)

    @property
    def slowdown(self) -> float | None:
        """p50 under ingest / p50 idle."""
        if self.under_ingest is None or self.idle is None or not self.idle.p50_ms:
            return None
        return self.under_ingest.p50_ms / self.idle.p50_ms


def merge_query_latencies(per_client: Iterable[Mapping[str, QueryHistograms]], names: Iterable[str]) -> dict[str, QueryUnderIngest]:
    """Every client's histograms of each query, merged per phase (clients that did not run a query add nothing)."""
    clients = list(per_client)
    merged: dict[str, QueryUnderIngest] = {}
    for name in names:
        ingest, idle, errors = new_histogram(), new_histogram(), []
        for client in clients:
            histograms = client.get(name)
            if histograms is None:
                continue
            for target, encoded in ((ingest, histograms.under_ingest), (idle, histograms.idle)):
                if encoded:
                    target.add(HdrHistogram.decode(encoded))
            errors += [error for error in histograms.errors if error not in errors]
        merged[name] = QueryUnderIngest(
            under_ingest=latency_of(ingest) if ingest.get_total_count() else None,
            idle=latency_of(idle) if idle.get_total_count() else None,
            errors=errors,
        )
    return merged
