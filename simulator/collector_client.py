"""The workers' side of the collector's HTTP API, on the standard library.

http.client instead of a richer client keeps a worker's start-up short (a run starts N of them at
once); one keep-alive connection per thread, since the progress reporter posts from its own.
"""

from __future__ import annotations

import http.client
import logging
import threading
import time
from urllib.parse import urlsplit

from pydantic import BaseModel

from simulator.protocol import StartSignal, WorkerHello

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


class CollectorClient:
    def __init__(self, url: str, worker: int):
        parts = urlsplit(url)
        self.host, self.port, self.worker = parts.hostname or "127.0.0.1", parts.port or 80, worker
        self._local = threading.local()

    def post(self, path: str, payload: BaseModel) -> bytes:
        body = payload.model_dump_json().encode()
        for attempt in (1, 2):
            reused = getattr(self._local, "connection", None) is not None
            try:
                response, answer = self._exchange(path, body)
                break
            except STALE_CONNECTION as error:
                # The collector closes a keep-alive connection that sat idle (the main thread's during
                # a long timed phase) without reading what was sent on it: sending again is safe.
                if not (reused and attempt == 1):
                    raise self._unreachable(error) from None
                log.debug("the collector had closed an idle connection (%s); reconnecting", error)
        if response.status >= 400:
            raise CollectorError(f"collector answered {response.status} to {path}: {answer[:200]!r}", response.status)
        return answer

    def _exchange(self, path: str, body: bytes) -> tuple[http.client.HTTPResponse, bytes]:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = http.client.HTTPConnection(self.host, self.port, timeout=30.0)
        try:
            connection.request("POST", path, body, {"content-type": "application/json"})
            response = connection.getresponse()
            return response, response.read()
        except STALE_CONNECTION:
            self._drop(connection)
            raise
        except (OSError, http.client.HTTPException) as error:
            self._drop(connection)
            raise self._unreachable(error) from None

    def _unreachable(self, error: Exception) -> CollectorError:
        return CollectorError(f"collector at {self.host}:{self.port} unreachable: {error}")

    def _drop(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        self._local.connection = None

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
        while True:
            signal = StartSignal.model_validate_json(self.post("/ready", WorkerHello(worker=self.worker)))
            if signal.start_at is not None or signal.phase == "failed":
                return signal
            time.sleep(BARRIER_POLL_S)
