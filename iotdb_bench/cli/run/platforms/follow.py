"""Following a run through the collector's HTTP API; shared by every platform."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from iotdb_bench.cli.errors import RunFailed, RunTimedOut
from iotdb_bench.cli.run.platforms import StatusCallback
from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.protocol import Status
from iotdb_bench.simulator.report import RunReport

# The CLI shares the machine with the workers on the local platform: while the bulk of a timed
# phase runs it asks once a second, as often as progress reaches the collector (each status costs
# the CLI and the collector about a millisecond of CPU each); near the start and the expected end it
# asks often, so a finished run is seen at once. Hence the margin.
POLL_INTERVAL_S = 0.05
POLL_INTERVAL_BUSY_S = 1.0
BUSY_MARGIN_S = 2.5
# After a worker process dies, give its failure report a moment to reach the collector.
FAILURE_REPORT_GRACE_S = 1.0


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
) -> RunReport:
    """Poll the collector until the run is done; return its report or raise with the reason it failed."""
    running_since: float | None = None
    while True:
        status = _status(http, check_processes)
        on_status(status)
        if status.phase == "running" and running_since is None:
            running_since = time.monotonic()
        if status.phase == "failed":
            raise RunFailed(status.error or "the run failed")
        if status.phase == "done":
            code, body = _get(http, "/report", check_processes)
            if code != 200:
                raise RunFailed(f"the collector has no report: {_detail(body)}")
            return RunReport.model_validate_json(body)
        problem = check_processes()
        if problem:
            time.sleep(FAILURE_REPORT_GRACE_S)
            raise RunFailed(_status(http, lambda found=problem: found).error or problem)
        deadline.check("the run")
        time.sleep(_poll_interval(status, running_since))


def _status(http: CollectorClient, check_processes: Callable[[], str | None]) -> Status:
    code, body = _get(http, "/status", check_processes)
    if code != 200:
        raise RunFailed(f"the collector answered {code} to /status: {_detail(body)}")
    return Status.model_validate_json(body)


def _get(http: CollectorClient, path: str, check_processes: Callable[[], str | None]) -> tuple[int, bytes]:
    try:
        return http.get(path)
    except CollectorError as error:
        raise RunFailed(check_processes() or f"lost contact with the collector: {error}") from None


def _detail(body: bytes) -> str:
    try:
        return str(json.loads(body).get("detail"))
    except (ValueError, AttributeError):
        return body[:200].decode(errors="replace")


def _poll_interval(status: Status, running_since: float | None) -> float:
    """Slow polling only while the timed phase is expected to go on for a while yet."""
    if status.phase != "running" or running_since is None or status.finished or not status.events:
        return POLL_INTERVAL_S
    if status.duration_s and status.start_at is not None:
        remaining = status.start_at + status.duration_s - time.time()
        return POLL_INTERVAL_BUSY_S if remaining > BUSY_MARGIN_S else POLL_INTERVAL_S
    elapsed = time.monotonic() - running_since
    remaining = (status.expected_events - status.events) * elapsed / status.events
    return POLL_INTERVAL_BUSY_S if remaining > BUSY_MARGIN_S else POLL_INTERVAL_S
