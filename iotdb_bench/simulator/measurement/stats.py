"""Figures: per-worker recording, aggregation across the workers of a run, and across runs.

How each figure is computed (also in README.md, "How figures are computed"):
- throughput = all timed events / (latest worker end - common start); values/s = that x values per event;
- seed formula = all timed events / mean worker duration (the original tool's figure, for comparison);
- latency = one sample per database call, HdrHistogram per worker, merged: service time (call start to
  end); with --rate also response time (intended start on the schedule to end, so a stall counts for
  every call it held back: no coordinated omission);
- per-second series = events whose call ended in each 1 s window after the common start (coarser windows,
  2 s, 4 s..., once a run outlasts windows.MAX_WINDOWS seconds: memory does not grow with a run's length);
- client overhead = share of the workers' timed phase spent outside database calls;
- start skew = latest minus earliest actual start of the timed phase across workers.
"""

from __future__ import annotations

import math
import statistics
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from hdrh.histogram import HdrHistogram
from pydantic import BaseModel, Field, computed_field, model_validator

from iotdb_bench.simulator.checks import answer_digest
from iotdb_bench.simulator.checks.answer_digest import KeptAnswer
from iotdb_bench.simulator.measurement import live_figures
from iotdb_bench.simulator.measurement.windows import Windows
from iotdb_bench.simulator.protocol import LatencyCounts, QueryRuns, ScanOutcome, WorkerResult
from iotdb_bench.simulator.workload.schedule import behind_limit_s

# Call latencies in microseconds, from 1 us to 1 hour, 3 significant digits.
_LOWEST_US, _HIGHEST_US, _DIGITS = 1, 3_600_000_000, 3


def new_histogram() -> HdrHistogram:
    return HdrHistogram(_LOWEST_US, _HIGHEST_US, _DIGITS)


def _micros(seconds: float) -> int:
    return min(max(round(seconds * 1e6), _LOWEST_US), _HIGHEST_US)


