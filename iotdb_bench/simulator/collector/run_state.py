"""The collector's one piece of mutable state (`RunState`), guarded by a lock: the endpoints run in
threads, and the start barrier, the progress, the results and the dead-man switch all meet here."""

from __future__ import annotations

import logging
import threading
import time

from iotdb_bench.simulator.checks.expected import ExpectedRecord
from iotdb_bench.simulator.collector.wakeup import Wakeup
from iotdb_bench.simulator.measurement import conditions, stats
from iotdb_bench.simulator.protocol import LiveFigures, Status, WorkerResult
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload import shapes

log = logging.getLogger("collector")

# Time between the last worker becoming ready and the common start: long enough for every worker
# to learn the start time so they all begin on the clock. Workers wait for it in a held request
# (`/ready`), answered all at once when the start is published: the lead grows with the number of
# answers to send (1,000 took 0.15 to 0.25 s in benchmarks/collector_scale.py; the lead is twice that).
START_LEAD_S = 0.1
START_LEAD_PER_WORKER_S = 0.0004
# Phases in which nobody following the run means nobody will ever stop it.
ACTIVE_PHASES = ("preparing", "waiting", "running")


class RunState:
    """The collector's one piece of mutable state, guarded by a lock (endpoints run in threads)."""

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.lock = threading.Lock()
        self.phase = "preparing"
        self.error: str | None = None
        self.refused_input = False  # the failure is the database refusing a query file's text (a usage problem)
        self.registered: set[int] = set()
        self.ready: set[int] = set()
        self.progress: dict[int, int] = {}
        self.prefilled: dict[int, int] = {}
        self.interval_p99_ms: dict[int, float] = {}  # each running worker's last progress interval
        self.work: dict[int, tuple[int, int]] = {}  # query and scan runs: each worker's (done, total) so far
        self.live: dict[int, LiveFigures] = {}  # each worker's running totals (its last progress, then its result's)
        self.failed_workers: set[int] = set()  # workers that posted a failure
        self.results: dict[int, WorkerResult] = {}
        self.totals = stats.Totals()  # the results' histograms and series, added up as they arrive
        self.start_at: float | None = None
        self.count_before: int | None = None
        self.count_before_s: float | None = None  # what counting before the run took (None: known from the run before)
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

    def fail(self, message: str, refused_input: bool = False) -> None:
        """`refused_input`: the database refused what the user gave the run (a query file's text) before its timed phase."""
        with self.lock:
            if self.phase != "failed":
                log.error("run failed: %s", message)
                self.phase, self.error, self.refused_input = "failed", message, refused_input
        self.changed.announce()

    def status(self) -> Status:
        with self.lock:
            expected = shapes.timed_events(self.spec) if self.spec.task == "insert" and not self.spec.duration_s else 0
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
                refused_input=self.refused_input,
                start_at=self.start_at,
                duration_s=self.spec.duration_s if self.spec.task == "insert" else 0.0,
                interval_p99_ms=max(self.interval_p99_ms.values(), default=None),
                work_done=sum(done for done, _ in self.work.values()),
                work_total=sum(total for _, total in self.work.values()),
            )
