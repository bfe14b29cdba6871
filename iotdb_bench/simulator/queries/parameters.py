"""Parameters of a query, drawn per execution from what the tool wrote, outside the timed call.

A parameterised query names its parameters by kind (`RandomEntities`, `RandomWindow`); before each
execution `ParameterDraws.draw` picks their values among what the record says was written (its
entities and time range), from the run's seed, the worker and the execution's number: the same
every time a run is repeated, and different from one execution to the next, as TSBS's pre-generated
queries are. The module then only renders its text with them (simulator/queries/executions.py).
A query file's parameters (simulator/queries/query_file.py) add a device, a measurement and a
threshold from the range of the values written (`RandomDevice`, `RandomMeasurement`, `RandomThreshold`).
"""

from __future__ import annotations

import datetime as dt
import math
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from iotdb_bench.simulator.workload.events import splitmix64


class ParameterProblem(Exception):
    """The data cannot give a query what its parameters ask for (one line: more hosts than written)."""


@dataclass(frozen=True)
class Written:
    """What a query may draw from: entities `{entity}_0` .. `{entity}_{entities - 1}` (TSBS's host_i,
    truck_i), or the given `names`, and the time range [start_ms, end_ms); for a query file's
    parameters also the measurements, and the range of the values with their resolution (`value_step`:
    0.01 for the tool's events, whose values have two decimals; 1 for TSBS's whole numbers)."""

    entity: str
    entities: int
    start_ms: int
    end_ms: int
    names: Sequence[str] | None = None
    measurements: tuple[str, ...] = ()
    values: tuple[float, float] | None = None
    value_step: float = 0.01

    def name(self, index: int) -> str:
        return self.names[index] if self.names is not None else f"{self.entity}_{index}"


@dataclass(frozen=True)
class Window:
    start_ms: int
    end_ms: int

    def __str__(self) -> str:
        return f"{iso_ms(self.start_ms)} to {iso_ms(self.end_ms)}"


class _Hashes:
    """Successive 64-bit hashes of one execution's key."""

    def __init__(self, *key: int):
        self._key = 0
        for part in key:
            self._key = int(splitmix64(np.array([self._key ^ (part & 0xFFFF_FFFF_FFFF_FFFF)], dtype=np.uint64))[0])
        self._count = 0

    def __iter__(self) -> Iterator[int]:
        return self

    def __next__(self) -> int:
        self._count += 1
        return int(splitmix64(np.array([self._key ^ self._count], dtype=np.uint64))[0])


class Kind(Protocol):
    @property
    def name(self) -> str: ...

    def draw(self, hashes: _Hashes, written: Written) -> object: ...


@dataclass(frozen=True)
class RandomEntities:
    """`count` distinct entities among those written, uniformly, in the order drawn (TSBS's
    getRandomHosts); a tuple of names."""

    name: str
    count: int

    def draw(self, hashes: _Hashes, written: Written) -> tuple[str, ...]:
        if self.count > written.entities:
            raise ParameterProblem(f"it draws {self.count} random {written.entity}s and the data has {written.entities} "
                                   f"(insert with --devices {self.count} or more)")
        chosen: list[int] = []
        for value in hashes:
            if len(chosen) == self.count:
                break
            if (index := value % written.entities) not in chosen:
                chosen.append(index)
        return tuple(written.name(index) for index in chosen)


@dataclass(frozen=True)
class RandomWindow:
    """A window of `length_ms` starting uniformly at a millisecond of the written time range and
    ending inside it (TSBS's RandWindow); the whole range when that is not longer (TSBS refuses such
    a query; the tool runs it over everything written)."""

    name: str
    length_ms: int

    def draw(self, hashes: _Hashes, written: Written) -> Window:
        room = written.end_ms - self.length_ms - written.start_ms
        if room <= 0:
            return Window(written.start_ms, written.end_ms)
        start = written.start_ms + next(hashes) % room
        return Window(start, start + self.length_ms)


@dataclass(frozen=True)
class RandomDevice:
    """One device (entity) among those written, uniformly: its name."""

    name: str

    def draw(self, hashes: _Hashes, written: Written) -> str:
        if not written.entities:
            raise ParameterProblem(f"it draws a random {written.entity} and the data has none")
        return written.name(next(hashes) % written.entities)


@dataclass(frozen=True)
class RandomMeasurement:
    """One of the measurements written (the tool's `temperature`, m1...; TSBS's cpu fields), uniformly."""

    name: str

    def draw(self, hashes: _Hashes, written: Written) -> str:
        if not written.measurements:
            raise ParameterProblem("it draws a measurement and the record names none")
        return written.measurements[next(hashes) % len(written.measurements)]


class Threshold(float):
    """A threshold drawn from the values' range, written with one decimal more than the values have
    (it lies halfway between two values that can be written, so no value equals it)."""

    decimals: int = 3

    def __str__(self) -> str:
        return f"{float(self):.{self.decimals}f}"


@dataclass(frozen=True)
class RandomThreshold:
    """A value at a fraction of the written values' range [low, high], the fraction drawn uniformly in
    [`low`, `high`] (0.9 to 0.99: above most values), moved to halfway between two values that can be
    written (`Written.value_step`), so that > and >= give the same rows on every database."""

    name: str
    low: float
    high: float

    def draw(self, hashes: _Hashes, written: Written) -> Threshold:
        if written.values is None:
            raise ParameterProblem("it draws a threshold from the values written and the record does not say their range")
        smallest, largest = written.values
        fraction = self.low + (self.high - self.low) * (next(hashes) >> 11) / 2**53
        step = written.value_step
        value = smallest + fraction * (largest - smallest)
        threshold = Threshold(math.floor(value / step) * step + step / 2)
        threshold.decimals = max(0, -math.floor(math.log10(step))) + 1
        return threshold


@dataclass(frozen=True)
class Parameters:
    """One execution's parameters by name."""

    values: Mapping[str, object]

    def __getitem__(self, name: str):
        return self.values[name]

    def __str__(self) -> str:
        """The values in a few words (shown with a wrong answer, so the execution can be repeated by hand)."""
        return "; ".join(f"{name} {', '.join(value) if isinstance(value, tuple) else value}" for name, value in self.values.items())


class ParameterDraws:
    """Draws the parameters of every execution of one worker's run."""

    def __init__(self, seed: int, worker: int, written: Written):
        self.seed, self.worker, self.written = seed, worker, written

    def draw(self, query: str, execution: int, kinds: Sequence[Kind]) -> Parameters:
        hashes = _Hashes(self.seed, self.worker, zlib.crc32(query.encode()), execution)
        return Parameters({kind.name: kind.draw(hashes, self.written) for kind in kinds})


def iso_ms(ms: int) -> str:
    """An epoch-millisecond time in ISO 8601, UTC (2016-01-01T00:00:00.000Z)."""
    return (dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
