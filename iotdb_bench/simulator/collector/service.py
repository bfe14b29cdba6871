"""The collector: prepares the database, runs the start barrier, gathers progress and results.

One run per collector process. Workers register, report their prefill and progress, wait until
every worker is ready, then start together at a common wall-clock time. When all results are in,
the collector counts the events in the database and assembles the run's figures (report_assembly.py;
the record of expected answers: record_keeping.py); the CLI polls `/status` and fetches `/report`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import signal
import threading
import time
from collections.abc import Iterator

from fastapi import Depends, FastAPI, Header, HTTPException
from hdrh.histogram import HdrHistogram

from iotdb_bench.simulator.collector import open_files, record_keeping
from iotdb_bench.simulator.collector.metrics import RunMetrics, serve_metrics
from iotdb_bench.simulator.collector.report_assembly import assemble_report, settled_counters
from iotdb_bench.simulator.collector.run_state import RunState
from iotdb_bench.simulator.collector.visibility import VisibilityProbe
from iotdb_bench.simulator.errors import described
from iotdb_bench.simulator.measurement import conditions
from iotdb_bench.simulator.modules import DatabaseModule, ModuleError, module_class
from iotdb_bench.simulator.protocol import RUN_HEADER, ProgressAnswer, StartSignal, Status, WorkerFailure, WorkerHello, WorkerProgress, WorkerResult
from iotdb_bench.simulator.queries import text_check
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec

log = logging.getLogger("collector")

# How long `/ready` holds a worker's request before answering "not yet" (the worker asks again).
BARRIER_HOLD_S = 10.0
# Workers keep a connection per thread; a long keep-alive spares the main thread's, quiet during the
# timed phase, from being closed (the client reconnects if it was anyway).
KEEP_ALIVE_S = 300
# The dead-man switch looks this often (at most) whether the CLI was heard from in time.
WATCHDOG_INTERVAL_S = 1.0
# The longest a /status request is held (a long poll): well inside any heartbeat timeout.
MAX_STATUS_WAIT_S = 2.0
class Collector:
    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.state = RunState(spec)
        self.module: DatabaseModule | None = None
        self.db_lock = threading.Lock()  # one collector connection, used from several threads
        self.probe: VisibilityProbe | None = None  # --visibility, started with the timed phase

    # -- database work, in background threads -------------------------------------------------
    def prepare(self) -> None:
        try:
            self.module = module_class(self.spec.module)(self.spec)
            self.module.connect()
            self._read_conditions()
            with self.db_lock:
                count = None
                # Only an insert needs the count before it (a query's or scan's collector only connects:
                # counting a large table would delay the run, and a --query-timeout would cut it short).
                if self.spec.task == "insert":
                    self.module.schema.setup()
                    count, self.state.count_before_s = self._count_before()
                    self.state.record_base = record_keeping.start_record(self.spec, self.module, count)
                elif missing := self.module.schema.missing_tables():
                    raise ModuleError(f"target '{self.spec.target}' holds none of the tool's tables ({', '.join(missing)}): "
                                      f"run insert first (python run.py insert --target {self.spec.target})")
                refused = text_check.refused_text(self.spec, self.module.reader, self.module.capabilities.query_languages)
                if refused:
                    self.state.fail(refused, refused_input=True)
                    return
        except ModuleError as error:
            self.state.fail(str(error))
            return
        except Exception as error:  # the database said no: report it, the CLI shows it
            self.state.fail(f"preparing the database failed: {described(error)}")
            return
        with self.state.lock:
            self.state.count_before = count
            if self.state.phase == "preparing":
                self.state.phase = "waiting"
        self.state.changed.announce()
        log.info("database prepared%s", "" if count is None else f", {count} events present")

    def _count_before(self) -> tuple[int | None, float | None]:
        """The tables' events before the run and the seconds counting took; a run that continues the run
        before's tables (spec.count_before) takes that run's count after, uncounted. The caller holds db_lock."""
        if self.spec.count_before is not None and not self.spec.clean:
            return self.spec.count_before, None
        began = time.perf_counter()
        count = self.module.schema.count()
        return count, time.perf_counter() - began

    def _read_conditions(self) -> None:
        """What the figures will be measured under: this build, its drivers, the server's own version."""
        found = self.state.conditions
        found.software = conditions.software(self.module.capabilities.drivers)
        try:
            with self.db_lock:
                found.server_version = self.module.schema.server_version()
        except Exception as error:  # the figures do not depend on it: say why it is missing
            found.server_version_error = described(error)
            log.warning("could not read the server's version: %s", found.server_version_error)

    def _sample_counters_then_start(self) -> None:
        """Read the database's counters while every worker waits at the barrier (prefill done, no timed
        call yet), and only then publish the common start: the start sample is exact by construction."""
        try:
            with self.db_lock:
                counters = settled_counters(self.module)
        except Exception as error:
            log.warning("could not read the database's counters: %s", described(error))
            counters = None
        storage = self._storage_bytes()
        with self.state.lock:
            self.state.counters_at_start, self.state.storage_at_start = counters, storage
            self.state.cpu_at_start = process_cpu_s()
            if self.state.phase == "waiting":
                self.state.start_at = time.time() + self.state.start_lead()
                self.state.phase = "running"
                if self.spec.visibility:
                    self.probe = VisibilityProbe(self.spec, self.state.start_at, active=lambda: self.state.phase != "failed")
                    self.probe.start()
        self.state.changed.announce()

    def _storage_bytes(self) -> int | None:
        """The data size before the timed phase (after the prefill), where the database exposes it."""
        try:
            with self.db_lock:
                return self.module.schema.storage_bytes()
        except Exception as error:
            log.warning("could not read the database's data size: %s", described(error))
            return None

    def finish(self) -> None:
        try:
            with self.db_lock:
                report = assemble_report(self.state, self.module, self.probe)
                self._tidy()
        except Exception as error:
            self.state.fail(f"finishing the run failed: {described(error)}")
            return
        with self.state.lock:
            self.state.report = report
            if self.state.phase != "failed":
                self.state.phase = "done"
        self.state.changed.announce()
        log.info("run finished")

    def _tidy(self) -> None:
        """The run is over (its storage figure read): the module leaves nothing large behind and the
        collector lets go of the database (the CLI stops this process with a signal). The caller holds db_lock."""
        try:
            self.module.schema.tidy_after_run()
            self.module.close()
        except Exception as error:  # the figures stand; what is left is said in the log
            log.warning("tidying the database after the run: %s", described(error))

    # -- protocol steps, called by the HTTP endpoints ------------------------------------------
    def register(self, hello: WorkerHello) -> StartSignal:
        self._check_worker(hello.worker)
        with self.state.lock:
            self.state.registered.add(hello.worker)
            return StartSignal(phase=self.state.phase)

    def mark_ready(self, hello: WorkerHello) -> StartSignal:
        self._check_worker(hello.worker)
        state = self.state
        with state.lock:
            if state.phase != "waiting":
                return StartSignal(phase=state.phase, start_at=state.start_at)
            state.ready.add(hello.worker)
            if len(state.ready) == self.spec.processes and state.start_at is None and not state.releasing:
                if self.spec.task == "insert":
                    state.releasing = True  # the start is published once the counters are read
                    threading.Thread(target=self._sample_counters_then_start, daemon=True).start()
                else:
                    state.start_at = time.time() + state.start_lead()
                    state.cpu_at_start = process_cpu_s()
                    state.phase = "running"
                    state.changed.announce()
            return StartSignal(phase=state.phase, start_at=state.start_at)

    async def wait_for_start(self, hello: WorkerHello) -> StartSignal:
        """`mark_ready`, then, while the start is not published, hold the answer until it is (or for
        BARRIER_HOLD_S; the worker asks again)."""
        signal = self.mark_ready(hello)
        if signal.start_at is None and signal.phase == "waiting":
            state = self.state
            await state.changed.wait(BARRIER_HOLD_S, lambda: state.start_at is None and state.phase == "waiting")
            with state.lock:
                signal = StartSignal(phase=state.phase, start_at=state.start_at)
        return signal

    def record_progress(self, progress: WorkerProgress) -> ProgressAnswer:
        self._check_worker(progress.worker)
        with self.state.lock:
            # A report sent before the worker's result but arriving after it would set its figures back.
            if progress.worker not in self.state.results:
                self.state.progress[progress.worker] = progress.events
                self.state.prefilled[progress.worker] = progress.prefilled
                if progress.work_total:
                    self.state.work[progress.worker] = (progress.work_done, progress.work_total)
                if progress.interval_p99_ms is None:
                    self.state.interval_p99_ms.pop(progress.worker, None)
                else:
                    self.state.interval_p99_ms[progress.worker] = progress.interval_p99_ms
                if progress.live is not None:
                    self.state.live[progress.worker] = progress.live
            return ProgressAnswer(phase=self.state.phase, error=self.state.error)

    def watch_heartbeat(self) -> None:
        """Runs in a thread while the run is active (spec.heartbeat_timeout > 0)."""
        timeout = self.spec.heartbeat_timeout
        while not self.state.abandon_if_silent(timeout):
            time.sleep(min(WATCHDOG_INTERVAL_S, timeout / 4))

    def watch_heartbeat_then_end(self) -> None:
        """The dead-man switch, then the collector's own end: once the run is over and nobody asks about
        it any more, the process exits, so that nothing of a run whose CLI is gone keeps running (on
        Kubernetes the collector is a Job: it is not started again)."""
        timeout = self.spec.heartbeat_timeout
        self.watch_heartbeat()
        while not self.state.forgotten(timeout):
            time.sleep(min(WATCHDOG_INTERVAL_S, timeout / 4))
        log.warning("the run is over (%s) and nobody has asked about it for %g s: the collector ends", self.state.phase, timeout)
        logging.shutdown()
        os._exit(0)

    def record_result(self, result: WorkerResult) -> None:
        # The timed phase is over once the last result is in: the collector's CPU is read before the
        # result is decoded and merged, work done after the phase (as the workers' CPU ends with their calls).
        cpu_now = process_cpu_s()
        self._check_worker(result.worker)
        histogram = self._decoded_histogram(result, result.histogram)
        response_histogram = self._decoded_histogram(result, result.response_histogram)
        with self.state.lock:
            repeated = result.worker in self.state.results  # a post sent again after a dropped connection
            if not repeated and result.role == "worker":
                self.state.totals.add(histogram, result.per_second, response_histogram, result.series_window_s)
            self.state.results[result.worker] = result
            self.state.progress[result.worker] = result.events
            self.state.prefilled[result.worker] = result.prefilled
            self.state.interval_p99_ms.pop(result.worker, None)  # finished: no longer a live figure
            if result.worker in self.state.work:  # finished: its count at the end, not its last report's
                self.state.work[result.worker] = (result.work_done, self.state.work[result.worker][1])
            if result.live is not None:
                self.state.live[result.worker] = result.live
            complete = not repeated and len(self.state.results) == self.spec.processes
            inserts_done = not repeated and sum(r.role == "worker" for r in self.state.results.values()) == self.spec.workers
        if inserts_done and self.probe is not None:
            self.probe.stop.set()  # the inserts stopped: so does the visibility probe
        with self.state.lock:
            if complete:
                self.state.cpu_at_end = cpu_now
        self.state.changed.announce()  # a CLI waiting on /status sees the worker finished at once
        if complete:
            threading.Thread(target=self.finish, daemon=True).start()

    @staticmethod
    def _decoded_histogram(result: WorkerResult, encoded: str) -> HdrHistogram | None:
        if not encoded:
            return None
        try:
            return HdrHistogram.decode(encoded)
        except Exception as error:  # base64, zlib, or the format's own checks
            raise HTTPException(status_code=400, detail=f"worker {result.worker}'s histogram cannot be decoded: {described(error)}") from None

    def record_failure(self, failure: WorkerFailure) -> None:
        with self.state.lock:
            self.state.failed_workers.add(failure.worker)
        # A refusal is the module's answer to the workload, the same for every worker: said as such.
        self.state.fail(failure.error if failure.refused else f"worker {failure.worker} failed: {failure.error}")

    def _check_worker(self, worker: int) -> None:
        if worker >= self.spec.processes:
            raise HTTPException(status_code=400, detail=f"worker index {worker} out of range (run has {self.spec.processes})")


