"""The collector's Prometheus metrics: the run's live figures on their own port (`/metrics`), in the
Prometheus text format, made by prometheus-client from the run state (docs/monitoring.md lists them).

Nothing is counted per event or per request: the workers send their running totals with each
progress report (protocol.LiveFigures), the collector keeps the last one per worker, and a scrape
reads them, so a collector nobody scrapes does no metrics work at all. Every series carries the run
id; per-worker series the worker's index (bounded by the run's worker count), per-query series the
query's name (bounded by the query set). Every worker's counters exist from the start at zero, so a
rate over the whole run sees them grow from nothing.

The metrics have their own port so that a NetworkPolicy can let a scraper in without letting it
reach the run's protocol (it could post results); see deployment/templates/networkpolicy.yaml.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, ProcessCollector, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, InfoMetricFamily, Metric
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from iotdb_bench.simulator.collector.run_state import RunState
from iotdb_bench.simulator.protocol import LATENCY_BUCKETS_S, PHASES, LatencyCounts, LiveFigures
from iotdb_bench.simulator.workload import shapes

log = logging.getLogger("collector")

# A collector being stopped (the run is over and the CLI has the report) waits this long at most for
# a scraper that scrapes often enough to read the final figures (the local platform kills it after
# 5 s, Kubernetes after the pod's grace of 5 s): long enough for a 1-2 s scraper that a busy machine
# makes a second or two late.
FINAL_SCRAPE_WAIT_S = 4.0
# The share of the scraper's timeout within which an answer sent counts as received: the time before
# the request reached the collector and after the answer left it is not seen here.
IN_TIME_SHARE = 0.5
_BOUNDS = tuple(floatToGoString(bound) for bound in LATENCY_BUCKETS_S)
_NO_FIGURES = LiveFigures()


class RunMetrics(Collector):
    """The run's metrics, read from the run state at each scrape. Also notes the scrapes: whether a
    scraper has received the run's final figures (`final_scraped`) and when it will next come."""

    def __init__(self, state: RunState):
        self.state = state
        self.final_scraped = threading.Event()
        self.scraped_at: list[float] = []  # monotonic times of the last two scrapes
        self._scrape = threading.local()  # of the request being answered: whether it holds the final figures

    def collect(self) -> Iterator[Metric]:
        state, spec = self.state, self.state.spec
        with state.lock:
            phase, start_at, ready, finished = state.phase, state.start_at, len(state.ready), len(state.results)
            events, prefilled, live, failed = dict(state.progress), dict(state.prefilled), dict(state.live), set(state.failed_workers)
        self._note_scrape(phase)
        run = spec.run_id
        yield InfoMetricFamily("iotbench_run", "The run: its id, target, database module and task",
                               value={"run_id": run, "target": spec.target, "module": spec.module, "task": spec.task})
        phases = GaugeMetricFamily("iotbench_run_phase", "1 for the run's current phase, 0 for the others", labels=["run_id", "phase"])
        for name in PHASES:
            phases.add_metric([run, name], 1.0 if name == phase else 0.0)
        yield phases
        yield from self._run_gauges(run, ready, finished, start_at)
        yield from self._worker_figures(run, events, prefilled, live, failed)

    def _run_gauges(self, run: str, ready: int, finished: int, start_at: float | None) -> Iterator[Metric]:
        spec = self.state.spec
        gauges = [("iotbench_workers", "Worker processes of the run (query clients included)", spec.processes),
                  ("iotbench_workers_ready", "Workers at the start barrier, ready for the timed phase", ready),
                  ("iotbench_workers_finished", "Workers that posted their result", finished)]
        if spec.task == "insert":
            planned = 0 if spec.duration_s else shapes.timed_events(spec)
            gauges.append(("iotbench_planned_events", "Events the timed phase inserts (0: a --duration run)", planned))
        if spec.task == "insert" and spec.duration_s:
            gauges.append(("iotbench_planned_duration_seconds", "Length of the timed phase of a --duration run", spec.duration_s))
        if spec.task == "insert" and spec.rate:
            gauges.append(("iotbench_target_events_per_second", "The open-loop rate asked for (--rate), all workers together", spec.rate))
        if start_at is not None:
            gauges.append(("iotbench_timed_phase_start_timestamp_seconds", "The common start of the timed phase (Unix time)", start_at))
        for name, text, value in gauges:
            gauge = GaugeMetricFamily(name, text, labels=["run_id"])
            gauge.add_metric([run], value)
            yield gauge

    def _worker_figures(self, run: str, events: dict[int, int], prefilled: dict[int, int], live: dict[int, LiveFigures],
                        failed: set[int]) -> Iterator[Metric]:
        spec = self.state.spec
        labels = ["run_id", "worker"]
        done = CounterMetricFamily("iotbench_events", "Events of the timed phase done (inserted; a scan's rows read)", labels=labels)
        prefill = CounterMetricFamily("iotbench_prefill_events", "Events inserted before the timed phase (--prefill)", labels=labels)
        errors = CounterMetricFamily("iotbench_errors", "Failed calls: query executions that failed, and the error that "
                                                        "failed the worker", labels=labels)
        retries = CounterMetricFamily("iotbench_retries", "Calls the database module tried again (serialisation failures and "
                                                          "the like)", labels=labels)
        calls = HistogramMetricFamily("iotbench_call_duration_seconds", "Service time of the timed database calls (insert "
                                                                        "calls, scan pages)", labels=labels)
        lag = GaugeMetricFamily("iotbench_schedule_lag_seconds", "Open-loop runs: how far behind its schedule the worker is", labels=labels)
        max_lag = GaugeMetricFamily("iotbench_schedule_max_lag_seconds", "Open-loop runs: the most a call started after its intended "
                                                                         "start so far", labels=labels)
        queries = HistogramMetricFamily("iotbench_query_duration_seconds", "Duration of the named queries' executions",
                                        labels=[*labels, "query"])
        query_errors = CounterMetricFamily("iotbench_query_errors", "Executions of the named query that failed (or a query the "
                                                                    "module does not offer)", labels=[*labels, "query"])
        for index in range(spec.processes):
            values = [run, str(index)]
            figures = live.get(index, _NO_FIGURES)
            # The queries this worker runs start at zero too, before its first report names them.
            asked = spec.queries if spec.task == "query" or spec.role_of(index) == "query-client" else ()
            for name in asked:
                if name not in figures.queries:
                    queries.add_metric([*values, name], _buckets(_NO_FIGURES.latency), 0.0)
                    query_errors.add_metric([*values, name], 0)
            done.add_metric(values, events.get(index, 0))
            prefill.add_metric(values, prefilled.get(index, 0))
            errors.add_metric(values, figures.errors + (index in failed))
            retries.add_metric(values, figures.retries)
            calls.add_metric(values, _buckets(figures.latency), figures.latency.sum_s)
            if figures.behind_s is not None:
                lag.add_metric(values, figures.behind_s)
            if figures.max_lag_s is not None:
                max_lag.add_metric(values, figures.max_lag_s)
            for name, query in figures.queries.items():
                queries.add_metric([*values, name], _buckets(query.latency), query.latency.sum_s)
                query_errors.add_metric([*values, name], query.errors)
        yield from (done, prefill, errors, retries, calls, lag, max_lag, queries, query_errors)

    def _note_scrape(self, phase: str) -> None:
        self.scraped_at = [*self.scraped_at[-1:], time.monotonic()]
        self._scrape.final = phase in ("done", "failed")

    def arrived(self, timeout_header: str | None) -> None:
        """A scrape request has come in (from its request's thread), with the scraper's
        X-Prometheus-Scrape-Timeout-Seconds (Prometheus and VictoriaMetrics send it) if any."""
        self._scrape.final = False
        self._scrape.arrived = time.monotonic()
        try:
            self._scrape.timeout_s = float(timeout_header) if timeout_header else None
        except ValueError:
            self._scrape.timeout_s = None

    def sent(self) -> None:
        """A scrape's answer has gone out (from its request's thread). It counts as the final figures
        read only if it left well within the scraper's timeout: a scraper drops an answer that comes
        late (a 1 s scraper's timeout is 1 s), and the end of a run, when the collector assembles the
        report, is when a busy machine makes answers late."""
        if not getattr(self._scrape, "final", False):
            return
        timeout_s = getattr(self._scrape, "timeout_s", None)
        took_s = time.monotonic() - getattr(self._scrape, "arrived", time.monotonic())
        if timeout_s is None or took_s <= IN_TIME_SHARE * timeout_s:
            self.final_scraped.set()
        else:
            log.info("the final figures took %.2f s to answer, late for the scraper's %g s timeout: waiting for the next scrape",
                     took_s, timeout_s)

    def next_scrape_in(self) -> float | None:
        """Seconds until the scraper is expected again (from its last two scrapes; 0 after a single
        one: unknown); None: no scraper seen."""
        if not self.scraped_at:
            return None
        if len(self.scraped_at) < 2:
            return 0.0
        previous, last = self.scraped_at
        return max(0.0, last + (last - previous) - time.monotonic())

    def wait_for_final_scrape(self) -> None:
        """Before the collector exits: give a scraper that scrapes often (the next scrape due within
        FINAL_SCRAPE_WAIT_S, or not known yet) the chance to read the final figures, which the last
        scrape may have missed."""
        due = self.next_scrape_in()
        if due is None or self.final_scraped.is_set() or due > FINAL_SCRAPE_WAIT_S:
            return
        if not self.final_scraped.wait(FINAL_SCRAPE_WAIT_S):
            log.info("no scrape of the final figures within %g s", FINAL_SCRAPE_WAIT_S)


