"""Data shapes: the columns of a run's tables and how a batch of events fills them.

- `events` (default, the original tool's): timestamp, device_id, sensor (with --sensors > 1),
  sequence_number, temperature and, with --measurements N, the further measurements m1..m{N-1};
  a key column as --primary-key says.
- `slim` (seed 002): timestamp and one integer value; no key, no index.
- `light` (seed 002): an auto-increment key (or as --primary-key says), timestamp and two small
  integers val1, val2; a secondary index on val1.
- `large` (seed 002): a key, timestamp, a variable text of up to 200 characters and eight integers
  i1..i8. (Seed 002's large table has no timestamp; here every shape keeps the event's timestamp,
  which time-series stores need and by which late data is seen.)
The integers are the generator's measurements in hundredths (temperatures of 10-30 degrees: 1000-3000),
so every shape's values are deterministic for a seed like the events'. Modules map the kinds of
these columns to their own types (each module's docs/databases page says how).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch, EventGenerator

Kind = Literal["timestamp", "device", "sensor", "sequence", "float", "int16", "int32", "text"]
# Kinds that hold a measured value: what values/s (points/s) counts.
VALUE_KINDS = ("float", "int16", "int32", "text")
LARGE_INTEGERS = 8
# Measurements the generator makes for each shape (events: --measurements).
GENERATED_MEASUREMENTS = {"slim": 1, "light": 2, "large": LARGE_INTEGERS}


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    source: Callable[[EventBatch], np.ndarray]

    def values(self, batch: EventBatch) -> np.ndarray:
        return self.source(batch)

    def python(self, batch: EventBatch) -> list:
        """The column as Python values for row-wise drivers (timestamps stay epoch milliseconds)."""
        values = self.source(batch)
        if self.kind == "device":
            return values.astype(f"U{DEVICE_ID_WIDTH}").tolist()
        if self.kind == "text":
            return values.astype(f"U{TEXT_WIDTH}").tolist()
        return values.tolist()


@dataclass(frozen=True)
class Layout:
    """The columns of one run's tables, without the key column (modules add it as --primary-key says)."""

    shape: str
    columns: tuple[Column, ...]
    has_key: bool
    indexed: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    @property
    def value_columns(self) -> tuple[Column, ...]:
        return tuple(column for column in self.columns if column.kind in VALUE_KINDS)

    @property
    def values_per_row(self) -> int:
        return len(self.value_columns)

    def column(self, name: str) -> Column:
        return next(column for column in self.columns if column.name == name)

    def has(self, kind: Kind) -> bool:
        return any(column.kind == kind for column in self.columns)

    def python_rows(self, batch: EventBatch, timestamp: Callable[[np.ndarray], list] | None = None,
                    key: np.ndarray | None = None) -> list[tuple]:
        """One tuple per event in column order (then the key, if given); `timestamp` converts the
        epoch-millisecond column (default: Python ints)."""
        columns = [timestamp(batch.timestamp_ms) if column.kind == "timestamp" and timestamp else column.python(batch)
                   for column in self.columns]
        if key is not None:
            columns.append(key.astype(f"U{key.dtype.itemsize}").tolist())
        return list(zip(*columns))


def _int32_hundredths(index: int) -> Callable[[EventBatch], np.ndarray]:
    return lambda batch: batch.hundredths(index).astype(np.int32)


def _int16_hundredths(index: int) -> Callable[[EventBatch], np.ndarray]:
    return lambda batch: batch.hundredths(index).astype(np.int16)


def _measurement(index: int) -> Callable[[EventBatch], np.ndarray]:
    return lambda batch: batch.more[index - 1]


TIMESTAMP = Column("timestamp", "timestamp", lambda batch: batch.timestamp_ms)


def layout(spec: RunSpec) -> Layout:
    if spec.shape == "slim":
        return Layout("slim", (TIMESTAMP, Column("value", "int32", _int32_hundredths(0))), has_key=False, indexed=())
    if spec.shape == "light":
        columns = (TIMESTAMP, Column("val1", "int16", _int16_hundredths(0)), Column("val2", "int16", _int16_hundredths(1)))
        return Layout("light", columns, has_key=True, indexed=("val1",))
    if spec.shape == "large":
        integers = tuple(Column(f"i{i + 1}", "int32", _int32_hundredths(i)) for i in range(LARGE_INTEGERS))
        return Layout("large", (TIMESTAMP, Column("text", "text", lambda batch: batch.text), *integers), has_key=True, indexed=())
    columns = [TIMESTAMP, Column("device_id", "device", lambda batch: batch.device_id)]
    if spec.sensors > 1:
        columns.append(Column("sensor", "sensor", lambda batch: batch.sensor_index))
    columns += [Column("sequence_number", "sequence", lambda batch: batch.sequence_number),
                Column("temperature", "float", lambda batch: batch.temperature)]
    columns += [Column(f"m{i}", "float", _measurement(i)) for i in range(1, spec.measurements)]
    return Layout("events", tuple(columns), has_key=True, indexed=())


def generator(spec: RunSpec, worker_index: int) -> EventGenerator:
    """The event generator of one worker of a run: its devices, order, late data and measurements."""
    return EventGenerator(
        spec.seed, worker_index, spec.devices_of(worker_index), sensors=spec.sensors, order=spec.order, burst=spec.burst,
        measurements=GENERATED_MEASUREMENTS.get(spec.shape, spec.measurements), text=spec.shape == "large",
        late_fraction=spec.out_of_order, max_lateness_s=spec.max_lateness_s,
    )


def describe(spec: RunSpec) -> str:
    """The run's workload in a few words, for titles ("" for the default workload)."""
    parts = []
    if spec.shape != "events":
        parts.append(f"schema {spec.shape}")
    if spec.measurements > 1:
        parts.append(f"{spec.measurements} measurements")
    if spec.devices:
        parts.append(f"{spec.devices:,} devices")
    if spec.sensors > 1:
        parts.append(f"{spec.sensors} sensors/device")
    if spec.order != "round-robin":
        parts.append(f"order {spec.order}" + (f" {spec.burst}" if spec.order == "burst" else ""))
    if spec.out_of_order:
        parts.append(f"{spec.out_of_order:.0%} late by <= {spec.max_lateness_s:g} s")
    return ", ".join(parts)
