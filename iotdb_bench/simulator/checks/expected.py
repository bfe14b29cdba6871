"""Expected answers: exact aggregates of what the workers inserted, kept while they generate.

Each worker tallies every batch it generates (prefill included), vectorised per batch: per device
the count, min, max, sum, newest timestamp and the value(s) at it, and per-minute buckets of one
device in one hour (the `device-downsample` query's window). Workers report their tally with their
result, the collector merges the tallies of all workers and of earlier runs (`--no-clean`,
`--steps`), and saves the total with the data as a small record (`ExpectedRecord`, JSON), so a later
`query` or `scan` -- another process, maybe days later -- knows the exact answers.

Exactness: the generator rounds every value to 2 decimals, so sums are kept in integer hundredths
(exact at any size), and min, max and newest are the very doubles that were sent. Averages are the
exact sum / count. `newest_low`/`newest_high` hold the smallest and largest value at the newest
timestamp: they differ only when one device has several readings at that instant (late data).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, Field

from iotdb_bench.simulator.checks.written_streams import StreamPart, joined
from iotdb_bench.simulator.spec import TSBS_QUERIES, tsbs_query_problem
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS, EventBatch, device_ids
from iotdb_bench.simulator.workload.tsbs.data import TsbsData

RECORD_FORMAT = 1
MINUTE_MS = 60_000
# The downsample query's device and hour: the first device of worker 0 (every run has a worker 0)
# in the first hour of every event stream (the generator's time origin).
DOWNSAMPLE_DEVICE = device_ids(0, 1)[0].decode()
DOWNSAMPLE_START_MS = TIME_ORIGIN_MS
DOWNSAMPLE_MINUTES = 60
# Rows per bincount of float values: small enough that the float sum of a chunk is far closer than
# half a hundredth to the exact decimal sum, so rounding it to hundredths is exact (|values| < 100,000).
_SUM_CHUNK = 8192
_NO_TIME = np.iinfo(np.int64).min


class DeviceAggregates(BaseModel):
    """Per-device aggregates, as columns of equal length, sorted by device."""

    device: list[str] = Field(default_factory=list)
    count: list[int] = Field(default_factory=list)
    min: list[float] = Field(default_factory=list)
    max: list[float] = Field(default_factory=list)
    sum_hundredths: list[int] = Field(default_factory=list, description="exact sum of the values, in hundredths")
    newest_ms: list[int] = Field(default_factory=list)
    newest_low: list[float] = Field(default_factory=list, description="smallest value at the newest timestamp")
    newest_high: list[float] = Field(default_factory=list, description="largest value at the newest timestamp")

    def rows(self) -> dict[str, tuple]:
        return {d: tuple(row) for d, *row in zip(self.device, self.count, self.min, self.max, self.sum_hundredths,
                                                   self.newest_ms, self.newest_low, self.newest_high)}

    @classmethod
    def from_rows(cls, rows: dict[str, tuple]) -> DeviceAggregates:
        ordered = sorted(rows)
        columns = list(zip(*(rows[device] for device in ordered))) or [()] * 7
        names = ("count", "min", "max", "sum_hundredths", "newest_ms", "newest_low", "newest_high")
        return cls(device=ordered, **{name: list(column) for name, column in zip(names, columns)})


class MinuteAggregates(BaseModel):
    """One device's values per minute within a window, as columns sorted by minute."""

    device: str = DOWNSAMPLE_DEVICE
    start_ms: int = DOWNSAMPLE_START_MS
    minutes: int = DOWNSAMPLE_MINUTES
    minute_ms: list[int] = Field(default_factory=list, description="start of each minute that has readings")
    count: list[int] = Field(default_factory=list)
    min: list[float] = Field(default_factory=list)
    max: list[float] = Field(default_factory=list)
    sum_hundredths: list[int] = Field(default_factory=list)

    def same_window(self, other: MinuteAggregates) -> bool:
        return (self.device, self.start_ms, self.minutes) == (other.device, other.start_ms, other.minutes)

    def rows(self) -> dict[int, tuple]:
        return {m: tuple(row) for m, *row in zip(self.minute_ms, self.count, self.min, self.max, self.sum_hundredths)}


