"""TSBS's Cassandra layout (its pkg/targets/cassandra/): a table per value type, a partition per
series and day, a row per point. TSBS's serializer puts an int64 field's points in `series_bigint` and a
float64 field's in `series_double`; the cpu values are whole numbers, so the cpu-only data is all in
`series_bigint`, and the devops data adds `series_double` for mem's three percentages:

    CREATE TABLE series_bigint (series_id text, time timestamp, value bigint, PRIMARY KEY (series_id, time))
    CREATE TABLE series_double (series_id text, time timestamp, value double, PRIMARY KEY (series_id, time))

`series_id` is TSBS's: the measurement, the host's ten tags and the measurement's own (diskio's
serial, ...) in TSBS's order, the field, the UTC day
(`cpu,hostname=host_0,region=eu-west-1,...,service_environment=test#usage_user#2016-01-01`). IoT's
trucks (tsbs_iot_series.py) the same way: `readings,name=truck_0,fleet=East,...,load_capacity=2000,
fuel_capacity=200,nominal_fuel_consumption=15#velocity#2016-01-01`. Two
departures, both for CQL's sake: TSBS's `timestamp_ns bigint` is a CQL `timestamp` (milliseconds, the
tool's times), which CQL groups by `floor(time, 1m)` on the server; and no `WITH COMPACT STORAGE`,
deprecated since Cassandra 4.0 (its `compact_tables_enabled` guardrail may forbid it) and invisible
to CQL. TSBS's three other tables (float, boolean, blob) would stay empty with this data and are not made.
TSBS's serializer takes only string tags and no null ones (it panics on IoT's capacities and null
tags): here a capacity is written as its shortest text (`2000`), a null tag is left out of its row's
series id, as TSBS's influx serializer leaves it out of the line (the row is then in a series of its
own), and a null field is no point at all.

A query finds its partitions as TSBS's query runner does, from a client-side index of the cpu series
(`SELECT DISTINCT series_id`): the hosts' tags from their names, the days each host has; a mixed
run's queries, on data still being written, from what the run writes (the seed's hosts, its days).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import UseCase

TABLE = "series_bigint"  # the integers' table, where the cpu series are
DOUBLES = "series_double"
MEASUREMENT = "cpu"  # what the DevOps query types read
DAY_MS = 86_400_000
_EPOCH = dt.date(1970, 1, 1)


def table_of(integer: bool) -> str:
    """The table of a field's points: TSBS's series_bigint for an int64 field, series_double for a float64."""
    return TABLE if integer else DOUBLES


def tables_of(use_case: UseCase) -> list[str]:
    """The tables a use case's fields fill, integers' first."""
    kinds = {integer for measurement in use_case.measurements for integer in measurement.integer_fields}
    return [table_of(integer) for integer in sorted(kinds, reverse=True)]


def create_statement(keyspace: str, table: str) -> str:
    kind = "bigint" if table == TABLE else "double"
    return f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (series_id text, time timestamp, value {kind}, PRIMARY KEY (series_id, time))"


def day_name(day: int) -> str:
    """TSBS's bucket of a day (days since the epoch): 2016-01-01."""
    return (_EPOCH + dt.timedelta(days=day)).isoformat()


def days_between(start_ms: int, end_ms: int) -> range:
    """The days (since the epoch) with a millisecond in [start_ms, end_ms)."""
    return range(start_ms // DAY_MS, (end_ms - 1) // DAY_MS + 1) if end_ms > start_ms else range(0)


def series_id(prefix: str, field_name: str, day: int) -> str:
    return f"{prefix}#{field_name}#{day_name(day)}"


def day_of(name: str) -> int:
    """The day (since the epoch) of TSBS's bucket name."""
    return (dt.date.fromisoformat(name) - _EPOCH).days


def measurement_and_field(name: str) -> str:
    """`cpu#usage_user` of a series id."""
    prefix, field_name, _day = name.split("#")
    return f"{prefix.split(',', 1)[0]}#{field_name}"


class SeriesPrefixes:
    """The series prefix (measurement, the entity's tags, the measurement's own) of each measurement,
    entity and null tag (-1: none) the writer meets, from the seed's tags."""

    def __init__(self, seed: int, use_case: UseCase):
        self.seed, self.use_case = seed, use_case
        self._known: dict[tuple[int, int, int], str] = {}

    def of(self, measurement: int, host: int, null_tag: int = -1) -> str:
        key = (measurement, host, null_tag)
        if key not in self._known:
            [tags] = self.use_case.tag_rows(self.seed, host, 1)
            one = self.use_case.measurements[measurement]
            own = [(name, values[0]) for name, values in one.tag_values(self.seed, np.array([host])).items()]
            named = [(name, value) for position, ((name, _), value) in enumerate(zip(self.use_case.tags, tags)) if position != null_tag]
            self._known[key] = prefix_of(named, one.name, own)
        return self._known[key]


def prefix_of(tags: Iterable[tuple[str, Any]], measurement: str = MEASUREMENT, own: Iterable[tuple[str, str]] = ()) -> str:
    """`measurement,name=value,...`; a number as its shortest text (IoT's capacities: 2000)."""
    return ",".join([measurement, *(f"{name}={value if isinstance(value, str) else format(value, 'g')}" for name, value in [*tags, *own])])


@dataclass
class SeriesIndex:
    """What the stored series say (TSBS's ClientSideIndex): each host's prefix and the days it has data."""

    prefixes: dict[str, str] = field(default_factory=dict)  # hostname -> prefix
    days: dict[str, set[int]] = field(default_factory=dict)  # hostname -> days with at least one partition

    @classmethod
    def planned(cls, seed: int, hosts: int, start_ms: int, end_ms: int) -> SeriesIndex:
        """The series a run writes, before it has written them: the seed's hosts, every day of its time range."""
        index = cls()
        days = set(days_between(start_ms, end_ms))
        for tags in host_tags(seed, 0, hosts):
            index.prefixes[tags[0]] = prefix_of(zip(TAG_NAMES, tags))
            index.days[tags[0]] = days
        return index

    @classmethod
    def of(cls, series_ids: Iterable[str]) -> SeriesIndex:
        """The index of the cpu series among these (devops data has eight more measurements' in the table)."""
        index = cls()
        for name in series_ids:
            prefix, _field, day = name.split("#")
            if not prefix.startswith(f"{MEASUREMENT},"):
                continue
            hostname = prefix.split(",", 2)[1].removeprefix("hostname=")
            index.prefixes[hostname] = prefix
            index.days.setdefault(hostname, set()).add(day_of(day))
        return index

    @property
    def hosts(self) -> list[str]:
        return sorted(self.prefixes)

    def knows(self, hostnames: Iterable[str]) -> bool:
        return all(name in self.prefixes for name in hostnames)
