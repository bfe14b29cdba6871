"""A query client of a mixed run (`insert --query-workers K`): it runs the chosen queries against
the growing data from the common start until the inserts stop, then each of them again on the idle
database (same data), and reports one latency histogram per query and phase.

The inserts stop at the common start + --duration, or, for a run of a count of events, when every
insert worker has posted its result (the collector's status says so). Back to back by default;
with --query-rate the K clients together start that many queries per second on a fixed schedule
(client k's i-th query at start + (i + k/K) x K/rate), and latency is counted from the intended
start, so a query that waited for a slow one before it is not flattered (coordinated omission).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable

from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.measurement.query_latency import QueryLatencyRecorder
from iotdb_bench.simulator.measurement.timing import CallTimer, clock, clock_at
from iotdb_bench.simulator.modules import DatabaseModule
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.queries import written as data_written
from iotdb_bench.simulator.queries.executions import Executions
from iotdb_bench.simulator.queries.parameters import ParameterDraws
from iotdb_bench.simulator.queries.tsbs_devops import written
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.worker.pacing import ClosedLoop, OpenLoop, Pacer
from iotdb_bench.simulator.workload.schedule import Schedule
from iotdb_bench.simulator.workload.tsbs.data import TsbsData

log = logging.getLogger("query-client")

STATUS_POLL_S = 0.2


class InsertsDone(threading.Thread):
    """Sets `done` when every insert worker has posted its result (polls the collector's status)."""

    def __init__(self, client: CollectorClient, insert_workers: int):
        super().__init__(daemon=True)
        self.client, self.insert_workers, self.done, self.stopped = client, insert_workers, threading.Event(), threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(STATUS_POLL_S):
            try:
                status, body = self.client.get("/status")
                if status == 200:
                    state = Status.model_validate_json(body)
                    # Query clients post only after the inserts stopped: the first results are the insert workers'.
                    if state.finished >= self.insert_workers or state.phase in ("done", "failed"):
                        self.done.set()
                        return
            except CollectorError as error:
                log.warning("status poll failed: %s", error)


class QueryClient:
    def __init__(self, spec: RunSpec, index: int, module: DatabaseModule, client: CollectorClient, check: Callable[[], None] = lambda: None):
        """`check`: called between queries; raises when the run is to stop (the worker's dead-man switch)."""
        self.spec, self.module, self.client, self.check = spec, module, client, check
        self.number = index - spec.workers  # 0..K-1 among the query clients
        self.names = list(spec.queries)
        self.recorder = QueryLatencyRecorder(self.names)

    def run(self, start_at: float) -> dict:
        """The mixed phase, then the idle phase; returns the recorder's payload. TSBS's query types and a
        query file's draw their parameters from the data the run is writing (its hosts or devices and time range)."""
        spec, file = self.spec, self.spec.query_file
        if file is not None:  # a query file's parameters: from what the run writes (no answer is kept: the data grows)
            available = Executions(self.module.reader, ParameterDraws(spec.seed, self.number, data_written.of_spec(spec)), file,
                                   self.module.capabilities.query_languages)
        else:
            draws = ParameterDraws(spec.seed, self.number, written(TsbsData.of(spec))) if spec.tsbs else None
            available = Executions(self.module.reader, draws)
        runnable = []
        for name in self.names:
            if available.offers(name):
                runnable.append(name)
            else:
                self.recorder.error(name, f"module '{self.spec.module}' does not offer the query '{name}'")
        watcher = InsertsDone(self.client, self.spec.workers)
        watcher.start()
        try:
            executions = self._under_ingest(available, runnable, start_at, watcher.done)
        finally:
            watcher.stopped.set()
        log.info("%d queries under ingest; now on the idle database", executions)
        idle = CallTimer()
        for name in runnable:
            for _ in range(self.spec.query_runs):
                self._execute(idle, available, name, "idle")
        return self.recorder.payload()

    def _pacer(self, start_at: float, inserts_done: threading.Event) -> Pacer:
        """Back to back, or (--query-rate) the K clients' queries on one schedule: client k's i-th at
        start + (i + k/K) x K/rate; a wait for the next is cut short when the inserts stop."""
        spec = self.spec
        if not spec.query_rate:
            return ClosedLoop()
        return OpenLoop(Schedule(spec.query_rate, spec.query_workers, self.number, 1, clock_at(start_at)), wait=inserts_done.wait)

    def _under_ingest(self, available, runnable: list[str], start_at: float, inserts_done: threading.Event) -> int:
        end = clock_at(start_at + self.spec.duration_s) if self.spec.duration_s else math.inf
        timer = CallTimer(self._pacer(start_at, inserts_done))
        executions = 0
        while runnable and not inserts_done.is_set():
            if not timer.turn(1, end):
                # The next query would start after the end: the inserts are still running until then.
                if end < math.inf:
                    inserts_done.wait(max(end - clock(), 0.0))
                break
            name = runnable[(executions + self.number) % len(runnable)]
            # A start scheduled in the past counts from when it was due (response time).
            self._execute(timer, available, name, "ingest")
            executions += 1
        return executions

    def _execute(self, timer: CallTimer, available: Executions, name: str, phase: str) -> None:
        self.check()
        try:
            _, timed = timer.call(available.next(name).run)
        except Exception as error:  # recorded; the other queries go on
            message = one_line(error)
            log.warning("query %s failed: %s", name, message)
            self.recorder.error(name, message)
            self.module.close()
            self.module.connect()
            return
        self.recorder.record(name, phase, timed.response_s)