def _buckets(latency: LatencyCounts) -> list[tuple[str, float]]:
    counts = latency.buckets or [0] * len(_BOUNDS)
    return [*zip(_BOUNDS, counts, strict=True), ("+Inf", latency.count)]


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args) -> None:
        """No line per scrape in the collector's log."""


class _ThenNote:
    """A response body whose `close`, which the WSGI server calls once the body is sent, notes it."""

    def __init__(self, body: Iterable[bytes], sent: Callable[[], None]):
        self.body, self.sent = body, sent

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.body)

    def close(self) -> None:
        self.sent()


def serve_metrics(state: RunState, host: str, port: int) -> tuple[RunMetrics, int]:
    """The run's metrics and the collector process's own (CPU, memory) on http://host:port/metrics
    (prometheus-client's WSGI app, a thread per request, as its start_http_server serves it), beside
    the protocol; returns them and the port (`port` 0: any free one)."""
    registry = CollectorRegistry()  # without describe: registering must not count as a scrape
    metrics = RunMetrics(state)
    registry.register(metrics)
    ProcessCollector(registry=registry)
    exposition = make_wsgi_app(registry)

    def app(environ, start_response):
        metrics.arrived(environ.get("HTTP_X_PROMETHEUS_SCRAPE_TIMEOUT_SECONDS"))
        return _ThenNote(exposition(environ, start_response), metrics.sent)

    server = make_server(host, port, app, ThreadingWSGIServer, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return metrics, server.server_port
