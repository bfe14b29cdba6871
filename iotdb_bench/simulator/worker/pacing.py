"""When the next call starts: closed loop (as soon as the last one returned) or open loop (on a
fixed schedule, simulator/workload/schedule.py). Inserts (--rate) and the query clients (--query-rate) use
the same two pacers; the timer (timing.py) asks its pacer before every call."""

from __future__ import annotations

import time
from collections.abc import Callable

from iotdb_bench.simulator.measurement.timing import Pacer, clock
from iotdb_bench.simulator.workload.schedule import Schedule

__all__ = ["ClosedLoop", "OpenLoop", "Pacer"]


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return False


class ClosedLoop(Pacer):
    open_loop = False
    max_lag_s = None

    def turn(self, events: int, deadline: float) -> float | None:
        now = clock()
        return now if now < deadline else None

    def behind_s(self, at: float, all_sent: bool) -> float | None:
        return None


class OpenLoop(Pacer):
    """Calls on `schedule` (its times on timing.clock). `wait(seconds)` waits for a call that is not
    due yet and returns True when the wait was interrupted (a query client whose inserts stopped)."""

    open_loop = True

    def __init__(self, schedule: Schedule, wait: Callable[[float], bool] = _sleep):
        self.schedule, self.wait = schedule, wait

    @property
    def max_lag_s(self) -> float:
        return self.schedule.max_lag_s

    def turn(self, events: int, deadline: float) -> float | None:
        due = self.schedule.next_start()
        if due >= deadline:
            return None
        now = clock()
        if now < due:
            if self.wait(due - now):
                return None
            now = clock()
        if now >= deadline:
            return None
        return self.schedule.started(events, now)

    def behind_s(self, at: float, all_sent: bool) -> float | None:
        return self.schedule.behind_s(at, all_sent)
