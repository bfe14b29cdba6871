"""The answers the tool computes to a query file's query that declares them (`answer:`,
simulator/queries/computed_answer.py), for one execution's parameters, from the stretches of the
workers' streams the record says were stored (simulator/checks/written_streams.py).

Every event is a pure function of (seed, worker, position), and a position's timestamp is known
without generating it (round-robin and random orders: origin + position x interval; burst: within
burst x series positions of that), so only the positions that can fall in the drawn window are
generated, in chunks, and filtered by device, window and threshold. Sums are kept in integer
hundredths (values have two decimals), so counts, minima, maxima, sums and newest readings are
exact; means are the exact sum / count. The rows are checked as the built-in queries' are
(simulator/checks/answers.py): counts, minima, maxima and times exactly, sums and means within
AVG_RELATIVE_TOLERANCE.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iotdb_bench.simulator.checks.answers import AVERAGE, COUNT, EXACT, KEY, NEWEST, TIME, TIME_KEY, Columns
from iotdb_bench.simulator.checks.expected import ExpectedRecord
from iotdb_bench.simulator.checks.written_streams import StreamPart
from iotdb_bench.simulator.queries.computed_answer import ComputedAnswer
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.workload.events import EVENT_INTERVAL_MS, TIME_ORIGIN_MS, EventGenerator

# Positions generated per NumPy pass: bounded memory whatever the window.
CHUNK_POSITIONS = 1 << 20
# How each declared column is compared (simulator/checks/answers.py).
COMPARED = {"device": KEY, "worker": KEY, "bucket": TIME_KEY, "count": COUNT, "sum": AVERAGE, "min": EXACT, "max": EXACT,
            "mean": AVERAGE, "newest": TIME, "newest_value": NEWEST}


class NotComputed(Exception):
    """The record does not let the tool compute the answer (one line: why)."""


@dataclass
class _Group:
    count: int = 0
    hundredths: int = 0
    low: float = np.inf
    high: float = -np.inf
    newest_ms: int = np.iinfo(np.int64).min
    newest_low: float = np.inf
    newest_high: float = -np.inf

    def add(self, times: np.ndarray, values: np.ndarray) -> None:
        self.count += len(values)
        self.hundredths += int(np.rint(values * 100.0).astype(np.int64).sum())
        self.low, self.high = min(self.low, float(values.min())), max(self.high, float(values.max()))
        newest = int(times.max())
        at = values[times == newest]
        if newest > self.newest_ms:
            self.newest_ms, self.newest_low, self.newest_high = newest, float(at.min()), float(at.max())
        elif newest == self.newest_ms:
            self.newest_low, self.newest_high = min(self.newest_low, float(at.min())), max(self.newest_high, float(at.max()))

    def statistic(self, name: str) -> object:
        if not self.count:  # one row over no readings: SQL's count is 0, its other aggregates NULL
            return 0 if name == "count" else None
        return {"count": self.count, "sum": self.hundredths / 100, "min": self.low, "max": self.high, "mean": self.hundredths / 100 / self.count,
                "newest": self.newest_ms, "newest_value": (self.newest_low, self.newest_high)}[name]


@dataclass
class ComputedAnswers:
    """The computed answers over one record's data, each computed once per (query, parameters)."""

    record: ExpectedRecord
    _cache: dict[tuple[str, str], list[tuple]] = field(default_factory=dict)

    def problem(self) -> str | None:
        """Why no answer can be computed over this record's data (one line), or None."""
        refused = self.record.unreadable("query")
        if refused:
            return f"the tool computes answers over the tool's events only: {refused}"
        expected = self.record.expected
        if expected.streams_problem:
            return f"the record does not say exactly which events were stored: {expected.streams_problem}"
        if expected.count and sum(part.end - part.start for part in expected.streams) != expected.count:
            return "the record does not say which events were stored (written by an earlier version of the tool)"
        return None

    def expected(self, name: str, answer: ComputedAnswer, parameters: Parameters, names: list[str]) -> tuple[Columns, list[tuple]]:
        """The columns of the answer (named `names`, the query's, where it names them) and its rows for
        these parameters, in the common form."""
        columns = tuple((shown, COMPARED[column]) for column, shown in zip(answer.columns, [*names, *answer.columns[len(names):]]))
        key = (name, str(parameters))
        if key not in self._cache:
            self._cache[key] = _rows(answer, parameters, self.record.expected.streams)
        return columns, self._cache[key]


def _rows(answer: ComputedAnswer, parameters: Parameters, parts: list[StreamPart]) -> list[tuple]:
    window = parameters[answer.window] if answer.window else None
    device = str(parameters[answer.device]) if answer.device else None
    above = float(parameters[answer.above]) if answer.above else None
    groups: dict[tuple, _Group] = {} if answer.per else {(): _Group()}
    for part in parts:
        if device is not None and not device.startswith(f"w{part.worker:06d}-"):
            continue
        generator = EventGenerator(part.seed, part.worker, part.devices, order=part.order, burst=part.burst)
        low, high = _positions(part, window)
        for first in range(low, high, CHUNK_POSITIONS):
            events = generator.events_at(np.arange(first, min(first + CHUNK_POSITIONS, high), dtype=np.int64))
            times, values = events.timestamp_ms - part.shift_ms, events.temperature
            keep = np.ones(len(times), dtype=bool)
            if window is not None:
                keep &= (times >= window.start_ms) & (times < window.end_ms)
            if device is not None:
                keep &= events.device_id == device.encode()
            if above is not None:
                keep &= values > above
            _add(groups, answer, part, events.device_id[keep], times[keep], values[keep])
    return [(*key, *(group.statistic(column) for column in answer.columns[len(key):])) for key, group in sorted(groups.items())]


def _positions(part: StreamPart, window: Window | None) -> tuple[int, int]:
    """The positions of the part that can hold readings stored inside the window."""
    if window is None:
        return part.start, part.end
    slack = part.burst * part.devices if part.order == "burst" else 0  # a burst's readings keep their round-robin times
    low = (window.start_ms + part.shift_ms - TIME_ORIGIN_MS) // EVENT_INTERVAL_MS - slack
    high = -(-(window.end_ms + part.shift_ms - TIME_ORIGIN_MS) // EVENT_INTERVAL_MS) + slack
    return max(part.start, low), min(part.end, high)


def _add(groups: dict[tuple, _Group], answer: ComputedAnswer, part: StreamPart, devices: np.ndarray, times: np.ndarray, values: np.ndarray) -> None:
    """Fold the kept readings into their groups (device, worker and/or bucket, in the order of `per`)."""
    if not len(values):
        return
    keys: list[np.ndarray] = []
    for group in answer.key_columns():
        if group == "device":
            keys.append(devices.astype("U"))
        elif group == "worker":
            keys.append(np.full(len(values), f"w{part.worker:06d}"))
        else:
            bucket_ms = answer.bucket_ms or 1
            keys.append(times // bucket_ms * bucket_ms)
    if not keys:
        groups[()].add(times, values)
        return
    found, inverse = np.unique(np.array([np.asarray(key).astype(str) for key in keys]).T, axis=0, return_inverse=True)
    order = np.argsort(inverse.ravel(), kind="stable")
    bounds = np.cumsum(np.bincount(inverse.ravel(), minlength=len(found)))[:-1]
    for row, chosen in zip(found, np.split(order, bounds)):
        key = tuple(int(cell) if group == "bucket" else str(cell) for cell, group in zip(row, answer.key_columns()))
        groups.setdefault(key, _Group()).add(times[chosen], values[chosen])
