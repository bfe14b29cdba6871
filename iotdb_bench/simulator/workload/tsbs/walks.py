"""Clamped random walks (TSBS's model of a metric) in fixed point, at any step, from the seed.

TSBS simulates a metric as a clamped random walk (its pkg/data/usecases/common, `CWD`): it starts
uniformly in [low, high) and every tick adds a normal step N(0, sigma) and clamps the sum to
[low, high]. A walk has state: the value at step t depends on every step before it. Here:

- every step is a pure function of (series key, step): a counter-based hash (splitmix64, as the
  event generator's) picks one of QUANTILES equally likely quantiles of the normal distribution, so
  any window of any series can be computed without the others;
- values are int64 counts of 1/UNIT (fixed point): sums are exact, so every order of evaluation
  gives the same bits, and the generator (a worker's hosts, step after step) and the checker (any
  hosts, any window) agree exactly;
- the steps of many ticks are hashed at once; a tick is then three vectorised operations over
  every series (`_clamped_walks`): a worker of ten hosts makes about three million rows a second.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iotdb_bench.simulator.workload.events import GOLDEN, splitmix64, unit_interval

UNIT = 1 << 20  # fixed-point steps per 1.0 of a value
QUANTILES = 1 << 16  # levels of the normal step distribution (tails to about 4.3 sigma)
_QUANTILE_SHIFT = np.uint64(64 - 16)
_SALT_START = np.uint64(0x632BE59BD9B4E019)
# Elements (steps x series) one pass of work holds at most: memory stays bounded at any scale.
BLOCK_ELEMENTS = 1 << 18


@functools.cache
def normal_quantiles() -> np.ndarray:
    """QUANTILES quantiles of N(0, 1) at the middles of equally likely bins; symmetric, so a step's
    mean is exactly 0 once scaled and rounded."""
    normal = statistics.NormalDist()
    half = np.array([normal.inv_cdf((i + 0.5) / QUANTILES) for i in range(QUANTILES // 2)])
    return np.concatenate([half, -half[::-1]])


@dataclass(frozen=True)
class Walk:
    """One metric's walk: TSBS's CWD(ND(0, sigma), low, high, a uniform start in [low, high))."""

    low: float
    high: float
    sigma: float


class SeriesSet:
    """The walks of S series (e.g. hosts x fields), each with its own 64-bit key and walk."""

    def __init__(self, keys: np.ndarray, walks: Sequence[Walk]):
        """`keys`: (S,) uint64; `walks`: one per series (equal ones share their step table)."""
        distinct = list(dict.fromkeys(walks))
        self.keys = keys.astype(np.uint64)
        self.low = np.array([int(np.floor(walk.low * UNIT)) for walk in walks], dtype=np.int64)
        self.high = np.array([int(np.floor(walk.high * UNIT)) for walk in walks], dtype=np.int64)
        quantiles = normal_quantiles()
        self._steps = np.concatenate([np.rint(quantiles * walk.sigma * UNIT).astype(np.int64) for walk in distinct])
        self._table_offset = np.array([distinct.index(walk) * QUANTILES for walk in walks], dtype=np.int64)
        self._one_table = len(distinct) == 1

    def __len__(self) -> int:
        return len(self.keys)

    def start(self) -> np.ndarray:
        """(S,) the state at step 0: uniform in [low, high)."""
        unit = unit_interval(splitmix64(self.keys ^ _SALT_START))
        return self.low + np.floor(unit * (self.high - self.low)).astype(np.int64)

    def steps(self, first: int, count: int) -> np.ndarray:
        """(count, S) the steps of ticks first..first+count-1, in fixed point."""
        ticks = np.arange(first, first + count, dtype=np.uint64) * GOLDEN
        index = (splitmix64(ticks[:, None] + self.keys[None, :]) >> _QUANTILE_SHIFT).astype(np.int64)
        if not self._one_table:
            index += self._table_offset
        return self._steps[index]

    def advance(self, state: np.ndarray, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Values at steps first..first+count-1 given the state at `first` ((count, S), the first row
        being `state`), and the state at first+count."""
        walked = _clamped_walks(state, self.steps(first, count), self.low, self.high)
        return walked[:-1], walked[-1]

    def state_at(self, step: int, state: np.ndarray | None = None, since: int = 0) -> np.ndarray:
        """(S,) the state at `step`, from the state at `since` (default: the start)."""
        current = self.start() if state is None else state
        per_block = max(1, BLOCK_ELEMENTS // max(len(self), 1))
        for first in range(since, step, per_block):
            current = _clamped_walks(current, self.steps(first, min(per_block, step - first)), self.low, self.high)[-1]
        return current


def _clamped_walks(start: np.ndarray, steps: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """(K + 1, S) the walks x[k + 1] = clip(x[k] + steps[k], low, high) from x[0] = start: one tick of
    every series per iteration, three ufunc calls on preallocated rows (np.clip's Python wrapper
    would cost more than the work at a few hundred series)."""
    walked = np.empty((len(steps) + 1, len(start)), dtype=np.int64)
    walked[0] = start
    rows, add, maximum, minimum = list(walked), np.add, np.maximum, np.minimum
    for tick, step in enumerate(steps):
        row = rows[tick + 1]
        add(rows[tick], step, out=row)
        maximum(row, low, out=row)
        minimum(row, high, out=row)
    return walked
