"""TSBS's use cases as the tool generates them: entities (hosts, trucks) with their tags, and
measurements of fields, each field a walk (walks.py) written as TSBS writes it.

A use case (TSBS's --use-case) is the tool's shape (--schema): `cpu-only` is `tsbs-cpu` (one
measurement `cpu` of ten fields, each a clamped walk in [0, 100] with normal steps of one, TSBS's
pkg/data/usecases/devops/cpu.go), `devops` is `tsbs-devops` (nine measurements, devops.py) and
`iot` is `tsbs-iot` (trucks' readings and diagnostics, iot.py). Every measurement is a table.

A field is written as TSBS writes it: a whole number (TSBS's int64(), toward zero) or TSBS's FP(p),
the value cut to p decimals; a measurement whose fields are derived from its walks (disk, mem) or
from the entity and the time (kernel's boot_time, redis's uptime) says how (devops.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from iotdb_bench.simulator.workload.events import GOLDEN, splitmix64
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, Draw, entity_draws, host_tags
from iotdb_bench.simulator.workload.tsbs.walks import UNIT, SeriesSet, Walk, clamped, normal

MAX_FIELDS = 128  # fields one measurement may have: a series' key is (host, measurement, field)
# A measurement's own tags (TSBS's diskio serial, nginx server...): a name and its value for each of
# the entities, from their draws.
OwnTag = tuple[str, Callable[[Draw], list[str]]]


def written(units: np.ndarray, decimals: int | None) -> np.ndarray:
    """The values TSBS writes for these walk states, as float64: int64(x) (toward zero, computed on
    the integers: walks of a terabyte exceed a double's exact range in fixed point), or FP(p):
    float64(int(x * 10^p)) / 10^p, the same double operations as TSBS's."""
    if decimals is None:
        whole = units // UNIT  # floor: toward zero where the walk is not below it
        if len(units) and units.min() < 0:
            whole += (units < 0) & (whole * UNIT != units)
        return whole.astype(np.float64)
    scale = 10.0 ** decimals
    return np.trunc(units / UNIT * scale) / scale


@dataclass(frozen=True)
class Field:
    name: str
    walk: Walk
    decimals: int | None = None  # None: a whole number; p: TSBS's FP(p)


@dataclass(frozen=True)
class Measurement:
    """One measurement (a table): the fields it walks, a salt that keeps its series apart from
    others', and its own tags. `field_names` are the fields it writes: its walks', unless a subclass
    derives them (devops.py)."""

    name: str
    walked: tuple[Field, ...]
    salt: int
    own_tags: tuple[OwnTag, ...] = field(default=())

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(one.name for one in self.walked)

    @property
    def integer_fields(self) -> tuple[bool, ...]:
        """Per field written, whether TSBS writes it as an integer (its int64(): the `i` of line
        protocol) rather than a float64: its walks' whole numbers, unless a subclass derives others."""
        return tuple(one.decimals is None for one in self.walked)

    def walks(self, seed: int, hosts: np.ndarray) -> list[Walk]:
        """The walk of every series, host-major (the same for every host unless the host's own
        parameters change it: mem's total)."""
        return [one.walk for one in self.walked] * len(hosts)

    def keys(self, seed: int, hosts: np.ndarray) -> np.ndarray:
        """Every series' key, host-major: series h * len(walked) + f is host hosts[h]'s field f."""
        key = (seed * int(GOLDEN) ^ self.salt) & 0xFFFF_FFFF_FFFF_FFFF
        numbers = hosts.astype(np.uint64)[:, None] * np.uint64(MAX_FIELDS) + np.arange(len(self.walked), dtype=np.uint64)[None, :]
        return splitmix64(numbers.ravel() * GOLDEN + np.uint64(key))

    def series(self, seed: int, hosts: np.ndarray) -> SeriesSet:
        return SeriesSet(self.keys(seed, hosts), self.walks(seed, hosts))

    def values(self, units: np.ndarray, steps: np.ndarray, context: Context) -> np.ndarray:
        """(steps, hosts, fields) the values written, from the walks' states (steps, hosts, walked)."""
        decimals = {one.decimals for one in self.walked}
        if len(decimals) == 1:  # the usual case: every field written alike, in one pass
            return written(units, decimals.pop())
        return np.stack([written(units[:, :, f], one.decimals) for f, one in enumerate(self.walked)], axis=-1)

    def tag_values(self, seed: int, hosts: np.ndarray) -> dict[str, list[str]]:
        """Its own tags of each host (none for most)."""
        draw = entity_draws(seed, self.salt, hosts)
        return {name: make(draw) for name, make in self.own_tags}


@dataclass(frozen=True)
class Context:
    """What derived fields read beside the walks: the seed, the hosts and the time between steps."""

    seed: int
    hosts: np.ndarray
    interval_ms: int


CPU_FIELDS = ("usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait", "usage_irq", "usage_softirq", "usage_steal",
              "usage_guest", "usage_guest_nice")
CPU = Measurement("cpu", tuple(Field(name, clamped(normal(0.0, 1.0), 0.0, 100.0)) for name in CPU_FIELDS), salt=0x7F4A7C159E3779B9)


@dataclass(frozen=True)
class UseCase:
    name: str  # TSBS's --use-case
    shape: str  # the tool's --schema
    entity: str  # what reports: host (entity_0, entity_1, ...), truck
    measurements: tuple[Measurement, ...]
    # The entity's tags in TSBS's order with their column types ("text", "float"), and their values.
    tags: tuple[tuple[str, str], ...] = tuple((name, "text") for name in TAG_NAMES)
    tag_rows: Callable[[int, int, int], list[tuple]] = host_tags

    def measurement(self, name: str) -> Measurement:
        return next(one for one in self.measurements if one.name == name)

    @property
    def fields_per_step(self) -> int:
        """Points one entity writes per step when every row is written (TSBS's metrics)."""
        return sum(len(one.field_names) for one in self.measurements)

    def entity_name(self, index: int) -> str:
        return f"{self.entity}_{index}"

    def entity_index(self, name: str) -> int:
        return int(name.removeprefix(f"{self.entity}_"))


class Walked:
    """The walks of some measurements of some entities as one SeriesSet (measurement by measurement,
    each host-major), and their values per measurement: what the generator and the checker compute."""

    def __init__(self, use_case: UseCase, seed: int, hosts: np.ndarray, interval_ms: int, measurements: Sequence[Measurement] | None = None):
        self.measurements = tuple(measurements or use_case.measurements)
        self.hosts = hosts
        self.context = Context(seed, hosts, interval_ms)
        keys = [one.keys(seed, hosts) for one in self.measurements]
        self.series = SeriesSet(np.concatenate(keys), [walk for one in self.measurements for walk in one.walks(seed, hosts)])
        ends = np.cumsum([len(part) for part in keys])
        self._slices = [slice(int(end - len(part)), int(end)) for end, part in zip(ends, keys)]

    def values(self, units: np.ndarray, steps: np.ndarray) -> list[np.ndarray]:
        """Per measurement, (steps, hosts, fields) the values written, from the states (steps, S)."""
        hosts = len(self.hosts)
        return [one.values(units[:, part].reshape(len(steps), hosts, -1), steps, self.context)
                for one, part in zip(self.measurements, self._slices)]

    def by_host(self, state: np.ndarray) -> np.ndarray:
        """(hosts, series per host) a state (S,), each host's series together (the checker keeps them per host)."""
        return np.concatenate([state[part].reshape(len(self.hosts), -1) for part in self._slices], axis=1)

    def from_hosts(self, per_host: np.ndarray) -> np.ndarray:
        """The state (S,) of `by_host`'s form."""
        widths = np.cumsum([0, *(part.stop - part.start for part in self._slices)]) // max(1, len(self.hosts))
        return np.concatenate([per_host[:, int(low) : int(high)].ravel() for low, high in itertools.pairwise(widths)])
