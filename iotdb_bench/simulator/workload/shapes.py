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
so every shape's values are deterministic for a seed like the events'.
- `tsbs-cpu` (TSBS's cpu-only use case, simulator/workload/tsbs/): the `cpu` table of TSBS's
  TimescaleDB target, time, tags_id (the host's row in the `tags` table) and the ten usage_* fields;
  no key. Its rows come from the TSBS generator, not the event generator.
Modules map the kinds of these columns to their own types (each module's docs/databases page says how).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from iotdb_bench.simulator.spec import TSBS_INTERVAL_MS, TSBS_START_MS, TSBS_TIME_RANGE_MS, RunSpec
from iotdb_bench.simulator.workload.events import DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch, EventGenerator
from iotdb_bench.simulator.workload.tsbs.generator import TsbsGenerator
from iotdb_bench.simulator.workload.tsbs.usecases import USE_CASES

# "reference": the integer id of a row of another table (TSBS's tags_id), no measured value.
Kind = Literal["timestamp", "device", "sensor", "sequence", "float", "int16", "int32", "text", "reference"]
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


def _tsbs_layout(shape: str) -> Layout:
    """A TSBS shape's table as TSBS's TimescaleDB target lays it out: time, tags_id, the fields.
    The tags_id of host_i is i + 1 (the tool fills the `tags` table itself)."""
    fields = USE_CASES[shape].measurements[0].field_names
    columns = (Column("time", "timestamp", lambda batch: batch.timestamp_ms), Column("tags_id", "reference", lambda batch: (batch.host + 1).astype(np.int32)),
               Column(fields[0], "float", lambda batch: batch.temperature), *(Column(name, "float", _measurement(i)) for i, name in enumerate(fields[1:], 1)))
    return Layout(shape, columns, has_key=False, indexed=())


def layout(spec: RunSpec) -> Layout:
    if spec.tsbs:
        return _tsbs_layout(spec.shape)
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


def generator(spec: RunSpec, worker_index: int) -> EventGenerator | TsbsGenerator:
    """The event generator of one worker of a run: its devices, order, late data and measurements
    (for TSBS's shapes its hosts' rows)."""
    if spec.tsbs:
        return TsbsGenerator(spec, worker_index)
    return EventGenerator(
        spec.seed, worker_index, spec.devices_of(worker_index), sensors=spec.sensors, order=spec.order, burst=spec.burst,
        measurements=GENERATED_MEASUREMENTS.get(spec.shape, spec.measurements), text=spec.shape == "large",
        late_fraction=spec.out_of_order, max_lateness_s=spec.max_lateness_s,
    )


def timed_stream(spec: RunSpec, worker_index: int, generator: EventGenerator | TsbsGenerator) -> tuple[int, int | None]:
    """(first position, events) of a worker's timed phase in its generator's stream; events None: until
    the --duration deadline. A TSBS shape's run writes its hosts' rows over the steps after those
    written before (stream_offset counts steps there)."""
    if isinstance(generator, TsbsGenerator):
        return generator.position_of_step(spec.stream_offset), spec.timed_events(worker_index)
    return spec.stream_offset + spec.prefill_share(worker_index), None if spec.duration_s else spec.num_inserts


def run_length(spec: RunSpec) -> str:
    """How long the timed phase of an insert run is, in a few words."""
    if spec.duration_s:
        return f"{spec.duration_s:g} s"
    if spec.tsbs:
        return f"{spec.tsbs_steps:,} steps of {(spec.interval_ms or TSBS_INTERVAL_MS) / 1000:g} s per host"
    return f"{spec.num_inserts:,} events/worker"


def describe(spec: RunSpec) -> str:
    """The run's workload in a few words, for titles ("" for the default workload)."""
    if spec.tsbs:
        start = np.datetime_as_string(np.datetime64(spec.start_ms or TSBS_START_MS, "ms"), unit="s")
        return (f"schema {spec.shape} (TSBS's {USE_CASES[spec.shape].name}): {spec.all_devices:,} hosts, "
                f"{(spec.time_range_ms or TSBS_TIME_RANGE_MS) / 3_600_000:g} h from {start}Z")
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
