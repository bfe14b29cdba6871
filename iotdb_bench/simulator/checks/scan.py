"""The scan: every reading of each device read back in timestamp order, and checked.

As seed 004 (DEHEMS) did it: each worker reads its share of the devices one by one, the readings of a
device sorted by timestamp, checks that the timestamps never decrease and that it read exactly as
many readings as the tool wrote for the device (the record of expected answers), and measures the
speed over windows of 10,000 rows. Pages are timed one by one (the latency per page or fetch).
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.checks.expected import ExpectedRecord
from iotdb_bench.simulator.protocol import ScanOutcome

WINDOW_ROWS = 10_000


def scan_share(in_database: list[str], record: ExpectedRecord | None, worker: int, workers: int) -> list[str]:
    """This worker's devices: every device the database holds or the record expects (a device the
    database lost still gets scanned, and fails its count), dealt out in turn."""
    expected = record.expected.devices.device if record is not None and record.usable() is None else []
    return sorted(set(in_database) | set(expected))[worker::workers]


class ScanCheck:
    """Order and count checks of one worker's scan, and its rate per window of WINDOW_ROWS rows."""

    def __init__(self, record: ExpectedRecord | None, started: float, missing: str | None = None):
        if record is None:
            self.count_note = f"counts not checked: {missing or 'no record of what the tool inserted is stored with this data'}"
            self.expected_counts: dict[str, int] | None = None
        elif record.usable():
            self.count_note = f"counts not checked: {record.usable()}"
            self.expected_counts = None
        else:
            self.count_note = None
            self.expected_counts = dict(zip(record.expected.devices.device, record.expected.devices.count))
        self.outcome = ScanOutcome(counts_checked=self.expected_counts is not None, count_note=self.count_note)
        self._device = ""
        self._device_rows = 0
        self._last_time: int | None = None
        self._window_rows = 0
        self._window_start = started

    def start_device(self, device: str) -> None:
        self._device, self._device_rows, self._last_time = device, 0, None
        self.outcome.devices += 1

    def page(self, times: np.ndarray, now: float) -> None:
        """One page of the current device's readings (timestamps in the order received), fetched at `now`."""
        rows = len(times)
        if rows:
            self._check_order(times)
            self._last_time = int(times[-1])
        self._device_rows += rows
        self.outcome.rows += rows
        self._window_rows += rows
        if self._window_rows >= WINDOW_ROWS and now > self._window_start:
            self._window_done(self._window_rows / (now - self._window_start))
            self._window_rows, self._window_start = 0, now

    def _window_done(self, rate: float) -> None:
        """A window's rate, kept as the figures need it (slowest, fastest, sum): not a value per window,
        which would grow with the rows read (10,000 a billion rows)."""
        outcome = self.outcome
        outcome.windows += 1
        outcome.window_sum += rate
        outcome.window_min = rate if outcome.window_min is None else min(outcome.window_min, rate)
        outcome.window_max = rate if outcome.window_max is None else max(outcome.window_max, rate)

    def end_device(self) -> None:
        if self.expected_counts is None:
            return
        expected = self.expected_counts.get(self._device, 0)
        if self._device_rows != expected:
            self.outcome.count_problems += 1
            if self.outcome.first_count_problem is None:
                where = "" if self._device in self.expected_counts else " (a device the tool did not write)"
                self.outcome.first_count_problem = f"device {self._device}{where}: read {self._device_rows:,} readings, expected {expected:,}"

    def _check_order(self, times: np.ndarray) -> None:
        steps = np.diff(times)
        backwards = np.flatnonzero(steps < 0)
        crossing = self._last_time is not None and int(times[0]) < self._last_time
        if not (len(backwards) or crossing):
            return
        self.outcome.order_problems += len(backwards) + int(crossing)
        if self.outcome.first_order_problem is None:
            if crossing:
                position, before, after = self._device_rows, self._last_time, int(times[0])
            else:
                position = self._device_rows + int(backwards[0]) + 1
                before, after = int(times[backwards[0]]), int(times[backwards[0] + 1])
            self.outcome.first_order_problem = (f"device {self._device}: reading {position + 1:,} has timestamp {after} ms, "
                                                f"earlier than the one before it ({before} ms)")

    def finish(self) -> ScanOutcome:
        return self.outcome
