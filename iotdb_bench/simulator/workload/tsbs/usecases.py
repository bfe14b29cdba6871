"""TSBS's use cases as the tool generates them: measurements, their fields and each field's walk.

A use case (TSBS's --use-case) is the tool's shape (--schema): `cpu-only` is `tsbs-cpu`, one
measurement `cpu` of ten fields, each a clamped walk in [0, 100] with normal steps of one (TSBS's
pkg/data/usecases/devops/cpu.go), written as whole numbers (TSBS writes them with int64()).
`devops` (nine measurements, 100 fields) and `iot` (trucks) are further `UseCase`s of the same
parts: measurements of fields with their walks, a table per measurement.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iotdb_bench.simulator.workload.events import GOLDEN, splitmix64
from iotdb_bench.simulator.workload.tsbs.walks import UNIT, SeriesSet, Walk

MAX_FIELDS = 128  # fields one measurement may have: a series' key is (host, measurement, field)


@dataclass(frozen=True)
class Field:
    name: str
    walk: Walk


@dataclass(frozen=True)
class Measurement:
    """One measurement (a table): its fields, and a salt that keeps its series apart from others'."""

    name: str
    fields: tuple[Field, ...]
    salt: int

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(field.name for field in self.fields)

    def series(self, seed: int, hosts: np.ndarray, fields: tuple[int, ...] | None = None) -> SeriesSet:
        """The walks of these hosts' fields (all, or the given field numbers), host-major: series
        h * len(fields) + f is host hosts[h]'s field fields[f]."""
        chosen = tuple(range(len(self.fields))) if fields is None else fields
        key = (seed * int(GOLDEN) ^ self.salt) & 0xFFFF_FFFF_FFFF_FFFF
        numbers = hosts.astype(np.uint64)[:, None] * np.uint64(MAX_FIELDS) + np.array(chosen, dtype=np.uint64)[None, :]
        keys = splitmix64(numbers.ravel() * GOLDEN + np.uint64(key))
        return SeriesSet(keys, [self.fields[f].walk for f in chosen] * len(hosts))

    @staticmethod
    def values(units: np.ndarray) -> np.ndarray:
        """The values written, as float64: whole numbers, truncated as TSBS's int64() does (the walks
        of these fields never go below 0, where truncating is flooring)."""
        return (units // UNIT).astype(np.float64)


CPU_FIELDS = ("usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait", "usage_irq", "usage_softirq", "usage_steal",
              "usage_guest", "usage_guest_nice")
CPU = Measurement("cpu", tuple(Field(name, Walk(low=0.0, high=100.0, sigma=1.0)) for name in CPU_FIELDS), salt=0x7F4A7C159E3779B9)


@dataclass(frozen=True)
class UseCase:
    name: str  # TSBS's --use-case
    shape: str  # the tool's --schema
    measurements: tuple[Measurement, ...]


CPU_ONLY = UseCase("cpu-only", "tsbs-cpu", (CPU,))
USE_CASES = {use_case.shape: use_case for use_case in (CPU_ONLY,)}