class _TakenIn:
    """A figure of a CallRecorder (kept as `_name`), read once the calls waiting are taken in."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attribute = f"_{name}"

    def __get__(self, recorder: CallRecorder | None, owner: type | None = None) -> Any:
        if recorder is None:
            return self
        recorder._take_in()
        return getattr(recorder, self.attribute)


class CallRecorder:
    """Records every database call of one worker's timed phase.

    A call only appends its figures to a list: after each database call the caches are cold, and
    putting one value into an HdrHistogram then cost the timed loop 10-13 us of CPU per call, as much
    as a tenth of a 1000-event COPY (benchmarks/postgres_overhead.py; docs/performance.md). The
    histograms, counts and per-second series take the calls in when they are read (by the progress
    reporter about once a second, from its own thread) or when many are waiting."""

    events = _TakenIn()  # events, calls, seconds inside calls, the per-second series, the histograms:
    calls = _TakenIn()  # each read after the waiting calls are taken in
    db_seconds = _TakenIn()
    windows = _TakenIn()  # the per-second series (Windows: 1 s windows, coarser in a long run)
    histogram = _TakenIn()
    response_histogram = _TakenIn()
    TAKE_IN_AFTER = 4096  # calls waiting at most: a recorder nobody reads stays small
    INTERVAL_KEPT = 65_536  # service times kept for interval_p99_ms when nobody asks (the latest)

    def __init__(self, common_start: float):
        self.common_start = common_start
        self._histogram = new_histogram()
        self._response_histogram = new_histogram()  # open-loop runs only
        self._events = 0
        self._calls = 0
        self._db_seconds = 0.0
        self._windows = Windows()
        self._interval_seconds: list[float] = []  # service times taken in since interval_p99_ms last asked
        self._waiting: list[tuple[int, float, float, float | None]] = []
        self._taking_in = threading.Lock()

    def record(self, events: int, seconds: float, ended_at: float, response_s: float | None = None) -> None:
        """A call of `events` that took `seconds` (service time) and ended at `ended_at` (epoch);
        `response_s`: from its intended start to its end, in open-loop runs."""
        waiting = self._waiting
        waiting.append((events, seconds, ended_at, response_s))
        if len(waiting) >= self.TAKE_IN_AFTER:
            self._take_in()

    def _take_in(self) -> None:
        """Adds the waiting calls to the figures. Safe against `record` on another thread: only the
        calls seen here are removed (list appends and slice deletions are atomic in CPython)."""
        with self._taking_in:
            waiting = self._waiting
            count = len(waiting)
            add_to_window, start = self._windows.add, self.common_start
            interval = self._interval_seconds
            for events, seconds, ended_at, response_s in waiting[:count]:
                interval.append(seconds)
                self._histogram.record_value(_micros(seconds))
                if response_s is not None:
                    self._response_histogram.record_value(_micros(response_s))
                self._events += events
                self._db_seconds += seconds
                add_to_window(max(int(ended_at - start), 0), events)
            self._calls += count
            del waiting[:count]
            if len(interval) > self.INTERVAL_KEPT:
                del interval[: -self.INTERVAL_KEPT // 2]

    def encoded_histogram(self) -> str:
        return self.histogram.encode().decode("ascii")

    def interval_p99_ms(self) -> float | None:
        """p99 of the calls recorded since the last time this was asked (the progress reporter's, about
        once a second; None without a call). Read from another thread than the recording one: a call
        recorded meanwhile counts in this interval or the next."""
        self._take_in()
        with self._taking_in:
            seconds, self._interval_seconds = self._interval_seconds, []
        if not seconds:
            return None
        seconds.sort()
        return seconds[math.ceil(len(seconds) * 0.99) - 1] * 1000

    def latency_counts(self) -> LatencyCounts:
        """The calls so far as live latency counts (read by the progress reporter; one consistent
        snapshot: no call taken in between the count and the buckets)."""
        self._take_in()
        with self._taking_in:
            return live_figures.of_histogram(self._histogram, self._db_seconds)

    def encoded_response_histogram(self) -> str:
        histogram = self.response_histogram
        return histogram.encode().decode("ascii") if histogram.get_total_count() else ""


class Latency(BaseModel):
    """Latency of one database call, in milliseconds."""

    calls: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float


class RateFigures(BaseModel):
    """An open-loop run (--rate): its schedule against what the workers achieved."""

    target: float = Field(description="events per second asked for (--rate), all workers together")
    achieved: float = Field(description="events / (latest worker end - common start), the run's throughput")
    behind_s: float = Field(description="how far behind its schedule the furthest worker was at the end of the run")
    max_lag_s: float = Field(description="the most any call started after its intended start")
    limit_s: float = Field(description="behind by more than this at the end: not sustained")
    sustained: bool


class InsertRunFigures(BaseModel):
    workers: int
    events: int
    prefilled: int
    duration_s: float
    throughput: float = Field(description="events / (latest worker end - common start)")
    seed_formula_throughput: float = Field(description="events / mean worker duration, the original tool's figure")
    latency: Latency = Field(description="service time: from each call's start to its end")
    response_latency: Latency | None = Field(None, description="open-loop runs: from each call's intended start to its end")
    rate: RateFigures | None = Field(None, description="open-loop runs: target and achieved rate")
    per_second: list[int] = Field(description="events whose call ended in each window of series_window_s after the common start")
    series_window_s: int = Field(1, description="the windows' length: 1 s, or 2, 4... s in a run longer than windows.MAX_WINDOWS s")
    client_overhead: float = Field(description="share of the timed phase spent outside database calls")
    start_skew_s: float
    retries: int
    values_per_event: int | float = Field(1, description="measured values per event (row) of the run's shape (TSBS's devops and IoT: "
                                          "their points / rows)")
    values_throughput: float = Field(description="values (data points) / (latest worker end - common start): inserts/s x values per event")

    @model_validator(mode="before")
    @classmethod
    def _values_of_older_reports(cls, data: Any) -> Any:
        """Reports saved before values/s existed had one value per event."""
        if isinstance(data, dict) and "values_throughput" not in data and "throughput" in data:
            return {**data, "values_throughput": data["throughput"] * data.get("values_per_event", 1)}
        return data


def merge_latency(encoded_histograms: Iterable[str]) -> Latency:
    merged = new_histogram()
    for encoded in encoded_histograms:
        if encoded:
            merged.add(HdrHistogram.decode(encoded))
    return latency_of(merged)


def latency_of(merged: HdrHistogram) -> Latency:
    ms = 1e-3
    return Latency(
        calls=merged.get_total_count(),
        mean_ms=merged.get_mean_value() * ms,
        p50_ms=merged.get_value_at_percentile(50.0) * ms,
        p95_ms=merged.get_value_at_percentile(95.0) * ms,
        p99_ms=merged.get_value_at_percentile(99.0) * ms,
        max_ms=merged.get_max_value() * ms,
    )


def summed_windows(results: Iterable[WorkerResult]) -> Windows:
    """The workers' per-second series added up (at the coarsest window any of them has)."""
    total = Windows()
    for result in results:
        total.add_series(result.per_second, result.series_window_s)
    return total