class Expected(BaseModel):
    """What the database holds if it stored exactly what the tool sent."""

    devices: DeviceAggregates = Field(default_factory=DeviceAggregates)
    downsample: MinuteAggregates = Field(default_factory=MinuteAggregates)
    streams: list[StreamPart] = Field(default_factory=list, description="the stretches of the workers' streams stored "
                                      "(simulator/checks/written_streams.py), from which any answer can be computed")
    streams_problem: str | None = Field(None, description="why `streams` do not say what was stored; None when they do")

    @property
    def count(self) -> int:
        return sum(self.devices.count)

    def merged(self, other: Expected) -> Expected:
        """The aggregates of both (readings of one device may come from several runs)."""
        if not self.downsample.same_window(other.downsample):
            raise ValueError("cannot merge expected answers of different downsample windows")
        devices = self.devices.rows()
        for device, row in other.devices.rows().items():
            devices[device] = _merge_device(devices[device], row) if device in devices else row
        minutes = self.downsample.rows()
        for minute, row in other.downsample.rows().items():
            minutes[minute] = _merge_minute(minutes[minute], row) if minute in minutes else row
        ordered = sorted(minutes)
        columns = list(zip(*(minutes[m] for m in ordered))) or [()] * 4
        downsample = self.downsample.model_copy(update={
            "minute_ms": ordered, **{name: list(c) for name, c in zip(("count", "min", "max", "sum_hundredths"), columns)}})
        return Expected(devices=DeviceAggregates.from_rows(devices), downsample=downsample, streams=joined([*self.streams, *other.streams]),
                        streams_problem=self.streams_problem or other.streams_problem)


def _merge_device(a: tuple, b: tuple) -> tuple:
    count, low, high, total, newest, newest_low, newest_high = a
    if b[4] > newest:
        newest, newest_low, newest_high = b[4], b[5], b[6]
    elif b[4] == newest:
        newest_low, newest_high = min(newest_low, b[5]), max(newest_high, b[6])
    return count + b[0], min(low, b[1]), max(high, b[2]), total + b[3], newest, newest_low, newest_high


def _merge_minute(a: tuple, b: tuple) -> tuple:
    return a[0] + b[0], min(a[1], b[1]), max(a[2], b[2]), a[3] + b[3]


def merge_all(parts: Iterable[Expected], start: Expected | None = None) -> Expected:
    total = start or Expected()
    for part in parts:
        total = total.merged(part)
    return total


class ExpectedRecord(BaseModel):
    """The record saved with the data: the expected answers, and whether they describe the data."""

    format: int = RECORD_FORMAT
    tables: list[str]
    # The insert's workload (simulator/workload/shapes.py): what query and scan can read depends on it.
    shape: str = "events"
    measurements: int = 1
    sensors: int = 1
    complete: bool = Field(description="false while an insert run is writing (and after one that did not finish)")
    problem: str | None = Field(None, description="why the record does not describe the data; None when it does")
    insert_runs: int = 0
    expected: Expected = Field(default_factory=Expected)
    # TSBS's shapes: what was written, from which every expected answer is recomputed (no tallies).
    tsbs: TsbsData | None = None

    @property
    def rows(self) -> int:
        """Rows (events) the record accounts for."""
        return self.tsbs.rows if self.tsbs is not None else self.expected.count

    def usable(self) -> str | None:
        """None when the record describes the data, else why not (one line)."""
        if self.problem:
            return self.problem
        if not self.complete:
            return "the last insert run into these tables did not finish, so the record of what it wrote is incomplete"
        return None

    def workload(self) -> str:
        """The insert's workload in the words of its options."""
        if self.tsbs is not None:
            return f"--schema {self.shape}"
        return f"--schema {self.shape}, --measurements {self.measurements}, --sensors {self.sensors}"

    def unreadable(self, task: str = "query", queries: tuple[str, ...] = ()) -> str | None:
        """Why `task` (query: these queries) cannot read the data this record describes (one line), or
        None. Scans and the tool's queries read the default shape's temperature per device, with one
        value and one series per device; TSBS's query types read TSBS's shapes."""
        where = f"the data in {','.join(self.tables)} was written with {self.workload()}"
        if self.tsbs is not None or any(name in TSBS_QUERIES for name in queries):
            problem = tsbs_query_problem(self.shape, queries) if task == "query" else (
                f"--schema {self.shape} is TSBS's data, which scan does not read (it reads data written with --schema events)")
            return f"{where}; {problem}" if problem else None
        if (self.shape, self.measurements, self.sensors) == ("events", 1, 1):
            return None
        return (f"{where}; query and scan read data written with --schema events, one measurement and one sensor per device: "
                "insert such data first")

    def dump(self) -> str:
        return self.model_dump_json()

    @classmethod
    def load(cls, text: str | None) -> ExpectedRecord | None:
        """The record from its saved text; None when there is none. A record this version cannot read
        is returned as unusable rather than raising: the data is still there, only unchecked."""
        if not text:
            return None
        try:
            record = cls.model_validate_json(text)
        except ValueError as error:
            return cls(tables=[], complete=False, problem=f"the saved record cannot be read ({str(error).splitlines()[0]})")
        if record.format != RECORD_FORMAT:
            return cls(tables=record.tables, complete=False, problem=f"the saved record has format {record.format}, this version reads {RECORD_FORMAT}")
        return record


