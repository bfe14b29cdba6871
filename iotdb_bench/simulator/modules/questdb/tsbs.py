"""TSBS's questdb target in the questdb module: its layout, its rows and its DevOps queries (the IoT
queries: tsbs_iot.py).

The layout is what TSBS's loader makes (tsbs_load_questdb writes ILP and lets QuestDB create the
table; its pkg/targets/questdb and the CREATE TABLE left in cmd/tsbs_load_questdb/creator.go): one
table per measurement (`cpu`; devops: nine; iot: readings and diagnostics), the entity's string tags
and the measurement's own as SYMBOL columns (IoT's capacities, which TSBS writes as fields, DOUBLE), the
fields as LONG (TSBS's generator writes its values as int64, `usage_user=58i`; mem's percentages and
IoT's fields but status as float64: DOUBLE), the designated `timestamp`; WAL, partitioned by the module's
`partition_by` (DAY, as TSBS's). Every row carries its entity's tags, as TSBS's ILP lines do; there is
no tags table.

The queries are TSBS's questdb generator's (cmd/tsbs_generate_queries/databases/questdb/devops.go) in
QuestDB 9's SQL, with TSBS's semantics where its QuestDB text differs from the other targets':
cpu-max-all's bucket is the hour's time (TSBS selects `hour(timestamp)`, the hour of the day),
groupby-orderby-limit takes the 5 latest minutes (TSBS's `SAMPLE BY 1m LIMIT 5` takes the earliest),
lastpoint is `LATEST ON ... PARTITION BY` (TSBS's `latest by` is the syntax QuestDB 6 dropped), and
`SAMPLE BY ... ALIGN TO CALENDAR` (QuestDB's default since 7.4) says that buckets are whole UTC
minutes and hours, not minutes from the first row found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer, Rows, epoch_ms, with_times
from iotdb_bench.simulator.modules.questdb.ilp import NANOS_PER_MS
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, LATEST_MINUTES, DevopsQuery
from iotdb_bench.simulator.wire.tsbs_lines import TsbsLines
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.shapes import Column, Layout
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags

if TYPE_CHECKING:
    import pandas as pd

TABLE = "cpu"
QueryType = TypeVar("QueryType")
# A type's statement for one execution and the conversion of its rows to the common form.
Render = Callable[[QueryType, Parameters, Callable[[int], str]], tuple[str, Callable[[Sequence[Any]], list[tuple[Any, ...]]]]]


def create_table(shape: str, table: str, partition_by: str, dedup: bool) -> str:
    """A measurement's table as TSBS's lines make QuestDB create it: the entity's string tags and the
    measurement's own (SYMBOL), the tags TSBS writes as fields (IoT's capacities: DOUBLE), the fields
    (LONG, or DOUBLE where TSBS writes doubles), the designated timestamp. With dedup (the DevOps shapes),
    a row written again for the same host and time replaces the stored one."""
    use_case = USE_CASES[shape]
    measurement = use_case.measurement(table)
    tags = [(name, "SYMBOL" if kind == "text" else "DOUBLE") for name, kind in use_case.tags]
    tags += [(name, "SYMBOL") for name, _ in measurement.own_tags]
    columns = [f"{name} {kind}" for name, kind in tags] + [f"{name} {'LONG' if integer else 'DOUBLE'}"
                                                          for name, integer in zip(measurement.field_names, measurement.integer_fields)]
    statement = f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(columns)}, timestamp TIMESTAMP) TIMESTAMP(timestamp) PARTITION BY {partition_by} WAL"
    return statement + (" DEDUP UPSERT KEYS(timestamp, hostname)" if dedup else "")


def fields(layout: Layout) -> list[Column]:
    """The layout's measured columns (TSBS's fields), in order."""
    return list(layout.value_columns)


class TsbsRows:
    """One run's TSBS cpu rows in the client's forms (its lines: lines_of): its row() calls, a
    DataFrame. Every host's tags are known from the seed (simulator/workload/tsbs/hosts.py)."""

    def __init__(self, layout: Layout, seed: int, hosts: int):
        self.fields = fields(layout)
        self.tags = host_tags(seed, 0, hosts)

    def calls(self, batch: EventBatch) -> list[tuple[dict[str, str], dict[str, int], int]]:
        """(symbols, columns, epoch ms) of each row, for the client's row()."""
        values = list(zip(*(self._integers(column, batch).tolist() for column in self.fields)))
        names = [column.name for column in self.fields]
        return [(dict(zip(TAG_NAMES, self.tags[host])), dict(zip(names, row)), ms)
                for host, row, ms in zip(_hosts(batch).tolist(), values, batch.timestamp_ms.tolist())]

    def frame(self, batch: EventBatch) -> pd.DataFrame:
        """The rows as a DataFrame the client's DataFrame path reads without pyarrow (tags as object
        strings, fields int64, a naive datetime64[ns] `timestamp` in UTC)."""
        import pandas as pd

        tags = np.array(self.tags, dtype=object)[_hosts(batch)]
        columns: dict[str, Any] = {name: tags[:, index] for index, name in enumerate(TAG_NAMES)}
        columns.update({column.name: self._integers(column, batch) for column in self.fields})
        columns["timestamp"] = batch.timestamp_ms.astype("datetime64[ms]").astype("datetime64[ns]")
        return pd.DataFrame(columns, copy=False)

    @staticmethod
    def _integers(column: Column, batch: EventBatch) -> np.ndarray:
        """A field's whole numbers as the int64 TSBS writes (the generator holds them as float64)."""
        return np.asarray(column.values(batch)).astype(np.int64)


