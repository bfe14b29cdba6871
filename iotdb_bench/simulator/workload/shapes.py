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
- `tsbs-cpu`, `tsbs-devops`, `tsbs-iot` (TSBS's cpu-only, devops and iot use cases,
  simulator/workload/tsbs/): a table per measurement as TSBS's TimescaleDB target lays it out: time,
  tags_id (the host's or truck's row in the `tags` table), the fields, and `additional_tags` (JSON)
  where the measurement has tags of its own; no key. Their rows come from the TSBS generator, not the
  event generator; IoT's null fields and tags are NULL.
Modules map the kinds of these columns to their own types (each module's docs/databases page says how).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from iotdb_bench.simulator.spec import TSBS_INTERVAL_MS, TSBS_START_MS, TSBS_TIME_RANGE_MS, RunSpec
from iotdb_bench.simulator.workload.events import DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch, EventGenerator
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.generator import JSON_WIDTH, TsbsGenerator

# "reference": the integer id of a row of another table (TSBS's tags_id, negative: NULL), no measured
# value; "json": a JSON object as text (TSBS's additional_tags, padded with spaces to JSON_WIDTH).
Kind = Literal["timestamp", "device", "sensor", "sequence", "float", "int16", "int32", "text", "reference", "json"]
# Kinds that hold a measured value: what values/s (points/s) counts.
VALUE_KINDS = ("float", "int16", "int32", "text")
LARGE_INTEGERS = 8
# Measurements the generator makes for each shape (events: --measurements).
GENERATED_MEASUREMENTS = {"slim": 1, "light": 2, "large": LARGE_INTEGERS}


# Kinds of column that may hold NULL (TSBS's IoT rows: a null field, a null name that ties the row to no truck).
NULLABLE_KINDS = ("float", "reference")


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    source: Callable[[EventBatch], np.ndarray]
    may_be_null: bool = False

    def values(self, batch: EventBatch) -> np.ndarray:
        return self.source(batch)

    def python(self, batch: EventBatch) -> list:
        """The column as Python values for row-wise drivers (timestamps stay epoch milliseconds)."""
        values = self.source(batch)
        if self.kind == "device":
            return values.astype(f"U{DEVICE_ID_WIDTH}").tolist()
        if self.kind == "text":
            return values.astype(f"U{TEXT_WIDTH}").tolist()
        if self.kind == "json":
            return [text.rstrip() for text in values.astype(f"U{JSON_WIDTH}").tolist()]
        if self.nullable:  # NaN and negative references are NULL
            return [None if value != value or (self.kind == "reference" and value < 0) else value for value in values.tolist()]
        return values.tolist()

    @property
    def nullable(self) -> bool:
        return self.kind in NULLABLE_KINDS and self.may_be_null

    def nulls(self, batch: EventBatch) -> np.ndarray:
        """Which rows of the batch hold NULL in this column (a nullable one)."""
        values = self.source(batch)
        return values < 0 if self.kind == "reference" else np.isnan(values)


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


def _field(index: int) -> Callable[[EventBatch], np.ndarray]:
    """Measurement `index` (0: temperature) of every event."""
    return lambda batch: batch.temperature if index == 0 else batch.more[index - 1]


TIMESTAMP = Column("timestamp", "timestamp", lambda batch: batch.timestamp_ms)


def _tags_id(batch: EventBatch) -> np.ndarray:
    """host_i's tags row is i + 1 (the tool fills the `tags` table itself); a row whose name is null (IoT) none."""
    ids = (batch.host + 1).astype(np.int32)
    return ids if batch.null_tag is None else np.where(batch.null_tag == 0, np.int32(-1), ids)


def _tsbs_layouts(shape: str) -> dict[str, Layout]:
    """A TSBS shape's tables as TSBS's TimescaleDB target lays them out: time, tags_id, the fields,
    additional_tags where the measurement has tags of its own."""
    use_case = USE_CASES[shape]
    nullable = use_case.entity == "truck"
    layouts = {}
    for measurement in use_case.measurements:
        columns = [Column("time", "timestamp", lambda batch: batch.timestamp_ms), Column("tags_id", "reference", _tags_id, nullable),
                   *(Column(name, "float", _field(i), nullable) for i, name in enumerate(measurement.field_names))]
        if measurement.own_tags:
            columns.append(Column("additional_tags", "json", lambda batch: batch.text))
        layouts[measurement.name] = Layout(shape, tuple(columns), has_key=False, indexed=())
    return layouts


def table_layouts(spec: RunSpec) -> dict[str, Layout]:
    """The layout of each of the run's tables: TSBS's shapes one per measurement, the others the same for all."""
    if spec.tsbs:
        return _tsbs_layouts(spec.shape)
    one = layout(spec)
    return dict.fromkeys(spec.table_names, one)


def layout(spec: RunSpec) -> Layout:
    """The layout of the run's (first) table (table_layouts: every table's)."""
    if spec.tsbs:
        return next(iter(_tsbs_layouts(spec.shape).values()))
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
    columns += [Column(f"m{i}", "float", _field(i)) for i in range(1, spec.measurements)]
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
        return generator.position_of_step(spec.stream_offset), generator.total
    return spec.stream_offset + spec.prefill_share(worker_index), None if spec.duration_s else spec.num_inserts


def timed_events(spec: RunSpec, worker_index: int | None = None) -> int:
    """Events (rows) of a count-bounded insert run's timed phase: this worker's, or all workers'. A TSBS
    shape writes its entities' rows of every step (IoT: those TSBS writes); the others `num_inserts`
    per worker."""
    if spec.tsbs:
        data = TsbsData.of(spec)
        first = 0 if worker_index is None else spec.first_device_of(worker_index)
        entities = spec.all_devices if worker_index is None else spec.devices_of(worker_index)
        return sum(data.rows_per_measurement(range(spec.stream_offset, data.steps), range(first, first + entities)))
    return spec.num_inserts * (spec.workers if worker_index is None else 1)


def values_per_row(spec: RunSpec) -> int | float:
    """Measured values per row of an insert run (Values/s = rows/s x this): the layout's, or a TSBS
    shape's points / rows over the run's steps (devops: 101 fields in 9 rows; IoT: 7 and 3)."""
    if not spec.tsbs:
        return layout(spec).values_per_row
    data = TsbsData.of(spec)
    rows = data.rows_per_measurement(range(spec.stream_offset, data.steps))
    if len(rows) == 1:
        return len(data.use_case.measurements[0].field_names)
    points = sum(count * len(one.field_names) for count, one in zip(rows, data.use_case.measurements))
    return points / max(1, sum(rows))


def run_length(spec: RunSpec) -> str:
    """How long the timed phase of an insert run is, in a few words."""
    if spec.duration_s:
        return f"{spec.duration_s:g} s"
    if spec.tsbs:
        return f"{spec.tsbs_steps:,} steps of {(spec.interval_ms or TSBS_INTERVAL_MS) / 1000:g} s per {USE_CASES[spec.shape].entity}"
    return f"{spec.num_inserts:,} events/worker"


def describe(spec: RunSpec) -> str:
    """The run's workload in a few words, for titles ("" for the default workload)."""
    if spec.tsbs:
        start = np.datetime_as_string(np.datetime64(spec.start_ms or TSBS_START_MS, "ms"), unit="s")
        return (f"schema {spec.shape} (TSBS's {USE_CASES[spec.shape].name}): {spec.all_devices:,} {USE_CASES[spec.shape].entity}s, "
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
