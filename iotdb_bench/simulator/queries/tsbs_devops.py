"""TSBS's 15 DevOps query types (its cmd/tsbs_generate_queries/uses/devops/ and the TimescaleDB
target's SQL), with the parameters each execution draws and the answer it must give.

Each type is a family with its numbers, as TSBS names it: `single-groupby-M-H-T` (the max of the
first M cpu fields per minute over H random hosts, in a random window of T hours), `cpu-max-all-H`
(the max of all ten per hour over H random hosts, 8 hours), `double-groupby-N` (the mean of the
first N per host and hour, all hosts, 12 hours), `high-cpu-all` and `high-cpu-1` (the rows with
usage_user above 90, all hosts or one, 12 hours), `lastpoint` (every host's newest row) and
`groupby-orderby-limit` (the max of usage_user per minute, the 5 latest minutes before the end of a
random hour).

The answers are in the common form of simulator/checks/answers.py (times as epoch milliseconds,
hosts by name): `expected` recomputes them from the seed for the execution's parameters
(simulator/workload/tsbs/series.py), so a row changed behind the tool's back makes every execution
that reads it wrong. Buckets are epoch-aligned minutes and hours, as time_bucket and date_trunc make them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from iotdb_bench.simulator.checks.answers import AVERAGE, EXACT, KEY, TIME, TIME_KEY, Columns
from iotdb_bench.simulator.queries.parameters import Kind, Parameters, RandomEntities, RandomWindow, Window, Written
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.hosts import host_index
from iotdb_bench.simulator.workload.tsbs.series import HostValues
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

HOUR_MS, MINUTE_MS = 3_600_000, 60_000
HIGH_CPU_THRESHOLD = 90.0  # usage_user above it (TSBS's HighCPUForHosts)
LATEST_MINUTES = 5  # groupby-orderby-limit's LIMIT
FAMILIES = ("single-groupby", "cpu-max-all", "double-groupby", "high-cpu", "lastpoint", "groupby-orderby-limit")


@dataclass(frozen=True)
class DevopsQuery:
    """One DevOps query type. `hosts` 0 = all hosts; `window_ms` 0 = no window."""

    name: str
    family: str
    metrics: int = len(CPU_FIELDS)
    hosts: int = 0
    window_ms: int = 0

    @property
    def fields(self) -> tuple[str, ...]:
        """The cpu fields it reads (TSBS takes the first M)."""
        return CPU_FIELDS[: self.metrics]

    @property
    def parameters(self) -> tuple[Kind, ...]:
        kinds: list[Kind] = [RandomEntities("hosts", self.hosts)] if self.hosts else []
        return (*kinds, RandomWindow("window", self.window_ms)) if self.window_ms else tuple(kinds)

    @property
    def columns(self) -> Columns:
        """The common form's columns (simulator/checks/answers.py)."""
        every_field = tuple((name, EXACT) for name in CPU_FIELDS)
        return {
            "single-groupby": (("minute", TIME_KEY), *((f"max {name}", EXACT) for name in self.fields)),
            "cpu-max-all": (("hour", TIME_KEY), *((f"max {name}", EXACT) for name in self.fields)),
            "double-groupby": (("hour", TIME_KEY), ("host", KEY), *((f"mean {name}", AVERAGE) for name in self.fields)),
            "high-cpu": (("time", TIME_KEY), ("host", KEY), *every_field),
            "lastpoint": (("host", KEY), ("time", TIME), *every_field),
            "groupby-orderby-limit": (("minute", TIME_KEY), ("max usage_user", EXACT)),
        }[self.family]


def _types() -> dict[str, DevopsQuery]:
    types = [DevopsQuery(f"single-groupby-{m}-{h}-{t}", "single-groupby", metrics=m, hosts=h, window_ms=t * HOUR_MS)
             for m, h, t in ((1, 1, 1), (1, 1, 12), (1, 8, 1), (5, 1, 1), (5, 1, 12), (5, 8, 1))]
    types += [DevopsQuery(f"cpu-max-all-{h}", "cpu-max-all", hosts=h, window_ms=8 * HOUR_MS) for h in (1, 8)]
    types += [DevopsQuery(f"double-groupby-{n}", "double-groupby", metrics=m, window_ms=12 * HOUR_MS) for n, m in (("1", 1), ("5", 5), ("all", 10))]
    types += [DevopsQuery("high-cpu-all", "high-cpu", window_ms=12 * HOUR_MS), DevopsQuery("high-cpu-1", "high-cpu", hosts=1, window_ms=12 * HOUR_MS),
              DevopsQuery("lastpoint", "lastpoint"), DevopsQuery("groupby-orderby-limit", "groupby-orderby-limit", metrics=1, window_ms=HOUR_MS)]
    return {query.name: query for query in types}


DEVOPS = _types()


def written(data: TsbsData) -> Written:
    """What the DevOps queries draw from: the hosts and the time range written."""
    return Written("host", data.hosts, data.start_ms, data.end_ms)


