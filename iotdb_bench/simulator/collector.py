"""The collector: prepares the database, runs the start barrier, gathers progress and results.

One run per collector process. Workers register, report their prefill and progress, wait until
every worker is ready, then start together at a common wall-clock time. When all results are in,
the collector counts the events in the database and computes the run's figures; the CLI polls
`/status` and fetches `/report`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import signal
import threading
import time
from collections.abc import Iterator

from fastapi import FastAPI, HTTPException
from hdrh.histogram import HdrHistogram

from iotdb_bench.simulator import conditions, open_files, scan, stats
from iotdb_bench.simulator.errors import described
from iotdb_bench.simulator.expected import Expected, ExpectedRecord, merge_all
from iotdb_bench.simulator.modules import DatabaseModule, ModuleError, module_class
from iotdb_bench.simulator.protocol import ProgressAnswer, StartSignal, Status, WorkerFailure, WorkerHello, WorkerProgress, WorkerResult
from iotdb_bench.simulator.query_latency import merge_query_latencies
from iotdb_bench.simulator.report import RunReport, ServerSide, Verification
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.visibility import VisibilityProbe
from iotdb_bench.simulator.wakeup import Wakeup

log = logging.getLogger("collector")

# Time between the last worker becoming ready and the common start: long enough for every worker
# to learn the start time so they all begin on the clock. Workers wait for it in a held request
# (`/ready`), answered all at once when the start is published: the lead grows with the number of
# answers to send (1,000 took 0.15 to 0.25 s in benchmarks/collector_scale.py; the lead is twice that).
START_LEAD_S = 0.1
START_LEAD_PER_WORKER_S = 0.0004
# How long `/ready` holds a worker's request before answering "not yet" (the worker asks again).
BARRIER_HOLD_S = 10.0
# Workers keep a connection per thread; a long keep-alive spares the main thread's, quiet during the
# timed phase, from being closed (the client reconnects if it was anyway).
KEEP_ALIVE_S = 300
# Each worker's per-second series stays in the report while all of them hold at most this many values
# (16 workers for 100 minutes, 1,000 workers for 100 s): beyond, the report would grow by megabytes
# (1,000 workers for an hour: 22 MB) on its way through the port-forward and into results.json.
# Their sum (figures.per_second) and every worker's own figures are always kept.
WORKER_SERIES_BUDGET = 100_000
# The database's counters are read until two reads this far apart agree (database-side cross-check).
COUNTER_SETTLE_S = 0.05
COUNTER_SETTLE_READS = 40
# The dead-man switch looks this often (at most) whether the CLI was heard from in time.
WATCHDOG_INTERVAL_S = 1.0
# Phases in which nobody following the run means nobody will ever stop it.
ACTIVE_PHASES = ("preparing", "waiting", "running")


class RunState:
    """The collector's one piece of mutable state, guarded by a lock (endpoints run in threads)."""

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.lock = threading.Lock()
        self.phase = "preparing"
        self.error: str | None = None
        self.registered: set[int] = set()
        self.ready: set[int] = set()
        self.progress: dict[int, int] = {}
        self.prefilled: dict[int, int] = {}
        self.interval_p99_ms: dict[int, float] = {}  # each running worker's last progress interval
        self.results: dict[int, WorkerResult] = {}
        self.totals = stats.Totals()  # the results' histograms and series, added up as they arrive
        self.start_at: float | None = None
        self.count_before: int | None = None
        self.counters_at_start: dict[str, int] | None = None
        self.storage_at_start: int | None = None
        # The collector's own CPU seconds (rusage) when the start is published and when the last result is in.
        self.cpu_at_start: float | None = None
        self.cpu_at_end: float | None = None
        self.record_base: ExpectedRecord | None = None  # insert runs: the record this run adds to
        self.releasing = False
        self.report: RunReport | None = None
        self.changed = Wakeup()  # announced when the start is published or the run fails
        self.conditions = conditions.RunConditions()
        # When the CLI last asked for the status (the heartbeat of the dead-man switch); the clock
        # starts with the collector, so a CLI that dies before its first request is noticed too.
        self.heard_from_cli = time.monotonic()
        self.abandoned = False
        self.over_since: float | None = None  # when the watch first saw the run over

    def heard(self) -> None:
        with self.lock:
            self.heard_from_cli = time.monotonic()

    def abandon_if_silent(self, timeout: float) -> bool:
        """The dead-man switch: fail the run when the CLI has been silent for `timeout` seconds while
        the run is active. True once the run is over (abandoned or not): nothing left to watch."""
        with self.lock:
            if self.phase not in ACTIVE_PHASES:
                return True
            silent = time.monotonic() - self.heard_from_cli
            if silent < timeout:
                return False
            self.abandoned = True
        self.fail(f"run abandoned: the CLI has not asked for the run's status for {silent:.0f} s (heartbeat timeout {timeout:g} s); "
                  "the workers stop")
        return True

    def forgotten(self, timeout: float) -> bool:
        """The run is over and the CLI has not asked about it for `timeout` seconds since (nor since the
        end): nobody will fetch the report. Also gives the workers of an abandoned run that long to hear it."""
        with self.lock:
            if self.phase in ACTIVE_PHASES:
                return False
            now = time.monotonic()
            self.over_since = self.over_since or now
            return now - max(self.heard_from_cli, self.over_since) >= timeout

    def start_lead(self) -> float:
        return START_LEAD_S + START_LEAD_PER_WORKER_S * self.spec.processes

    def fail(self, message: str) -> None:
        with self.lock:
            if self.phase != "failed":
                log.error("run failed: %s", message)
                self.phase, self.error = "failed", message
        self.changed.announce()

    def status(self) -> Status:
        with self.lock:
            expected = self.spec.num_inserts * self.spec.workers if self.spec.task == "insert" and not self.spec.duration_s else 0
            return Status(
                phase=self.phase,
                workers=self.spec.processes,  # with a mixed run's query clients: they register and wait at the barrier too
                registered=len(self.registered),
                ready=len(self.ready),
                finished=len(self.results),
                events=sum(self.progress.values()),
                expected_events=expected,
                prefilled=sum(self.prefilled.values()),
                expected_prefill=self.spec.prefill if self.spec.task == "insert" else 0,
                error=self.error,
                start_at=self.start_at,
                duration_s=self.spec.duration_s if self.spec.task == "insert" else 0.0,
                interval_p99_ms=max(self.interval_p99_ms.values(), default=None),
            )


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
                    self.module.setup()
                    count = self.module.count()
                    self.state.record_base = self._start_record(count)
                elif missing := self.module.missing_tables():
                    raise ModuleError(f"target '{self.spec.target}' holds none of the tool's tables ({', '.join(missing)}): "
                                      f"run insert first (python run.py insert --target {self.spec.target})")
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
        log.info("database prepared%s", "" if count is None else f", {count} events present")

    def _read_conditions(self) -> None:
        """What the figures will be measured under: this build, its drivers, the server's own version."""
        found = self.state.conditions
        found.software = conditions.software(self.module.drivers)
        try:
            with self.db_lock:
                found.server_version = self.module.server_version()
        except Exception as error:  # the figures do not depend on it: say why it is missing
            found.server_version_error = described(error)
            log.warning("could not read the server's version: %s", found.server_version_error)

    def _start_record(self, count: int | None) -> ExpectedRecord:
        """The record this insert run will add to, saved at once marked incomplete: a run that does not
        finish leaves a record that says so, and a later query does not trust it."""
        spec = self.spec
        tables = spec.table_names
        workload = {"tables": tables, "shape": spec.shape, "measurements": spec.measurements, "sensors": spec.sensors}
        if spec.clean or not count:
            base = ExpectedRecord(complete=True, **workload)
        else:
            try:
                base = ExpectedRecord.load(self.module.stored_record())
            except NotImplementedError as reason:  # the module keeps no record: nothing to add to
                base = ExpectedRecord(tables=tables, complete=True, problem=str(reason))
            if base is None:
                base = ExpectedRecord(tables=tables, complete=True, problem=(
                    f"the tables held {count:,} events before the tool's first recorded insert (written by something else)"))
            elif base.usable() is not None:
                base = base.model_copy(update={"problem": base.usable()})  # stays unusable until a clean run
            elif (base.tables, base.shape, base.measurements, base.sensors) != tuple(workload.values()):
                base = base.model_copy(update={"problem": (
                    f"the last recorded insert wrote {','.join(base.tables)} with {base.workload()}, not this run's tables and workload")})
            elif base.expected.count != count:
                base = base.model_copy(update={"problem": (
                    f"the tables held {count:,} events before an insert run, but the record accounts for {base.expected.count:,}")})
        base = base.model_copy(update=workload)
        self.module.store_record(base.model_copy(update={"complete": False}).dump())
        return base

    def _finish_record(self, results: list[WorkerResult], markers: int = 0) -> str:
        """Add the workers' tallies to the record and save it; says what was left."""
        base = self.state.record_base
        if base is None:
            return "no record kept (the database was not prepared)"
        merged = merge_all((r.expected or Expected() for r in results), base.expected)
        record = base.model_copy(update={"complete": True, "insert_runs": base.insert_runs + 1, "expected": merged})
        if markers and not record.problem:  # the probe's events are no worker's: no tally has them
            record = record.model_copy(update={"problem": f"--visibility wrote {markers:,} marker events that the record does not account for"})
        self.module.store_record(record.dump())
        if record.problem:
            return f"record saved, but it does not describe the data: {record.problem}"
        return f"record saved: {len(merged.devices.device):,} devices, {merged.count:,} events over {record.insert_runs} insert run(s)"

    def _sample_counters_then_start(self) -> None:
        """Read the database's counters while every worker waits at the barrier (prefill done, no timed
        call yet), and only then publish the common start: the start sample is exact by construction."""
        try:
            with self.db_lock:
                counters = self._settled_counters()
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
                return self.module.storage_bytes()
        except Exception as error:
            log.warning("could not read the database's data size: %s", described(error))
            return None

    def _settled_counters(self) -> dict[str, int] | None:
        """Counters read until two reads agree: nothing is inserting, so a change means statistics of
        a session that just ended are still arriving (PostgreSQL publishes them as a backend exits).
        The caller holds db_lock."""
        previous = None
        for _ in range(COUNTER_SETTLE_READS):
            counters = self.module.server_counters()
            if counters is None or counters == previous:
                return counters
            previous = counters
            time.sleep(COUNTER_SETTLE_S)
        return counters

    def finish(self) -> None:
        try:
            with self.db_lock:
                report = self._report()
                self._tidy()
        except Exception as error:
            self.state.fail(f"finishing the run failed: {described(error)}")
            return
        with self.state.lock:
            self.state.report = report
            if self.state.phase != "failed":
                self.state.phase = "done"
        log.info("run finished")

    def _report(self) -> RunReport:
        state, spec, module = self.state, self.spec, self.module
        everyone = [state.results[i] for i in sorted(state.results)]
        results = [result for result in everyone if result.role == "worker"]
        series_kept = sum(len(result.per_second) for result in results) <= WORKER_SERIES_BUDGET
        left_out = {"histogram": "", "response_histogram": ""} if series_kept else {"histogram": "", "response_histogram": "", "per_second": []}
        report = RunReport(
            run_id=spec.run_id, task=spec.task, spec=spec, start_at=state.start_at,
            insert_mode=module.insert_mode() if spec.task == "insert" else "", notes=module.notes(),
            conditions=state.conditions.model_copy(deep=True),
            workers=[result.model_copy(update={**left_out, "expected": None}) for result in results], worker_series=series_kept,
        )
        if state.cpu_at_start is not None and state.cpu_at_end is not None:
            report.collector_cpu_s = state.cpu_at_end - state.cpu_at_start
        if spec.task == "scan":
            report.scan = stats.scan_figures(state.start_at, results, scan.WINDOW_ROWS)
            return report
        if spec.task == "query":
            report.queries = {
                name: stats.query_figures([r.queries[name] for r in results if name in r.queries]) for name in spec.queries
            }
            return report
        if spec.query_workers:
            report.queries_under_ingest = merge_query_latencies([r.query_latencies for r in everyone if r.role == "query-client"], spec.queries)
        markers = 0
        if self.probe is not None:
            self.probe.join()
            report.visibility = self.probe.figures()
            markers = report.visibility.markers
        planned_s = spec.duration_s or (spec.num_inserts * spec.workers / spec.rate if spec.rate else 0.0)
        figures = report.figures = stats.insert_figures(state.start_at, results, state.totals, module.layout.values_per_row,
                                                        rate=spec.rate, planned_s=planned_s)
        if state.count_before is not None:
            # Modules whose acknowledged writes are stored later (queued ingestion) wait, bounded, and
            # say how long storing took; the others return None.
            report.ingestion = module.wait_for_count(state.count_before + figures.prefilled + figures.events + markers,
                                                     state.start_at + figures.duration_s)
        count_after = module.count()
        # A module that stores nothing (the null target) counts None: the check does not apply.
        applicable = count_after is not None and state.count_before is not None
        expected = state.count_before + figures.prefilled + figures.events + markers if applicable else None
        report.verification = Verification(
            count_before=state.count_before, prefilled=figures.prefilled, inserted=figures.events, markers=markers, expected=expected,
            counted=count_after, applicable=applicable, ok=count_after == expected if applicable else None,
        )
        report.server = self._server_side()
        report.expected_record = self._finish_record(results, markers)
        return report

    def _tidy(self) -> None:
        """The run is over (its storage figure read): the module leaves nothing large behind and the
        collector lets go of the database (the CLI stops this process with a signal). The caller holds db_lock."""
        try:
            self.module.tidy_after_run()
            self.module.close()
        except Exception as error:  # the figures stand; what is left is said in the log
            log.warning("tidying the database after the run: %s", described(error))

    def _server_side(self) -> ServerSide:
        """The database's own view of the run, where it exposes one (database-side cross-check)."""
        server = ServerSide(counters_at_start=self.state.counters_at_start, storage_bytes_at_start=self.state.storage_at_start)
        try:
            server.storage_bytes = self.module.storage_bytes()
            server.counters_at_end = self._settled_counters()
        except Exception as error:
            log.warning("could not read the database's own figures: %s", described(error))
        return server

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
            self.state.progress[progress.worker] = progress.events
            self.state.prefilled[progress.worker] = progress.prefilled
            if progress.interval_p99_ms is None:
                self.state.interval_p99_ms.pop(progress.worker, None)
            else:
                self.state.interval_p99_ms[progress.worker] = progress.interval_p99_ms
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
        self._check_worker(result.worker)
        histogram = self._decoded_histogram(result, result.histogram)
        response_histogram = self._decoded_histogram(result, result.response_histogram)
        with self.state.lock:
            repeated = result.worker in self.state.results  # a post sent again after a dropped connection
            if not repeated and result.role == "worker":
                self.state.totals.add(histogram, result.per_second, response_histogram)
            self.state.results[result.worker] = result
            self.state.progress[result.worker] = result.events
            self.state.prefilled[result.worker] = result.prefilled
            self.state.interval_p99_ms.pop(result.worker, None)  # finished: no longer a live figure
            complete = not repeated and len(self.state.results) == self.spec.processes
            inserts_done = not repeated and sum(r.role == "worker" for r in self.state.results.values()) == self.spec.workers
        if inserts_done and self.probe is not None:
            self.probe.stop.set()  # the inserts stopped: so does the visibility probe
        with self.state.lock:
            if complete:
                self.state.cpu_at_end = process_cpu_s()
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
        self.state.fail(f"worker {failure.worker} failed: {failure.error}")

    def _check_worker(self, worker: int) -> None:
        if worker >= self.spec.processes:
            raise HTTPException(status_code=400, detail=f"worker index {worker} out of range (run has {self.spec.processes})")


def process_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def create_app(spec: RunSpec) -> FastAPI:
    collector = Collector(spec)
    app = FastAPI(title="iotdb-bench collector", version="1")
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
    async def status() -> Status:
        # Only the CLI asks for the status: each request is its heartbeat (probes use /health).
        collector.state.heard()
        return collector.state.status()

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


def serve(spec: RunSpec, host: str, port: int) -> None:
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Instead of uvicorn's graceful shutdown (a few 0.1 s ticks): once the CLI has the report
            # nothing here needs finishing, and an aborted run's collector should go at once too.
            for number in (signal.SIGTERM, signal.SIGINT):
                signal.signal(number, _exit_now)
            yield

    open_files.raise_limit(spec.processes)
    config = uvicorn.Config(create_app(spec), host=host, port=port, log_level="warning", access_log=False,
                            timeout_keep_alive=KEEP_ALIVE_S, lifespan="off")
    Server(config).run()


def _exit_now(signum, frame) -> None:
    # Not SystemExit: raised inside a request handler, uvicorn would log it and carry on.
    logging.shutdown()
    os._exit(128 + signum)