class Tally:
    """One worker's running aggregates. Each batch is copied into column buffers while it is still in
    the CPU's cache; about every 64k events the buffers are folded into the totals with a few NumPy
    passes: per-call overheads stay out of the per-batch cost, and memory stays flat."""

    FOLD_EVENTS = 65_536

    def __init__(self, devices: np.ndarray):
        self.device_ids = devices
        size = len(devices)
        self.count = np.zeros(size, dtype=np.int64)
        self.sum_hundredths = np.zeros(size, dtype=np.int64)
        self.min = np.full(size, np.inf)
        self.max = np.full(size, -np.inf)
        self.newest_ms = np.full(size, _NO_TIME, dtype=np.int64)
        self.newest_low = np.full(size, np.inf)
        self.newest_high = np.full(size, -np.inf)
        found = np.flatnonzero(devices == DOWNSAMPLE_DEVICE.encode())
        self._downsample_index = int(found[0]) if len(found) else None
        self.minute_count = np.zeros(DOWNSAMPLE_MINUTES, dtype=np.int64)
        self.minute_sum = np.zeros(DOWNSAMPLE_MINUTES, dtype=np.int64)
        self.minute_min = np.full(DOWNSAMPLE_MINUTES, np.inf)
        self.minute_max = np.full(DOWNSAMPLE_MINUTES, -np.inf)
        # Whole rounds of the devices, at most _SUM_CHUNK readings per device.
        capacity = size * max(1, min(_SUM_CHUNK, self.FOLD_EVENTS // size))
        self._index = np.empty(capacity, dtype=np.int64)
        self._values = np.empty(capacity)
        self._times = np.empty(capacity, dtype=np.int64)
        self._filled = 0
        self._cycle = np.tile(np.arange(size, dtype=np.int64), capacity // size + 1)

    @classmethod
    def for_worker(cls, worker_index: int, devices: int) -> Tally:
        return cls(device_ids(worker_index, devices))

    def add(self, batch: EventBatch) -> None:
        start = self._filled
        end = start + len(batch.timestamp_ms)
        if end < len(self._index):  # the usual case: the batch fits in the buffers
            self._index[start:end] = batch.device_index
            self._values[start:end] = batch.temperature
            self._times[start:end] = batch.timestamp_ms
            self._filled = end
            return
        done, total, capacity = 0, len(batch), len(self._index)
        while done < total:
            take = min(capacity - self._filled, total - done)
            end = self._filled + take
            self._index[self._filled : end] = batch.device_index[done : done + take]
            self._values[self._filled : end] = batch.temperature[done : done + take]
            self._times[self._filled : end] = batch.timestamp_ms[done : done + take]
            self._filled, done = end, done + take
            if end == capacity:
                self._fold()

    def result(self) -> Expected:
        self._fold()
        seen = np.flatnonzero(self.count)
        devices = DeviceAggregates(
            device=self.device_ids[seen].astype("U").tolist(), count=self.count[seen].tolist(), min=self.min[seen].tolist(),
            max=self.max[seen].tolist(), sum_hundredths=self.sum_hundredths[seen].tolist(), newest_ms=self.newest_ms[seen].tolist(),
            newest_low=self.newest_low[seen].tolist(), newest_high=self.newest_high[seen].tolist(),
        )
        minutes = np.flatnonzero(self.minute_count)
        downsample = MinuteAggregates(
            minute_ms=(DOWNSAMPLE_START_MS + minutes * MINUTE_MS).tolist(), count=self.minute_count[minutes].tolist(),
            min=self.minute_min[minutes].tolist(), max=self.minute_max[minutes].tolist(),
            sum_hundredths=self.minute_sum[minutes].tolist(),
        )
        return Expected(devices=DeviceAggregates.from_rows(devices.rows()), downsample=downsample)

    def _fold(self) -> None:
        """Fold the buffered events into the totals."""
        filled, self._filled = self._filled, 0
        if not filled:
            return
        index, values, times = self._index[:filled], self._values[:filled], self._times[:filled]
        if not self._fold_round_robin(index, values, times):
            self._fold_any(index, values, times)
        if self._downsample_index is not None:
            self._fold_minutes(index, values, times)

    def _fold_round_robin(self, index: np.ndarray, values: np.ndarray, times: np.ndarray) -> bool:
        """Devices taking turns with rising timestamps (the default order): one row per round, reduced
        per device in contiguous passes. False (nothing changed) for any other order."""
        size = len(self.count)
        offset = int(index[0])
        if len(index) % size or not np.array_equal(index, self._cycle[offset : offset + len(index)]):
            return False
        rounds = times.reshape(-1, size)
        if not (rounds[1:] > rounds[:-1]).all():
            return False
        devices = self._cycle[offset : offset + size]  # the device of each column
        by_device = np.ascontiguousarray(values.reshape(-1, size).T)
        self.count[devices] += len(rounds)
        self.sum_hundredths[devices] += np.rint(by_device.sum(axis=1) * 100.0).astype(np.int64)
        self.min[devices] = np.minimum(self.min[devices], by_device.min(axis=1))
        self.max[devices] = np.maximum(self.max[devices], by_device.max(axis=1))
        last = values[-size:]
        self._merge_newest(devices, rounds[-1], last, last)
        return True

    def _fold_any(self, index: np.ndarray, values: np.ndarray, times: np.ndarray) -> None:
        """Any order of devices and times: scattered updates per event."""
        size = len(self.count)
        self.count += np.bincount(index, minlength=size)
        self.sum_hundredths += _sum_hundredths(index, values, size)
        np.minimum.at(self.min, index, values)
        np.maximum.at(self.max, index, values)
        newest = np.full(size, _NO_TIME, dtype=np.int64)
        np.maximum.at(newest, index, times)
        at_newest = np.flatnonzero(times == newest[index])
        low, high = np.full(size, np.inf), np.full(size, -np.inf)
        np.minimum.at(low, index[at_newest], values[at_newest])
        np.maximum.at(high, index[at_newest], values[at_newest])
        self._merge_newest(np.arange(size), newest, low, high)

    def _merge_newest(self, devices: np.ndarray, newest: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
        """Fold newest timestamps and the values at them (per entry of `devices`) into the totals."""
        known = self.newest_ms[devices]
        later, same = newest > known, newest == known
        old_low, old_high = self.newest_low[devices], self.newest_high[devices]
        self.newest_low[devices] = np.where(later, low, np.where(same, np.minimum(old_low, low), old_low))
        self.newest_high[devices] = np.where(later, high, np.where(same, np.maximum(old_high, high), old_high))
        self.newest_ms[devices] = np.maximum(known, newest)

    def _fold_minutes(self, index: np.ndarray, values: np.ndarray, times: np.ndarray) -> None:
        mine = np.flatnonzero(index == self._downsample_index)
        offsets = times[mine] - DOWNSAMPLE_START_MS
        inside = (offsets >= 0) & (offsets < DOWNSAMPLE_MINUTES * MINUTE_MS)
        if not inside.any():
            return
        minute = offsets[inside] // MINUTE_MS
        chosen = values[mine][inside]
        self.minute_count += np.bincount(minute, minlength=DOWNSAMPLE_MINUTES)
        self.minute_sum += _sum_hundredths(minute, chosen, DOWNSAMPLE_MINUTES)
        np.minimum.at(self.minute_min, minute, chosen)
        np.maximum.at(self.minute_max, minute, chosen)


def _sum_hundredths(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Exact per-group sums of 2-decimal values, in hundredths: float sums of small chunks, rounded."""
    total = np.zeros(size, dtype=np.int64)
    for first in range(0, len(values), _SUM_CHUNK):
        chunk = np.bincount(index[first : first + _SUM_CHUNK], weights=values[first : first + _SUM_CHUNK], minlength=size)
        total += np.rint(chunk * 100.0).astype(np.int64)
    return total