class Totals:
    """The results' histograms merged and per-second series summed, one result at a time: the
    collector adds each result as it arrives, so that little is left to do after the last one (with
    1,000 workers, merging them all at the end took most of the time to the report)."""

    def __init__(self):
        self.histogram = new_histogram()
        self.response_histogram = new_histogram()
        self.windows = Windows()

    def add(self, histogram: HdrHistogram | None, per_second: Sequence[int], response_histogram: HdrHistogram | None = None,
            window_s: int = 1) -> None:
        if histogram is not None:
            self.histogram.add(histogram)
        if response_histogram is not None:
            self.response_histogram.add(response_histogram)
        self.windows.add_series(per_second, window_s)


def insert_figures(common_start: float, results: Sequence[WorkerResult], totals: Totals | None = None,
                   values_per_event: int | float = 1, rate: float = 0.0, planned_s: float = 0.0) -> InsertRunFigures:
    """`totals`: the same results' histograms and series, already added up as they arrived; `rate`:
    the open-loop target (0 = closed loop); `planned_s`: the length the schedule planned (for its
    behind limit)."""
    events = sum(r.events for r in results)
    duration = max(r.finished_at for r in results) - common_start
    worker_durations = [r.finished_at - r.started_at for r in results]
    mean_worker_duration = statistics.fmean(worker_durations)
    timed_total = sum(worker_durations)
    db_total = sum(r.db_seconds for r in results)
    windows = totals.windows if totals is not None else summed_windows(results)
    response = None
    if rate:
        response = (latency_of(totals.response_histogram) if totals is not None
                    else merge_latency(r.response_histogram for r in results))
    return InsertRunFigures(
        response_latency=response,
        rate=rate_figures(rate, _rate(events, duration), results, planned_s) if rate else None,
        workers=len(results),
        events=events,
        prefilled=sum(r.prefilled for r in results),
        duration_s=duration,
        throughput=_rate(events, duration),
        seed_formula_throughput=_rate(events, mean_worker_duration),
        latency=latency_of(totals.histogram) if totals is not None else merge_latency(r.histogram for r in results),
        per_second=list(windows.values),
        series_window_s=windows.width_s,
        client_overhead=max(0.0, 1.0 - db_total / timed_total) if timed_total > 0 else 0.0,
        start_skew_s=max(r.started_at for r in results) - min(r.started_at for r in results),
        retries=sum(r.retries for r in results),
        values_per_event=values_per_event,
        values_throughput=_rate(events * values_per_event, duration),
    )


