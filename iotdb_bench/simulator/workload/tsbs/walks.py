"""TSBS's models of a metric over time (its pkg/data/usecases/common distributions) in fixed point,
at any step, from the seed.

TSBS simulates a metric as a walk: every tick draws a step from a distribution (`ND`: normal, `UD`:
uniform) and adds it to the state, then

- `CWD` clamps the sum to [low, high] (most metrics);
- `WD` leaves it unbounded, `MWD` adds the step's absolute value (counters that only grow);
- IoT's fuel gauge is a `CWD` that starts over at `high` when it reaches `low` (a truck refuelled);
- `LD` (IoT's load) keeps its value and, with a small chance per tick, takes a new uniform one.

A walk starts at a fixed value or uniformly in a range. Here:

- every step is a pure function of (series key, step): a counter-based hash (splitmix64, as the
  event generator's) picks one of QUANTILES equally likely quantiles of the step distribution, so
  any window of any series can be computed without the others;
- values are int64 counts of 1/UNIT (fixed point): sums are exact, so every order of evaluation
  gives the same bits, and the generator (a worker's hosts, step after step) and the checker (any
  hosts, any window) agree exactly;
- the steps of many ticks are hashed at once; a tick is then three vectorised operations over
  every series (`_walked`), a few more for series that refill or jump: a worker of ten hosts makes
  about three million cpu rows a second.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from iotdb_bench.simulator.workload.events import GOLDEN, splitmix64, unit_interval

UNIT = 1 << 20  # fixed-point steps per 1.0 of a value
QUANTILES = 1 << 16  # levels of a step distribution (a normal's tails to about 4.3 sigma)
_QUANTILE_SHIFT = np.uint64(64 - 16)
_CHANCE_BITS = np.uint64(0xFFFF)  # the hash's low bits: whether a lazy series jumps (its high bits pick the value)
_SALT_START = np.uint64(0x632BE59BD9B4E019)
# Bounds of an unbounded walk: far beyond any value a run reaches, far from int64's overflow.
UNBOUNDED = 1 << 62
# Elements (steps x series) one pass of work holds at most: memory stays bounded at any scale.
BLOCK_ELEMENTS = 1 << 18

Update = Literal["clamped", "unbounded", "monotonic", "refill", "lazy"]


@functools.cache
def normal_quantiles() -> np.ndarray:
    """QUANTILES quantiles of N(0, 1) at the middles of equally likely bins; symmetric, so a step's
    mean is exactly 0 once scaled and rounded."""
    normal = statistics.NormalDist()
    half = np.array([normal.inv_cdf((i + 0.5) / QUANTILES) for i in range(QUANTILES // 2)])
    return np.concatenate([half, -half[::-1]])


@dataclass(frozen=True)
class Steps:
    """A step distribution: TSBS's ND(mean, sigma) (`normal`) or UD(low, high)."""

    normal: bool
    a: float  # the mean, or the low end
    b: float  # the standard deviation, or the high end

    def quantiles(self) -> np.ndarray:
        if self.normal:
            return normal_quantiles() * self.b + self.a
        return self.a + (np.arange(QUANTILES) + 0.5) / QUANTILES * (self.b - self.a)


def normal(mean: float, sigma: float) -> Steps:
    return Steps(True, mean, sigma)


def uniform(low: float, high: float) -> Steps:
    return Steps(False, low, high)


@dataclass(frozen=True)
class Walk:
    """One metric's model: its steps, bounds, start (fixed, or uniform in [start, start_high)) and
    how a tick updates it (`Update`; `lazy`: a new value uniform in [low, high) with `chance`)."""

    steps: Steps
    low: float | None = None
    high: float | None = None
    start: float = 0.0
    start_high: float | None = None
    update: Update = "clamped"
    chance: float = 0.0


def clamped(steps: Steps, low: float, high: float, start: float | None = None, start_high: float | None = None) -> Walk:
    """TSBS's CWD: start fixed, or uniform in [start, start_high) (default: uniform in [low, high))."""
    if start is None:
        return Walk(steps, low, high, low, high)
    return Walk(steps, low, high, start, start_high)


def unbounded(steps: Steps) -> Walk:
    """TSBS's WD from 0."""
    return Walk(steps, update="unbounded")


def monotonic(steps: Steps) -> Walk:
    """TSBS's MWD from 0: a counter, every tick adding |step|."""
    return Walk(steps, update="monotonic")


def refilled(steps: Steps, low: float, high: float) -> Walk:
    """IoT's fuel: a CWD from `high` that starts over at `high` when it reaches `low`."""
    return Walk(steps, low, high, high, update="refill")


def lazy(low: float, high: float, chance: float) -> Walk:
    """TSBS's LD(UD(0, 1), UD(low, high), 1 - chance) from 0: a new uniform value with `chance` per tick."""
    return Walk(uniform(low, high), low, high, update="lazy", chance=chance)


