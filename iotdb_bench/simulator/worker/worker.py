"""One benchmark client: prefill share, wait at the barrier, timed work, report.

Only the database calls are timed (simulator/measurement/timing.py), paced closed or open loop (pacing.py). The
next batches are generated (and encoded by the module) a chunk at a time while the current call
waits for the database where the module allows it, otherwise between calls (preparing.py); time
outside calls is reported as client overhead. A
worker that fails posts its error to the collector before exiting non-zero, so the CLI can show why.
The insert loop is here; queries and scans are in reading.py, a mixed run's query clients in
query_client.py.
"""

from __future__ import annotations

import contextlib
import logging
import math
import resource
import threading
import time
from collections.abc import Callable, Iterator

from iotdb_bench.simulator.checks.acknowledged import AcknowledgedPrefix
from iotdb_bench.simulator.checks.expected import Expected, Tally
from iotdb_bench.simulator.checks.scan import scan_share
from iotdb_bench.simulator.checks.written_streams import StreamSpan
from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.measurement.stats import CallRecorder
from iotdb_bench.simulator.measurement.timing import CallTimer, clock, clock_at
from iotdb_bench.simulator.modules import DatabaseModule, ModuleError, module_class
from iotdb_bench.simulator.protocol import (
    LatencyCounts,
    LiveFigures,
    ProgressAnswer,
    QueryHistograms,
    QueryRuns,
    ScanOutcome,
    WorkerFailure,
    WorkerProgress,
    WorkerResult,
)
from iotdb_bench.simulator.roles import WorkerHooks
from iotdb_bench.simulator.spec import PREFILL_BATCH, RunSpec
from iotdb_bench.simulator.worker.pacing import ClosedLoop, OpenLoop, Pacer
from iotdb_bench.simulator.worker.pregenerated import Pregenerated
from iotdb_bench.simulator.worker.preparing import PIPELINES
from iotdb_bench.simulator.worker.query_client import QueryClient
from iotdb_bench.simulator.worker.reading import ReadSide
from iotdb_bench.simulator.workload import shapes
from iotdb_bench.simulator.workload.events import EventBatch, EventGenerator
from iotdb_bench.simulator.workload.schedule import Schedule
from iotdb_bench.simulator.workload.tsbs.generator import TsbsGenerator

log = logging.getLogger("worker")

# Single-insert mode still generates events in chunks, outside the timed calls.
SINGLE_MODE_CHUNK = 1000
PROGRESS_INTERVAL_S = 1.0


