"""The values an insert of a TSBS shape wrote, recomputed from the seed for any entities and steps:
the checker's side of the generator (generator.py), exactly equal to it (walks.py is in fixed point).

A value at step t needs the walk's state at t, which needs every step before it. States are kept at
checkpoints (every `spacing` steps, for the entities asked for so far), so a query's window costs its
own steps plus at most one spacing, however late it lies in the data.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.iot_rows import IotRows
from iotdb_bench.simulator.workload.tsbs.usecases import Walked
from iotdb_bench.simulator.workload.tsbs.walks import BLOCK_ELEMENTS

# Checkpoints of all entities together take at most about this many bytes (the spacing grows with the data).
CHECKPOINT_BYTES = 64 << 20
MIN_SPACING = 360  # an hour of TSBS's 10 s steps


class HostValues:
    """Every field of some measurements (by name) of every entity of the data, step by step, as
    float64 (the values written; the IoT shape's null fields are iot_rows.py's, not these)."""

    def __init__(self, data: TsbsData, measurements: tuple[str, ...]):
        self.data = data
        self.measurements = tuple(data.use_case.measurement(name) for name in measurements)
        walked = self._walked(np.zeros(1, dtype=np.int64))
        per_host = len(walked.series)
        self.spacing = max(MIN_SPACING, -(-data.steps * data.hosts * per_host * 8 // CHECKPOINT_BYTES))
        levels = data.steps // self.spacing + 1
        self._checkpoints = np.zeros((levels, data.hosts, per_host), dtype=np.int64)
        self._known = np.zeros(data.hosts, dtype=np.int64)  # checkpoint levels known per host: 0 = none
        self._walked_cache: tuple[bytes, Walked] | None = None

    def blocks(self, hosts: np.ndarray, steps: range) -> Iterator[tuple[range, list[np.ndarray]]]:
        """(the steps, per measurement the values (steps, hosts, fields)) for consecutive parts of
        `steps`, each part at most BLOCK_ELEMENTS values: memory stays bounded over all entities and
        long windows."""
        if not len(steps) or not len(hosts):
            return
        walked = self._cached(hosts)
        state = self._state_at(hosts, walked, steps.start)
        per_block = max(1, BLOCK_ELEMENTS // len(walked.series))
        for first in range(steps.start, steps.stop, per_block):
            count = min(per_block, steps.stop - first)
            units, state = walked.series.advance(state, first, count)
            yield range(first, first + count), walked.values(units, np.arange(first, first + count, dtype=np.int64))

    def _walked(self, hosts: np.ndarray) -> Walked:
        return Walked(self.data.use_case, self.data.seed, hosts, self.data.interval_ms, self.measurements)

    def _state_at(self, hosts: np.ndarray, walked: Walked, step: int) -> np.ndarray:
        level = step // self.spacing
        self._fill_checkpoints(hosts, level)
        start = walked.from_hosts(self._checkpoints[level, hosts])
        return walked.series.state_at(step, start, since=level * self.spacing)

    def _fill_checkpoints(self, hosts: np.ndarray, level: int) -> None:
        """Walk the entities whose checkpoints end below `level` up to it, from the lowest one known."""
        behind = hosts[self._known[hosts] <= level]
        if not len(behind):
            return
        walked = self._walked(behind)
        known = int(self._known[behind].min())
        state = walked.series.start() if known == 0 else walked.from_hosts(self._checkpoints[known - 1, behind])
        if known == 0:
            self._checkpoints[0, behind] = walked.by_host(state)
            known = 1
        for next_level in range(known, level + 1):
            state = walked.series.state_at(next_level * self.spacing, state, since=(next_level - 1) * self.spacing)
            self._checkpoints[next_level, behind] = walked.by_host(state)
        self._known[behind] = level + 1

    def _cached(self, hosts: np.ndarray) -> Walked:
        """The entities' walks (kept for the last set asked for: queries over all entities repeat)."""
        key = hosts.tobytes()
        if self._walked_cache is None or self._walked_cache[0] != key:
            self._walked_cache = (key, self._walked(hosts))
        return self._walked_cache[1]


class TruckRows:
    """The IoT use case's rows as its queries see them, recomputed: per measurement (readings,
    diagnostics) the values (steps, trucks, fields), NaN where TSBS writes a null, and which rows are
    there for a query (written, and tied to their truck: a row whose name tag is null joins none)."""

    def __init__(self, data: TsbsData):
        self.data = data
        self.values = HostValues(data, tuple(one.name for one in data.use_case.measurements))
        self.rows = IotRows(data.seed, data.hosts)

    def blocks(self, trucks: np.ndarray, steps: range) -> Iterator[tuple[range, list[tuple[np.ndarray, np.ndarray]]]]:
        """(the steps, per measurement (values, present)) for consecutive parts of `steps`."""
        for block, values in self.values.blocks(trucks, steps):
            step = np.arange(block.start, block.stop, dtype=np.int64)[:, None]
            parts = []
            for measurement, part in enumerate(values):
                positions = self.rows.position(step, measurement, trucks[None, :])
                present = self.rows.exists(positions) & (self.rows.null_tag(positions) != 0)
                nulls = self.rows.null_field(positions, part.shape[-1])
                where = np.nonzero(nulls >= 0)
                part[where[0], where[1], nulls[where]] = np.nan
                parts.append((part, present))
            yield block, parts
