"""One benchmark client: prefill share, wait at the barrier, timed work, report.

Only the database calls are timed. The next batch is generated (and encoded by the module) while
the current call waits for the database where the module allows it (see `prepare_next` in
modules/base.py), otherwise between calls; time outside calls is reported as client overhead. A
worker that fails posts its error to the collector before exiting non-zero, so the CLI can show why.
"""

from __future__ import annotations

import contextlib
import logging
import math
import resource
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from iotdb_bench.simulator import shapes
from iotdb_bench.simulator.acknowledged import AcknowledgedPrefix
from iotdb_bench.simulator.answers import AnswerChecker
from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import EventBatch, EventGenerator
from iotdb_bench.simulator.expected import ExpectedRecord, Tally
from iotdb_bench.simulator.modules import DatabaseModule, ModuleError, module_class
from iotdb_bench.simulator.protocol import ProgressAnswer, QueryHistograms, QueryRuns, ScanOutcome, WorkerFailure, WorkerProgress, WorkerResult
from iotdb_bench.simulator.query_client import QueryClient
from iotdb_bench.simulator.scan import ScanCheck, scan_share
from iotdb_bench.simulator.schedule import Schedule
from iotdb_bench.simulator.spec import PREFILL_BATCH, RunSpec
from iotdb_bench.simulator.stats import CallRecorder

log = logging.getLogger("worker")

# Single-insert mode still generates events in chunks, outside the timed calls.
SINGLE_MODE_CHUNK = 1000
PROGRESS_INTERVAL_S = 1.0


def prepared_ahead(module: DatabaseModule, batches: Iterator[EventBatch]) -> Iterator[tuple[EventBatch, Any]]:
    """Yield (batch, prepared batch), generating and encoding the next batch in a helper thread while
    the current one is in the database: the driver waits without the GIL, so the client's work
    overlaps the call instead of leaving the connection idle between calls."""
    def prepare_next():
        batch = next(batches, None)
        return None if batch is None else (batch, module.prepare_batch(batch))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prepare") as pool:
        upcoming = pool.submit(prepare_next)
        while (item := upcoming.result()) is not None:
            upcoming = pool.submit(prepare_next)
            yield item


def prepared_in_turn(module: DatabaseModule, batches: Iterator[EventBatch]) -> Iterator[tuple[EventBatch, Any]]:
    for batch in batches:
        yield batch, module.prepare_batch(batch)


def prepared_during_calls(module: DatabaseModule, batches: Iterator[EventBatch]) -> Iterator[tuple[EventBatch, Any]]:
    """Yield (batch, prepared batch); the module calls `while_waiting` once its request is sent, and
    the next batch is prepared then, in this thread, while the database works on the current one:
    the overlap of a helper thread without its hand-offs. Calling it again (a retried call) does
    nothing; if the module never calls it, the next batch is prepared after the call."""
    upcoming: list[tuple[EventBatch, Any] | None] = []

    def prepare_next() -> None:
        if not upcoming:
            batch = next(batches, None)
            upcoming.append(None if batch is None else (batch, module.prepare_batch(batch)))

    module.while_waiting = prepare_next
    try:
        prepare_next()
        while (item := upcoming.pop()) is not None:
            yield item
            prepare_next()
    finally:
        module.while_waiting = lambda: None


PIPELINES = {"helper_thread": prepared_ahead, "in_turn": prepared_in_turn, "during_call": prepared_during_calls}


