"""TSBS's Cassandra layout (its pkg/targets/cassandra/): one table per value type, a partition per
series and day, a row per point. TSBS's cpu values are whole numbers (int64), so the cpu-only data is
all in `series_bigint`:

    CREATE TABLE series_bigint (series_id text, time timestamp, value bigint, PRIMARY KEY (series_id, time))

`series_id` is TSBS's: the measurement and the host's ten tags, the field, the UTC day
(`cpu,hostname=host_0,region=eu-west-1,...,service_environment=test#usage_user#2016-01-01`). Two
departures, both for CQL's sake: TSBS's `timestamp_ns bigint` is a CQL `timestamp` (milliseconds, the
tool's times), which CQL groups by `floor(time, 1m)` on the server; and no `WITH COMPACT STORAGE`,
deprecated since Cassandra 4.0 (its `compact_tables_enabled` guardrail may forbid it) and invisible
to CQL. The other four tables of TSBS (float,
double, boolean, blob) would stay empty with this data and are not made.

A query finds its partitions as TSBS's query runner does, from a client-side index of the series
(`SELECT DISTINCT series_id`): the hosts' tags from their names, the days each host has; a mixed
run's queries, on data still being written, from what the run writes (the seed's hosts, its days).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags

TABLE = "series_bigint"
MEASUREMENT = "cpu"
DAY_MS = 86_400_000
_EPOCH = dt.date(1970, 1, 1)


def create_statement(keyspace: str) -> str:
    return f"CREATE TABLE IF NOT EXISTS {keyspace}.{TABLE} (series_id text, time timestamp, value bigint, PRIMARY KEY (series_id, time))"


def day_name(day: int) -> str:
    """TSBS's bucket of a day (days since the epoch): 2016-01-01."""
    return (_EPOCH + dt.timedelta(days=day)).isoformat()


def days_between(start_ms: int, end_ms: int) -> range:
    """The days (since the epoch) with a millisecond in [start_ms, end_ms)."""
    return range(start_ms // DAY_MS, (end_ms - 1) // DAY_MS + 1) if end_ms > start_ms else range(0)


def series_id(prefix: str, field_name: str, day: int) -> str:
    return f"{prefix}#{field_name}#{day_name(day)}"


class HostPrefixes:
    """The series prefix (measurement and tags) of each host the writer meets, from the seed's tags."""

    def __init__(self, seed: int):
        self.seed = seed
        self._known: dict[int, str] = {}

    def of(self, host: int) -> str:
        if host not in self._known:
            [tags] = host_tags(self.seed, host, 1)
            self._known[host] = prefix_of(tags)
        return self._known[host]


def prefix_of(tags: Iterable[str]) -> str:
    return ",".join([MEASUREMENT, *(f"{name}={value}" for name, value in zip(TAG_NAMES, tags))])


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
            index.prefixes[tags[0]] = prefix_of(tags)
            index.days[tags[0]] = days
        return index

    @classmethod
    def of(cls, series_ids: Iterable[str]) -> SeriesIndex:
        index = cls()
        for name in series_ids:
            prefix, _field, day = name.split("#")
            hostname = prefix.split(",", 2)[1].removeprefix("hostname=")
            index.prefixes[hostname] = prefix
            index.days.setdefault(hostname, set()).add((dt.date.fromisoformat(day) - _EPOCH).days)
        return index

    @property
    def hosts(self) -> list[str]:
        return sorted(self.prefixes)

    def knows(self, hostnames: Iterable[str]) -> bool:
        return all(name in self.prefixes for name in hostnames)