def rate_figures(target: float, achieved: float, results: Sequence[WorkerResult], planned_s: float) -> RateFigures:
    behind = max((r.behind_s or 0.0) for r in results)
    limit = behind_limit_s(planned_s)
    return RateFigures(target=target, achieved=achieved, behind_s=behind, max_lag_s=max((r.max_lag_s or 0.0) for r in results),
                       limit_s=limit, sustained=behind <= limit)


def _rate(events: int, seconds: float) -> float:
    return events / seconds if seconds > 0 else 0.0


class QueryFigures(BaseModel):
    """All executions of one query across the workers of a run, in seconds."""

    executions: int
    min_s: float | None = None
    avg_s: float | None = None
    max_s: float | None = None
    p50_s: float | None = Field(None, description="median execution (robust to a busy machine's stray slow ones, unlike the average)")
    p95_s: float | None = None
    cold_avg_s: float | None = Field(None, description="first execution on each worker")
    warm_avg_s: float | None = Field(None, description="every later execution")
    rows: int | None = None
    errors: list[str] = Field(default_factory=list)
    answer: str | None = Field(None, description="ok, wrong or not checked: the check of every execution's answer")
    answer_detail: str | None = Field(None, description="the first difference from the expected answer, or why it was not checked")
    answers: list[KeptAnswer] = Field(default_factory=list, description="query-file queries: each distinct (parameters, answer), all workers")
    data: str | None = Field(None, description="query-file queries: fingerprint of the data answered over (None: unknown)")
    check_s: float | None = Field(None, description="seconds spent checking the answers, all workers together (outside the timed calls)")
    empty: int | None = Field(None, description="executions that returned no row: an empty answer measures little")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented way: mypy does not follow decorators on properties
    @property
    def empty_share(self) -> float | None:
        """The share of the executions that returned no row."""
        return None if self.empty is None or not self.executions else self.empty / self.executions