def process_cpu_s() -> float:
    """CPU seconds this process has used so far, user + system, every thread (its own rusage)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class RunStopped(Exception):
    """The run was stopped from outside: the collector failed it (another worker failed, or the CLI
    went silent), or the collector itself could not be reached for too long."""


class ProgressReporter(threading.Thread):
    """Posts the worker's progress about once a second, off the hot path. Its answers are the worker's
    side of the dead-man switch: `halt` is set when the collector says the run failed, or when the
    collector has not been reachable for `unreachable_limit_s` (0 = no limit)."""

    def __init__(self, client: CollectorClient, read: Callable[[], tuple[int, int, float | None]], unreachable_limit_s: float = 0):
        super().__init__(daemon=True)
        self.client, self.read, self.stopped = client, read, threading.Event()
        self.unreachable_limit_s = unreachable_limit_s
        self.halt = threading.Event()
        self.reason = ""

    def run(self) -> None:
        reached = time.monotonic()
        while not self.stopped.wait(PROGRESS_INTERVAL_S):
            events, prefilled, interval_p99_ms = self.read()
            try:
                answer = self.client.post("/progress", WorkerProgress(worker=self.client.worker, events=events, prefilled=prefilled,
                                                                      interval_p99_ms=interval_p99_ms))
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


class CallTimer:
    """The one place database calls are timed (modules never read a clock). Service time runs from
    a call's start to its end; in open-loop runs (--rate) response time runs from the call's intended
    start on the schedule, so a call held back by a slow one before it is charged for the wait."""

    def __init__(self, recorder: CallRecorder, to_epoch: float, schedule: Schedule | None, shared: bool):
        self.recorder, self.to_epoch, self.schedule = recorder, to_epoch, schedule
        self.intended: float | None = None  # the intended start of the call about to begin (open loop)
        # Async modules end their calls on the driver's threads.
        self._lock = threading.Lock() if shared else contextlib.nullcontext()

    def turn(self, events: int, deadline: float) -> bool:
        """Wait until the next call of `events` is due (open loop; closed loop: now); False when the
        deadline has come first."""
        clock = time.perf_counter
        if self.schedule is None:
            return clock() < deadline
        due = self.schedule.next_start()
        if due >= deadline:
            return False
        now = clock()
        if now < due:
            time.sleep(due - now)
            now = clock()
        if now >= deadline:
            return False
        self.intended = self.schedule.started(events, now)
        return True

    def begin(self, events: int, scheduled: bool = True) -> Callable[[], None]:
        """A call of `events` starts now; returns what to call when it has ended. A call off the
        schedule (a commit) counts its service time as its response time."""
        clock, recorder, to_epoch = time.perf_counter, self.recorder, self.to_epoch
        began = clock()
        intended = None if self.schedule is None else (self.intended if scheduled and self.intended is not None else began)

        def done() -> None:
            end = clock()
            with self._lock:
                recorder.record(events, end - began, to_epoch + end, None if intended is None else end - intended)

        return done


class Worker:
    def __init__(self, spec: RunSpec, index: int, collector_url: str):
        self.spec, self.index = spec, index
        self.client = CollectorClient(collector_url, index)
        self.prefilled = 0
        # The position after the last event stored: the next run that continues the streams starts there.
        self.stream_end = spec.stream_offset
        self._next_commit = math.inf  # when the open transaction of single inserts is committed (--commit-interval)
        self.recorder: CallRecorder | None = None
        self.timer: CallTimer | None = None
        self.module: DatabaseModule | None = None
        self.cpu_at_start = 0.0
        self.reporter: ProgressReporter | None = None
        self.tally: Tally | None = None  # of the events this worker inserts: the expected answers

    def run(self) -> int:
        try:
            signal = self.client.register()
            if signal.phase == "failed":
                log.error("the collector reports a failed run; stopping")
                return 1
            self.module = module_class(self.spec.module)(self.spec)
            self.module.connect()
            if self.spec.task in ("query", "scan"):
                self._follow_record()
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
                self.client.post("/failure", WorkerFailure(worker=self.index, error=message))
            except CollectorError:
                log.error("could not report the failure to the collector")
            return 1
        finally:
            if self.module is not None:
                self.module.close()

    def _progress(self) -> tuple[int, int, float | None]:
        """Events done, events prefilled, and the p99 of the calls since the last report (for the live progress line)."""
        recorder = self.recorder
        return (recorder.events if recorder else 0), self.prefilled, (recorder.interval_p99_ms() if recorder else None)

    def _check_stop(self) -> None:
        if self.reporter is not None:
            self.reporter.check()

    def _run_phases(self) -> WorkerResult | None:
        generator = shapes.generator(self.spec, self.index)
        first_timed = self.spec.stream_offset
        role = self.spec.role_of(self.index)
        if role == "worker" and self.spec.task == "insert":
            share = self.spec.prefill_share(self.index)
            self._prefill(generator, self.spec.stream_offset, share)
            first_timed += share
        elif self.spec.task == "scan":
            record, missing = self._expected_record()
            devices = scan_share(self.module.scan_devices(), record, self.index, self.spec.workers)
        signal = self.client.wait_for_start()
        if signal.phase == "failed":
            return None
        ahead = signal.start_at - time.time()
        if ahead < 0:  # a busy node or collector: the report's start skew includes this worker's lateness
            log.warning("learned the common start %.3f s after it; starting late", -ahead)
        time.sleep(max(0.0, ahead))
        self.recorder = CallRecorder(signal.start_at)
        self.cpu_at_start = process_cpu_s()
        if role == "query-client":
            return self._query_client(signal.start_at)
        if self.spec.task == "insert":
            return self._insert(generator, first_timed)
        if self.spec.task == "scan":
            return self._scan(devices, record, missing)
        return self._query()

    def _prefill(self, generator: EventGenerator, start: int, count: int) -> None:
        for batch in generator.batches(start, count, PREFILL_BATCH):
            self._check_stop()
            self.module.insert_batch(self.module.prepare_batch(batch))
            self._stored(batch)
            self.prefilled += len(batch)
        self.module.flush()
        if count:
            # A new session: servers publish a session's statistics when it ends (PostgreSQL may
            # otherwise hold them up to 10 s), so the collector's start sample sees the prefill.
            self.module.close()
            self.module.connect()

    def _stored(self, batch: EventBatch) -> None:
        """Every batch the database acknowledged (prefill and timed phase, whole or the part sent
        before a --duration deadline) passes here once, in order."""
        if len(batch):
            self.stream_end = max(self.stream_end, int(batch.sequence_number.max()) + 1)
            if self.tally is None:
                self.tally = Tally.for_worker(self.index, self.spec.devices_of(self.index))
            self.tally.add(self.module.stored_events(batch))  # the expected answers (simulator/expected.py)

    def _insert(self, generator: EventGenerator, start: int) -> WorkerResult:
        """The timed phase: `num_inserts` events, or as many as fit until the common start + --duration
        (a call is never started after that; one in flight then finishes and counts). With --rate the
        calls start on the schedule (simulator/schedule.py) instead of each as soon as the last returned."""
        module, recorder, spec = self.module, self.recorder, self.spec
        started_at, started_clock = time.time(), time.perf_counter()
        to_clock = started_clock - started_at  # epoch seconds + to_clock = this process's monotonic clock
        schedule = None
        if spec.rate:
            schedule = Schedule(spec.rate, spec.workers, self.index, spec.batch or 1, recorder.common_start + to_clock)
        timer = self.timer = CallTimer(recorder, -to_clock, schedule, shared=module.times_own_calls)
        module.begin_call = timer.begin
        # The common end of a --duration run on this process's monotonic clock.
        deadline = recorder.common_start + spec.duration_s + to_clock if spec.duration_s else math.inf
        total = None if spec.duration_s else spec.num_inserts
        acknowledged = AcknowledgedPrefix(lambda: generator.batches(start, total, spec.batch))
        if spec.batch:
            all_sent = self._insert_batches(acknowledged, deadline)
        else:
            all_sent = self._insert_singles(generator.batches(start, total, SINGLE_MODE_CHUNK), deadline)
        module.flush()
        behind = schedule.behind_s(min(time.perf_counter(), deadline), all_sent) if schedule else None
        finished_at, cpu_at_end = time.time(), process_cpu_s()
        for batch in acknowledged.replay():  # the expected answers, after the timed calls (simulator/acknowledged.py)
            self._stored(batch)
        return self._result(started_at, finished_at, behind_s=behind, max_lag_s=schedule.max_lag_s if schedule else None,
                            cpu_at_end=cpu_at_end)

    def _insert_batches(self, acknowledged: AcknowledgedPrefix, deadline: float) -> bool:
        """Returns whether every batch was sent (False: the deadline came first). The loop only counts
        the acknowledged events; their tally follows after the timed calls."""
        module, timer, batches = self.module, self.timer, acknowledged.replay_source()
        # Event.is_set bound once: the check costs a call per batch, not a chain of lookups.
        halted = self.reporter.halt.is_set if self.reporter is not None else threading.Event().is_set
        with contextlib.closing(PIPELINES[module.prepare_next](module, batches)) as pipeline:
            for batch, prepared in pipeline:
                if halted():
                    self._check_stop()
                if not timer.turn(len(batch), deadline):
                    return False
                if module.times_own_calls:
                    module.insert_batch(prepared)
                else:
                    done = timer.begin(len(batch))
                    module.insert_batch(prepared)
                    done()
                acknowledged.add(len(batch))
        return True

    def _insert_singles(self, batches: Iterator[EventBatch], deadline: float) -> bool:
        """One call per event; with --commit-interval the events go into a transaction that is
        committed every S seconds (each commit is a call of its own, of no events). Returns whether
        every event was sent."""
        interval = self.spec.commit_interval_s
        self._next_commit = time.perf_counter() + interval if interval else math.inf
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
        module, timer, clock, interval = self.module, self.timer, time.perf_counter, self.spec.commit_interval_s
        for done, item in enumerate(module.prepare_single(batch)):
            if not timer.turn(1, deadline):
                return done
            if module.times_own_calls:
                module.insert_single(item)
            else:
                call_done = timer.begin(1)
                module.insert_single(item)
                call_done()
            if clock() >= self._next_commit:
                self._commit()
                self._next_commit = clock() + interval
        return len(batch)

    def _commit(self) -> None:
        done = self.timer.begin(0, scheduled=False)
        self.module.commit()
        done()

    def _follow_record(self) -> None:
        """A query or scan reads the tables the record's insert wrote (they have no --tables option), and
        refuses data of a workload it cannot read. Without a record, the run's own tables are read."""
        record, _ = self._expected_record()
        if record is not None:
            self._read_recorded_tables(record)
        if self.index == 0:
            # A count before any query is timed: a missing table or index fails the run here, in the
            # database's own words (e.g. "no such table: events"), instead of failing every query.
            with self._bookkeeping_session() as reader:
                reader.count()

    def _read_recorded_tables(self, record: ExpectedRecord) -> None:
        refusal = record.unreadable()
        if refusal:
            raise ModuleError(f"{self.spec.task} refused: {refusal}")
        if record.tables and record.tables != self.spec.table_names:
            spec = self.spec.model_copy(update={"tables": len(record.tables)})
            if spec.table_names != record.tables:
                raise ModuleError(f"the record names tables {','.join(record.tables)}, which this version does not write")
            self.module.close()
            self.spec = spec
            self.module = module_class(spec.module)(spec)
            self.module.connect()

    @contextlib.contextmanager
    def _bookkeeping_session(self):
        """The module, or with --query-timeout a session without it: the limit is the queries', not the
        bookkeeping's (counts, the record)."""
        if not self.spec.query_timeout:
            yield self.module
            return
        reader = module_class(self.spec.module)(self.spec.model_copy(update={"query_timeout": 0}))
        reader.connect()
        try:
            yield reader
        finally:
            reader.close()

    def _expected_record(self) -> tuple[ExpectedRecord | None, str | None]:
        """The record of expected answers saved with the data, or why the module keeps none."""
        with self._bookkeeping_session() as reader:
            try:
                return ExpectedRecord.load(reader.stored_record()), None
            except NotImplementedError as reason:
                return None, str(reason)

    def _query(self) -> WorkerResult:
        checker = AnswerChecker(*self._expected_record())
        started_at = time.time()
        available = self.module.queries()
        runs: dict[str, QueryRuns] = {}
        for name in self.spec.queries:
            runs[name] = outcome = QueryRuns()
            if name not in available:
                outcome.error = f"module '{self.spec.module}' does not offer the query '{name}'"
                continue
            for _ in range(self.spec.query_runs):
                self._check_stop()
                begin = time.perf_counter()
                try:
                    answer = available[name]()
                    seconds = time.perf_counter() - begin
                    rows = answer.normalised()  # untimed: the common form the check reads
                except Exception as error:  # recorded, and the other queries still run
                    outcome.error = one_line(error)
                    log.warning("query %s failed: %s", name, outcome.error)
                    self._recover_after_query_error()
                    break
                outcome.seconds.append(seconds)
                outcome.rows = len(rows)
                self._check_answer(checker, name, rows, outcome)
        return self._result(started_at, time.time(), queries=runs)

    @staticmethod
    def _check_answer(checker: AnswerChecker, name: str, rows: list[tuple], outcome: QueryRuns) -> None:
        """Check one execution's answer; the first wrong one is kept (the others still run)."""
        check = checker.check(name, rows)
        if outcome.answer != "wrong":
            outcome.answer, outcome.answer_detail = check.answer, check.detail
        if check.answer == "wrong":
            log.warning("query %s answered wrong: %s", name, check.detail)

    def _scan(self, devices: list[str], record: ExpectedRecord | None, missing: str | None) -> WorkerResult:
        """Read every reading of each of this worker's devices in timestamp order, a page at a time."""
        module, recorder, clock = self.module, self.recorder, time.perf_counter
        started_at, started_clock = time.time(), clock()
        check = ScanCheck(record, started_clock, missing)
        for device in devices:
            check.start_device(device)
            pages = module.scan(device, self.spec.scan_page_size)
            while True:
                begin = clock()
                page = next(pages, None)
                end = clock()
                if page is None:
                    break
                recorder.record(len(page), end - begin, started_at + end - started_clock)
                check.page(page, end)
            check.end_device()
        return self._result(started_at, time.time(), scan=check.finish())

    def _query_client(self, start_at: float) -> WorkerResult:
        """A query client of a mixed run (simulator/query_client.py)."""
        started_at = time.time()
        latencies = QueryClient(self.spec, self.index, self.module, self.client, check=self._check_stop).run(start_at)
        return self._result(started_at, time.time(), query_latencies=latencies)

    def _recover_after_query_error(self) -> None:
        """A failed statement can leave the session unusable; start a fresh one."""
        self.module.close()
        self.module.connect()

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
            per_second=recorder.per_second,
            response_histogram=recorder.encoded_response_histogram(),
            behind_s=behind_s,
            max_lag_s=max_lag_s,
            cpu_s=cpu_s,
            stream_end=self.stream_end if self.spec.role_of(self.index) == "worker" and self.spec.task == "insert" else None,
            queries=queries or {},
            expected=self.tally.result() if self.tally is not None else None,
            scan=scan,
            role=self.spec.role_of(self.index),
            query_latencies=query_latencies or {},
        )
