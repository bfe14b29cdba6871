"""TSBS's clickhouse target in the clickhouse module: its tables, its rows and its DevOps queries
(its IoT queries are tsbs_iot.py's).

The layout is TSBS's loader's (pkg/targets/clickhouse/creator.go): a `tags` table (id and the
entity's tags: the hosts' ten as Nullable(String); the trucks' eight, their capacities
Nullable(Float32) as TSBS's serializer types them) and a table per measurement (`cpu`; devops'
nine: cpu, diskio, disk, ...; IoT's readings and diagnostics) of
`created_date` Date, `created_at` (the row's time), `time` (the same as text), `tags_id` UInt32, the
measurement's fields as Nullable(Float64) and `additional_tags` (the measurement's own tags as TSBS's
loader writes them, `{"serial": "..."}`, else ''); all plain MergeTrees partitioned by month of
created_date, the measurements sorted by (tags_id, created_at): TSBS's `MergeTree(created_date,
(tags_id, created_at), 8192)` in today's syntax. A plain MergeTree keeps every row it is given: no
ReplacingMergeTree, whose background merges would make an answer depend on when it is asked. Where
TSBS has DateTime (seconds) for created_at, the module keeps milliseconds as for its other shapes:
DateTime64(3, 'UTC') on servers that have it, Int64 epoch milliseconds before 20.1 (ServerDialect), so
any --interval is stored exactly; created_date is the UTC day, computed by the server (TSBS's loader
sends it). IoT's null fields are NULL; a row whose name TSBS nulled has tags_id 0, which no tags row
has (TSBS's loader would give all such rows one tags row of a NULL name, which its queries leave out).

The queries are TSBS's clickhouse generator's (cmd/tsbs_generate_queries/databases/clickhouse/
devops.go, with tags, its default) with times selected as epoch milliseconds, and the windows'
bounds to the millisecond (TSBS's text has whole seconds); high-cpu selects the columns the check
reads rather than `*`; and its `ANY INNER JOIN` with tags is `INNER JOIN`: since ClickHouse 20 ANY
INNER JOIN keeps one row per key of either side, which cuts double-groupby's answer to one row per
host (the tags table holds one row per id: the module adds only the hosts it lacks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.queries.parameters import Parameters, Window, iso_ms
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, LATEST_MINUTES, DevopsQuery
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.shapes import Column, Layout
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import host_name

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.clickhouse.dialect import ServerDialect

TAGS = "tags"
# The tags' column types, by the use case's kinds (TSBS's serializedTypeToClickHouseType of its string and float32).
_TAG_TYPES = {"text": "Nullable(String)", "float": "Nullable(Float32)"}


class TsbsTables:
    """TSBS's tables in one database: their statements in a server's dialect and the rows sent."""

    def __init__(self, database: str, layouts: dict[str, Layout]):
        """`layouts`: each measurement's (simulator/workload/shapes.py's table_layouts), cpu first where there is one."""
        self.tags = f"{database}.{TAGS}"
        self.measurements = {name: f"{database}.{name}" for name in layouts}
        self.cpu = self.measurements.get("cpu", "")  # what the DevOps types read
        self.fields = _fields(layouts["cpu"]) if "cpu" in layouts else ()
        self.use_case = USE_CASES[next(iter(layouts.values())).shape]
        self._layouts = layouts

    def create_statements(self, dialect: ServerDialect) -> list[str]:
        time_type, day = ("DateTime64(3, 'UTC')", "toDate(created_at)") if dialect.datetime64 else (
            "Int64", "toDate(toDateTime(intDiv(created_at, 1000), 'UTC'))")
        tags = ", ".join(f"{name} {_TAG_TYPES[kind]}" for name, kind in self.use_case.tags)

        def measurement(table: str, layout: Layout) -> str:
            fields = ", ".join(f"{name} Nullable(Float64)" for name in _fields(layout))
            return (f"CREATE TABLE IF NOT EXISTS {table} (created_date Date DEFAULT {day}, created_at {time_type}, time String, tags_id UInt32, "
                    f"{fields}, additional_tags String DEFAULT '') ENGINE = MergeTree() PARTITION BY toYYYYMM(created_date) "
                    "ORDER BY (tags_id, created_at) SETTINGS index_granularity = 8192")

        return [f"CREATE TABLE IF NOT EXISTS {self.tags} (created_date Date DEFAULT today(), created_at DateTime DEFAULT now(), id UInt32, {tags}) "
                "ENGINE = MergeTree() PARTITION BY toYYYYMM(created_date) ORDER BY (id)",
                *(measurement(self.measurements[name], layout) for name, layout in self._layouts.items())]

    def tag_insert(self, seed: int, ids: Sequence[int]) -> tuple[str, list[np.ndarray]]:
        """The INSERT of these hosts' or trucks' tags (entity i has id i + 1), as columns."""
        every = self.use_case.tag_rows(seed, 0, max(ids, default=0))
        rows = [every[entity_id - 1] for entity_id in ids]
        columns = [np.array(ids, dtype=np.uint32), *(np.array([row[index] for row in rows], dtype=object if kind == "text" else np.float32)
                                                     for index, (_, kind) in enumerate(self.use_case.tags))]
        return f"INSERT INTO {self.tags} (id, {', '.join(name for name, _ in self.use_case.tags)}) VALUES", columns

    def row_insert(self, measurement: str) -> str:
        """The INSERT of a measurement's rows (row_columns' columns)."""
        layout = self._layouts[measurement]
        own_tags = ", additional_tags" if layout.has("json") else ""
        return f"INSERT INTO {self.measurements[measurement]} (created_at, time, tags_id, {', '.join(_fields(layout))}{own_tags}) VALUES"

    def row_columns(self, measurement: str, batch: EventBatch) -> list[np.ndarray]:
        """A batch of a measurement's rows as the INSERT's columns: the time as epoch ms (DateTime64(3)'s
        raw ticks), as text ('2016-01-01 00:00:10.000 +0000', TSBS's `time`), tags_id, the fields, and
        the measurement's own tags (JSON) where it has them."""
        values = [_column(column, batch) for column in self._layouts[measurement].columns]  # time, tags_id, the fields, the JSON
        text = np.concatenate([text_rows.datetimes(batch.timestamp_ms), np.broadcast_to(text_rows.constant(" +0000"), (len(batch), 6))], axis=1)
        return [values[0], np.ascontiguousarray(text).view(f"S{text.shape[1]}").ravel(), *values[1:]]

    def devops(self, query: DevopsQuery, parameters: Parameters, dialect: ServerDialect) -> tuple[str, Callable[[Sequence[Any]], list[tuple[Any, ...]]] | None]:
        """The statement of one execution, and the conversion of its rows to the common form (None: they
        are in it, times selected as epoch ms)."""
        window: Window = parameters["window"] if query.window_ms else Window(0, 0)  # lastpoint has none
        cpu, tags, at, bucket, ms = self.cpu, self.tags, literal(dialect), _bucket(dialect), dialect.as_ms
        hosts = "tags_id IN (SELECT id FROM {} WHERE hostname IN ({}))".format(tags, ",".join(f"'{name}'" for name in parameters["hosts"])) if query.hosts else ""
        between = f"(created_at >= {at(window.start_ms)}) AND (created_at < {at(window.end_ms)})"
        family = query.family
        if family in ("single-groupby", "cpu-max-all"):
            unit, seconds = ("minute", 60) if family == "single-groupby" else ("hour", 3600)
            maxima = ", ".join(f"max({name}) AS max_{name}" for name in query.fields)
            return (f"SELECT {bucket(seconds)} AS {unit}, {maxima} FROM {cpu} WHERE {hosts} AND {between} GROUP BY {unit} ORDER BY {unit} ASC",
                    None)
        if family == "double-groupby":
            means = ", ".join(f"avg({name}) AS mean_{name}" for name in query.fields)
            return (f"SELECT hour, hostname, {', '.join(f'mean_{name}' for name in query.fields)} FROM (SELECT {bucket(3600)} AS hour, "
                    f"tags_id AS id, {means} FROM {cpu} WHERE {between} GROUP BY hour, id) AS cpu_avg INNER JOIN {tags} USING (id) "
                    "ORDER BY hour ASC, hostname"), None
        if family == "high-cpu":
            return (f"SELECT {ms('created_at')}, tags_id, {', '.join(self.fields)} FROM {cpu} PREWHERE (usage_user > {HIGH_CPU_THRESHOLD:.1f}) "
                    f"AND {between}" + (f" AND ({hosts})" if hosts else ""), _named_hosts)
        if family == "lastpoint":
            fields = ", ".join(f"c.{name}" for name in self.fields)
            return (f"SELECT t.hostname, {ms('c.created_at')}, {fields} FROM (SELECT * FROM {cpu} WHERE (tags_id, created_at) IN "
                    f"(SELECT tags_id, max(created_at) FROM {cpu} GROUP BY tags_id)) AS c INNER JOIN {tags} AS t ON c.tags_id = t.id "
                    "ORDER BY t.hostname ASC, c.time DESC"), None
        return (f"SELECT {bucket(60)} AS minute, max(usage_user) FROM {cpu} WHERE created_at < {at(window.end_ms)} GROUP BY minute "
                f"ORDER BY minute DESC LIMIT {LATEST_MINUTES}"), None

    def answer(self, query: DevopsQuery, parameters: Parameters, dialect: ServerDialect, fetch: Callable[[str], Sequence[Any]]) -> Callable[[], Answer]:
        """The query of one execution: `fetch` runs the rendered statement and returns its rows."""
        statement, convert = self.devops(query, parameters, dialect)
        return lambda: Answer(fetch(statement), convert)


def _column(column: Column, batch: EventBatch) -> np.ndarray:
    """A column of a measurement's rows as the driver takes it: the JSON without the generator's padding
    of spaces, no tags row (IoT's null name) as tags_id 0, a null field as None (the driver writes a
    NumPy NaN as the value NaN)."""
    values = column.values(batch)
    if column.kind == "json":
        unpadded: np.ndarray = np.char.rstrip(values)
        return unpadded
    if column.kind == "reference":
        ids: np.ndarray = np.maximum(values, 0).astype(np.uint32)
        return ids
    if column.nullable and (nulls := column.nulls(batch)).any():
        with_nulls = values.astype(object)
        with_nulls[nulls] = None
        return with_nulls
    return values


def _fields(layout: Layout) -> tuple[str, ...]:
    return tuple(column.name for column in layout.value_columns)


def literal(dialect: ServerDialect) -> Callable[[int], str]:
    """A created_at literal for epoch milliseconds."""
    if not dialect.datetime64:
        return str
    return lambda ms: f"toDateTime64('{iso_ms(ms)[:-1].replace('T', ' ')}', 3, 'UTC')"


def _bucket(dialect: ServerDialect) -> Callable[[int], str]:
    """The epoch milliseconds of created_at's minute or hour (TSBS's toStartOfMinute, toStartOfHour)."""
    if not dialect.datetime64:
        return lambda seconds: f"intDiv(created_at, {seconds * 1000}) * {seconds * 1000}"
    return lambda seconds: f"toUnixTimestamp({'toStartOfMinute' if seconds == 60 else 'toStartOfHour'}(created_at)) * 1000"


def _named_hosts(rows: Sequence[Any]) -> list[tuple[Any, ...]]:
    """(time, tags_id, fields...) rows as (time, host, fields...): host_i has id i + 1."""
    return [(row[0], host_name(int(row[1]) - 1), *row[2:]) for row in rows]
