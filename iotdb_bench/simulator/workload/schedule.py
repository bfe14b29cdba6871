"""The open-loop schedule (--rate): when each call of one worker is meant to start.

The run's rate R (events per second, all workers together) is split evenly over the workers; a call
is due when the events sent before it would have arrived at that rate since the common start, so
batches of any size (the last one may be short) keep the events at R. The workers are staggered
over one call interval, so that together their calls arrive evenly rather than in bursts of W.

A worker that falls behind does not skip calls: it sends them as fast as it can until it catches
up, and each call's response time counts from its intended start (no coordinated omission).
"""

from __future__ import annotations

# A run is sustained when, at its end, it is at most this far behind its schedule: one second, or
# this share of the run's length for runs shorter than 20 s (the steps of --find-max-rate).
BEHIND_LIMIT_S = 1.0
BEHIND_LIMIT_SHARE = 0.05


def behind_limit_s(length_s: float) -> float:
    """How far behind its schedule a run of `length_s` seconds may end and still be sustained."""
    return min(BEHIND_LIMIT_S, BEHIND_LIMIT_SHARE * length_s) if length_s > 0 else BEHIND_LIMIT_S


class Schedule:
    """Intended start times of one worker's calls, on the caller's clock (any clock in seconds)."""

    def __init__(self, rate: float, workers: int, index: int, events_per_call: int, start: float):
        if rate <= 0:
            raise ValueError("an open-loop schedule needs a rate above 0")
        self.per_worker = rate / workers  # events per second of this worker
        # Worker i starts i/W of one call interval after the common start.
        self.first = start + (index / workers) * max(events_per_call, 1) / self.per_worker
        self.events = 0  # events of the calls started so far
        self.max_lag_s = 0.0  # the most a call started after its intended start
        self.last_lag_s = 0.0

    def next_start(self) -> float:
        """When the next call is due: when the events sent so far would have arrived at the worker's rate."""
        return self.first + self.events / self.per_worker

    def started(self, events: int, at: float) -> float:
        """A call of `events` started at `at`; returns its intended start."""
        intended = self.next_start()
        self.last_lag_s = max(0.0, at - intended)
        self.max_lag_s = max(self.max_lag_s, self.last_lag_s)
        self.events += events
        return intended

    def behind_s(self, at: float, all_sent: bool) -> float:
        """How far behind its schedule the worker is at `at`: the lag of its last call once every
        event was sent, else how long the next call has been due."""
        return self.last_lag_s if all_sent else max(0.0, at - self.next_start())