def _units(value: float) -> int:
    return int(np.floor(value * UNIT))


def _step_table(walk: Walk) -> np.ndarray:
    table = np.rint(walk.steps.quantiles() * UNIT).astype(np.int64)
    return np.abs(table) if walk.update == "monotonic" else table


class SeriesSet:
    """The walks of S series (e.g. hosts x fields), each with its own 64-bit key and walk."""

    def __init__(self, keys: np.ndarray, walks: Sequence[Walk]):
        """`keys`: (S,) uint64; `walks`: one per series (equal ones share their step table)."""
        distinct = list(dict.fromkeys(walks))
        self.keys = keys.astype(np.uint64)
        self.low = np.array([-UNBOUNDED if walk.low is None else _units(walk.low) for walk in walks], dtype=np.int64)
        self.high = np.array([UNBOUNDED if walk.high is None else _units(walk.high) for walk in walks], dtype=np.int64)
        self._start = np.array([_units(walk.start) for walk in walks], dtype=np.int64)
        self._start_span = np.array([0 if walk.start_high is None else _units(walk.start_high) - _units(walk.start) for walk in walks],
                                    dtype=np.int64)
        self._steps = np.concatenate([_step_table(walk) for walk in distinct])
        self._table_offset = np.array([distinct.index(walk) * QUANTILES for walk in walks], dtype=np.int64)
        self._one_table = len(distinct) == 1
        self._lazy = np.flatnonzero([walk.update == "lazy" for walk in walks])
        self._lazy_threshold = np.array([int(walks[i].chance * (1 << 16)) for i in self._lazy], dtype=np.uint64)
        self._refill = np.flatnonzero([walk.update == "refill" for walk in walks])

    def __len__(self) -> int:
        return len(self.keys)

    def start(self) -> np.ndarray:
        """(S,) the state at step 0: fixed, or uniform in its range."""
        unit = unit_interval(splitmix64(self.keys ^ _SALT_START))
        return self._start + np.floor(unit * self._start_span).astype(np.int64)

    def steps(self, first: int, count: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(count, S) the steps of ticks first..first+count-1, in fixed point, and (count, lazy series)
        whether each lazy series jumps to its step's value at that tick (None: no lazy series)."""
        ticks = np.arange(first, first + count, dtype=np.uint64) * GOLDEN
        hashes = splitmix64(ticks[:, None] + self.keys[None, :])
        index = (hashes >> _QUANTILE_SHIFT).astype(np.int64)
        if not self._one_table:
            index += self._table_offset
        jumps = None
        if len(self._lazy):
            jumps = (hashes[:, self._lazy] & _CHANCE_BITS) < self._lazy_threshold
        return self._steps[index], jumps

    def advance(self, state: np.ndarray, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Values at steps first..first+count-1 given the state at `first` ((count, S), the first row
        being `state`), and the state at first+count."""
        walked = self._walked(state, first, count)
        return walked[:-1], walked[-1]

    def state_at(self, step: int, state: np.ndarray | None = None, since: int = 0) -> np.ndarray:
        """(S,) the state at `step`, from the state at `since` (default: the start)."""
        current = self.start() if state is None else state
        per_block = max(1, BLOCK_ELEMENTS // max(len(self), 1))
        for first in range(since, step, per_block):
            current = self._walked(current, first, min(per_block, step - first))[-1]
        return current

    def _walked(self, start: np.ndarray, first: int, count: int) -> np.ndarray:
        """(count + 1, S) the walks x[k + 1] = update(x[k], steps[k]) from x[0] = start: one tick of
        every series per iteration, three ufunc calls on preallocated rows (np.clip's Python wrapper
        would cost more than the work at a few hundred series), and for the few lazy or refilling
        series their own rule after."""
        steps, jumps = self.steps(first, count)
        walked = np.empty((count + 1, len(start)), dtype=np.int64)
        walked[0] = start
        rows, add, maximum, minimum, low, high = list(walked), np.add, np.maximum, np.minimum, self.low, self.high
        if jumps is None and not len(self._refill):  # the usual case: nothing but the three calls per tick
            for tick, step in enumerate(steps):
                row = rows[tick + 1]
                add(rows[tick], step, out=row)
                maximum(row, low, out=row)
                minimum(row, high, out=row)
            return walked
        lazy, refill = self._lazy, self._refill
        for tick, step in enumerate(steps):
            row = rows[tick + 1]
            add(rows[tick], step, out=row)
            maximum(row, low, out=row)
            minimum(row, high, out=row)
            if jumps is not None:
                row[lazy] = np.where(jumps[tick], step[lazy], rows[tick][lazy])
            row[refill] = np.where(row[refill] == low[refill], high[refill], row[refill])
        return walked
