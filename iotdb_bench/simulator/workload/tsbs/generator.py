"""One worker's share of a TSBS use case: its hosts' rows in TSBS's order, chunk by chunk.

The hosts are split over the workers as the tool's devices are (RunSpec.devices_of: consecutive
hosts per worker, the first workers take the rest). A worker's stream is TSBS's order restricted to
its hosts: every one of its hosts at step 0, then at step 1, ... (tsbs_generate_data writes every
host at each timestamp). Position p of the stream is step p // H of local host p % H (H hosts).

A walk has state, which the generator keeps: the state of every series (host x field) at the step
the next chunk starts at, and at the step after (a chunk may end inside a step). A stream that
starts later (--no-clean, --steps) gets its first state from the seed by walking there
(SeriesSet.state_at), which the checker does too (series.py): the values of a row depend only on
the seed, the host and the step, never on the worker count or the batch size.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import CHUNK_EVENTS, EventBatch
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.hosts import host_names
from iotdb_bench.simulator.workload.tsbs.usecases import USE_CASES


class TsbsGenerator:
    """The rows of one worker's hosts (EventBatches: `host` their global index, `sequence_number`
    their step, `temperature` and `more` their fields in order)."""

    def __init__(self, spec: RunSpec, worker_index: int):
        self.data = TsbsData.of(spec)
        self.measurement = USE_CASES[spec.shape].measurements[0]
        first = spec.first_device_of(worker_index)
        self.host_count = spec.devices_of(worker_index)
        self.hosts = np.arange(first, first + self.host_count, dtype=np.int64)
        self.names = host_names(first, self.host_count)
        self.series = self.measurement.series(spec.seed, self.hosts)
        self._fields = len(self.measurement.fields)
        # The walks' states at steps known so far (at most the two a chunk may start at).
        self._states: dict[int, np.ndarray] = {}
        self._state(spec.stream_offset)  # before the timed phase: a continuing run walks to its first step here

    def position_of_step(self, step: int) -> int:
        return step * self.host_count

    def step_after(self, position: int) -> int:
        """The stream's step after `position` rows (where a continuing run starts): the step of the
        last row, plus one."""
        return math.ceil(position / self.host_count)

    def batches(self, start: int, total: int | None, size: int) -> Iterator[EventBatch]:
        """Batches of `size` rows (the last one smaller) covering the positions [start, start + total)."""
        for chunk in self.chunks(start, total, size):
            yield from chunk.split(size)

    def chunks(self, start: int, total: int | None, size: int) -> Iterator[EventBatch]:
        """The same rows a few batches at a time: each chunk a whole number of batches of `size` (the
        last one may end short), about CHUNK_EVENTS rows (EventGenerator.chunks' contract)."""
        rows = size * max(1, CHUNK_EVENTS // size)
        end = math.inf if total is None else start + total
        first = start
        while first < end:
            count = int(min(rows, end - first))
            yield self.rows(first, count)
            first += count

    def rows(self, first: int, count: int) -> EventBatch:
        """The rows at positions [first, first + count) of the worker's stream."""
        hosts = self.host_count
        first_step, last_step = first // hosts, (first + count - 1) // hosts
        values, after = self.series.advance(self._state(first_step), first_step, last_step - first_step + 1)
        self._states = {last_step: values[-1], last_step + 1: after}
        offset = first - first_step * hosts
        fields = self.measurement.values(values.reshape(-1, self._fields)[offset : offset + count])
        positions = np.arange(first, first + count, dtype=np.int64)
        step, local = np.divmod(positions, np.int64(hosts))
        return EventBatch(timestamp_ms=self.data.time_of(step), device_index=local, device_id=self.names[local], sequence_number=step,
                          temperature=fields[:, 0], more=fields[:, 1:].T, host=self.hosts[local])

    def _state(self, step: int) -> np.ndarray:
        """(hosts x fields,) the walks' state at `step`: kept from the last chunk, else walked to from the start."""
        if step not in self._states:
            self._states = {step: self.series.state_at(step)}
        return self._states[step]