def query_figures(per_worker: Sequence[QueryRuns]) -> QueryFigures:
    seconds = [s for runs in per_worker for s in runs.seconds]
    cold = [runs.seconds[0] for runs in per_worker if runs.seconds]
    warm = [s for runs in per_worker for s in runs.seconds[1:]]
    rows = [runs.rows for runs in per_worker if runs.rows is not None]
    figures = QueryFigures(
        executions=len(seconds),
        rows=rows[0] if rows else None,
        errors=[runs.error for runs in per_worker if runs.error],
        check_s=sum(runs.check_s for runs in per_worker),
        empty=sum(runs.empty for runs in per_worker),
    )
    checked = [runs for runs in per_worker if runs.answer]
    for verdict in ("wrong", "not checked", "ok"):
        first = next((runs for runs in checked if runs.answer == verdict), None)
        if first is not None:
            figures.answer, figures.answer_detail = verdict, first.answer_detail
            break
    for runs in per_worker:
        for answer in runs.answers:
            answer_digest.add(figures.answers, answer.model_copy())
    figures.data = next((runs.data for runs in per_worker if runs.data), None)
    if seconds:
        figures.min_s, figures.avg_s, figures.max_s = min(seconds), statistics.fmean(seconds), max(seconds)
        figures.p50_s, figures.p95_s = percentile(seconds, 50.0), percentile(seconds, 95.0)
        figures.cold_avg_s = statistics.fmean(cold)
        figures.warm_avg_s = statistics.fmean(warm) if warm else None
    return figures


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile of a small sample (numpy's default method)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100.0
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class ScanFigures(BaseModel):
    """A scan run: every reading of every device read back in order, across the workers."""

    workers: int
    devices: int
    devices_planned: int | None = Field(None, description="the devices the workers' shares held (more than `devices` when --time-limit ended the scan)")
    rows: int
    pages: int
    duration_s: float
    rows_per_s: float = Field(description="rows read by all workers / (latest worker end - common start)")
    window_rows: int = Field(description="rows per window of the window rates")
    windows: int
    window_min: float | None = Field(None, description="slowest window of any worker, rows/s")
    window_avg: float | None = Field(None, description="mean rate of the windows of all workers, rows/s per worker")
    window_max: float | None = None
    latency: Latency = Field(description="per page or fetch")
    per_second: list[int] = Field(description="rows read in each window of series_window_s after the common start")
    series_window_s: int = Field(1, description="the windows' length: 1 s, or 2, 4... s in a scan longer than windows.MAX_WINDOWS s")
    order_problems: int
    first_order_problem: str | None = None
    counts_checked: bool
    count_note: str | None = None
    count_problems: int
    first_count_problem: str | None = None
    check_s: float | None = Field(None, description="seconds the order and count checks took, all workers together (between the pages)")

    def check(self) -> str:
        """ok, FAILED, or 'order ok, counts not checked'."""
        if self.order_problems or self.count_problems:
            return "FAILED"
        return "ok" if self.counts_checked else "order ok, counts not checked"

    def failure(self) -> str | None:
        problems = [p for p in (self.first_order_problem, self.first_count_problem) if p]
        if not problems:
            return None
        counts = [f"{self.order_problems:,} readings out of order"] if self.order_problems else []
        counts += [f"{self.count_problems:,} devices with a wrong count"] if self.count_problems else []
        return f"{', '.join(counts)}; first: {'; '.join(problems)}"


def scan_figures(common_start: float, results: Sequence[WorkerResult], window_rows: int) -> ScanFigures:
    outcomes = [r.scan or ScanOutcome() for r in results]
    rows = sum(o.rows for o in outcomes)
    duration = max(r.finished_at for r in results) - common_start
    windows = sum(o.windows for o in outcomes)
    series = summed_windows(results)
    low = [o.window_min for o in outcomes if o.window_min is not None]
    high = [o.window_max for o in outcomes if o.window_max is not None]
    return ScanFigures(
        workers=len(results), devices=sum(o.devices for o in outcomes), devices_planned=sum(o.devices_planned for o in outcomes),
        rows=rows, pages=sum(r.calls for r in results),
        duration_s=duration, rows_per_s=_rate(rows, duration), window_rows=window_rows, windows=windows,
        window_min=min(low) if low else None, window_max=max(high) if high else None,
        window_avg=sum(o.window_sum for o in outcomes) / windows if windows else None,
        latency=merge_latency(r.histogram for r in results), per_second=list(series.values), series_window_s=series.width_s,
        order_problems=sum(o.order_problems for o in outcomes),
        first_order_problem=next((o.first_order_problem for o in outcomes if o.first_order_problem), None),
        counts_checked=all(o.counts_checked for o in outcomes),
        count_note=next((o.count_note for o in outcomes if o.count_note), None),
        count_problems=sum(o.count_problems for o in outcomes),
        first_count_problem=next((o.first_count_problem for o in outcomes if o.first_count_problem), None),
        check_s=sum(o.check_s for o in outcomes),
    )


class Spread(BaseModel):
    """A figure across repeated runs."""

    n: int
    min: float
    avg: float
    max: float
    stdev: float
    cv: float = Field(description="coefficient of variation: stdev / avg")
    ci95_low: float
    ci95_high: float
    unstable: bool = Field(description="cv above 10%")


UNSTABLE_CV = 0.10
# Two-sided 95% Student t quantiles for n-1 degrees of freedom (n = 2..30); normal beyond.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045]


def spread(values: Sequence[float]) -> Spread:
    n = len(values)
    avg = statistics.fmean(values)
    stdev = statistics.stdev(values) if n > 1 else 0.0
    t = _T95[n - 2] if 2 <= n <= 30 else 1.96
    half_width = t * stdev / math.sqrt(n) if n > 1 else 0.0
    cv = stdev / avg if avg else 0.0
    low = avg - half_width
    if min(values) >= 0:  # rates and durations: two wide runs must not give a negative rate
        low = max(low, 0.0)
    return Spread(
        n=n, min=min(values), avg=avg, max=max(values), stdev=stdev, cv=cv,
        ci95_low=low, ci95_high=avg + half_width, unstable=cv > UNSTABLE_CV,
    )