class DevopsAnswers:
    """The expected answers of the DevOps queries over the data a record describes."""

    def __init__(self, data: TsbsData):
        self.data = data
        self.values = HostValues(data, ("cpu",))  # the DevOps types read cpu, of cpu-only and devops data alike

    def expected(self, query: str, parameters: Parameters) -> tuple[Columns, list[tuple]]:
        kind = DEVOPS[query]
        hosts = np.array([host_index(name) for name in parameters["hosts"]] if kind.hosts else range(self.data.hosts), dtype=np.int64)
        window = parameters["window"] if kind.window_ms else Window(self.data.start_ms, self.data.end_ms)  # lastpoint: all of it
        compute: Callable[[DevopsQuery, np.ndarray, Window], list[tuple]] = {"single-groupby": self._max_per_bucket, "cpu-max-all": self._max_per_bucket, "double-groupby": self._mean_per_host_and_hour,
                   "high-cpu": self._high_cpu, "lastpoint": self._last_points, "groupby-orderby-limit": self._latest_minutes}[kind.family]
        return kind.columns, compute(kind, hosts, window)

    def _max_per_bucket(self, kind: DevopsQuery, hosts: np.ndarray, window: Window) -> list[tuple]:
        bucket_ms = MINUTE_MS if kind.family == "single-groupby" else HOUR_MS
        maxima: dict[int, np.ndarray] = {}
        for times, values in self._blocks(hosts, window.start_ms, window.end_ms, kind.metrics):
            buckets = times - times % bucket_ms
            for bucket, rows in _runs(buckets):
                found = values[rows].max(axis=(0, 1))
                maxima[bucket] = np.maximum(maxima[bucket], found) if bucket in maxima else found
        return [(bucket, *found.tolist()) for bucket, found in sorted(maxima.items())]

    def _mean_per_host_and_hour(self, kind: DevopsQuery, hosts: np.ndarray, window: Window) -> list[tuple]:
        sums: dict[int, np.ndarray] = {}
        counts: dict[int, int] = {}
        for times, values in self._blocks(hosts, window.start_ms, window.end_ms, kind.metrics):
            for hour, rows in _runs(times - times % HOUR_MS):
                total = values[rows].sum(axis=0)  # (hosts, fields): whole numbers, exact
                sums[hour] = sums[hour] + total if hour in sums else total
                counts[hour] = counts.get(hour, 0) + (rows.stop - rows.start)
        return [(hour, f"host_{host}", *(sums[hour][h] / counts[hour]).tolist()) for hour in sorted(sums) for h, host in enumerate(hosts.tolist())]

    def _high_cpu(self, kind: DevopsQuery, hosts: np.ndarray, window: Window) -> list[tuple]:
        rows = []
        for times, values in self._blocks(hosts, window.start_ms, window.end_ms, len(CPU_FIELDS)):
            step, host = np.nonzero(values[:, :, 0] > HIGH_CPU_THRESHOLD)
            rows += [(time, f"host_{name}", *found) for time, name, found in zip(times[step].tolist(), hosts[host].tolist(), values[step, host].tolist())]
        return rows

    def _last_points(self, kind: DevopsQuery, hosts: np.ndarray, window: Window) -> list[tuple]:
        last = self.data.steps - 1
        if last < 0:
            return []
        [(_, [values])] = self.values.blocks(hosts, range(last, last + 1))
        time = int(self.data.time_of(last))
        return [(f"host_{host}", time, *found) for host, found in zip(hosts.tolist(), values[0].tolist())]

    def _latest_minutes(self, kind: DevopsQuery, hosts: np.ndarray, window: Window) -> list[tuple]:
        """The max of usage_user per minute over every row before the window's end, the latest minutes."""
        before = self.data.steps_between(self.data.start_ms, window.end_ms)
        # The latest steps that can fall into the latest minutes with rows: a minute holds at least one.
        latest = before[-LATEST_MINUTES * (MINUTE_MS // self.data.interval_ms + 1):]
        minutes = np.unique(self.data.time_of(np.array(latest, dtype=np.int64)) // MINUTE_MS * MINUTE_MS)[-LATEST_MINUTES:]
        if not len(minutes):
            return []
        return self._max_per_bucket(DevopsQuery("", "single-groupby", metrics=1), hosts, Window(int(minutes[0]), window.end_ms))

    def _blocks(self, hosts: np.ndarray, start_ms: int, end_ms: int, fields: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(times (steps,), values (steps, hosts, fields)) of the rows in [start_ms, end_ms), block by block."""
        for steps, [values] in self.values.blocks(hosts, self.data.steps_between(start_ms, end_ms)):
            yield self.data.time_of(np.arange(steps.start, steps.stop, dtype=np.int64)), values[:, :, :fields]


def _runs(keys: np.ndarray) -> Iterator[tuple[int, slice]]:
    """(key, rows) of each run of equal keys in a non-decreasing array."""
    edges = np.flatnonzero(np.diff(keys)) + 1
    starts = np.concatenate([[0], edges])
    ends = np.concatenate([edges, [len(keys)]])
    for start, end in zip(starts.tolist(), ends.tolist()):
        yield int(keys[start]), slice(start, end)