def process_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def create_app(spec: RunSpec) -> FastAPI:
    collector = Collector(spec)

    async def of_this_run(run: str | None = Header(None, alias=RUN_HEADER)) -> None:
        """A request that names another run reached the wrong collector: refused before it counts
        (a request without the header, a probe's or an older client's, is let through)."""
        if run is not None and run != spec.run_id:
            raise HTTPException(status_code=409, detail=f"this collector serves run {spec.run_id}, not run {run}: "
                                                        "another run's collector answers on this address")

    app = FastAPI(title="iotdb-bench collector", version="1", dependencies=[Depends(of_this_run)])
    app.state.collector = collector
    threading.Thread(target=collector.prepare, daemon=True).start()
    # The protocol's endpoints are coroutines: each does a moment's work under the state's lock, and
    # answering on the event loop spares the hop to a thread (a third of a request's CPU; with 1,000
    # workers posting progress every second that is what the collector spends).
    if spec.heartbeat_timeout > 0:
        threading.Thread(target=collector.watch_heartbeat_then_end, name="dead-man switch", daemon=True).start()

    @app.get("/health")
    async def health() -> dict[str, str]:
        if collector.state.phase == "preparing":
            raise HTTPException(status_code=503, detail="preparing the database")
        return {"phase": collector.state.phase}

    @app.get("/status")
    async def status(phase: str | None = None, finished: int | None = None, wait_s: float = 0.0) -> Status:
        """The run's status. With `phase`, `finished` and `wait_s` (a long poll), held while the run is
        still in that phase with that many workers finished, for at most `wait_s`: the CLI learns of
        the timed phase's start and of each finished worker at once while asking about once a second."""
        # Only the CLI asks for the status: each request is its heartbeat (probes use /health).
        state = collector.state
        state.heard()
        if phase is not None and wait_s > 0:
            longest = MAX_STATUS_WAIT_S if spec.heartbeat_timeout <= 0 else min(MAX_STATUS_WAIT_S, spec.heartbeat_timeout / 4)
            await state.changed.wait(min(wait_s, longest), lambda: state.phase == phase and len(state.results) == finished)
            state.heard()
        return state.status()

    @app.post("/register")
    async def register(hello: WorkerHello) -> StartSignal:
        return collector.register(hello)

    @app.post("/ready")
    async def ready(hello: WorkerHello) -> StartSignal:
        return await collector.wait_for_start(hello)

    @app.post("/progress")
    async def progress(update: WorkerProgress) -> ProgressAnswer:
        return collector.record_progress(update)

    @app.post("/result")
    async def result(update: WorkerResult) -> None:
        collector.record_result(update)

    @app.post("/failure")
    async def failure(update: WorkerFailure) -> None:
        collector.record_failure(update)

    @app.get("/report", response_model=RunReport)
    def report() -> RunReport:
        state = collector.state
        with state.lock:
            if state.phase == "failed":
                raise HTTPException(status_code=409, detail=state.error)
            if state.report is None:
                raise HTTPException(status_code=409, detail=f"run not finished (phase {state.phase})")
            return state.report

    return app


