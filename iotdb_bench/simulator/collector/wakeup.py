"""Requests that wait on the collector's event loop until the run's state changes (a long poll).

The workers at the barrier ask once and the collector answers when the start is published (or the
run failed), instead of every worker asking 50 times a second: at 1,000 workers polling kept the
collector busy and the last workers learned the start late. Changes are announced from any thread
(the start is published by a background thread); waiters run on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading


class Wakeup:
    def __init__(self):
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None

    async def wait(self, timeout: float, still_waiting) -> None:
        """Return when `still_waiting()` is false, at the next announced change, or after `timeout`.
        `still_waiting` is checked after the waiter is in place, so no change can slip between."""
        with self._lock:
            if self._event is None:
                self._loop, self._event = asyncio.get_running_loop(), asyncio.Event()
            event = self._event
        if not still_waiting():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)

    def announce(self) -> None:
        """Wake every waiter; later waiters wait for the next change. Callable from any thread."""
        with self._lock:
            loop, event = self._loop, self._event
            self._event = None
        if loop is not None and event is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed: nobody waits
                loop.call_soon_threadsafe(event.set)
