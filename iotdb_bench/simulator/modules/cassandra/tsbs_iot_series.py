"""TSBS's IoT data in TSBS's Cassandra layout (tsbs_series.py): a partition per measurement, truck tags,
field and day, `readings,name=truck_0,fleet=East,driver=Derek,model=F-150,device_version=v1.0,
load_capacity=2000,fuel_capacity=200,nominal_fuel_consumption=15#velocity#2016-01-01`.

A truck's points are in several series of a field and day: its full prefix, and one without each tag
that TSBS nulls in some rows (a row with a null fleet is in `readings,name=truck_0,driver=...`). A row
without its name is tied to no truck, as TSBS's other targets tie it: no query reads it. The series
index (TSBS's client-side index: `SELECT DISTINCT series_id`) holds, per truck, its tags (each prefix
lacks at most one, their union has all eight) and, per field, its series and their days.

A row is a point in each of its fields' series, and TSBS nulls at most one field of a row: the rows
of a measurement are the times of any two of its fields together, which is how they are counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iotdb_bench.simulator.modules.cassandra.tsbs_series import DOUBLES, TABLE, SeriesPrefixes, day_of, days_between, series_id, table_of
from iotdb_bench.simulator.workload.tsbs.iot import IOT

TABLES = (TABLE, DOUBLES)  # status is TSBS's one int64 field
FIELD_TABLES = {name: table_of(integer) for one in IOT.measurements for name, integer in zip(one.field_names, one.integer_fields)}
# Two fields of each measurement: every row has a point in at least one of them.
ROW_FIELDS = {one.name: one.field_names[:2] for one in IOT.measurements}
GROUP = 256  # partitions' points held at once while counting


@dataclass
class IotIndex:
    """What the stored series say: each named truck's tags (text, as in its series ids) and its series per field."""

    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    series: dict[tuple[str, str], list[tuple[str, int]]] = field(default_factory=dict)  # (truck, field) -> (series id, day)

    @classmethod
    def of(cls, series_ids: Iterable[str]) -> IotIndex:
        index = cls()
        for name in series_ids:
            prefix, field_name, day = name.split("#")
            tags = dict(pair.split("=", 1) for pair in prefix.split(",")[1:])
            if "name" in tags:  # a nameless row's series: no truck's
                index.tags.setdefault(tags["name"], {}).update(tags)
                index.series.setdefault((tags["name"], field_name), []).append((name, day_of(day)))
        return index

    @classmethod
    def planned(cls, seed: int, trucks: int, start_ms: int, end_ms: int) -> IotIndex:
        """The series a run writes, before it has written them: every truck's full prefix and those without
        one of its tags but the name, every day of the time range (a series never written reads as empty)."""
        prefixes, days, ids = SeriesPrefixes(seed, IOT), days_between(start_ms, end_ms), []
        for truck in range(trucks):
            for measurement, one in enumerate(IOT.measurements):
                for null_tag in (-1, *range(1, len(IOT.tags))):  # 0, the name: a nameless row is no truck's
                    prefix = prefixes.of(measurement, truck, null_tag)
                    ids += [series_id(prefix, name, day) for name in one.field_names for day in days]
        return cls.of(ids)

    @property
    def trucks(self) -> list[str]:
        return sorted(self.tags)

    def knows(self, trucks: Iterable[str]) -> bool:
        return all(truck in self.tags for truck in trucks)

    def of_fleet(self, fleet: str) -> list[str]:
        return [truck for truck in self.trucks if self.tags[truck].get("fleet") == fleet]

    def partitions(self, truck: str, field_name: str, days: range | None = None) -> list[tuple[str, int]]:
        """The truck's series of a field (those of these days), with their days."""
        return [(name, day) for name, day in self.series.get((truck, field_name), []) if days is None or day in days]


def count_rows(session: Any, keyspace: str, consistency: Any, timeout: float) -> int:
    """The rows stored: per measurement prefix and day, the times of its two first fields together
    (nameless rows too: they were written), a GROUP of partitions at a time."""
    from cassandra.concurrent import execute_concurrent
    from cassandra.query import SimpleStatement

    pairs: dict[tuple[str, str], list[str]] = defaultdict(list)  # (prefix, day) -> its series of ROW_FIELDS
    for table in TABLES:
        listing = SimpleStatement(f"SELECT DISTINCT series_id FROM {keyspace}.{table}", consistency_level=consistency, fetch_size=5000)
        for (name,) in session.execute(listing, timeout=timeout):
            prefix, field_name, day = name.split("#")
            if field_name in ROW_FIELDS.get(prefix.split(",", 1)[0], ()):  # an IoT measurement's two first fields
                pairs[(prefix, day)].append(name)
    times = {table: session.prepare(f"SELECT toUnixTimestamp(time) FROM {keyspace}.{table} WHERE series_id = ?") for table in TABLES}
    for statement in times.values():
        statement.consistency_level = consistency
    total = 0
    for group in _chunks(list(pairs.values()), GROUP):
        requests = [(times[FIELD_TABLES[name.split("#")[1]]], (name,)) for names in group for name in names]
        results = iter(execute_concurrent(session, requests, concurrency=32, raise_on_first_error=True))
        for names in group:
            parts = [np.fromiter((row[0] for row in next(results)[1]), dtype=np.int64) for _ in names]
            total += len(np.unique(np.concatenate(parts)))
    return total


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for first in range(0, len(items), size):
        yield items[first : first + size]
