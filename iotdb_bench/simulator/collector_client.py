"""A client of the collector's HTTP API on the standard library: the workers post through it and
the CLI follows a run with it.

http.client instead of a richer client keeps start-up short (a run starts N workers at once, and
the CLI starts alongside them); one keep-alive connection per thread, since a worker's progress
reporter posts from its own.
"""

from __future__ import annotations

import http.client
import logging
import threading
import time
from urllib.parse import urlsplit

from pydantic import BaseModel

from iotdb_bench.simulator.protocol import RUN_HEADER, StartSignal, WorkerHello

BARRIER_POLL_S = 0.02
REGISTER_RETRY_S = 0.05
COLLECTOR_WAIT_S = 300.0
# Answers that mean "not the collector yet": on Kubernetes the Service's routing may not be
# programmed when the pods start together.
NOT_YET_THERE = (404, 502, 503, 504)
# What sending on a keep-alive connection the server has already closed looks like.
STALE_CONNECTION = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, http.client.RemoteDisconnected)

log = logging.getLogger("collector-client")


class CollectorError(Exception):
    """The collector could not be reached, or answered with an error status."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class StaleConnection(CollectorError):
    """The connection broke as if the collector had closed it (for a kept-alive one: while idle)."""


class CollectorClient:
    def __init__(self, url: str, worker: int | None = None, get_attempts: int = 1, run_id: str | None = None):
        """`worker`: the index a worker registers with (None for the CLI). `get_attempts`: how often a
        GET whose connection broke is tried (a port-forward's relayed connection can drop). `run_id`:
        the run this client belongs to, sent with every request (None: not checked)."""
        parts = urlsplit(url)
        self.host, self.port, self.worker = parts.hostname or "127.0.0.1", parts.port or 80, worker
        self.get_attempts = get_attempts
        self._headers = {RUN_HEADER: run_id} if run_id else {}
        self._local = threading.local()

    def post(self, path: str, payload: BaseModel) -> bytes:
        status, answer = self._request("POST", path, payload.model_dump_json().encode())
        if status >= 400:
            raise CollectorError(f"collector answered {status} to {path}: {answer[:200]!r}", status)
        return answer

    def get(self, path: str) -> tuple[int, bytes]:
        """(status, body); raises CollectorError only when no answer came."""
        for attempt in range(1, self.get_attempts):
            try:
                return self._request("GET", path)
            except CollectorError:
                time.sleep(0.2 * attempt)
        return self._request("GET", path)

    def _request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        reused = getattr(self._local, "connection", None) is not None
        try:
            return self._exchange(method, path, body)
        except StaleConnection as error:
            # The collector closes a keep-alive connection that sat idle (a worker's main thread's
            # during a long timed phase) without reading what was sent on it: sending again is safe.
            if not reused:
                raise
            log.debug("the collector had closed an idle connection (%s); reconnecting", error)
            return self._exchange(method, path, body)

    def _exchange(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = http.client.HTTPConnection(self.host, self.port, timeout=30.0)
        try:
            headers = {**self._headers, "content-type": "application/json"} if body is not None else self._headers
            connection.request(method, path, body, headers)
            response = connection.getresponse()
            answer = response.status, response.read()
            if response.status in NOT_YET_THERE:
                # Not the collector: a connection opened before the Service's routing was programmed
                # reaches whatever answers for an unrouted address, and would stay there if kept.
                connection.close()
                self._local.connection = None
            return answer
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            self._local.connection = None
            kind = StaleConnection if isinstance(error, STALE_CONNECTION) else CollectorError
            raise kind(f"collector at {self.host}:{self.port} unreachable: {error}") from None

    def register(self) -> StartSignal:
        """Register, waiting for the collector to come up and finish preparing the database."""
        deadline = time.monotonic() + COLLECTOR_WAIT_S
        while True:
            try:
                signal = StartSignal.model_validate_json(self.post("/register", WorkerHello(worker=self.worker)))
                if signal.phase != "preparing":
                    return signal
            except CollectorError as error:
                if (error.status is not None and error.status not in NOT_YET_THERE) or time.monotonic() > deadline:
                    raise
            time.sleep(REGISTER_RETRY_S)

    def wait_for_start(self) -> StartSignal:
        """Ready at the barrier: the collector holds each ask until the start is published (or for a
        few seconds, then it is asked again)."""
        while True:
            signal = StartSignal.model_validate_json(self.post("/ready", WorkerHello(worker=self.worker)))
            if signal.start_at is not None or signal.phase == "failed":
                return signal
            time.sleep(BARRIER_POLL_S)
