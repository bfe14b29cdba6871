"""The values an insert of a TSBS shape wrote, recomputed from the seed for any hosts and steps: the
checker's side of the generator (generator.py), exactly equal to it (walks.py is in fixed point).

A value at step t needs the walk's state at t, which needs every step before it. States are kept at
checkpoints (every `spacing` steps, for the hosts asked for so far), so a query's window costs its own
steps plus at most one spacing, however late it lies in the data.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.usecases import USE_CASES
from iotdb_bench.simulator.workload.tsbs.walks import BLOCK_ELEMENTS, SeriesSet

# Checkpoints of all hosts together take at most about this many bytes (the spacing grows with the data).
CHECKPOINT_BYTES = 64 << 20
MIN_SPACING = 360  # an hour of TSBS's 10 s steps


class HostValues:
    """Every field of every host of the data, step by step, as float64 (the values written)."""

    def __init__(self, data: TsbsData):
        self.data = data
        self.measurement = USE_CASES[data.shape].measurements[0]
        fields = len(self.measurement.fields)
        self.spacing = max(MIN_SPACING, -(-data.steps * data.hosts * fields * 8 // CHECKPOINT_BYTES))
        levels = data.steps // self.spacing + 1
        self._checkpoints = np.zeros((levels, data.hosts, fields), dtype=np.int64)
        self._known = np.zeros(data.hosts, dtype=np.int64)  # checkpoint levels known per host: 0 = none
        self._series_cache: tuple[bytes, SeriesSet] | None = None

    def blocks(self, hosts: np.ndarray, steps: range) -> Iterator[tuple[range, np.ndarray]]:
        """(the steps, values (steps, hosts, fields)) for consecutive parts of `steps`, each part at most
        BLOCK_ELEMENTS values: memory stays bounded over all hosts and long windows."""
        if not len(steps) or not len(hosts):
            return
        series = self._series(hosts)
        state = self._state_at(hosts, series, steps.start)
        per_block = max(1, BLOCK_ELEMENTS // len(series))
        for first in range(steps.start, steps.stop, per_block):
            count = min(per_block, steps.stop - first)
            values, state = series.advance(state, first, count)
            yield range(first, first + count), self.measurement.values(values).reshape(count, len(hosts), -1)

    def _state_at(self, hosts: np.ndarray, series: SeriesSet, step: int) -> np.ndarray:
        level = step // self.spacing
        self._fill_checkpoints(hosts, level)
        start = self._checkpoints[level, hosts].ravel()
        return series.state_at(step, start, since=level * self.spacing)

    def _fill_checkpoints(self, hosts: np.ndarray, level: int) -> None:
        """Walk the hosts whose checkpoints end below `level` up to it, from the lowest one known."""
        behind = hosts[self._known[hosts] <= level]
        if not len(behind):
            return
        series = self.measurement.series(self.data.seed, behind)
        known = int(self._known[behind].min())
        state = series.start() if known == 0 else self._checkpoints[known - 1, behind].ravel()
        if known == 0:
            self._checkpoints[0, behind] = state.reshape(len(behind), -1)
            known = 1
        for next_level in range(known, level + 1):
            state = series.state_at(next_level * self.spacing, state, since=(next_level - 1) * self.spacing)
            self._checkpoints[next_level, behind] = state.reshape(len(behind), -1)
        self._known[behind] = level + 1

    def _series(self, hosts: np.ndarray) -> SeriesSet:
        """The hosts' walks (kept for the last set of hosts asked for: queries over all hosts repeat)."""
        key = hosts.tobytes()
        if self._series_cache is None or self._series_cache[0] != key:
            self._series_cache = (key, self.measurement.series(self.data.seed, hosts))
        return self._series_cache[1]
