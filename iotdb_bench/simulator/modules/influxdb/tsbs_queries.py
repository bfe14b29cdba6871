"""TSBS's DevOps query types in InfluxQL, as TSBS's influx target writes them
(cmd/tsbs_generate_queries/databases/influx/devops.go), and their answers in the common form of
simulator/queries/tsbs_devops.py.

The texts are TSBS's, with the window's times in milliseconds (TSBS writes whole seconds) and one
change: groupby-orderby-limit. TSBS's text, `SELECT max(usage_user) from cpu WHERE time < '...'
group by time(1m) limit 5`, returns the *first* five minutes of the data (InfluxQL orders buckets by
time ascending, and without a lower bound they start at the oldest point), not the five latest ones
its other targets return; the tool adds `ORDER BY time DESC` and `fill(none)` (a minute without rows
is no bucket, as in SQL). `GROUP BY time(...)` elsewhere fills empty buckets with nulls, which the
conversion leaves out (SQL has no such rows). Answers come back with `epoch=ms`: times are epoch
milliseconds; the fields are integers (TSBS's influx data), means are floats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.queries.parameters import Parameters, Window, iso_ms
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, LATEST_MINUTES, DevopsQuery
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

Series = dict[str, Any]  # one series of an InfluxQL answer: name, tags, columns, values
Row = tuple[Any, ...]


def statement(query: DevopsQuery, parameters: Parameters) -> str:
    """The InfluxQL of one execution."""
    window: Window = parameters["window"] if query.window_ms else Window(0, 0)  # lastpoint has none
    between = f"time >= '{iso_ms(window.start_ms)}' and time < '{iso_ms(window.end_ms)}'"
    hosts = "(" + " or ".join(f"hostname = '{name}'" for name in parameters["hosts"]) + ")" if query.hosts else ""
    family = query.family
    if family in ("single-groupby", "cpu-max-all"):
        maxima = (", " if family == "single-groupby" else ",").join(f"max({name})" for name in query.fields)
        return f"SELECT {maxima} from cpu where {hosts} and {between} group by time({'1m' if family == 'single-groupby' else '1h'})"
    if family == "double-groupby":
        means = ", ".join(f"mean({name})" for name in query.fields)
        return f"SELECT {means} from cpu where {between} group by time(1h),hostname"
    if family == "high-cpu":
        return f"SELECT * from cpu where usage_user > {HIGH_CPU_THRESHOLD:.1f} {'and ' + hosts if hosts else ''} and {between}"
    if family == "lastpoint":
        return 'SELECT * from cpu group by "hostname" order by time desc limit 1'
    return f"SELECT max(usage_user) from cpu WHERE time < '{iso_ms(window.end_ms)}' group by time(1m) fill(none) ORDER BY time DESC limit {LATEST_MINUTES}"


def conversion(query: DevopsQuery) -> Callable[[Sequence[Series]], list[Row]]:
    """How the answer's series become the common form's rows."""
    family = query.family
    if family in ("single-groupby", "cpu-max-all", "groupby-orderby-limit"):
        return _buckets
    if family == "double-groupby":
        return _buckets_per_host
    return _rows_per_host if family == "high-cpu" else _newest_per_host


def _buckets(series: Sequence[Series]) -> list[Row]:
    """(bucket, aggregates...) of every bucket with rows."""
    return [tuple(row) for one in series for row in one["values"] if any(value is not None for value in row[1:])]


def _buckets_per_host(series: Sequence[Series]) -> list[Row]:
    """(bucket, host, aggregates...) of every bucket with rows: one series per host."""
    return [(row[0], one["tags"]["hostname"], *row[1:]) for one in series for row in one["values"] if any(value is not None for value in row[1:])]


def _rows_per_host(series: Sequence[Series]) -> list[Row]:
    """`SELECT *` rows (time, the tags and the fields by name, in name order) as (time, host, fields...)."""
    return [row for one in series for row in _fields_of(one, lambda one, values, at: (values[0], values[at["hostname"]]))]


def _newest_per_host(series: Sequence[Series]) -> list[Row]:
    """One series per host (its tag), its newest row: (host, time, fields...)."""
    return [row for one in series for row in _fields_of(one, lambda one, values, at: (one["tags"]["hostname"], values[0]))]


def _fields_of(one: Series, key: Callable[[Series, list[Any], dict[str, int]], Row]) -> list[Row]:
    """The series' rows as (key..., the fields in TSBS's order): `key(series, row, column positions)`."""
    at = {name: position for position, name in enumerate(one["columns"])}
    return [(*key(one, values, at), *(values[at[name]] for name in CPU_FIELDS)) for values in one["values"]]
