"""TSBS's DevOps query types in IoTDB's SQL (tree model), as the IoTDB target of benchANT's TSBS fork
writes them (cmd/tsbs_generate_queries/databases/iotdb/devops.go; the TSBS of ../shared/vendor/tsbs has
no IoTDB target), made exact, and their answers in the common form of simulator/queries/tsbs_devops.py.

The layout is that target's: a device per host under a `cpu` node, here root.<database>.cpu.host_<i>
(its root.cpu.host_<i> with the module's database in between), the fields as INT32, times in ms.
- single-groupby and cpu-max-all: `SELECT max_value(...) FROM <the hosts' devices> GROUP BY
  ([start, end), 1m or 1h), LEVEL = 2` (the target's cpu-max-all; its single-groupby calls the session's
  aggregation API per series instead). GROUP BY's buckets start at its range's start, so the range
  starts and ends on the epoch's minutes or hours and `WHERE time >= ... AND time < ...` bounds the
  rows by the window: the SQL targets' buckets. IoTDB 2.0.1 repeats the merged column once per
  device of the FROM clause; the conversion reads the first.
- double-groupby: the target's `SELECT avg(...) FROM root.<database>.cpu.* GROUP BY ([...), 1h)`, aligned
  the same way, `ALIGN BY DEVICE` (a row per host and hour, not a column per host).
- high-cpu: the target's `SELECT * ... WHERE usage_user > 90 AND time ... ALIGN BY DEVICE`.
- lastpoint: the target's `SELECT LAST * FROM root.<database>.cpu.*`: every series' latest point (IoTDB's
  last cache), a row per host and field, made one row per host.
- groupby-orderby-limit: the target's `GROUP BY ([end - 5 min, end), 1m), LEVEL = 2 ORDER BY TIME DESC
  LIMIT 5` starts its buckets five minutes before a random end, not on minutes; here the buckets are
  the epoch's minutes from the window's start (an hour before its end) and `HAVING` drops the empty ones:
  the five latest minutes with rows, when that hour holds five (TSBS's data: a row every 10 s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, HOUR_MS, LATEST_MINUTES, MINUTE_MS, DevopsQuery
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

Row = tuple[Any, ...]
LEVEL = 2  # root.<database>.cpu: GROUP BY LEVEL merges every host's series of a field into one


def statement(query: DevopsQuery, parameters: Parameters, database: str) -> str:
    """The SQL of one execution."""
    window: Window = parameters["window"] if query.window_ms else Window(0, 0)  # lastpoint has none
    hosts = ", ".join(f"root.{database}.cpu.{name}" for name in parameters["hosts"]) if query.hosts else f"root.{database}.cpu.*"
    between = f"time >= {window.start_ms} AND time < {window.end_ms}"
    family = query.family
    if family in ("single-groupby", "cpu-max-all", "double-groupby"):
        bucket = MINUTE_MS if family == "single-groupby" else HOUR_MS
        function, merged = ("avg", " ALIGN BY DEVICE") if family == "double-groupby" else ("max_value", f", LEVEL = {LEVEL}")
        aggregates = ", ".join(f"{function}({name})" for name in query.fields)
        return f"SELECT {aggregates} FROM {hosts} WHERE {between} GROUP BY ({_range(window, bucket)}, {'1m' if bucket == MINUTE_MS else '1h'}){merged}"
    if family == "high-cpu":
        return f"SELECT * FROM {hosts} WHERE usage_user > {HIGH_CPU_THRESHOLD:g} AND {between} ALIGN BY DEVICE"
    if family == "lastpoint":
        return f"SELECT LAST * FROM {hosts}"
    return (f"SELECT max_value(usage_user) FROM {hosts} WHERE time < {window.end_ms} GROUP BY ({_range(window, MINUTE_MS)}, 1m), "
            f"LEVEL = {LEVEL} HAVING max_value(usage_user) IS NOT NULL ORDER BY TIME DESC LIMIT {LATEST_MINUTES}")


def _range(window: Window, bucket: int) -> str:
    """GROUP BY's time range: the window widened to whole buckets of the epoch."""
    return f"[{window.start_ms - window.start_ms % bucket}, {-(-window.end_ms // bucket) * bucket})"


def conversion(query: DevopsQuery) -> Callable[[Sequence[Any]], list[Row]]:
    """How an answer, (column names, rows) as IotdbConnection.fetch_named gives it, becomes the common form's rows."""
    family = query.family
    if family in ("single-groupby", "cpu-max-all", "groupby-orderby-limit"):
        return _buckets
    if family == "double-groupby":
        return lambda answer: [(int(time), _host(device), *values) for time, device, *values in answer[1] if _any(values)]
    if family == "high-cpu":
        return _high_rows
    return lambda answer: _newest_per_host(answer[1])


def _buckets(answer: Sequence[Any]) -> list[Row]:
    """GROUP BY LEVEL rows (bucket, merged aggregates...), each merged column once, the empty buckets left out."""
    columns, rows = answer
    first = [columns.index(name) for name in dict.fromkeys(columns[1:])]
    return [(int(row[0]), *values) for row in rows if _any(values := [row[i] for i in first])]


def _high_rows(answer: Sequence[Any]) -> list[Row]:
    """ALIGN BY DEVICE rows (time, device, the fields by name) as (time, host, fields...)."""
    columns, rows = answer
    at = [columns.index(name) for name in CPU_FIELDS]
    return [(int(row[0]), _host(row[1]), *(row[i] for i in at)) for row in rows]


def _newest_per_host(rows: Sequence[list[Any]]) -> list[Row]:
    """SELECT LAST rows (time, series path, value as text, type), a row per host and field, as (host, time, fields...):
    the host's time is its newest field's."""
    hosts: dict[str, tuple[int, dict[str, float | int]]] = {}
    for time, path, value, kind in rows:
        device, field = path.rsplit(".", 1)
        newest, fields = hosts.get(_host(device), (int(time), {}))
        fields[field] = int(value) if kind in ("INT32", "INT64") else float(value)
        hosts[_host(device)] = (max(newest, int(time)), fields)
    return [(host, newest, *(fields.get(name) for name in CPU_FIELDS)) for host, (newest, fields) in sorted(hosts.items())]


def _host(device: str) -> str:
    return device.rsplit(".", 1)[-1].strip("`")


def _any(values: Sequence[Any]) -> bool:
    """Whether a bucket holds rows: its aggregates are not all null (None, NaN or pandas' NA)."""
    import pandas as pd

    return not all(pd.isna(value) for value in values)