def serve(spec: RunSpec, host: str, port: int, metrics_port: int = 0) -> int:
    """Serve the run's protocol on `port` and its metrics on `metrics_port` (0: any free port) until
    a signal; returns 1 when the metrics' port cannot be had."""
    import uvicorn

    app = create_app(spec)
    state = app.state.collector.state
    try:
        metrics, metrics_port = serve_metrics(state, host, metrics_port)
    except OSError as error:
        log.error("cannot serve the metrics on %s:%d: %s (IOTBENCH_METRICS_PORT names another port, 0 any free one)",
                  host, metrics_port, error.strerror or error)
        return 1
    if host not in ("0.0.0.0", "::"):  # in a pod the address is the pod's (the chart's monitors find it)
        state.conditions.metrics_url = f"http://{host}:{metrics_port}/metrics"
    log.info("metrics on %s:%d/metrics", host, metrics_port)

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Instead of uvicorn's graceful shutdown (a few 0.1 s ticks): once the CLI has the report
            # nothing here needs finishing, and an aborted run's collector should go at once too.
            for number in (signal.SIGTERM, signal.SIGINT):
                signal.signal(number, _exit_after_final_scrape(metrics))
            yield

        async def main_loop(self) -> None:
            # uvicorn's loop wakes 10 times a second to see whether it should exit (this collector
            # exits from its signal handler) and renews the Date header every 10th time. Each wake-up
            # costs about 0.3 ms of CPU (cold caches), 3 ms a second taken from the database's cores
            # on a shared machine: here the loop wakes once a second and renews the header each time.
            while not await self.on_tick(0):
                await asyncio.sleep(1.0)

    open_files.raise_limit(spec.processes)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                            timeout_keep_alive=KEEP_ALIVE_S, lifespan="off")
    Server(config).run()
    return 0


def _exit_after_final_scrape(metrics: RunMetrics):
    """The signal handler: exit, once a scraper that scrapes often has had the final figures (from a
    thread: the handler returns, and the protocol's loop goes on answering meanwhile). A second
    signal exits at once."""
    leaving = threading.Event()

    def on_signal(signum, frame) -> None:
        if leaving.is_set():
            _exit_now(signum)
        leaving.set()
        threading.Thread(target=lambda: (metrics.wait_for_final_scrape(), _exit_now(signum)), name="exit", daemon=True).start()

    return on_signal


def _exit_now(signum: int) -> None:
    # Not SystemExit: raised inside a request handler, uvicorn would log it and carry on.
    logging.shutdown()
    os._exit(128 + signum)
