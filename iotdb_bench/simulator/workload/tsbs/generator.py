"""One worker's share of a TSBS use case: its entities' rows in TSBS's order, chunk by chunk.

The entities (hosts, trucks) are split over the workers as the tool's devices are
(RunSpec.devices_of: consecutive ones per worker, the first workers take the rest). A worker's
stream is TSBS's order restricted to its entities: at each step every measurement in turn, each for
every one of its entities (tsbs_generate_data writes every host's cpu, then every host's diskio, ...,
then the next timestamp). Position q of the stream is step q // (M x H), measurement (q // H) % M,
local entity q % H (M measurements, H entities). The IoT use case leaves some of those rows out and
sends some late (iot_rows.py): its stream is the rows written, in the order they are sent.

A walk has state, which the generator keeps: the values of the steps the rows being made need (a
few steps behind the latest, for late rows), and the state after them. A stream that starts later
(--no-clean, --steps) gets its first state from the seed by walking there (SeriesSet.state_at),
which the checker does too (series.py): the values of a row depend only on the seed, the entity and
the step, never on the worker count or the batch size.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import numpy as np

from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import CHUNK_EVENTS, EventBatch, cut, in_sending_order
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.hosts import entity_names
from iotdb_bench.simulator.workload.tsbs.iot_rows import IotRows
from iotdb_bench.simulator.workload.tsbs.usecases import Walked

JSON_WIDTH = 48  # a measurement's own tags as JSON, padded with spaces (the longest: nginx's port and server)
# Positions of the IoT stream a late row may lag behind its neighbours at most before its step's values
# are made again from the start (never, in practice: TSBS's lateness stays below 200).
KEPT_POSITIONS = 4096


class TsbsGenerator:
    """The rows of one worker's entities (EventBatches: `host` their global index, `sequence_number`
    their step, `temperature` and `more` their fields in order, padded with NaN to the widest
    measurement, `table_index` their measurement, `text` their measurement's own tags as JSON)."""

    def __init__(self, spec: RunSpec, worker_index: int):
        self.data = TsbsData.of(spec)
        self.use_case = self.data.use_case
        self.first = spec.first_device_of(worker_index)
        self.host_count = spec.devices_of(worker_index)
        self.hosts = np.arange(self.first, self.first + self.host_count, dtype=np.int64)
        self.names = entity_names(self.use_case.entity, self.first, self.host_count)
        self.walked = Walked(self.use_case, spec.seed, self.hosts, self.data.interval_ms)
        measurements = self.use_case.measurements
        self.per_step = len(measurements) * self.host_count
        self._widths = [len(one.field_names) for one in measurements]
        self._json = self._own_tags(spec.seed)
        self.iot = IotRows(spec.seed, self.data.hosts) if self.use_case.entity == "truck" else None
        self.first_step = spec.stream_offset
        self.total = sum(self.data.rows_per_measurement(range(self.first_step, self.data.steps), range(self.first, self.first + self.host_count)))
        # The values of steps [_kept_from, _kept_from + len(_kept)) and the walks' state after them.
        self._kept_from, self._kept = self.first_step, np.empty((0, len(measurements), self.host_count, max(self._widths)))
        self._state = self.walked.series.state_at(self.first_step)  # before the timed phase: a continuing run walks to its first step here

    def position_of_step(self, step: int) -> int:
        return step * self.per_step

    def end_step(self, rows_sent: int) -> int:
        """The step after the stream's rows once `rows_sent` of the run's were stored (where a continuing
        run starts): the last one's step plus one (IoT, whose rows arrive out of order: the run's end
        when all are stored, else in proportion)."""
        if self.iot is None:
            return math.ceil((self.position_of_step(self.first_step) + rows_sent) / self.per_step)
        if rows_sent >= self.total:
            return self.data.steps
        return self.first_step + (self.data.steps - self.first_step) * rows_sent // max(1, self.total)

    def batches(self, start: int, total: int | None, size: int) -> Iterator[EventBatch]:
        """Batches of `size` rows (the last one smaller) of the stream from position `start`: `total`
        rows (IoT: the run's rows from there, at most `total`)."""
        for chunk in self.chunks(start, total, size):
            yield from chunk.split(size)

    def chunks(self, start: int, total: int | None, size: int) -> Iterator[EventBatch]:
        """The same rows a few batches at a time: each chunk a whole number of batches of `size` (the
        last one may end short), about CHUNK_EVENTS rows (EventGenerator.chunks' contract)."""
        rows = size * max(1, CHUNK_EVENTS // size)
        if self.iot is not None:
            sent = 0
            for positions in cut(self._sent(start, rows), rows):
                if total is not None and sent >= total:
                    return
                positions = positions if total is None else positions[: total - sent]
                sent += len(positions)
                yield self._iot_rows(positions)
            return
        end = math.inf if total is None else start + total
        first = start
        while first < end:
            count = int(min(rows, end - first))
            yield self.rows(first, count)
            first += count

    def rows(self, first: int, count: int) -> EventBatch:
        """The rows at positions [first, first + count) of the worker's stream (every row written)."""
        positions = np.arange(first, first + count, dtype=np.int64)
        step, within = np.divmod(positions, np.int64(self.per_step))
        measurement, local = np.divmod(within, np.int64(self.host_count))
        return self._batch(step, measurement, local)

    # -- internals -----------------------------------------------------------------------------
    def _batch(self, step: np.ndarray, measurement: np.ndarray, local: np.ndarray) -> EventBatch:
        values = self._values_at(step, measurement, local)
        several = len(self._widths) > 1
        return EventBatch(timestamp_ms=self.data.time_of(step), device_index=local, device_id=self.names[local], sequence_number=step,
                          temperature=values[:, 0], more=values[:, 1:].T, host=self.hosts[local],
                          table_index=measurement if several else None, text=None if self._json is None else self._json[measurement, local])

    def _values_at(self, step: np.ndarray, measurement: np.ndarray, local: np.ndarray) -> np.ndarray:
        """(rows, widest measurement) the values of the rows at these steps, measurements and entities."""
        low, high = int(step.min()), int(step.max())
        if low < self._kept_from:  # before the values kept (a row later than KEPT_POSITIONS): from the start again
            self._kept_from, self._kept = low, self._kept[:0]
            self._state = self.walked.series.state_at(low)
        made = self._kept_from + len(self._kept)
        if high >= made:
            units, self._state = self.walked.series.advance(self._state, made, high + 1 - made)
            steps = np.arange(made, high + 1, dtype=np.int64)
            self._kept = np.concatenate([self._kept, self._padded(self.walked.values(units, steps))])
        keep_from = max(self._kept_from, low - (0 if self.iot is None else KEPT_POSITIONS // self.per_step + 1))
        self._kept, self._kept_from = self._kept[keep_from - self._kept_from :], keep_from
        if len(step) > 1 and self.iot is None:  # consecutive positions: whole steps are one slice
            first = (low - self._kept_from) * self.per_step + int(measurement[0]) * self.host_count + int(local[0])
            return self._kept.reshape(-1, self._kept.shape[-1])[first : first + len(step)]
        return self._kept[step - self._kept_from, measurement, local]

    def _padded(self, values: list[np.ndarray]) -> np.ndarray:
        """(steps, measurements, hosts, widest) from each measurement's (steps, hosts, fields), NaN beyond its fields."""
        if len(values) == 1:
            return values[0][:, None]
        padded = np.full((len(values[0]), len(values), self.host_count, max(self._widths)), np.nan)
        for index, part in enumerate(values):
            padded[:, index, :, : part.shape[-1]] = part
        return padded

    def _own_tags(self, seed: int) -> np.ndarray | None:
        """(measurements, hosts) each measurement's own tags of each host as JSON (TSBS's TimescaleDB
        loader writes them to `additional_tags`); None when no measurement has any."""
        measurements = self.use_case.measurements
        if not any(one.own_tags for one in measurements):
            return None
        text = np.full((len(measurements), self.host_count), b"", dtype=f"S{JSON_WIDTH}")
        for index, one in enumerate(measurements):
            if one.own_tags:
                tags = one.tag_values(seed, self.hosts)
                text[index] = [json.dumps(dict(zip(tags, values))).ljust(JSON_WIDTH).encode() for values in zip(*tags.values())]
        return text

    # -- IoT: the rows written, in the order they are sent -------------------------------------
    def _global(self, positions: np.ndarray) -> np.ndarray:
        step, within = np.divmod(positions, np.int64(self.per_step))
        measurement, local = np.divmod(within, np.int64(self.host_count))
        return self.iot.position(step, measurement, self.first + local)

    def _sent(self, start: int, window: int) -> Iterator[np.ndarray]:
        """The global positions of the run's rows from local position `start`, as they are sent."""
        end = self.position_of_step(self.data.steps)
        windows = self._windows(start, end, max(window, 4096))
        return in_sending_order(windows, self.iot.places)

    def _windows(self, start: int, end: int, size: int) -> Iterator[tuple[np.ndarray, int]]:
        for low in range(start, end, size):
            high = min(low + size, end)
            positions = self._global(np.arange(low, high, dtype=np.int64))
            yield positions[self.iot.exists(positions)], int(self._global(np.array([high]))[0])

    def _iot_rows(self, positions: np.ndarray) -> EventBatch:
        """The rows at these global positions, with TSBS's null fields (NaN) and null tags."""
        trucks = self.iot.trucks
        step, rest = np.divmod(positions, np.int64(2 * trucks))
        measurement, truck = np.divmod(rest, np.int64(trucks))
        batch = self._batch(step, measurement, truck - self.first)
        values = np.vstack([batch.temperature, batch.more])  # (fields, rows): the batch's own arrays
        nulls = np.where(measurement == 0, self.iot.null_field(positions, self._widths[0]), self.iot.null_field(positions, self._widths[1]))
        rows = np.flatnonzero(nulls >= 0)
        values[nulls[rows], rows] = np.nan
        return EventBatch(batch.timestamp_ms, batch.device_index, batch.device_id, batch.sequence_number, values[0], more=values[1:],
                          host=batch.host, table_index=batch.table_index, null_tag=self.iot.null_tag(positions))
