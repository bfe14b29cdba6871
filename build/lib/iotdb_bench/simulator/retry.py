"""Retrying a database call whose error says "try again" (serialisation failures, deadlocks, overload,
timeouts of idempotent writes), with exponential backoff, counting every retry for the run's figures.

Each module decides which errors are retryable; this is the one place that decides how often and how
long to wait, so every module reports retries the same way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from iotdb_bench.simulator.errors import one_line

T = TypeVar("T")


class RetriesExhausted(Exception):
    """A retryable error outlasted the retries allowed."""


class Retry:
    def __init__(self, max_retries: int, retryable: Callable[[BaseException], bool],
                 first_delay_s: float = 0.005, max_delay_s: float = 0.5):
        self.max_retries, self.retryable = max_retries, retryable
        self.first_delay_s, self.max_delay_s = first_delay_s, max_delay_s
        self._count = 0
        self._lock = threading.Lock()  # asynchronous drivers retry from their own threads

    @property
    def count(self) -> int:
        """Retries made so far (each counts once, whatever its outcome)."""
        return self._count

    def pause(self, error: BaseException, attempt: int) -> float | None:
        """Seconds to wait before trying again after `error` on try `attempt` (0 = the first), counted
        as a retry; None when the error is not retryable. Raises RetriesExhausted when it is, but the
        retries are used up."""
        if not self.retryable(error):
            return None
        if attempt >= self.max_retries:
            raise RetriesExhausted(f"still failing after {attempt} retries: {one_line(error)}") from error
        with self._lock:
            self._count += 1
        return min(self.first_delay_s * 2**attempt, self.max_delay_s)

    def call(self, function: Callable[[], T], before_retry: Callable[[], None] | None = None) -> T:
        """`function()`, tried again after retryable errors; `before_retry` undoes a failed attempt
        (e.g. a rollback) before the next one."""
        attempt = 0
        while True:
            try:
                return function()
            except Exception as error:
                pause = self.pause(error, attempt)
                if pause is None:
                    raise
                if before_retry is not None:
                    before_retry()
                time.sleep(pause)
                attempt += 1
