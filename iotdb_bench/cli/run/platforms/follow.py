"""Following a run through the collector's HTTP API; shared by every platform."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from iotdb_bench.cli.errors import InputRefused, RunFailed, RunTimedOut
from iotdb_bench.cli.run.platforms import Notice, StatusCallback
from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.report import RunReport

# The CLI follows a run with long polls: each /status request names the phase and the number of
# finished workers it last saw, and the collector holds it until either changes or this long has
# passed. Inside the timed phase the CLI and the collector share the cores with the database: one
# request a second there (about a millisecond of CPU each, on both sides), while the start and the
# end are still seen the moment they happen. Outside it, the progress line moves 4 times a second.
STATUS_WAIT_S = 0.25
STATUS_WAIT_TIMED_S = 1.0
# However the collector answers, at least this long between two requests.
LEAST_GAP_S = 0.05
# After a worker process dies, give its failure report a moment to reach the collector.
FAILURE_REPORT_GRACE_S = 1.0
# A collector out of reach is asked again after these waits, doubling (a port-forward reconnects).
RECONNECT_FIRST_S = 0.5
RECONNECT_LONGEST_S = 4.0
SUSPEND_TICK_S = 0.5
SUSPENDED = "while this command was suspended"

log = logging.getLogger(__name__)


class Deadline:
    def __init__(self, timeout: float):
        self.timeout = timeout
        self.at = time.monotonic() + timeout if timeout > 0 else None

    def check(self, what: str) -> None:
        if self.at is not None and time.monotonic() > self.at:
            raise RunTimedOut(f"{what} did not finish within --timeout {self.timeout:g} s; stopped it")


def wait_for_collector(http: CollectorClient, deadline: Deadline, check_processes: Callable[[], str | None]) -> None:
    """Wait until the collector answers HTTP at all (it may still be preparing the database)."""
    while True:
        try:
            if http.get("/status")[0] == 200:
                return
        except CollectorError:
            pass  # not listening yet
        problem = check_processes()
        if problem:
            raise RunFailed(problem)
        deadline.check("starting the collector")
        time.sleep(0.05)


def follow_run(
    http: CollectorClient,
    deadline: Deadline,
    on_status: StatusCallback,
    check_processes: Callable[[], str | None],
    heartbeat_timeout: float = 0.0,
    patience: Patience | None = None,
    suspension: SuspendWatch | None = None,
) -> RunReport:
    """Poll the collector until the run is done; return its report or raise with the reason it failed.
    With `patience`, a collector out of reach is asked again with backoff (a dropped port-forward)
    until the patience runs out; without, the first lost contact fails the run. A failure after this
    process was suspended (watched here, or by the caller's `suspension` since the run began) says so."""
    contact = Contact(http, deadline, on_status, check_processes, patience)
    watch = suspension or SuspendWatch().begun()
    try:
        return _follow(contact, deadline, on_status, check_processes)
    except RunFailed as failure:
        raise watch.explained(failure, heartbeat_timeout) from None
    finally:
        if suspension is None:
            watch.stopped.set()


def _follow(contact: Contact, deadline: Deadline, on_status: StatusCallback, check_processes: Callable[[], str | None]) -> RunReport:
    status: Status | None = None
    while True:
        asked = time.monotonic()
        status = _status(contact, after=status)
        on_status(status)
        if status.phase == "failed":
            raise (InputRefused if status.refused_input else RunFailed)(status.error or "the run failed")
        if status.phase == "done":
            code, body = contact.get("/report")
            if code != 200:
                raise RunFailed(f"the collector has no report: {_detail(body)}")
            return RunReport.model_validate_json(body)
        problem = check_processes()
        if problem:
            time.sleep(FAILURE_REPORT_GRACE_S)
            raise RunFailed(_status(contact.without_patience(problem)).error or problem)
        deadline.check("the run")
        time.sleep(max(0.0, asked + LEAST_GAP_S - time.monotonic()))


@dataclass(frozen=True)
class Patience:
    """How long the collector may stay out of reach before the run is given up (the CLI's side of the
    dead-man switch: after the heartbeat timeout the collector has stopped the run anyway), and what
    to say about why it is out of reach."""

    limit_s: float
    reason: Callable[[], str | None] = lambda: None


class Contact:
    """GETs to the collector; with patience, a lost connection is tried again with backoff, saying so
    on the progress line, while the platform sees nothing wrong with the run's processes."""

    def __init__(self, http: CollectorClient, deadline: Deadline, on_status: StatusCallback,
                 check_processes: Callable[[], str | None], patience: Patience | None):
        self.http, self.deadline, self.on_status, self.check_processes, self.patience = http, deadline, on_status, check_processes, patience

    def without_patience(self, problem: str) -> Contact:
        """For one last look after a problem was found: no retries, and any error is that problem."""
        return Contact(self.http, self.deadline, lambda status: None, lambda: problem, None)

    def get(self, path: str) -> tuple[int, bytes]:
        lost_since: float | None = None
        wait = RECONNECT_FIRST_S
        while True:
            try:
                answer = self.http.get(path)
            except CollectorError as error:
                problem = self.check_processes()
                if problem:
                    raise RunFailed(problem) from None
                if self.patience is None:
                    raise RunFailed(f"lost contact with the collector: {error}") from None
                now = time.monotonic()
                lost_since = now if lost_since is None else lost_since
                reason = self.patience.reason() or str(error)
                if now - lost_since > self.patience.limit_s:
                    raise RunFailed(f"lost contact with the collector for {now - lost_since:.0f} s ({reason}), longer than the heartbeat "
                                    f"timeout ({self.patience.limit_s:g} s): the run stops by its dead-man switch") from None
                self.deadline.check("the run")
                self.on_status(Notice(f"reconnecting to the collector ({now - lost_since:.0f} s: {reason})"))
                time.sleep(min(wait, max(lost_since + self.patience.limit_s - now, 0.0) + 0.1))  # not much past the limit
                wait = min(2 * wait, RECONNECT_LONGEST_S)
                continue
            if lost_since is not None:
                log.info("reached the collector again after %.1f s", time.monotonic() - lost_since)
            return answer


class SuspendWatch(threading.Thread):
    """Notices that this process did not run for a while (a laptop asleep, SIGSTOP): a thread that
    ticks and measures the gaps between its ticks, on both clocks (the monotonic clock stands still
    while the machine sleeps, the wall clock does not)."""

    def __init__(self):
        super().__init__(name="suspend watch", daemon=True)
        self.longest_s = 0.0
        self.stopped = threading.Event()

    def run(self) -> None:
        wall, steady = time.time(), time.monotonic()
        while not self.stopped.wait(SUSPEND_TICK_S):
            now_wall, now_steady = time.time(), time.monotonic()
            self.longest_s = max(self.longest_s, now_wall - wall - SUSPEND_TICK_S, now_steady - steady - SUSPEND_TICK_S)
            wall, steady = now_wall, now_steady

    def begun(self) -> SuspendWatch:
        self.start()
        return self

    def __enter__(self) -> SuspendWatch:
        return self.begun()

    def __exit__(self, *exc) -> None:
        self.stopped.set()

    def explained(self, failure: RunFailed, heartbeat_timeout: float) -> RunFailed:
        """After a suspension as long as the heartbeat timeout the collector has stopped the run (the CLI
        was silent that long): that is what happened, whatever the run's processes said after."""
        if heartbeat_timeout <= 0 or self.longest_s < heartbeat_timeout or isinstance(failure, RunTimedOut) or SUSPENDED in str(failure):
            return failure
        text = (f"the run was stopped by its dead-man switch {SUSPENDED} for {self.longest_s:.0f} s "
                f"(heartbeat timeout {heartbeat_timeout:g} s)")
        if "run abandoned" not in str(failure):
            text += f"; then: {failure}"
        return RunFailed(text)


def _status(contact: Contact, after: Status | None = None) -> Status:
    """The run's status; `after` the last one seen: answered once the phase or the number of finished
    workers differs from it, or after the phase's wait (a long poll)."""
    path = "/status"
    if after is not None:
        wait_s = STATUS_WAIT_TIMED_S if after.phase == "running" else STATUS_WAIT_S
        path += f"?phase={after.phase}&finished={after.finished}&wait_s={wait_s:g}"
    code, body = contact.get(path)
    if code != 200:
        raise RunFailed(f"the collector answered {code} to /status: {_detail(body)}")
    return Status.model_validate_json(body)


def _detail(body: bytes) -> str:
    try:
        return str(json.loads(body).get("detail"))
    except (ValueError, AttributeError):
        return body[:200].decode(errors="replace")