def lines_of(shape: str, seed: int, hosts: int) -> TsbsLines:
    """TSBS's rows as its questdb serializer writes them (pkg/targets/questdb/serializer.go): as its influx
    serializer, `cpu,<the host's ten tags> usage_user=58i,... <ns>` (devops: `diskio,<tags>,serial=... reads=12i,...`;
    iot: `readings,name=truck_0,<its four other tags> load_capacity=1500,...,latitude=82.70029,... <ns>`, a null
    tag or field left out), the times in nanoseconds."""
    return TsbsLines(USE_CASES[shape], seed, hosts, NANOS_PER_MS)


def _hosts(batch: EventBatch) -> np.ndarray:
    """The global host index of each row (TSBS's generator sets it)."""
    if batch.host is None:
        raise ValueError("a batch of TSBS's rows without its hosts")
    return batch.host


def devops(query: DevopsQuery, parameters: Parameters, literal: Callable[[int], str]) -> tuple[str, Callable[[Sequence[Any]], list[tuple[Any, ...]]]]:
    """The statement of one execution, and the conversion of its rows to the common form."""
    window: Window = parameters["window"] if query.window_ms else Window(0, 0)  # lastpoint has none
    hosts = "hostname IN ({})".format(", ".join(f"'{name}'" for name in parameters["hosts"])) if query.hosts else ""
    between = f"timestamp >= {literal(window.start_ms)} AND timestamp < {literal(window.end_ms)}"
    family = query.family
    if family in ("single-groupby", "cpu-max-all"):
        unit, every = ("minute", "1m") if family == "single-groupby" else ("hour", "1h")
        maxima = ", ".join(f"max({name}) AS max_{name}" for name in query.fields)
        return (f"SELECT timestamp AS {unit}, {maxima} FROM {TABLE} WHERE {hosts} AND {between} "
                f"SAMPLE BY {every} ALIGN TO CALENDAR ORDER BY {unit}"), with_times(0)
    if family == "double-groupby":
        means = ", ".join(f"avg({name}) AS mean_{name}" for name in query.fields)
        return (f"SELECT timestamp AS hour, hostname, {means} FROM {TABLE} WHERE {between} SAMPLE BY 1h ALIGN TO CALENDAR "
                "ORDER BY hour, hostname"), with_times(0)
    if family == "high-cpu":
        return (f"SELECT * FROM {TABLE} WHERE usage_user > {HIGH_CPU_THRESHOLD:.1f}" + (f" AND {hosts}" if hosts else "") + f" AND {between}",
                _high_cpu_rows)
    if family == "lastpoint":
        return f"SELECT * FROM {TABLE} LATEST ON timestamp PARTITION BY hostname", _last_points
    return (f"SELECT timestamp AS minute, max(usage_user) AS max_usage_user FROM {TABLE} WHERE timestamp < {literal(window.end_ms)} "
            f"SAMPLE BY 1m ALIGN TO CALENDAR ORDER BY minute DESC LIMIT {LATEST_MINUTES}"), with_times(0)


def answer(render: Render[QueryType], query: QueryType, parameters: Parameters, literal: Callable[[int], str],
           fetch: Callable[[str], Rows]) -> Callable[[], Answer]:
    """The query of one execution: `render` (devops, or tsbs_iot.py's iot) makes its statement, `fetch` runs it and returns its rows."""
    statement, convert = render(query, parameters, literal)
    return lambda: Answer(fetch(statement), convert)


# `SELECT *` rows: the ten tags, the fields, the timestamp (the table's order, create_table's).
_FIELDS_AT = len(TAG_NAMES)


def _high_cpu_rows(rows: Sequence[Any]) -> list[tuple[Any, ...]]:
    """(time, host, fields...) of each row."""
    return [(epoch_ms(row[-1]), row[0], *row[_FIELDS_AT:-1]) for row in rows]


def _last_points(rows: Sequence[Any]) -> list[tuple[Any, ...]]:
    """(host, time, fields...) of each host's newest row."""
    return [(row[0], epoch_ms(row[-1]), *row[_FIELDS_AT:-1]) for row in rows]
