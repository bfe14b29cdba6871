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
# Answers kept for parameters drawn again (a query without parameters: every execution's): a few, as
# most executions draw their own windows and an answer may have a row per device.
CACHED_ANSWERS = 8
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

    def merge(self, count: int, hundredths: int, low: float, high: float, newest_ms: int, newest_low: float, newest_high: float) -> None:
        """Fold in the statistics of more readings of the group."""
        self.count, self.hundredths = self.count + count, self.hundredths + hundredths
        self.low, self.high = min(self.low, low), max(self.high, high)
        if newest_ms > self.newest_ms:
            self.newest_ms, self.newest_low, self.newest_high = newest_ms, newest_low, newest_high
        elif newest_ms == self.newest_ms:  # the same instant in two stretches (a later run wrote it again)
            self.newest_low, self.newest_high = min(self.newest_low, newest_low), max(self.newest_high, newest_high)

    def statistic(self, name: str) -> object:
        if not self.count:  # one row over no readings: SQL's count is 0, its other aggregates NULL
            return 0 if name == "count" else None
        return {"count": self.count, "sum": self.hundredths / 100, "min": self.low, "max": self.high, "mean": self.hundredths / 100 / self.count,
                "newest": self.newest_ms, "newest_value": (self.newest_low, self.newest_high)}[name]


@dataclass
class ComputedAnswers:
    """The computed answers over one record's data (the last few kept for parameters drawn again)."""

    record: ExpectedRecord
    _cache: dict[tuple[str, str], list[tuple]] = field(default_factory=dict)

    def problem(self) -> str | None:
        """Why no answer can be computed over this record's data (one line), or None."""
        if self.record.tsbs is not None:
            return f"the tool computes answers over the tool's events only, and this data is TSBS's ({self.record.workload()})"
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
            if len(self._cache) == CACHED_ANSWERS:
                del self._cache[next(iter(self._cache))]
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
            _add(groups, answer, part, events.device_id[keep], events.device_index[keep], times[keep], values[keep])
    return [(*key, *(group.statistic(column) for column in answer.columns[len(key):])) for key, group in sorted(groups.items())]


def _positions(part: StreamPart, window: Window | None) -> tuple[int, int]:
    """The positions of the part that can hold readings stored inside the window."""
    if window is None:
        return part.start, part.end
    slack = part.burst * part.devices if part.order == "burst" else 0  # a burst's readings keep their round-robin times
    low = (window.start_ms + part.shift_ms - TIME_ORIGIN_MS) // EVENT_INTERVAL_MS - slack
    high = -(-(window.end_ms + part.shift_ms - TIME_ORIGIN_MS) // EVENT_INTERVAL_MS) + slack
    return max(part.start, low), min(part.end, high)


def _add(groups: dict[tuple, _Group], answer: ComputedAnswer, part: StreamPart, devices: np.ndarray, device_index: np.ndarray,
         times: np.ndarray, values: np.ndarray) -> None:
    """Fold the kept readings into their groups (device, worker and/or bucket, in the order of `per`),
    vectorised: the readings sorted by group and time, each group's statistics reduced at once."""
    if not len(values):
        return
    columns = answer.key_columns()
    bucket_ms = answer.bucket_ms or 1
    group_of = np.zeros(len(values), dtype=np.int64)  # one integer per group: device index, then bucket
    if "bucket" in columns:
        bucket = times // bucket_ms
        group_of = bucket - bucket.min()
    if "device" in columns:
        group_of += device_index * (int(group_of.max()) + 1)
    # Positions are generated in order, so times rise but in burst order: a stable sort by group keeps them.
    rising = bool((times[1:] >= times[:-1]).all())
    order = np.argsort(group_of, kind="stable") if rising else np.lexsort((times, group_of))
    group_of, times, values, devices = group_of[order], times[order], values[order], devices[order]
    starts = np.flatnonzero(np.r_[True, group_of[1:] != group_of[:-1]])
    counts = np.diff(np.r_[starts, len(values)])
    newest = times[starts + counts - 1]
    at_newest = times == np.repeat(newest, counts)
    statistics = zip(counts.tolist(), np.add.reduceat(np.rint(values * 100.0).astype(np.int64), starts).tolist(),
                     np.minimum.reduceat(values, starts).tolist(), np.maximum.reduceat(values, starts).tolist(), newest.tolist(),
                     np.minimum.reduceat(np.where(at_newest, values, np.inf), starts).tolist(),
                     np.maximum.reduceat(np.where(at_newest, values, -np.inf), starts).tolist())
    worker = f"w{part.worker:06d}"
    for first, found in zip(starts.tolist(), statistics):
        key = tuple(devices[first].decode() if group == "device" else worker if group == "worker" else int(times[first]) // bucket_ms * bucket_ms
                    for group in columns)
        groups.setdefault(key, _Group()).merge(*found)