def process_cpu_s() -> float:
    """CPU seconds this process has used so far, user + system, every thread (its own rusage)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class RunStopped(Exception):
    """The run was stopped from outside: the collector failed it (another worker failed, or the CLI
    went silent), or the collector itself could not be reached for too long."""


class ProgressReporter(threading.Thread):
    """Posts the worker's progress (`read()`) about once a second, off the hot path. Its answers are the
    worker's side of the dead-man switch: `halt` is set when the collector says the run failed, or when
    the collector has not been reachable for `unreachable_limit_s` (0 = no limit).

    Once `keep_time_with` names a moment, the reports come on the seconds after it, not a second after
    the last one: a scraper scraping every second then sees each report in the same place between two
    scrapes for the whole run, instead of a report now and then landing beside the one before (a rate
    a quarter off for a few seconds)."""

    def __init__(self, client: CollectorClient, read: Callable[[], WorkerProgress], unreachable_limit_s: float = 0):
        super().__init__(daemon=True)
        self.client, self.read, self.stopped = client, read, threading.Event()
        self.unreachable_limit_s = unreachable_limit_s
        self.halt = threading.Event()
        self.reason = ""
        self.anchor: float | None = None

    def keep_time_with(self, moment: float) -> None:
        """Report on `moment` + whole seconds (Unix time) from now on."""
        self.anchor = moment

    def _until_next_report(self) -> float:
        anchor = self.anchor
        if anchor is None:
            return PROGRESS_INTERVAL_S
        now = time.time()
        nearest = math.floor((now - anchor) / PROGRESS_INTERVAL_S + 0.5)  # the tick just reported (woken a little early or late)
        return max(anchor + (nearest + 1) * PROGRESS_INTERVAL_S - now, 0.0)

    def run(self) -> None:
        reached = time.monotonic()
        while not self.stopped.wait(self._until_next_report()):
            progress = self.read()
            try:
                answer = self.client.post("/progress", progress)
            except CollectorError as error:
                log.warning("progress report failed: %s", error)
                silent = time.monotonic() - reached
                if self.unreachable_limit_s and silent >= self.unreachable_limit_s:
                    self._halt_with(f"the collector has not been reachable for {silent:.0f} s: {error}")
                continue
            reached = time.monotonic()
            if answer.strip() not in (b"", b"null"):
                progress = ProgressAnswer.model_validate_json(answer)
                if progress.phase == "failed":
                    self._halt_with(f"the collector stopped the run: {progress.error or 'the run failed'}")

    def _halt_with(self, reason: str) -> None:
        if not self.halt.is_set():
            self.reason = reason
            log.error("stopping: %s", reason)
            self.halt.set()

    def check(self) -> None:
        """Called by the worker between database calls: raise once the run is to stop."""
        if self.halt.is_set():
            raise RunStopped(self.reason)


class Worker:
    def __init__(self, spec: RunSpec, index: int, collector_url: str):
        self.spec, self.index = spec, index
        self.client = CollectorClient(collector_url, index, run_id=spec.run_id)
        self.prefilled = 0
        # The position after the last event stored: the next run that continues the streams starts there.
        self.stream_end = spec.stream_offset
        self._next_commit = math.inf  # when the open transaction of single inserts is committed (--commit-interval)
        self.recorder: CallRecorder | None = None
        self.timer: CallTimer | None = None
        self.module: DatabaseModule | None = None
        self.read_side: ReadSide | None = None
        self.cpu_at_start = 0.0
        self.reporter: ProgressReporter | None = None
        self.tally: Tally | None = None  # of the events this worker inserts: the expected answers
        self.span: StreamSpan | None = None  # the stretch of its stream it stored (simulator/checks/written_streams.py)
        self.pregenerated: Pregenerated | None = None  # --pregenerate: the timed phase's batches, made before the start
        self.pregenerated_bytes: int | None = None
        self.query_client: QueryClient | None = None
        # Open-loop inserts: the pacer and the common end (on the timer's clock) while the calls go on,
        # then how far behind and the most late the worker ended (the live figures' lag).
        self.pacer: Pacer | None = None
        self.deadline = math.inf
        self.time_limit_reached = False  # --time-limit ended the timed phase before the work was done
        self.tally_s: float | None = None  # the expected answers' tally after the timed phase
        self.final_lag: tuple[float | None, float | None] | None = None

    def run(self) -> int:
        try:
            signal = self.client.register()
            if signal.phase == "failed":
                log.error("the collector reports a failed run; stopping")
                return 1
            self.module = module_class(self.spec.module)(self.spec)
            self.module.connect()
            if self.spec.task in ("query", "scan"):
                self.read_side = ReadSide(self.spec, self.index, self.module, self._check_stop)
                self.read_side.follow_record()
                self.spec, self.module = self.read_side.spec, self.read_side.module
            reporter = self.reporter = ProgressReporter(self.client, self._progress, self.spec.heartbeat_timeout)
            reporter.start()
            try:
                result = self._run_phases()
            finally:
                reporter.stopped.set()
            if result is None:
                return 1
            # Disconnect before reporting: servers publish a session's statistics when it ends,
            # and the collector reads them as soon as the last result is in.
            self.module.close()
            self.client.post("/result", result)
            return 0
        except Exception as error:
            message = one_line(error)
            log.error("worker %d failed: %s", self.index, message)
            try:
                self.client.post("/failure", WorkerFailure(worker=self.index, error=message, refused=isinstance(error, ModuleError)))
            except CollectorError:
                log.error("could not report the failure to the collector")
            return 1
        finally:
            if self.module is not None:
                self.module.close()

    def _progress(self) -> WorkerProgress:
        """Events done, events prefilled and the p99 of the calls since the last report (the live progress
        line), and the live figures (the collector's metrics)."""
        recorder, read_side = self.recorder, self.read_side
        done, total = (read_side.work_done, read_side.work_total) if read_side is not None else (0, 0)
        return WorkerProgress(worker=self.index, events=recorder.events if recorder else 0, prefilled=self.prefilled,
                              interval_p99_ms=recorder.interval_p99_ms() if recorder else None, live=self._live(),
                              work_done=done, work_total=total)

    def _expected(self) -> Expected | None:
        """The tally of what this worker stored, with the stretch of its stream that it was."""
        if self.tally is None or self.span is None:
            return None
        parts, problem = self.span.parts()
        return self.tally.result().model_copy(update={"streams": parts, "streams_problem": problem})

    def _live(self) -> LiveFigures:
        """The running totals: calls and their latencies, retries, each query's executions and errors,
        and, open loop, the lag behind the schedule."""
        recorder, module = self.recorder, self.module
        queries = {}
        if self.read_side is not None:
            queries = self.read_side.live_queries()
        elif self.query_client is not None:
            queries = self.query_client.recorder.live()
        behind, max_lag = self._lag()
        return LiveFigures(latency=recorder.latency_counts() if recorder else LatencyCounts(), retries=module.retries() if module else 0,
                           errors=sum(query.errors for query in queries.values()), behind_s=behind, max_lag_s=max_lag, queries=queries)

    def _lag(self) -> tuple[float | None, float | None]:
        if self.final_lag is not None:
            return self.final_lag
        pacer = self.pacer
        if pacer is None or not pacer.open_loop:
            return None, None
        return pacer.behind_s(min(clock(), self.deadline), False), pacer.max_lag_s

    def _check_stop(self) -> None:
        if self.reporter is not None:
            self.reporter.check()

    def _run_phases(self) -> WorkerResult | None:
        generator = shapes.generator(self.spec, self.index)
        first_timed, timed_events = shapes.timed_stream(self.spec, self.index, generator)
        role = self.spec.role_of(self.index)
        if role == "worker" and self.spec.task == "insert":
            self._prefill(generator, self.spec.stream_offset, self.spec.prefill_share(self.index))
            if self.spec.pregenerate:
                chunks = generator.chunks(first_timed, timed_events, self.spec.batch)
                self.pregenerated = Pregenerated(self.module.writer, chunks, self.spec.batch, timed_events)
                self.pregenerated_bytes = self.pregenerated.held_bytes
        elif self.spec.task == "scan":
            scans = self.module.capabilities.scans
            if scans is not True:
                raise ModuleError(f"module '{self.spec.module}' cannot scan: {scans.because}")
            record, missing = self.read_side.expected_record()
            devices = scan_share(self.module.reader.scan_devices(), record, self.index, self.spec.workers)
            self.read_side.work_total = len(devices)  # the progress line counts the devices from the start
        signal = self.client.wait_for_start()
        if signal.phase == "failed":
            return None
        # The workers' reports spread evenly over each second from the common start.
        self.reporter.keep_time_with(signal.start_at + PROGRESS_INTERVAL_S * self.index / self.spec.processes)
        ahead = signal.start_at - time.time()
        if ahead < 0:  # a busy node or collector: the report's start skew includes this worker's lateness
            log.warning("learned the common start %.3f s after it; starting late", -ahead)
        time.sleep(max(0.0, ahead))
        self.recorder = CallRecorder(signal.start_at)
        self.cpu_at_start = process_cpu_s()
        started_at = time.time()
        if role == "query-client":
            self.query_client = QueryClient(self.spec, self.index, self.module, self.client, check=self._check_stop)
            latencies = self.query_client.run(signal.start_at)
            return self._result(started_at, time.time(), query_latencies=latencies)
        if self.spec.task == "insert":
            return self._insert(generator, first_timed, timed_events)
        if self.spec.time_limit_s:
            self.read_side.deadline = clock_at(signal.start_at + self.spec.time_limit_s)
        if self.spec.task == "scan":
            outcome = self.read_side.scan(devices, record, missing, self.recorder)
            return self._result(started_at, time.time(), scan=outcome)
        runs = self.read_side.query()
        self.module = self.read_side.module
        return self._result(started_at, time.time(), queries=runs)

    def _prefill(self, generator: EventGenerator | TsbsGenerator, start: int, count: int) -> None:
        writer = self.module.writer
        for batch in generator.batches(start, count, PREFILL_BATCH):
            self._check_stop()
            writer.insert_batch(writer.prepare_batch(batch))
            self._stored(batch)
            self.prefilled += len(batch)
        writer.flush()
        if count:
            # A new session: servers publish a session's statistics when it ends (PostgreSQL may
            # otherwise hold them up to 10 s), so the collector's start sample sees the prefill.
            self.module.close()
            self.module.connect()

    def _stored(self, batch: EventBatch) -> None:
        """Every batch the database acknowledged (prefill and timed phase, whole or the part sent
        before a --duration deadline) passes here once, in order. TSBS's shapes keep no tally: their
        expected answers are recomputed from the seed (simulator/workload/tsbs/series.py)."""
        if len(batch):
            self.stream_end = max(self.stream_end, int(batch.sequence_number.max()) + 1)
            if self.spec.tsbs:
                return
            if self.tally is None:
                devices = self.spec.devices_of(self.index)
                self.tally = Tally.for_worker(self.index, devices)
                self.span = StreamSpan(self.spec.seed, self.index, devices, self.spec.order, self.spec.burst)
            stored = self.module.writer.stored_events(batch)
            self.tally.add(stored)  # the expected answers (simulator/checks/expected.py)
            self.span.add(batch, stored)

    def _insert(self, generator: EventGenerator | TsbsGenerator, start: int, total: int | None) -> WorkerResult:
        """The timed phase: `total` events (None: as many as fit until the common start + --duration;
        a call is never started after that, one in flight then finishes and counts). With --rate the
        calls start on the schedule (simulator/workload/schedule.py) instead of each as soon as the last returned."""
        module, recorder, spec = self.module, self.recorder, self.spec
        started_at = time.time()
        pacer: Pacer = ClosedLoop()
        if spec.rate:
            pacer = OpenLoop(Schedule(spec.rate, spec.workers, self.index, spec.batch or 1, clock_at(recorder.common_start)))
        timer = self.timer = CallTimer(pacer, recorder, shared=module.capabilities.marks_own_calls)
        # The common end of a --duration run, or the invocation's --time-limit, on the timer's clock.
        ends_s = min(filter(None, (spec.duration_s, spec.time_limit_s)), default=0.0)
        deadline = self.deadline = clock_at(recorder.common_start + ends_s) if ends_s else math.inf
        self.pacer = pacer
        acknowledged = AcknowledgedPrefix(lambda: generator.batches(start, total, spec.batch))
        if spec.batch:
            all_sent = self._insert_batches(generator.chunks(start, total, spec.batch), acknowledged, deadline)
        else:
            module.bind(WorkerHooks(begin_call=timer.begin))
            all_sent = self._insert_singles(generator.batches(start, total, SINGLE_MODE_CHUNK), deadline)
        module.writer.flush()
        self.time_limit_reached = not all_sent and bool(spec.time_limit_s) and (not spec.duration_s or spec.time_limit_s < spec.duration_s)
        behind = pacer.behind_s(min(clock(), deadline), all_sent)
        self.final_lag = behind, pacer.max_lag_s
        finished_at, cpu_at_end = time.time(), process_cpu_s()
        self.pregenerated = None  # its memory, freed outside the timed phase
        if isinstance(generator, TsbsGenerator):  # no tally to make: where the stream ends is all there is to know
            self.stream_end = max(self.stream_end, generator.end_step(acknowledged.events))
        else:
            began = clock()
            for batch in acknowledged.replay():  # the expected answers, after the timed calls (simulator/checks/acknowledged.py)
                self._stored(batch)
            self.tally_s = clock() - began
        return self._result(started_at, finished_at, behind_s=behind, max_lag_s=pacer.max_lag_s, cpu_at_end=cpu_at_end)

    def _insert_batches(self, chunks: Iterator[EventBatch], acknowledged: AcknowledgedPrefix, deadline: float) -> bool:
        """Returns whether every batch was sent (False: the deadline came first). The loop only counts
        the acknowledged events; their tally follows after the timed calls."""
        module, timer = self.module, self.timer
        writer, marks_own_calls = module.writer, module.capabilities.marks_own_calls
        # Event.is_set bound once: the check costs a call per batch, not a chain of lookups.
        halted = self.reporter.halt.is_set if self.reporter is not None else threading.Event().is_set
        pipeline = self.pregenerated or PIPELINES[module.capabilities.prepare_next](writer, chunks, self.spec.batch)
        module.bind(WorkerHooks(begin_call=timer.begin, while_waiting=pipeline.while_waiting))
        with contextlib.closing(iter(pipeline)) as prepared_batches, self._unbound_after(module, timer):
            for events, prepared in prepared_batches:
                if halted():
                    self._check_stop()
                if not timer.turn(events, deadline):
                    return False
                if marks_own_calls:
                    writer.insert_batch(prepared)
                else:
                    done = timer.begin(events)
                    writer.insert_batch(prepared)
                    done()
                acknowledged.add(events)
        return True

    @staticmethod
    @contextlib.contextmanager
    def _unbound_after(module: DatabaseModule, timer: CallTimer) -> Iterator[None]:
        """Once the batches stop, a late `while_waiting` (a flush) prepares nothing more."""
        try:
            yield
        finally:
            module.bind(WorkerHooks(begin_call=timer.begin))

    def _insert_singles(self, batches: Iterator[EventBatch], deadline: float) -> bool:
        """One call per event; with --commit-interval the events go into a transaction that is
        committed every S seconds (each commit is a call of its own, of no events). Returns whether
        every event was sent."""
        interval = self.spec.commit_interval_s
        self._next_commit = clock() + interval if interval else math.inf
        all_sent = True
        for batch in batches:
            self._check_stop()
            done = self._singles(batch, deadline)
            self._stored(batch if done == len(batch) else batch.select(slice(0, done)))
            if done < len(batch):
                all_sent = False
                break
        if interval:
            self._commit()
        return all_sent

    def _singles(self, batch: EventBatch, deadline: float) -> int:
        """Insert the batch's events one by one until the deadline; returns how many were inserted."""
        module, timer, interval = self.module, self.timer, self.spec.commit_interval_s
        writer, marks_own_calls = module.writer, module.capabilities.marks_own_calls
        for done, item in enumerate(writer.prepare_single(batch)):
            if not timer.turn(1, deadline):
                return done
            if marks_own_calls:
                writer.insert_single(item)
            else:
                call_done = timer.begin(1)
                writer.insert_single(item)
                call_done()
            if clock() >= self._next_commit:
                self._commit()
                self._next_commit = clock() + interval
        return len(batch)

    def _commit(self) -> None:
        done = self.timer.begin(0, scheduled=False)
        self.module.writer.commit()
        done()

    def _result(self, started_at: float, finished_at: float, queries: dict[str, QueryRuns] | None = None,
                scan: ScanOutcome | None = None, query_latencies: dict[str, QueryHistograms] | None = None,
                behind_s: float | None = None, max_lag_s: float | None = None, cpu_at_end: float | None = None) -> WorkerResult:
        """`cpu_at_end`: this process's CPU seconds when its timed calls ended (default: now)."""
        recorder = self.recorder
        cpu_s = (process_cpu_s() if cpu_at_end is None else cpu_at_end) - self.cpu_at_start
        return WorkerResult(
            worker=self.index,
            started_at=started_at,
            finished_at=finished_at,
            events=recorder.events,
            calls=recorder.calls,
            prefilled=self.prefilled,
            db_seconds=recorder.db_seconds,
            retries=self.module.retries(),
            histogram=recorder.encoded_histogram() if recorder.calls else "",
            per_second=recorder.windows.values,
            series_window_s=recorder.windows.width_s,
            response_histogram=recorder.encoded_response_histogram(),
            behind_s=behind_s,
            max_lag_s=max_lag_s,
            cpu_s=cpu_s,
            pregenerated_bytes=self.pregenerated_bytes,
            stream_end=self.stream_end if self.spec.role_of(self.index) == "worker" and self.spec.task == "insert" else None,
            queries=queries or {},
            expected=self._expected(),
            scan=scan,
            role=self.spec.role_of(self.index),
            query_latencies=query_latencies or {},
            live=self._live(),
            time_limit_reached=self.time_limit_reached or (self.read_side is not None and self.read_side.time_limit_reached),
            tally_s=self.tally_s,
            work_done=self.read_side.work_done if self.read_side is not None else 0,
        )
