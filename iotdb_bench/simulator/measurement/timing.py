"""The one place the simulator times database calls (YCSB's DBWrapper idea): inserts, queries, scan
pages, the query clients' queries and the visibility probe's writes and look-ups all pass through a
`CallTimer`, which reads `clock` (modules never read a clock). A call's service time runs from its
start to its end; under an open-loop pacer (pacing.py) its response time runs from its intended
start on the schedule, so a call held back by a slow one before it is charged for the wait."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple, Protocol, TypeVar

from iotdb_bench.simulator.measurement.stats import CallRecorder

clock = time.perf_counter  # the monotonic clock of every measurement
T = TypeVar("T")


def clock_at(epoch_s: float) -> float:
    """An epoch time (the collector's common start) on `clock`."""
    return epoch_s + clock() - time.time()


class Pacer(Protocol):
    open_loop: bool
    max_lag_s: float | None  # open loop: the most a call started after its intended start

    def turn(self, events: int, deadline: float) -> float | None:
        """Wait until the next call of `events` is due; its intended start, or None when the deadline
        (on `clock`) comes first or the wait was interrupted."""

    def behind_s(self, at: float, all_sent: bool) -> float | None:
        """Open loop: how far behind its schedule the caller is at `at`; closed loop: None."""


class Timed(NamedTuple):
    """One timed call on `clock`: when it began and ended, and when it was meant to begin. A named
    tuple: one is made for every call of the timed loop, and a tuple costs the least to make."""

    began: float
    ended: float
    intended: float

    @property
    def service_s(self) -> float:
        return self.ended - self.began

    @property
    def response_s(self) -> float:
        """From the intended start (open loop) or the start (closed loop: the same as service time)."""
        return self.ended - self.intended


class CallTimer:
    """Times calls and paces them. `recorder` receives every call timed through `begin` (an insert
    worker's, or a scan's pages): its service time, its end (epoch) and, open loop, its response
    time; `shared`: calls end on other threads (async drivers)."""

    def __init__(self, pacer: Pacer | None = None, recorder: CallRecorder | None = None, shared: bool = False):
        self.pacer = pacer  # None: closed loop, each call as soon as the last one returned
        self.recorder = recorder
        self.intended: float | None = None  # the intended start of the call about to begin
        self._lock = threading.Lock() if shared else None
        self.epoch_offset = time.time() - clock()  # clock + epoch_offset = epoch seconds

    def turn(self, events: int, deadline: float) -> bool:
        """Wait until the next call of `events` is due (the pacer's decision); False when the deadline
        (on `clock`) came first or the pacer was interrupted."""
        if self.pacer is None:
            now = clock()
            self.intended = now if now < deadline else None
        else:
            self.intended = self.pacer.turn(events, deadline)
        return self.intended is not None

    def begin(self, events: int, scheduled: bool = True) -> Callable[..., Timed]:
        """A call of `events` starts now; returns what to call when it has ended. A call off the
        schedule (a commit) counts its service time as its response time."""
        began = clock()
        open_loop = self.pacer is not None and self.pacer.open_loop
        intended = self.intended if scheduled and self.intended is not None and open_loop else began
        recorder, lock, to_epoch = self.recorder, self._lock, self.epoch_offset

        def done(counted: int | None = None) -> Timed:
            """The call has ended; `counted`: its events, when only known now (a scan's page)."""
            ended = clock()
            if recorder is not None:
                figures = (events if counted is None else counted, ended - began, to_epoch + ended, ended - intended if open_loop else None)
                if lock is None:
                    recorder.record(*figures)
                else:
                    with lock:
                        recorder.record(*figures)
            return Timed(began, ended, intended)

        return done

    def call(self, function: Callable[[], T], events: int = 0) -> tuple[T, Timed]:
        """Run `function` as one timed call; returns its result and its timing."""
        done = self.begin(events)
        result = function()
        return result, done()
